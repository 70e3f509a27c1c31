package schema

import (
	"fmt"
	"strconv"
	"strings"
)

// JSONStep is one step of a JSON path: a member name, or an array index
// (0-based, as in SQL/JSON paths) when Name is "" and Index >= 0.
type JSONStep struct {
	Name  string
	Index int
}

// ParseJSONPath parses the subset of SQL/JSON paths (Flink's JSON_VALUE, in
// lax mode) that connectd evaluates: `$`, then `.name`, `."name"`,
// `['name']` and `[n]` steps, with an optional leading `lax`. Wildcards,
// filters and `strict` mode are refused, naming them.
func ParseJSONPath(p string) ([]JSONStep, error) {
	s := strings.TrimSpace(p)
	if rest, ok := strings.CutPrefix(s, "lax "); ok {
		s = strings.TrimSpace(rest)
	} else if strings.HasPrefix(s, "strict ") {
		return nil, fmt.Errorf("strict mode is not supported (lax is Flink's default)")
	}
	if !strings.HasPrefix(s, "$") {
		return nil, fmt.Errorf("a path starts with $")
	}
	s = s[1:]
	var steps []JSONStep
	for s != "" {
		switch {
		case strings.HasPrefix(s, "."):
			s = s[1:]
			if strings.HasPrefix(s, `"`) {
				end := strings.Index(s[1:], `"`)
				if end < 0 {
					return nil, fmt.Errorf("a quoted member name is not closed")
				}
				steps = append(steps, JSONStep{Name: s[1 : end+1], Index: -1})
				s = s[end+2:]
				continue
			}
			n := 0
			for n < len(s) && s[n] != '.' && s[n] != '[' {
				n++
			}
			name := s[:n]
			if name == "" || name == "*" {
				return nil, fmt.Errorf("member %q is not supported (a name is)", "."+name)
			}
			steps = append(steps, JSONStep{Name: name, Index: -1})
			s = s[n:]
		case strings.HasPrefix(s, "["):
			end := strings.Index(s, "]")
			if end < 0 {
				return nil, fmt.Errorf("[ is not closed")
			}
			in := strings.TrimSpace(s[1:end])
			s = s[end+1:]
			if len(in) >= 2 && (in[0] == '\'' && in[len(in)-1] == '\'' || in[0] == '"' && in[len(in)-1] == '"') {
				steps = append(steps, JSONStep{Name: in[1 : len(in)-1], Index: -1})
				continue
			}
			i, err := strconv.Atoi(in)
			if err != nil || i < 0 {
				return nil, fmt.Errorf("array step [%s] is not supported (an index such as [0] is)", in)
			}
			steps = append(steps, JSONStep{Index: i})
		default:
			return nil, fmt.Errorf("unexpected %q (supported: $, .name, ['name'], [n])", s)
		}
	}
	return steps, nil
}

// JSONPathValue walks steps into doc (as encoding/json decodes it); ok is
// false when a step finds nothing.
func JSONPathValue(doc any, steps []JSONStep) (v any, ok bool) {
	v = doc
	for _, st := range steps {
		switch x := v.(type) {
		case map[string]any:
			if st.Index >= 0 && st.Name == "" {
				return nil, false
			}
			if v, ok = x[st.Name]; !ok {
				return nil, false
			}
		case []any:
			if st.Name != "" || st.Index >= len(x) {
				return nil, false
			}
			v = x[st.Index]
		default:
			return nil, false
		}
	}
	return v, true
}
