package tryrun

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/connectd/connectd/internal/studio/catalog"
)

func TestPlanOnDevBroker(t *testing.T) {
	t.Parallel()
	dir, copies := t.TempDir(), t.TempDir()
	sql := "CREATE TABLE c (id INT) WITH ('connector' = 'kafka', 'topic' = 'from-catalog', 'format' = 'json',\n" +
		"  'properties.bootstrap.servers' = 'prod-1:9092')"
	if err := os.WriteFile(filepath.Join(dir, "tables.sql"), []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `http:
  enabled: false
metrics:
  none: {}
input:
  broker:
    inputs:
      - kafka_source:
          seed_brokers: [ prod-1:9092 ]
          topics: [ orders ]
          tls: { enabled: true }
          sasl: { mechanism: PLAIN, username: u, password: p }
      - kafka_source:
          catalog: ./tables.sql
          table: c
output:
  kafka_sink:
    ddl: |
      CREATE TABLE o (id INT) WITH ('connector' = 'kafka', 'topic' = 'out', 'format' = 'json',
        'properties.bootstrap.servers' = 'prod-1:9092')
`
	p, err := makePlan(planInput{
		src: []byte(src), env: catalog.Env{Dir: dir}, devBroker: "127.0.0.1:5555",
		tapFile: "/tmp/tap.jsonl", maxMessages: 7, metricsAddr: "127.0.0.1:6666", copyDir: copies,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.brokers, []string{"prod-1:9092"}) || !slices.Equal(p.topics, []string{"orders", "from-catalog", "out"}) {
		t.Fatalf("brokers %v topics %v", p.brokers, p.topics)
	}
	cfg := string(p.config)
	if strings.Contains(cfg, "prod-1") || strings.Contains(cfg, "tls") || strings.Contains(cfg, "sasl") {
		t.Fatalf("the run's config still names the real cluster:\n%s", cfg)
	}
	var got struct {
		HTTP    map[string]any `yaml:"http"`
		Metrics map[string]any `yaml:"metrics"`
		Input   struct {
			Broker struct {
				Inputs []struct {
					KafkaSource map[string]any `yaml:"kafka_source"`
				} `yaml:"inputs"`
			} `yaml:"broker"`
		} `yaml:"input"`
		Output struct {
			Broker struct {
				Pattern string           `yaml:"pattern"`
				Outputs []map[string]any `yaml:"outputs"`
			} `yaml:"broker"`
		} `yaml:"output"`
	}
	if err := yaml.Unmarshal(p.config, &got); err != nil {
		t.Fatal(err)
	}
	if got.HTTP["address"] != "127.0.0.1:6666" || got.HTTP["enabled"] != true || got.Metrics["prometheus"] == nil || len(got.Metrics) != 1 {
		t.Fatalf("http %v metrics %v", got.HTTP, got.Metrics)
	}
	for i, in := range got.Input.Broker.Inputs {
		if b := in.KafkaSource["seed_brokers"]; len(b.([]any)) != 1 || b.([]any)[0] != "127.0.0.1:5555" {
			t.Fatalf("input %d seed_brokers %v", i, b)
		}
	}
	copied, _ := got.Input.Broker.Inputs[1].KafkaSource["catalog"].(string)
	data, err := os.ReadFile(copied)
	if err != nil || !strings.HasPrefix(copied, copies) || !strings.Contains(string(data), "'properties.bootstrap.servers' = '127.0.0.1:5555'") {
		t.Fatalf("catalog copy %q: %v\n%s", copied, err, data)
	}
	outs := got.Output.Broker.Outputs
	if got.Output.Broker.Pattern != "fan_out" || len(outs) != 2 || outs[0]["kafka_sink"] == nil || outs[1]["label"] != tapLabel {
		t.Fatalf("output %+v", got.Output)
	}
	if ddl := outs[0]["kafka_sink"].(map[string]any)["ddl"].(string); !strings.Contains(ddl, "'properties.bootstrap.servers' = '127.0.0.1:5555'") {
		t.Fatalf("ddl %q", ddl)
	}
	tap := outs[1]
	if tap["file"].(map[string]any)["path"] != "/tmp/tap.jsonl" || !strings.Contains(cfgOf(tap), "counter() > 7") {
		t.Fatalf("tap %v", tap)
	}
}

func cfgOf(v any) string {
	b, _ := yaml.Marshal(v)
	return string(b)
}

func TestPlanConfiguredKeepsBrokers(t *testing.T) {
	t.Parallel()
	src := "input:\n  kafka_source: { seed_brokers: [ 'a:1,b:2' ], topics: [ x ] }\noutput:\n  stdout: {}\n"
	p, err := makePlan(planInput{src: []byte(src), tapFile: "/t", maxMessages: 1, metricsAddr: "127.0.0.1:1", copyDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.brokers, []string{"a:1", "b:2"}) || !strings.Contains(string(p.config), "a:1,b:2") {
		t.Fatalf("brokers %v\n%s", p.brokers, p.config)
	}
	if _, err := makePlan(planInput{src: []byte("input:\n  stdin: {}\n")}); err != errNoOutput {
		t.Fatalf("no output: %v", err)
	}
}

func TestMetricsSummary(t *testing.T) {
	t.Parallel()
	text := `# HELP input_received Benthos counter input_received
# TYPE input_received counter
input_received{label="",path="root.input.broker.inputs.0"} 16
input_received{label="",path="root.input.broker.inputs.1"} 14
output_sent{label="",path="root.output.broker.outputs.0.switch.cases.0.output"} 10
output_sent{label="",path="root.output.broker.outputs.0.switch.cases.1.output"} 15
output_sent{label="studio_tap",path="root.output.broker.outputs.1"} 5
kafka_source_lag{label="",path="root.input.broker.inputs.1",partition="0",topic="q"} 3
kafka_source_lag{label="",path="root.input.broker.inputs.1",partition="1",topic="q"} 4
kafka_source_watermark_ms{label="a\"}b",path="root.input"} 2000
kafka_source_watermark_ms{label="",path="root.input.x"} 1500
kafka_source_watermark_ms{label="",path="root.input.y"} -9.223372036854776e+18
`
	samples, err := parseText(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	first := summarise(samples, mustTime(t, "2026-12-03T10:00:00Z"), nil)
	if first.RecordsIn != 30 || first.RecordsOut != 25 || *first.KafkaSourceLag != 7 || *first.WatermarkMs != 1500 {
		t.Fatalf("summary %+v", first)
	}
	none := summarise([]sample{{name: "kafka_source_watermark_ms", value: math.MaxInt64}}, mustTime(t, "2026-12-03T10:00:00Z"), nil)
	if none.WatermarkMs != nil {
		t.Fatalf("end-of-input watermark shown as a time: %v", *none.WatermarkMs)
	}
	if first.Series["output_sent"] != 25 || first.Series["kafka_source_lag"] != 7 {
		t.Fatalf("series %v: the tap's own output must not count", first.Series)
	}
	later := strings.ReplaceAll(strings.ReplaceAll(text, "} 16", "} 36"), "} 15\n", "} 35\n")
	samples, _ = parseText(strings.NewReader(later))
	second := summarise(samples, mustTime(t, "2026-12-03T10:00:02Z"), first)
	if second.RecordsInPerSec != 10 || second.RecordsOutPerSec != 10 {
		t.Fatalf("rates in %v out %v, want 10/s each", second.RecordsInPerSec, second.RecordsOutPerSec)
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}
