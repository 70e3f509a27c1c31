package speclint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/redpanda-data/benthos/v4/public/bloblang"
	"gopkg.in/yaml.v3"
)

// registry maps a component name to the type rule of its fields, and holds
// the checks that look at a whole config.
var registry = struct {
	sync.Mutex
	rules     map[string]*bloblang.Executor
	documents []DocumentCheck
}{rules: map[string]*bloblang.Executor{}}

// DocumentCheck inspects a whole config document (the root node, after
// environment variable substitution) for problems that span components, and
// returns each as "(line,col) what: problem".
type DocumentCheck func(root *yaml.Node) []string

// RegisterDocumentCheck adds a check that CheckYAML runs on every document.
// Call it from a component's init.
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

// Register records the field types of a component so that CheckFiles can
// type-check its configs. Call it from the component's init.
//
// Benthos's own lint skips a component whose scalar fields do not decode
// (`max_in_flight: lots`) on the assumption that the error is reported
// elsewhere, and it is not: the config lints clean and fails at run time.
// CheckFiles closes that gap for registered components.
func Register(component string, fields []Field) {
	exe, err := bloblang.Parse(Rule(fields, ""))
	if err != nil {
		panic(fmt.Sprintf("speclint: type rule of %s does not parse: %v", component, err))
	}
	registry.Lock()
	defer registry.Unlock()
	registry.rules[component] = exe
}

func ruleFor(component string) *bloblang.Executor {
	registry.Lock()
	defer registry.Unlock()
	return registry.rules[component]
}

// CheckFiles type-checks the registered components in the YAML files named by
// paths, which may be globs or Benthos super paths (`./config/...`). Each
// problem names the file, line, component and field.
func CheckFiles(paths []string) error {
	files, err := expand(paths)
	if err != nil {
		return err
	}
	var problems []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("reading %s: %w", f, err)
		}
		for _, p := range CheckYAML(data) {
			problems = append(problems, f+p)
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(problems, "\n"))
}

// CheckYAML returns the type problems of registered components in one YAML
// document, each as "(line,col) component: field ...".
func CheckYAML(data []byte) []string {
	var root yaml.Node
	if err := yaml.Unmarshal(replaceEnvVars(data), &root); err != nil {
		return nil // Benthos's own lint reports unparseable YAML
	}
	var problems []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				key, val := n.Content[i], n.Content[i+1]
				if exe := ruleFor(key.Value); exe != nil && val.Kind == yaml.MappingNode {
					problems = append(problems, checkComponent(exe, key, val)...)
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&root)
	for _, c := range documentChecks() {
		problems = append(problems, c(&root)...)
	}
	return problems
}

// Find returns the first mapping value under n (depth first) whose key is
// name, with its key node, or nils.
func Find(n *yaml.Node, name string) (key, val *yaml.Node) {
	if n == nil {
		return nil, nil
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == name {
				return n.Content[i], n.Content[i+1]
			}
		}
	}
	for _, c := range n.Content {
		if k, v := Find(c, name); k != nil {
			return k, v
		}
	}
	return nil, nil
}

// Path returns the value node at the dotted path under a mapping node, or
// nil.
func Path(n *yaml.Node, path string) *yaml.Node { return findPath(n, strings.Split(path, ".")) }

func checkComponent(exe *bloblang.Executor, key, val *yaml.Node) []string {
	var v any
	if err := val.Decode(&v); err != nil {
		return nil
	}
	res, err := exe.Query(v)
	if err != nil {
		return []string{fmt.Sprintf("(%d,%d) %s: type check failed: %v", key.Line, key.Column, key.Value, err)}
	}
	list, _ := res.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		line := key.Line
		if field, _, ok := strings.Cut(strings.TrimPrefix(fmt.Sprint(e), "field "), ":"); ok {
			if n := findPath(val, strings.Split(field, ".")); n != nil {
				line = n.Line
			}
		}
		out = append(out, fmt.Sprintf("(%d,%d) %s: %v", line, key.Column, key.Value, e))
	}
	return out
}

// findPath returns the value node at the dotted path under a mapping node.
func findPath(n *yaml.Node, path []string) *yaml.Node {
	for _, p := range path {
		if n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == p {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

// envVar matches Benthos's ${VAR} and ${VAR:default} interpolations.
var envVar = regexp.MustCompile(`\$\{([0-9A-Za-z_.]+)(:((\$\{[^}]+\}|[^}])*))?\}`)

// replaceEnvVars substitutes environment variables as Benthos does before it
// parses a config, so `max_in_flight: ${MAX:8}` type-checks as 8.
func replaceEnvVars(data []byte) []byte {
	return envVar.ReplaceAllFunc(data, func(m []byte) []byte {
		sub := envVar.FindSubmatch(m)
		if v, ok := os.LookupEnv(string(sub[1])); ok && v != "" {
			return []byte(v)
		}
		return sub[3]
	})
}

// expand resolves globs and super paths (`dir/...`) to YAML files.
func expand(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if dir, ok := strings.CutSuffix(p, "..."); ok {
			dir = strings.TrimSuffix(dir, "/")
			if dir == "" || dir == "." {
				dir = "."
			}
			err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
					out = append(out, path)
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("lint path %s: %w", p, err)
			}
			continue
		}
		matches, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("lint path %s: %w", p, err)
		}
		out = append(out, matches...)
	}
	sort.Strings(out)
	return out, nil
}
