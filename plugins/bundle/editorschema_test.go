package bundle_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"

	"github.com/connectd/connectd/internal/distribution"
	"github.com/connectd/connectd/internal/editorschema"
)

// compileEditorSchema compiles what `connectd schema` prints with a JSON
// Schema validator that this project did not write.
func compileEditorSchema(t *testing.T) (*jsonschema.Schema, map[string]any) {
	t.Helper()
	data, err := editorschema.Generate(distribution.MainSchema("test", "now"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("connectd.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("connectd.schema.json")
	if err != nil {
		t.Fatalf("the schema does not compile: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return sch, m
}

// yamlInstance reads a YAML config as the JSON value an editor validates.
func yamlInstance(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// Every example config validates against the editor schema, and a misspelt
// field, a wrong enum value and a wrong type in them are refused, each
// error pointing at the place.
func TestEditorSchemaValidatesConfigs(t *testing.T) {
	t.Parallel()
	sch, _ := compileEditorSchema(t)
	paths, err := filepath.Glob(filepath.Join("..", "..", "config", "*.yaml"))
	if err != nil || len(paths) < 5 {
		t.Fatalf("config files %v: %v", paths, err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(yamlInstance(t, data)); err != nil {
			t.Errorf("%s does not validate against the editor schema: %v", p, err)
		}
	}

	const base = `
input:
  kafka_source:
    seed_brokers: [ "${BROKERS:127.0.0.1:9092}" ]
    topics: [ orders ]
    consumer_group: g
    start_from: earliest
    commit_period: 1s
    readers: ${READERS:2}
pipeline:
  processors:
    - mapping: root = this
output:
  kafka_sink:
    seed_brokers: [ 127.0.0.1:9092 ]
    topic: copy
    delivery_guarantee: exactly_once
`
	if err := sch.Validate(yamlInstance(t, []byte(base))); err != nil {
		t.Fatalf("the base config does not validate: %v", err)
	}
	for _, c := range []struct {
		name, old, new, where string
	}{
		{"misspelt kafka_source field", "consumer_group: g", "consumer_grop: g", "/input/kafka_source"},
		{"misspelt kafka_sink field", "topic: copy", "topik: copy", "/output/kafka_sink"},
		{"misspelt component", "kafka_sink:", "kafka_snk:", "/output"},
		{"misspelt top-level field", "pipeline:", "pipelin:", ""},
		{"misspelt Benthos processor field", "- mapping: root = this", "- mapping: root = this\n      labl: x", "/pipeline/processors/0"},
		{"enum value", "start_from: earliest", "start_from: earliest_offset", "/input/kafka_source/start_from"},
		{"wrong type", "readers: ${READERS:2}", "readers: two", "/input/kafka_source/readers"},
	} {
		bad := strings.Replace(base, c.old, c.new, 1)
		if bad == base {
			t.Fatalf("%s: %q not in the base config", c.name, c.old)
		}
		err := sch.Validate(yamlInstance(t, []byte(bad)))
		if err == nil {
			t.Errorf("%s: the schema accepts it", c.name)
			continue
		}
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !strings.Contains(err.Error(), "'"+c.where+"'") {
			t.Errorf("%s: the error does not point at %q:\n%v", c.name, c.where, err)
		}
	}
}

// The schema carries the field docs an editor shows: description, default,
// enum values with their meaning, and examples.
func TestEditorSchemaCarriesDocs(t *testing.T) {
	t.Parallel()
	_, doc := compileEditorSchema(t)
	defs := doc["definitions"].(map[string]any)
	src, ok := defs["input.kafka_source"].(map[string]any)
	if !ok {
		t.Fatal("no definition of input.kafka_source")
	}
	props := src["properties"].(map[string]any)
	start := props["start_from"].(map[string]any)
	if d, _ := start["description"].(string); !strings.Contains(d, "scan.startup.mode") {
		t.Errorf("start_from's description %q does not name its Flink option", d)
	}
	if start["default"] != "committed" {
		t.Errorf("start_from's default %v, want committed", start["default"])
	}
	enc, _ := json.Marshal(start)
	for _, want := range []string{`"enum":[`, `"earliest"`, `"timestamp"`} {
		if !bytes.Contains(enc, []byte(want)) {
			t.Errorf("start_from's schema lacks %s: %s", want, enc)
		}
	}
	// Annotated options carry their meaning (Benthos's lru cache's algorithm).
	lru, _ := json.Marshal(defs["cache.lru"])
	if !bytes.Contains(lru, []byte(`"enumDescriptions"`)) {
		t.Errorf("cache.lru's annotated options have no enumDescriptions: %s", lru)
	}
	topics := props["topics"].(map[string]any)
	if _, ok := topics["examples"]; !ok {
		t.Errorf("topics has no examples: %v", topics)
	}
	sink := defs["output.kafka_sink"].(map[string]any)["properties"].(map[string]any)
	if d := sink["commit_interval"].(map[string]any)["default"]; d != "1s" {
		t.Errorf("kafka_sink commit_interval default %v, want 1s", d)
	}
	// Benthos's components are documented as well.
	gen := defs["input.generate"].(map[string]any)["properties"].(map[string]any)
	if d, _ := gen["interval"].(map[string]any)["description"].(string); d == "" {
		t.Error("generate's interval has no description")
	}
	http := doc["properties"].(map[string]any)["http"].(map[string]any)["properties"].(map[string]any)
	if d := http["address"].(map[string]any)["default"]; d != distribution.DefaultHTTPAddress {
		t.Errorf("http.address default %v, want connectd's %s", d, distribution.DefaultHTTPAddress)
	}
}
