// Package editorschema turns Benthos's config schema (every component of
// the binary, connectd's and Benthos's, with their field docs) into a JSON
// Schema (draft-07) that an editor can use: `connectd schema` prints it, and
// the YAML language server (`# yaml-language-server: $schema=...`) then
// completes fields and enum values, shows each field's description and
// default, and marks unknown fields and wrong types (docs/editors.md).
//
// Benthos's own `list --format jsonschema` has none of the docs, and its
// component slots accept anything (an `anyOf` whose branches do not close
// the object), so a misspelt field passes it. Here each slot (`input`,
// `processor`, `output`, ...) is an object whose properties are the
// components of its type and the slot's reserved fields, closed to others;
// each component's config is closed to fields its spec does not have.
//
// Environment variable interpolations (`${VAR}`, `${VAR:default}`) are
// replaced before a config is parsed, so a number, a boolean or an enum
// written as one is a string in the file the editor sees: every such field
// also accepts a string holding an interpolation.
package editorschema

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Draft is the JSON Schema dialect of the generated schema.
const Draft = "http://json-schema.org/draft-07/schema#"

// interpolation matches a string that holds an environment variable
// interpolation (Benthos's ${VAR} or ${VAR:default}).
const interpolation = `\$\{[0-9A-Za-z_.]+(:.*)?\}`

// field is a config field as Benthos serialises it (MarshalJSONV0).
type field struct {
	Name         string          `json:"name"`
	Type         string          `json:"type"`
	Kind         string          `json:"kind"`
	Description  string          `json:"description"`
	Advanced     bool            `json:"is_advanced"`
	Deprecated   bool            `json:"is_deprecated"`
	Optional     bool            `json:"is_optional"`
	Interpolated bool            `json:"interpolated"`
	Default      json.RawMessage `json:"default"`
	Options      []string        `json:"options"`
	Annotated    [][2]string     `json:"annotated_options"`
	Examples     []any           `json:"examples"`
	Linter       string          `json:"linter"`
	Children     []field         `json:"children"`
}

// component is a component spec as Benthos serialises it.
type component struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Summary string `json:"summary"`
	Config  field  `json:"config"`
}

// full is Benthos's serialised schema.
type full struct {
	Version    string      `json:"version"`
	Config     []field     `json:"config"`
	Inputs     []component `json:"inputs"`
	Outputs    []component `json:"outputs"`
	Processors []component `json:"processors"`
	Buffers    []component `json:"buffers"`
	Caches     []component `json:"caches"`
	RateLimits []component `json:"rate-limits"`
	Metrics    []component `json:"metrics"`
	Tracers    []component `json:"tracers"`
	Scanners   []component `json:"scanners"`
}

// slot is a component type: the name its fields are typed with and the
// fields that sit beside the component in its object
// (docs.ReservedFieldsByType in Benthos).
type slot struct {
	typ        string
	components []component
	reserved   map[string]any
}

// Generate returns the JSON Schema of configs under schema: the main config
// fields (`input`, `pipeline`, `output`, `logger`, `tests`, ...) and every
// component of its environment.
func Generate(schema *service.ConfigSchema) ([]byte, error) {
	raw, err := schema.MarshalJSONV0()
	if err != nil {
		return nil, fmt.Errorf("editorschema: %w", err)
	}
	var f full
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("editorschema: reading Benthos's schema: %w", err)
	}
	label := map[string]any{"type": "string", "description": "A unique name for the component, used in logs, metrics and `resource` references."}
	processors := map[string]any{"type": "array", "items": ref("processor"), "description": "Processors applied to the messages of this component only."}
	common := func(extra map[string]any) map[string]any {
		m := map[string]any{
			"type":   map[string]any{"type": "string", "description": "The component's name (the key form is usual)."},
			"plugin": map[string]any{"type": "object"},
			"meta":   map[string]any{"type": "object", "description": "Unstructured metadata about the component."},
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	slots := []slot{
		{"input", f.Inputs, common(map[string]any{"label": label, "processors": processors})},
		{"output", f.Outputs, common(map[string]any{"label": label, "processors": processors})},
		{"processor", f.Processors, common(map[string]any{"label": label})},
		{"buffer", f.Buffers, common(nil)},
		{"cache", f.Caches, common(map[string]any{"label": label})},
		{"rate_limit", f.RateLimits, common(map[string]any{"label": label})},
		{"metrics", f.Metrics, common(map[string]any{"mapping": map[string]any{"type": "string", "description": "A Bloblang mapping that renames or drops metrics."}})},
		{"tracer", f.Tracers, common(nil)},
		{"scanner", f.Scanners, common(nil)},
	}
	defs := map[string]any{}
	for _, s := range slots {
		props := map[string]any{}
		for k, v := range s.reserved {
			props[k] = v
		}
		for _, c := range s.components {
			if c.Status == "deprecated" {
				continue
			}
			name := s.typ + "." + c.Name
			sch := kindSchema(c.Config)
			if sum := strings.TrimSpace(c.Summary); sum != "" {
				sch["description"] = sum
			}
			defs[name] = sch
			props[c.Name] = ref(name)
		}
		defs[s.typ] = map[string]any{
			"type":                 "object",
			"description":          fmt.Sprintf("A %s: one of the %s components, as a key, with its config.", strings.ReplaceAll(s.typ, "_", " "), strings.ReplaceAll(s.typ, "_", " ")),
			"properties":           props,
			"additionalProperties": false,
		}
	}
	root := objectSchema(f.Config)
	root["$schema"] = Draft
	root["title"] = "connectd config"
	root["description"] = "A connectd (Benthos) pipeline config, or a resources file. Generated by `connectd schema` " +
		"from the component specs of connectd " + f.Version + "."
	root["definitions"] = defs
	return json.MarshalIndent(root, "", " ")
}

func ref(def string) map[string]any { return map[string]any{"$ref": "#/definitions/" + def} }

// kindSchema is the schema of a field's value by its kind: one value, a
// list, a list of lists or a map of them (a component's config has a kind
// too: `switch` takes a list).
func kindSchema(f field) map[string]any {
	switch f.Kind {
	case "array":
		return map[string]any{"type": "array", "items": valueSchema(f)}
	case "2darray":
		return map[string]any{"type": "array", "items": map[string]any{"type": "array", "items": valueSchema(f)}}
	case "map":
		return map[string]any{"type": "object", "additionalProperties": valueSchema(f)}
	}
	return valueSchema(f)
}

// fieldSchema is the schema of a field with its docs: description,
// default, examples, enum descriptions.
func fieldSchema(f field) map[string]any {
	s := kindSchema(f)
	if d := strings.TrimSpace(f.Description); d != "" {
		s["description"] = d
		s["markdownDescription"] = d
	}
	if len(f.Default) > 0 {
		s["default"] = f.Default
	}
	if len(f.Examples) > 0 {
		s["examples"] = f.Examples
	}
	if f.Deprecated {
		s["deprecated"] = true
	}
	return s
}

// valueSchema is the schema of one value of the field (an element of a
// list or map field), without docs.
func valueSchema(f field) map[string]any {
	switch f.Type {
	case "string":
		return stringSchema(f)
	case "int":
		return orInterpolated(map[string]any{"type": "integer"})
	case "float":
		return orInterpolated(map[string]any{"type": "number"})
	case "bool":
		return orInterpolated(map[string]any{"type": "boolean"})
	case "object":
		if len(f.Children) == 0 {
			return map[string]any{"type": "object"}
		}
		return objectSchema(f.Children)
	case "input", "output", "processor", "buffer", "cache", "rate_limit", "metrics", "tracer", "scanner":
		return ref(f.Type)
	}
	return map[string]any{} // unknown: any value
}

// objectSchema closes an object to the fields of its spec and requires the
// fields Benthos's linter requires: scalars without a default that are
// neither optional nor deprecated.
func objectSchema(children []field) map[string]any {
	props := map[string]any{}
	var required []string
	for _, c := range children {
		props[c.Name] = fieldSchema(c)
		if requiredField(c) {
			required = append(required, c.Name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		sort.Strings(required)
		s["required"] = required
	}
	return s
}

func requiredField(f field) bool {
	if f.Optional || f.Deprecated || len(f.Default) > 0 || len(f.Children) > 0 {
		return false
	}
	if f.Kind != "scalar" && f.Kind != "" {
		return false
	}
	switch f.Type {
	case "input", "output", "processor", "buffer", "cache", "rate_limit", "metrics", "tracer", "scanner":
		return false
	}
	return true
}

// stringSchema is a string, restricted to its options when Benthos lints
// them (case-insensitively, as its linter compares them), with the options
// offered for completion either way.
func stringSchema(f field) map[string]any {
	var options, meanings []string
	for _, o := range f.Annotated {
		options = append(options, o[0])
		meanings = append(meanings, o[1])
	}
	if len(options) == 0 {
		options = f.Options
	}
	if len(options) == 0 {
		return map[string]any{"type": "string"}
	}
	enum := map[string]any{"type": "string", "enum": options}
	if len(meanings) > 0 {
		enum["enumDescriptions"] = meanings
		enum["markdownEnumDescriptions"] = meanings
	}
	if !strings.Contains(f.Linter, "is not a valid option for this field") {
		// Options documented but not enforced: offered, not required.
		return map[string]any{"anyOf": []any{enum, map[string]any{"type": "string"}}}
	}
	alts := []any{enum}
	if strings.Contains(f.Linter, ".lowercase()") {
		alts = append(alts, map[string]any{"type": "string", "pattern": caseInsensitive(options)})
	}
	alts = append(alts, map[string]any{"type": "string", "pattern": interpolation})
	return map[string]any{"anyOf": alts}
}

// orInterpolated accepts s or a string holding an interpolation.
func orInterpolated(s map[string]any) map[string]any {
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "string", "pattern": interpolation}}}
}

// caseInsensitive is an anchored ECMA 262 pattern matching any of options
// in any case (JSON Schema patterns have no case-insensitive flag).
func caseInsensitive(options []string) string {
	alts := make([]string, len(options))
	for i, o := range options {
		var b strings.Builder
		for _, r := range o {
			lo, up := strings.ToLower(string(r)), strings.ToUpper(string(r))
			switch {
			case lo != up:
				b.WriteString("[" + lo + up + "]")
			case strings.ContainsRune(`\^$.|?*+()[]{}/-`, r):
				b.WriteString(`\` + string(r))
			default:
				b.WriteRune(r)
			}
		}
		alts[i] = b.String()
	}
	return "^(?:" + strings.Join(alts, "|") + ")$"
}
