package speclint

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"
	"gopkg.in/yaml.v3"
)

// Benthos's linter decodes a component's config with the types of its spec
// before it runs the lint rule, and skips the rule when a scalar does not
// decode (`max_in_flight: lots`), on the assumption that the problem is
// reported elsewhere; it is reported only when the component is built, and
// not by `connectd lint`. typeProblems finds exactly those scalars, with the
// same decoding, from the spec itself.

// fieldDoc is a field of a component spec as Benthos documents it.
type fieldDoc struct {
	Name     string     `json:"name"`
	Type     string     `json:"type"`
	Kind     string     `json:"kind"`
	Children []fieldDoc `json:"children"`
}

// configDocs returns the fields of the component's config.
func (c *component) configDocs() (fieldDoc, error) {
	c.docsOnce.Do(func() {
		c.docs, c.docsErr = lookupDocs(c.kind, c.name)
	})
	return c.docs, c.docsErr
}

func lookupDocs(kind Kind, name string) (fieldDoc, error) {
	var (
		view *service.ConfigView
		env  = service.GlobalEnvironment()
	)
	find := func(n string, v *service.ConfigView) {
		if n == name {
			view = v
		}
	}
	switch kind {
	case Input:
		env.WalkInputs(find)
	case Output:
		env.WalkOutputs(find)
	case Processor:
		env.WalkProcessors(find)
	case Buffer:
		env.WalkBuffers(find)
	case Metrics:
		env.WalkMetrics(find)
	}
	if view == nil {
		return fieldDoc{}, fmt.Errorf("speclint: %s %s is not registered with Benthos", kind, name)
	}
	data, err := view.FormatJSON()
	if err != nil {
		return fieldDoc{}, err
	}
	var doc struct {
		Config fieldDoc `json:"config"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return fieldDoc{}, fmt.Errorf("speclint: docs of %s %s: %w", kind, name, err)
	}
	return doc.Config, nil
}

// typeProblem is a scalar that does not decode as its field's type.
type typeProblem struct {
	field string // dotted path of the field whose value is unusable
	node  *yaml.Node
	msg   string
}

// typeProblems mirrors Benthos's lenient decoding of a config node n for
// field f (docs.FieldSpec.YAMLToValue with Passive): it walks the same
// nodes and decodes scalars into the same Go types, and returns each scalar
// that fails. path is the field's dotted path ("" for the config root).
func typeProblems(f fieldDoc, n *yaml.Node, path string) []typeProblem {
	n = unwrap(n)
	if n == nil {
		return nil
	}
	var out []typeProblem
	switch f.Kind {
	case "2darray", "array":
		elem := f
		elem.Kind = "scalar"
		if f.Kind == "2darray" {
			elem.Kind = "array"
		}
		for i, e := range n.Content {
			for _, p := range typeProblems(elem, e, fmt.Sprintf("%s[%d]", path, i)) {
				p.field = path
				out = append(out, p)
			}
		}
		return out
	case "map":
		elem := f
		elem.Kind = "scalar"
		for i := 0; i+1 < len(n.Content); i += 2 {
			for _, p := range typeProblems(elem, n.Content[i+1], join(path, n.Content[i].Value)) {
				p.field = path
				out = append(out, p)
			}
		}
		return out
	}
	var err error
	switch f.Type {
	case "string":
		var s string
		err = n.Decode(&s)
	case "int":
		var i int
		err = n.Decode(&i)
	case "float":
		var x float64
		err = n.Decode(&x)
	case "bool":
		var b bool
		err = n.Decode(&b)
	case "object":
		children := make(map[string]fieldDoc, len(f.Children))
		for _, ch := range f.Children {
			children[ch.Name] = ch
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if ch, ok := children[n.Content[i].Value]; ok {
				out = append(out, typeProblems(ch, n.Content[i+1], join(path, ch.Name))...)
			}
		}
		return out
	}
	if err != nil {
		out = append(out, typeProblem{field: path, node: n,
			msg: fmt.Sprintf("field %s: expected %s, got %s", path, want(f.Type), describe(n))})
	}
	return out
}

// normalize makes n decode as field f expects where Benthos's lenient
// decoding accepts what its strict one refuses: a value of the wrong shape
// (a scalar for a list) becomes empty, as the linter sees it. Benthos's own
// lint reports the shape.
func normalize(f fieldDoc, n *yaml.Node) *yaml.Node {
	n = unwrap(n)
	switch f.Kind {
	case "array", "2darray":
		if n.Kind != yaml.SequenceNode {
			return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		}
		return n
	case "map":
		if n.Kind != yaml.MappingNode {
			return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		}
		return n
	}
	if f.Type != "object" {
		return n
	}
	if n.Kind != yaml.MappingNode {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	children := make(map[string]fieldDoc, len(f.Children))
	for _, ch := range f.Children {
		children[ch.Name] = ch
	}
	out := *n
	out.Content = make([]*yaml.Node, len(n.Content))
	copy(out.Content, n.Content)
	for i := 0; i+1 < len(out.Content); i += 2 {
		if ch, ok := children[out.Content[i].Value]; ok {
			out.Content[i+1] = normalize(ch, out.Content[i+1])
		}
	}
	return &out
}

// without returns a copy of the mapping n without the field at the dotted
// path.
func without(n *yaml.Node, path string) *yaml.Node {
	n = unwrap(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return n
	}
	head, rest, nested := strings.Cut(path, ".")
	out := *n
	out.Content = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == head {
			if !nested {
				continue
			}
			v = without(v, rest)
		}
		out.Content = append(out.Content, k, v)
	}
	return &out
}

func unwrap(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n != nil && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func want(typ string) string {
	switch typ {
	case "int":
		return "an integer"
	case "float":
		return "a number"
	case "bool":
		return "true or false"
	}
	return "a string"
}

// describe names what a YAML node holds, for an error message.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "an object"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.ShortTag() {
	case "!!str":
		return fmt.Sprintf("string %q", n.Value)
	case "!!int":
		return "integer " + n.Value
	case "!!float":
		return "number " + n.Value
	case "!!bool":
		return "boolean " + n.Value
	case "!!null":
		return "null"
	}
	return fmt.Sprintf("%q", n.Value)
}
