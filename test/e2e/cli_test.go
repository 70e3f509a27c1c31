package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestVersionHasProductName(t *testing.T) {
	t.Parallel()
	out, code := runCLI(t, 30*time.Second, "--version")
	if code != 0 || !strings.HasPrefix(out, "connectd ") || !strings.Contains(out, "\nBenthos: v4.") {
		t.Fatalf("connectd --version exit %d, want `connectd <version>` and the Benthos version: %s", code, out)
	}
}

func TestListJSONSchemaIncludesKafkaPlugins(t *testing.T) {
	t.Parallel()
	out, code := runCLI(t, 60*time.Second, "list", "--format", "jsonschema")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	var schema map[string]any
	if err := json.Unmarshal([]byte(out), &schema); err != nil {
		t.Fatalf("jsonschema output is not JSON: %v", err)
	}
	for _, name := range []string{`"kafka_source"`, `"kafka_sink"`, `"prometheus"`} {
		if !strings.Contains(out, name) {
			t.Errorf("jsonschema lacks %s", name)
		}
	}
}

func TestListNamesPlugins(t *testing.T) {
	t.Parallel()
	out, code := runCLI(t, 60*time.Second, "list", "inputs", "outputs", "metrics")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, name := range []string{"kafka_source", "kafka_sink", "prometheus"} {
		if !strings.Contains(out, name) {
			t.Errorf("list lacks %s:\n%s", name, out)
		}
	}
}

func TestDefaultMetricsIsPrometheus(t *testing.T) {
	t.Parallel()
	out, code := runCLI(t, 30*time.Second, "echo", writeFile(t, "empty.yaml", "input:\n  stdin: {}\n"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if !strings.Contains(out, "metrics:\n  prometheus:") {
		t.Fatalf("default metrics is not prometheus:\n%s", out)
	}
}

func TestLintRejectsBadFieldsNamingThem(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{
			name: "unknown field in kafka_source",
			yaml: `
input:
  kafka_source:
    seed_brokers: [ "127.0.0.1:9092" ]
    topics: [ a ]
    consumer_group: g
    no_such_field: 1
output:
  drop: {}
`,
			want: []string{"no_such_field"},
		},
		{
			name: "wrong type in kafka_sink",
			yaml: `
input:
  stdin: {}
output:
  kafka_sink:
    seed_brokers: [ "127.0.0.1:9092" ]
    topic: t
    max_in_flight: lots
`,
			want: []string{"max_in_flight", "expected an integer"},
		},
		{
			name: "wrong duration in kafka_source and bool in kafka_sink",
			yaml: `
input:
  kafka_source:
    seed_brokers: [ "127.0.0.1:9092" ]
    topics: [ a ]
    consumer_group: g
    commit_period: 5 seconds
output:
  kafka_sink:
    seed_brokers: [ "127.0.0.1:9092" ]
    topic: t
    allow_auto_topic_creation: sometimes
`,
			want: []string{"commit_period", "allow_auto_topic_creation"},
		},
		{
			name: "invalid combination: SASL without a user",
			yaml: `
input:
  stdin: {}
output:
  kafka_sink:
    seed_brokers: [ "127.0.0.1:9092" ]
    topic: t
    sasl:
      mechanism: SCRAM-SHA-512
`,
			want: []string{"sasl.username"},
		},
		{
			name: "unknown enum value",
			yaml: `
input:
  kafka_source:
    seed_brokers: [ "127.0.0.1:9092" ]
    topics: [ a ]
    consumer_group: g
    start_from: yesterday
output:
  drop: {}
`,
			want: []string{"start_from"},
		},
		{
			name: "table option connectd does not support",
			yaml: `
input:
  kafka_source:
    ddl: |
      CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', 'topic' = 'a', 'format' = 'json',
        'properties.bootstrap.servers' = '127.0.0.1:9092', 'properties.group.id' = 'g', 'scan.parallelism' = '2')
output:
  drop: {}
`,
			want: []string{"option 'scan.parallelism' is not supported"},
		},
		{
			name: "field contradicting a table option",
			yaml: `
input:
  stdin: {}
output:
  kafka_sink:
    topic: other
    ddl: |
      CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', 'topic' = 'a', 'format' = 'json',
        'properties.bootstrap.servers' = '127.0.0.1:9092')
`,
			want: []string{"field topic", "option 'topic' = 'a'"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, code := runCLI(t, 30*time.Second, "lint", writeFile(t, "bad.yaml", c.yaml))
			if code == 0 {
				t.Fatalf("lint accepted the config:\n%s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("lint output does not name %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestConfigFilesLintAndPassTheirTests(t *testing.T) {
	t.Parallel()
	if out, code := runCLI(t, 60*time.Second, "lint", "config/quickstart.yaml"); code != 0 {
		t.Fatalf("lint config/: exit %d:\n%s", code, out)
	}
	if out, code := runCLI(t, 60*time.Second, "test", "./config/..."); code != 0 {
		t.Fatalf("connectd test ./config/...: exit %d:\n%s", code, out)
	}
}
