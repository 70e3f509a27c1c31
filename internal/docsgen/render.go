package docsgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/connectd/connectd/internal/speclint"
)

// kindTitle is how a page names a component type.
var kindTitle = map[speclint.Kind]string{
	speclint.Input:     "Input",
	speclint.Output:    "Output",
	speclint.Processor: "Processor",
	speclint.Buffer:    "Buffer",
	speclint.Metrics:   "Metrics exporter",
}

// flatField is a field with its dotted path (`tls.client_certs[].cert`).
type flatField struct {
	path string
	field
}

// flatten lists the fields under f depth first, deprecated ones left out.
func flatten(prefix string, fs []field) []flatField {
	var out []flatField
	for _, f := range fs {
		if f.Deprecated {
			continue
		}
		path := prefix + f.Name
		out = append(out, flatField{path: path, field: f})
		if len(f.Children) > 0 {
			sub := path
			switch f.Kind {
			case "array":
				sub += "[]"
			case "2darray":
				sub += "[][]"
			case "map":
				sub += ".<name>"
			}
			out = append(out, flatten(sub+".", f.Children)...)
		}
	}
	return out
}

func render(s spec) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	fmt.Fprintf(&b, "# `%s`\n\n", s.Name)
	meta := []string{kindTitle[s.Kind], titleCase(s.Status)}
	meta = append(meta, s.Categories...)
	fmt.Fprintf(&b, "%s\n\n", strings.Join(nonEmpty(meta), " · "))
	if s.Summary != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(s.Summary))
	}
	fmt.Fprintf(&b, "```yaml\n# Common fields: defaults, or an example where a field has none\n%s```\n\n", s.common)
	fmt.Fprintf(&b, "<details>\n<summary>Every field, at its default</summary>\n\n```yaml\n%s```\n\n</details>\n\n", s.full)
	if d := strings.TrimSpace(s.Description); d != "" {
		fmt.Fprintf(&b, "## Description\n\n%s\n\n", d)
	}
	fields := flatten("", s.Config.Children)
	if len(fields) > 0 {
		b.WriteString("## Fields\n\n")
		b.WriteString("| Field | Type | Default | Advanced | Flink |\n|---|---|---|---|---|\n")
		for _, f := range fields {
			flink := flinkOf(f.Description)
			switch {
			case flink != "":
			case strings.Contains(f.Description, "Flink"):
				flink = "see the field"
			default:
				flink = "–"
			}
			adv := ""
			if f.Advanced {
				adv = "yes"
			}
			fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s | %s | %s |\n",
				f.path, anchor(f.path), typeOf(f.field), cell(defaultOf(f.field)), adv, cell(flink))
		}
		b.WriteString("\n")
		for _, f := range fields {
			renderField(&b, f)
		}
	}
	if len(s.Examples) > 0 {
		b.WriteString("## Examples\n\n")
		for _, e := range s.Examples {
			fmt.Fprintf(&b, "### %s\n\n", e.Title)
			if sum := strings.TrimSpace(e.Summary); sum != "" {
				fmt.Fprintf(&b, "%s\n\n", sum)
			}
			fmt.Fprintf(&b, "```yaml\n%s\n```\n\n", strings.Trim(e.Config, "\n"))
		}
	}
	if fn := strings.TrimSpace(s.Footnotes); fn != "" {
		fmt.Fprintf(&b, "%s\n\n", fn)
	}
	return append(bytes.TrimRight(b.Bytes(), "\n"), '\n')
}

func renderField(b *bytes.Buffer, f flatField) {
	fmt.Fprintf(b, "### `%s`\n\n", f.path)
	if d := strings.TrimSpace(f.Description); d != "" {
		fmt.Fprintf(b, "%s\n\n", d)
	}
	facts := []string{"Type: " + typeOf(f.field), "Default: " + defaultOf(f.field)}
	if f.Advanced {
		facts = append(facts, "advanced")
	}
	if f.Secret {
		facts = append(facts, "secret (never logged)")
	}
	fmt.Fprintf(b, "%s.\n\n", strings.Join(facts, " · "))
	if len(f.Annotated) > 0 {
		b.WriteString("| Option | Meaning |\n|---|---|\n")
		for _, o := range f.Annotated {
			fmt.Fprintf(b, "| `%s` | %s |\n", o[0], cell(o[1]))
		}
		b.WriteString("\n")
	} else if len(f.Options) > 0 {
		opts := make([]string, len(f.Options))
		for i, o := range f.Options {
			opts[i] = "`" + o + "`"
		}
		fmt.Fprintf(b, "Options: %s.\n\n", strings.Join(opts, ", "))
	}
	if len(f.Examples) > 0 {
		b.WriteString("```yaml\n# Examples\n")
		for i, e := range f.Examples {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(yamlOf(map[string]any{lastName(f.path): e}))
		}
		b.WriteString("```\n\n")
	}
}

// typeOf describes a field's type: `string`, `list of string`, `map of
// int`, `object`; interpolated strings say so.
func typeOf(f field) string {
	t := f.Type
	switch t {
	case "unknown":
		t = "any"
	case "string":
		if f.Interpolated {
			t = "string, interpolated"
		}
	}
	t = "`" + t + "`"
	switch f.Kind {
	case "array":
		return "list of " + t
	case "2darray":
		return "list of lists of " + t
	case "map":
		return "map of " + t
	}
	return t
}

// defaultOf renders a field's default, or says it has none.
func defaultOf(f field) string {
	if len(f.Default) == 0 {
		switch {
		case f.Optional:
			return "none (optional)"
		case len(f.Children) > 0 || f.Kind != "scalar" && f.Kind != "":
			return "see the fields below"
		default:
			return "none (required)"
		}
	}
	var v any
	if err := json.Unmarshal(f.Default, &v); err != nil {
		return "`" + string(f.Default) + "`"
	}
	switch v := v.(type) {
	case string:
		if v == "" {
			return "`\"\"`"
		}
		return "`" + v + "`"
	case []any, map[string]any:
		return "`" + strings.TrimSpace(flowYAML(v)) + "`"
	}
	return "`" + string(f.Default) + "`"
}

// flowYAML renders a value on one line, as a YAML flow collection.
func flowYAML(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

func yamlOf(v any) string {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v\n", v)
	}
	return b.String()
}

// cell makes text fit a Markdown table cell: one line, pipes escaped
// (outside code spans too: GitHub splits cells on every unescaped pipe).
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// anchor is the id GitHub gives the heading "### `path`".
func anchor(path string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(path) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

func lastName(path string) string {
	if i := strings.LastIndex(path, "."); i >= 0 {
		return path[i+1:]
	}
	return path
}

func titleCase(s string) string {
	if s == "" {
		return ""
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// renderIndex lists the components with their summaries.
func renderIndex(specs []spec) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString("# Components\n\n")
	b.WriteString("The components connectd adds to Benthos's own (`connectd list` names those too). Each page is generated " +
		"from the component's spec, the same text `connectd list --format cue` and the editor schema (`connectd schema`, " +
		"[editors.md](../editors.md)) carry; every field's description names its default, its unit and the Flink option it " +
		"maps to. Moving a Flink job: [migrating-from-flink.md](../migrating-from-flink.md).\n\n")
	b.WriteString("| Component | Type | Summary |\n|---|---|---|\n")
	for _, s := range specs {
		fmt.Fprintf(&b, "| [`%s`](%s) | %s | %s |\n", s.Name, s.File(), kindTitle[s.Kind], cell(s.Summary))
	}
	return b.Bytes()
}
