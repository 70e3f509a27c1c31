package kafkasink

import (
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	// generate input and the full Bloblang method set for lint tests.
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
)

func parseConfig(t *testing.T, yaml string) (Config, error) {
	t.Helper()
	pc, err := Spec().ParseYAML(yaml, nil)
	if err != nil {
		t.Fatalf("parsing YAML: %v", err)
	}
	return ConfigFromParsed(pc)
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c, err := parseConfig(t, `
seed_brokers: [ "localhost:9092" ]
topic: events
`)
	if err != nil {
		t.Fatal(err)
	}
	if c.DeliveryGuarantee != DeliveryAtLeastOnce || c.Partitioner != PartitionerDefault || c.Compression != CompressionNone ||
		c.MaxInFlight != 64 || c.MaxMessageBytes != 1<<20 || c.Timeout != 10*time.Second {
		t.Errorf("unexpected defaults: %+v", c)
	}
	if c.Key != nil || c.TimestampMs != nil {
		t.Errorf("key and timestamp_ms must be absent by default")
	}
	if !c.Headers.IsEmpty() {
		t.Errorf("no metadata must become headers by default")
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	const base = "seed_brokers: [ \"localhost:9092\" ]\ntopic: events\n"
	for _, tc := range []struct {
		name    string
		yaml    string
		want    DeliveryGuarantee // checked when wantErr is empty
		wantErr []string
	}{
		{name: "flink spelling", yaml: base + "delivery_guarantee: at-least-once\n", want: DeliveryAtLeastOnce},
		{name: "flink enum", yaml: base + "delivery_guarantee: AT_LEAST_ONCE\n", want: DeliveryAtLeastOnce},
		{name: "none", yaml: base + "delivery_guarantee: NONE\n", want: DeliveryNone},
		{name: "exactly once not yet", yaml: base + "delivery_guarantee: exactly-once\n",
			wantErr: []string{"field delivery_guarantee: exactly_once is not yet supported"}},
		{name: "unknown guarantee", yaml: base + "delivery_guarantee: at_most_once\n",
			wantErr: []string{`field delivery_guarantee: unknown value "at_most_once"`}},
		{name: "empty static topic", yaml: "seed_brokers: [ \"localhost:9092\" ]\ntopic: \"\"\n",
			wantErr: []string{"field topic: must not be empty"}},
		{name: "all problems at once", yaml: base + "delivery_guarantee: exactly_once\nmax_in_flight: 0\nmax_message_bytes: 100\ntimeout: 0s\n",
			wantErr: []string{
				"field delivery_guarantee: exactly_once is not yet supported",
				"field max_in_flight: must be at least 1, got 0",
				"field max_message_bytes: must be between 512 and 104857600 bytes, got 100",
				"field timeout: must be positive",
			}},
		{name: "connection fields", yaml: "seed_brokers: [ \"nohost\" ]\ntopic: events\nmax_in_flight: 0\n",
			wantErr: []string{`field seed_brokers: address "nohost" has no port`, "field max_in_flight"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := parseConfig(t, tc.yaml)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if c.DeliveryGuarantee != tc.want {
					t.Fatalf("delivery guarantee %q, want %q", c.DeliveryGuarantee, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("want errors %q, got none", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// The lint rule mirrors validate so that `connectd lint` catches the same
// mistakes without building the component.
func TestLintRule(t *testing.T) {
	t.Parallel()
	linter := service.GlobalEnvironment().FullConfigSchema("", "").NewStreamConfigLinter()
	for _, tc := range []struct {
		name  string
		extra string
		want  []string
	}{
		{name: "clean", extra: "delivery_guarantee: at-least-once"},
		{name: "exactly once", extra: "delivery_guarantee: exactly_once", want: []string{"exactly_once is not yet supported"}},
		{name: "unknown guarantee", extra: "delivery_guarantee: maybe", want: []string{`unknown value "maybe"`}},
		{name: "bounds", extra: "max_in_flight: 0\n    max_message_bytes: 10",
			want: []string{"field max_in_flight: must be at least 1", "field max_message_bytes: must be between 512 and 104857600"}},
		{name: "compression enum", extra: "compression: brotli", want: []string{"brotli"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lints, err := linter.LintYAML([]byte(`
input:
  generate:
    mapping: root = {}
output:
  kafka_sink:
    seed_brokers: [ localhost:9092 ]
    topic: events
    ` + tc.extra + `
`))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range lints {
				got = append(got, l.What)
			}
			all := strings.Join(got, "\n")
			if len(tc.want) == 0 && len(got) > 0 {
				t.Fatalf("unexpected lints: %s", all)
			}
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("lints %q do not contain %q", all, w)
				}
			}
		})
	}
}

// The spec's example must lint clean.
func TestSpecExampleLints(t *testing.T) {
	t.Parallel()
	linter := service.GlobalEnvironment().FullConfigSchema("", "").NewStreamConfigLinter()
	lints, err := linter.LintYAML([]byte(`
input:
  generate:
    mapping: root = {}
output:
  kafka_sink:
    seed_brokers: [ localhost:9092 ]
    topic: orders
    key: ${! json("customer_id") }
    metadata:
      include_prefixes: [ trace_ ]
    timestamp_ms: ${! json("event_time").ts_parse("2006-01-02T15:04:05Z07:00").ts_unix_milli() }
    delivery_guarantee: at_least_once
    batching:
      count: 500
      period: 50ms
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lints {
		t.Errorf("line %d: %s", l.Line, l.What)
	}
}
