// Package speclint runs connectd's config checks, the same Go code at
// `connectd lint` and at `connectd run`.
//
// Each component validates its config once, in Go, in the step that turns a
// parsed config into its typed Config (its `...FromParsed`). Register makes
// that step the component's Benthos lint rule: the rule calls one Bloblang
// method, which parses the config with the component's own spec and returns
// the validator's problems. Benthos runs lint rules in `connectd lint` (and
// wherever it lints a config, a StreamBuilder's for one), and the
// constructor runs the same step.
//
// CheckFiles runs the validators too, for the CLI (cli.go), before Benthos
// reads the files: `connectd run` and `connectd streams` stop there, before
// anything is built, with the messages of `connectd lint`. It also finds
// what no lint rule can see:
//   - a field of the wrong type (`max_in_flight: lots`): Benthos then skips
//     the component's lint rule and fails only when it builds the component.
//     CheckFiles reports the type errors, from the component's spec, with the
//     validator's problems with the other fields;
//   - problems that span components (RegisterDocumentCheck), such as
//     `pipeline.threads` with an exactly-once kafka_sink fed by kafka_source.
package speclint

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/redpanda-data/benthos/v4/public/bloblang"
	"github.com/redpanda-data/benthos/v4/public/service"
	"gopkg.in/yaml.v3"
)

// Kind is the Benthos component type of a registered component.
type Kind string

// Component types.
const (
	Input     Kind = "input"
	Output    Kind = "output"
	Processor Kind = "processor"
	Buffer    Kind = "buffer"
	Metrics   Kind = "metrics"
)

// Validator reads a component's parsed config and returns every problem
// with it, each naming its field ("field <name>: ..."), joined with
// errors.Join. It is the component's `...FromParsed` step, which its
// constructor runs too.
type Validator func(conf *service.ParsedConfig) error

// component is one registered component.
type component struct {
	kind     Kind
	name     string
	spec     *service.ConfigSpec
	validate Validator

	docsOnce sync.Once
	docs     fieldDoc // the config's fields, from the spec (types.go)
	docsErr  error
}

var registry = struct {
	sync.Mutex
	components map[string]*component
	documents  []DocumentCheck
	warnings   []DocumentCheck
}{components: map[string]*component{}}

// lintMethod is the one Bloblang method behind every connectd lint rule.
const lintMethod = "connectd_config_problems"

// Register makes validate the check of the component called name: its lint
// rule (set on spec here) and CheckFiles run it. Call it from the
// component's init, before the spec is registered with Benthos.
func Register(kind Kind, name string, spec *service.ConfigSpec, validate Validator) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.components[name]; dup {
		panic(fmt.Sprintf("speclint: component %s registered twice", name))
	}
	registry.components[name] = &component{kind: kind, name: name, spec: spec, validate: validate}
	spec.LintRule(fmt.Sprintf("root = this.%s(%q)", lintMethod, name))
}

func lookup(name string) *component {
	registry.Lock()
	defer registry.Unlock()
	return registry.components[name]
}

// The method is registered before any component's init: Benthos parses a
// lint rule when it is set, against the methods registered by then.
var _ = registerLintMethod()

func registerLintMethod() bool {
	bloblang.MustRegisterMethodV2(lintMethod,
		bloblang.NewPluginSpec().
			Category("Connectd internal").
			Description("Returns the problems of a connectd component's config, as its Go validator reports them, as a list "+
				"of strings. The lint rule of every connectd component calls it.").
			Param(bloblang.NewStringParam("component").Description("The component's name.")),
		func(args *bloblang.ParsedParams) (bloblang.Method, error) {
			name, err := args.GetString("component")
			if err != nil {
				return nil, err
			}
			return func(v any) (any, error) {
				c := lookup(name)
				if c == nil {
					return nil, fmt.Errorf("speclint: component %s is not registered", name)
				}
				data, err := yaml.Marshal(v)
				if err != nil {
					return nil, err
				}
				out := []any{}
				for _, p := range c.problems(data) {
					out = append(out, p)
				}
				return out, nil
			}, nil
		})
	return true
}

// problems parses a config of the component, given as YAML, with its spec
// and returns its validator's problems, one string each.
func (c *component) problems(data []byte) []string {
	conf, err := c.spec.ParseYAML(string(data), nil)
	if err != nil {
		return []string{err.Error()}
	}
	return messages(c.validate(conf))
}

// messages splits an error built with errors.Join (at any depth) into the
// messages of its parts, in order, without repeats.
func messages(err error) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		if m := err.Error(); !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	walk(err)
	return out
}

// fieldOf returns the dotted field path a message names ("field a.b: ..."),
// or "".
func fieldOf(msg string) string {
	rest, ok := strings.CutPrefix(msg, "field ")
	if !ok {
		return ""
	}
	path, _, ok := strings.Cut(rest, ":")
	if !ok || strings.ContainsAny(path, " \n") {
		return ""
	}
	return path
}

// names reports whether msg is about the field at path or one under it.
func names(msg, path string) bool {
	f := fieldOf(msg)
	return f == path || strings.HasPrefix(f, path+".") || strings.HasPrefix(f, path+"[")
}

// Components returns the registered component names, sorted.
func Components() []string {
	registry.Lock()
	defer registry.Unlock()
	out := make([]string, 0, len(registry.components))
	for n := range registry.components {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// KindOf returns the component type of the registered component called
// name; false if no component registered that name.
func KindOf(name string) (Kind, bool) {
	c := lookup(name)
	if c == nil {
		return "", false
	}
	return c.kind, true
}

// DocumentCheck inspects a whole config document (the root node, after
// environment variable substitution) for problems that span components, and
// returns each as "(line,col) what: problem".
type DocumentCheck func(root *yaml.Node) []string

// RegisterDocumentCheck adds a check that CheckFiles runs on every document,
// for `connectd lint` and before `connectd run` and `connectd streams`
// read a record. Call it from a component's init.
func RegisterDocumentCheck(c DocumentCheck) {
	registry.Lock()
	defer registry.Unlock()
	registry.documents = append(registry.documents, c)
}

func documentChecks() []DocumentCheck {
	registry.Lock()
	defer registry.Unlock()
	return append([]DocumentCheck(nil), registry.documents...)
}

// RegisterDocumentWarning adds a check whose findings are warnings: a
// config that runs, but probably not as meant (window keys that other
// processes also see). `connectd lint` prints them and exits 0 (1 with
// --deprecated, its strict mode); `connectd run` prints them and runs.
func RegisterDocumentWarning(c DocumentCheck) {
	registry.Lock()
	defer registry.Unlock()
	registry.warnings = append(registry.warnings, c)
}

func documentWarnings() []DocumentCheck {
	registry.Lock()
	defer registry.Unlock()
	return append([]DocumentCheck(nil), registry.warnings...)
}

// ErrNotRegistered is returned by Validate for a name no component
// registered.
var ErrNotRegistered = errors.New("speclint: no such component")

// Validate runs the validator of the named component on a config given as
// YAML, as its lint rule does, and returns its problems.
func Validate(name, yamlConf string) ([]string, error) {
	c := lookup(name)
	if c == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotRegistered, name)
	}
	return c.problems([]byte(yamlConf)), nil
}
