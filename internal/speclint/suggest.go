package speclint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"
	"gopkg.in/yaml.v3"
)

// Benthos's linter says "field consumer_grop not recognised" and "unable to
// infer input type from candidates: [kafka_franz]" and no more. The checks
// here say what was meant: the closest field or component name, or the
// component's own hint for a name it knows from elsewhere (Redpanda
// Connect's `kafka_franz`, `regexp_topics`, `start_from_oldest`, a `sasl`
// list). Benthos still prints its own line; `connectd run` stops on these
// as on every other problem.

var hints = struct {
	fields map[string]map[string]string // component -> field -> hint
	names  map[Kind]map[string]string   // component type -> foreign name -> hint
}{fields: map[string]map[string]string{}, names: map[Kind]map[string]string{}}

// RegisterFieldHints gives the hint `connectd lint` and `run` print for a
// field the component called name does not have (Redpanda Connect's
// spelling of one it has, say), or for a field it has given in the wrong
// shape (a list for an object). A hint says what to write instead. Call it
// from the component's init.
func RegisterFieldHints(name string, fieldHints map[string]string) {
	registry.Lock()
	defer registry.Unlock()
	m := hints.fields[name]
	if m == nil {
		m = map[string]string{}
		hints.fields[name] = m
	}
	for f, h := range fieldHints {
		m[f] = h
	}
}

// RegisterNameHint gives the hint for a component name of kind that this
// binary does not have but users bring from elsewhere (`kafka_franz`): say
// which component to use. Call it from the component's init.
func RegisterNameHint(kind Kind, foreign, hint string) {
	registry.Lock()
	defer registry.Unlock()
	m := hints.names[kind]
	if m == nil {
		m = map[string]string{}
		hints.names[kind] = m
	}
	m[foreign] = hint
}

func fieldHint(component, field string) string {
	registry.Lock()
	defer registry.Unlock()
	return hints.fields[component][field]
}

func nameHint(kind Kind, name string) string {
	registry.Lock()
	defer registry.Unlock()
	return hints.names[kind][name]
}

// unknownFields returns the fields under n (the config of component, whose
// fields are f) that its spec does not have, and objects given as lists,
// each with the component's hint or the closest field name.
func unknownFields(component string, f fieldDoc, n *yaml.Node, path string) []Problem {
	n = unwrap(n)
	if n == nil || f.Type != "object" || (f.Kind != "scalar" && f.Kind != "") {
		return nil
	}
	if n.Kind == yaml.SequenceNode {
		if path == "" {
			return nil // Benthos's lint reports the component's own shape
		}
		msg := fmt.Sprintf("field %s: expected an object, got a list", path)
		if h := fieldHint(component, path); h != "" {
			msg += "; " + h
		}
		return []Problem{{Line: n.Line, Column: n.Column, Message: msg}}
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	children := make(map[string]fieldDoc, len(f.Children))
	names := make([]string, 0, len(f.Children))
	for _, ch := range f.Children {
		children[ch.Name] = ch
		names = append(names, ch.Name)
	}
	var out []Problem
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i]
		field := join(path, key.Value)
		if ch, ok := children[key.Value]; ok {
			out = append(out, unknownFields(component, ch, n.Content[i+1], field)...)
			continue
		}
		msg := fmt.Sprintf("field %s: %s has no such field", field, component)
		if h := fieldHint(component, field); h != "" {
			msg += "; " + h
		} else if m := closest(key.Value, names); m != "" {
			msg += fmt.Sprintf("; did you mean %s?", join(path, m))
		}
		out = append(out, Problem{Line: key.Line, Column: key.Column, Message: msg})
	}
	return out
}

// reservedKeys sit beside the component in a component's object.
var reservedKeys = map[string]bool{"label": true, "processors": true, "type": true, "plugin": true, "meta": true}

// slotKinds says which keys of a config hold components: a key whose value
// is one component object, or a list of them.
var (
	oneComponent = map[string]Kind{"input": Input, "output": Output}
	componentSeq = map[string]Kind{
		"inputs": Input, "outputs": Output, "processors": Processor,
		"input_resources": Input, "output_resources": Output, "processor_resources": Processor,
	}
)

// componentNames returns the components of the document whose name no
// component of their type has, with the registered hint or the closest
// name. path is the dotted path of n.
func componentNames(n *yaml.Node, path string, known func(Kind) []string) []Problem {
	n = unwrap(n)
	if n == nil {
		return nil
	}
	var out []Problem
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], unwrap(n.Content[i+1])
			p := join(path, key.Value)
			if kind, ok := oneComponent[key.Value]; ok && val != nil && val.Kind == yaml.MappingNode {
				out = append(out, componentName(kind, val, p, known)...)
			}
			if kind, ok := componentSeq[key.Value]; ok && val != nil && val.Kind == yaml.SequenceNode {
				for j, e := range val.Content {
					if e = unwrap(e); e != nil && e.Kind == yaml.MappingNode {
						out = append(out, componentName(kind, e, fmt.Sprintf("%s[%d]", p, j), known)...)
					}
				}
			}
			out = append(out, componentNames(val, p, known)...)
		}
	case yaml.SequenceNode:
		for j, e := range n.Content {
			out = append(out, componentNames(e, fmt.Sprintf("%s[%d]", path, j), known)...)
		}
	}
	return out
}

// componentName checks the one component of the object n, of kind.
func componentName(kind Kind, n *yaml.Node, path string, known func(Kind) []string) []Problem {
	var key *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !reservedKeys[k.Value] {
			if key != nil {
				return nil // several: Benthos's lint says so
			}
			key = k
		}
	}
	if key == nil {
		return nil
	}
	names := known(kind)
	if i := sort.SearchStrings(names, key.Value); i < len(names) && names[i] == key.Value {
		return nil
	}
	msg := fmt.Sprintf("field %s: no %s is called %s", join(path, key.Value), kind, key.Value)
	if h := nameHint(kind, key.Value); h != "" {
		msg += "; " + h
	} else if m := closest(key.Value, names); m != "" {
		msg += fmt.Sprintf("; did you mean %s?", m)
	} else {
		msg += fmt.Sprintf(" (`connectd list %ss` lists them)", kind)
	}
	return []Problem{{Line: key.Line, Column: key.Column, Message: msg}}
}

// environmentNames lists the component names of each type in Benthos's
// global environment, sorted.
func environmentNames(kind Kind) []string {
	var names []string
	add := func(name string, _ *service.ConfigView) { names = append(names, name) }
	env := service.GlobalEnvironment()
	switch kind {
	case Input:
		env.WalkInputs(add)
	case Output:
		env.WalkOutputs(add)
	case Processor:
		env.WalkProcessors(add)
	case Buffer:
		env.WalkBuffers(add)
	case Metrics:
		env.WalkMetrics(add)
	}
	sort.Strings(names)
	return names
}

// closest returns the name among names nearest to s, if it is near enough
// to be a misspelling (an edit distance of at most a third of its length,
// and 1 for short names), else "".
func closest(s string, names []string) string {
	best, bestD := "", -1
	for _, n := range names {
		d := distance(strings.ToLower(s), strings.ToLower(n))
		if bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	limit := max(1, len(s)/3)
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

// distance is the Damerau-Levenshtein distance (optimal string alignment:
// a swap of neighbours counts one) between a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
