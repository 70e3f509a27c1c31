package speclint

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Problem is a problem found in a config file, at a line and column.
type Problem struct {
	Path         string // the file; "" for CheckYAML
	Line, Column int
	Message      string
	// ByRule: Benthos's linter reports it too, through the component's
	// lint rule (Register), so `connectd lint` need not print it.
	ByRule bool
	// Warning: the config runs, but probably not as meant
	// (RegisterDocumentWarning). `connectd lint` prints it and exits 0
	// unless --deprecated (strict) is given; `connectd run` prints it and
	// runs.
	Warning bool
}

// String formats the problem as Benthos's linter does: "path(line,col) message",
// a warning as "path(line,col) warning: message".
func (p Problem) String() string {
	if p.Warning {
		return fmt.Sprintf("%s(%d,%d) warning: %s", p.Path, p.Line, p.Column, p.Message)
	}
	return fmt.Sprintf("%s(%d,%d) %s", p.Path, p.Line, p.Column, p.Message)
}

// CheckFiles reads the YAML files named by paths (globs, directories, and
// Benthos super paths `./config/...`) and returns the problems CheckYAML
// finds in each.
func CheckFiles(paths []string) ([]Problem, error) {
	files, err := expand(paths)
	if err != nil {
		return nil, err
	}
	var problems []Problem
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, err)
		}
		for _, p := range CheckYAML(data) {
			p.Path = f
			problems = append(problems, p)
		}
	}
	return problems, nil
}

// CheckYAML returns the problems of one config document: those of each
// registered component (fields its spec does not have, with what was meant
// (suggest.go); its validator's, marked ByRule since its lint rule reports
// them too; or, when a field has the wrong type, which makes Benthos skip
// the rule, the type errors and the validator's problems with the other
// fields), component names no component has, then those of the document
// checks.
func CheckYAML(data []byte) []Problem {
	var root yaml.Node
	if err := yaml.Unmarshal(replaceEnvVars(data), &root); err != nil {
		return nil // Benthos's own lint reports unparseable YAML
	}
	var problems []Problem
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				key, val := n.Content[i], n.Content[i+1]
				if c := lookup(key.Value); c != nil && val.Kind == yaml.MappingNode {
					problems = append(problems, c.checkNode(key, val)...)
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&root)
	names := map[Kind][]string{}
	known := func(k Kind) []string {
		if _, ok := names[k]; !ok {
			names[k] = environmentNames(k)
		}
		return names[k]
	}
	problems = append(problems, componentNames(&root, "", known)...)
	for _, check := range documentChecks() {
		for _, msg := range check(&root) {
			problems = append(problems, locate(msg))
		}
	}
	for _, check := range documentWarnings() {
		for _, msg := range check(&root) {
			p := locate(msg)
			p.Warning = true
			problems = append(problems, p)
		}
	}
	return problems
}

// checkNode returns the problems of one component config (val, under key).
func (c *component) checkNode(key, val *yaml.Node) []Problem {
	docs, err := c.configDocs()
	if err != nil {
		return []Problem{{Line: key.Line, Column: key.Column, Message: err.Error()}}
	}
	typeErrs := typeProblems(docs, val, "")
	out := unknownFields(c.name, docs, val, "")
	clean := normalize(docs, val)
	for _, p := range typeErrs {
		out = append(out, Problem{Line: p.node.Line, Column: p.node.Column, Message: p.msg})
		clean = without(clean, p.field)
	}
	data, err := yaml.Marshal(clean)
	if err != nil {
		return append(out, Problem{Line: key.Line, Column: key.Column, Message: err.Error()})
	}
next:
	for _, msg := range c.problems(data) {
		for _, p := range typeErrs {
			if names(msg, p.field) {
				continue next // its value is unknown: the type error says it
			}
		}
		line, col := val.Line, val.Column
		if n := findPath(val, fieldOf(msg)); n != nil {
			line, col = n.Line, n.Column
		}
		out = append(out, Problem{Line: line, Column: col, Message: msg, ByRule: len(typeErrs) == 0})
	}
	return out
}

// locate splits a document check's "(line,col) message".
func locate(msg string) Problem {
	var p Problem
	if n, _ := fmt.Sscanf(msg, "(%d,%d)", &p.Line, &p.Column); n == 2 {
		_, p.Message, _ = strings.Cut(msg, ") ")
		return p
	}
	p.Line, p.Column, p.Message = 1, 1, msg
	return p
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
func Path(n *yaml.Node, path string) *yaml.Node { return findPath(n, path) }

// findPath returns the value node at the dotted path under a mapping node
// ("" or a path that is not there: nil). A list index (`topics[1]`) stops
// at the list.
func findPath(n *yaml.Node, path string) *yaml.Node {
	if path == "" {
		return nil
	}
	for _, p := range strings.Split(path, ".") {
		p, _, _ = strings.Cut(p, "[")
		n = unwrap(n)
		if n == nil || n.Kind != yaml.MappingNode {
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

// expand resolves globs, directories and super paths (`dir/...`) to YAML
// files.
func expand(paths []string) ([]string, error) {
	var out []string
	walk := func(p, dir string) error {
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
			return fmt.Errorf("config path %s: %w", p, err)
		}
		return nil
	}
	for _, p := range paths {
		if dir, ok := strings.CutSuffix(p, "..."); ok {
			dir = strings.TrimSuffix(dir, "/")
			if dir == "" {
				dir = "."
			}
			if err := walk(p, dir); err != nil {
				return nil, err
			}
			continue
		}
		matches, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("config path %s: %w", p, err)
		}
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.IsDir() {
				if err := walk(p, m); err != nil {
					return nil, err
				}
				continue
			}
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out, nil
}
