package bundle_test

import (
	"encoding/json"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"gopkg.in/yaml.v3"

	// Bloblang methods of the examples (ts_parse), as in the binary.
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	"github.com/connectd/connectd/internal/speclint"
	_ "github.com/connectd/connectd/plugins/bundle"
)

// field is a field of a component spec as Benthos documents it.
type field struct {
	Name     string           `json:"name"`
	Type     string           `json:"type"`
	Kind     string           `json:"kind"`
	Default  *json.RawMessage `json:"default"`
	Examples []any            `json:"examples"`
	Children []field          `json:"children"`
}

// createValue is the value `connectd create` writes for f, as Benthos's
// docs.FieldSpec.ToYAML computes it: the default, else an empty list or
// object (children filled in), else the first example, else the type's zero
// value.
func createValue(t *testing.T, f field) any {
	if f.Default != nil {
		var v any
		if err := json.Unmarshal(*f.Default, &v); err != nil {
			t.Fatal(err)
		}
		if n, ok := v.(float64); ok && n == float64(int64(n)) {
			return int64(n) // as YAML writes an integer default
		}
		return v
	}
	switch {
	case f.Kind == "array" || f.Kind == "2darray":
		return []any{}
	case len(f.Children) > 0:
		return createObject(t, f.Children)
	case f.Kind == "map":
		return map[string]any{}
	case len(f.Examples) > 0:
		return f.Examples[0]
	}
	switch f.Type {
	case "string":
		return ""
	case "int":
		return 0
	case "float":
		return 0.0
	case "bool":
		return false
	}
	return nil
}

func createObject(t *testing.T, fields []field) map[string]any {
	m := map[string]any{}
	for _, f := range fields {
		m[f.Name] = createValue(t, f)
	}
	return m
}

// Every connectd component accepts the config that `connectd create` writes
// for it, with every field. create takes inputs, processors and outputs
// (test/e2e runs it); this covers the buffer and the metrics exporter too.
func TestCreateStyleConfigsValidate(t *testing.T) {
	t.Parallel()
	docs := map[string][]byte{}
	collect := func(name string, v *service.ConfigView) {
		data, err := v.FormatJSON()
		if err != nil {
			t.Fatal(err)
		}
		docs[name] = data
	}
	env := service.GlobalEnvironment()
	env.WalkInputs(collect)
	env.WalkBuffers(collect)
	env.WalkProcessors(collect)
	env.WalkOutputs(collect)
	env.WalkMetrics(collect)
	names := speclint.Components()
	if len(names) < 7 {
		t.Fatalf("registered components %v, want the seven of the bundle", names)
	}
	for _, name := range names {
		var spec struct {
			Config field `json:"config"`
		}
		if err := json.Unmarshal(docs[name], &spec); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		conf, err := yaml.Marshal(createObject(t, spec.Config.Children))
		if err != nil {
			t.Fatal(err)
		}
		problems, err := speclint.Validate(name, string(conf))
		if err != nil {
			t.Fatal(err)
		}
		if len(problems) > 0 {
			t.Errorf("%s: the create config has problems %q:\n%s", name, problems, conf)
		}
	}
}
