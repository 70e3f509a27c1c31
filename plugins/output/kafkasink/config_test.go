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
		c.MaxInFlight != 1 || c.MaxMessageBytes != 1<<20 || c.Timeout != 10*time.Second ||
		c.TransactionalIDPrefix != "" || c.TransactionalIDSuffix != "0" || c.TransactionTimeout != time.Minute || c.WriterIndex != 0 {
		t.Errorf("unexpected defaults: %+v", c)
	}
	if c.Partition != nil {
		t.Errorf("partition must be absent by default")
	}

	// exactly_once: max_in_flight is 1 too, the id is prefix-suffix.
	c, err = parseConfig(t, `
seed_brokers: [ "localhost:9092" ]
topic: events
delivery_guarantee: exactly-once
transactional_id_prefix: orders
`)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxInFlight != 1 || c.TransactionalID() != "orders-0" {
		t.Errorf("exactly_once: max_in_flight %d (want 1), transactional id %q (want orders-0)", c.MaxInFlight, c.TransactionalID())
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
		{name: "exactly once needs a prefix", yaml: base + "delivery_guarantee: exactly-once\n",
			wantErr: []string{"field transactional_id_prefix: required with delivery_guarantee exactly_once"}},
		{name: "exactly once flink spelling", yaml: base + "delivery_guarantee: EXACTLY_ONCE\ntransactional_id_prefix: app\n", want: DeliveryExactlyOnce},
		{name: "prefix without exactly once", yaml: base + "transactional_id_prefix: app\n",
			wantErr: []string{"field transactional_id_prefix: only used with delivery_guarantee exactly_once, but delivery_guarantee is at_least_once"}},
		{name: "exactly once checks", yaml: base + "delivery_guarantee: exactly_once\ntransactional_id_prefix: app\ntransactional_id_suffix: \"\"\n" +
			"max_in_flight: 4\ntransaction_timeout: 10s\nbatching:\n  period: 10s\n",
			wantErr: []string{
				"field transactional_id_suffix: must not be empty",
				"field max_in_flight: must be 1 with delivery_guarantee exactly_once",
				"field batching.period: must be shorter than transaction_timeout (10s) with delivery_guarantee exactly_once, got 10s",
			}},
		{name: "transaction timeout positive", yaml: base + "transaction_timeout: 0s\n",
			wantErr: []string{"field transaction_timeout: must be at least 1ms, got 0s"}},
		{name: "transaction timeout in whole milliseconds", yaml: base + "transaction_timeout: 500us\n",
			wantErr: []string{"field transaction_timeout: must be at least 1ms, got 500µs"}},
		{name: "manual needs partition", yaml: base + "partitioner: manual\n",
			wantErr: []string{"field partition: required with partitioner manual"}},
		{name: "partition needs manual", yaml: base + "partitioner: round-robin\npartition: \"3\"\n",
			wantErr: []string{"field partition: only used with partitioner manual, but partitioner is round_robin"}},
		{name: "unknown partitioner", yaml: base + "partitioner: sticky\n",
			wantErr: []string{`field partitioner: unknown partitioner "sticky" (want default, fixed, round_robin, manual or expression)`}},
		{name: "negative writer index", yaml: base + "partitioner: fixed\nwriter_index: -1\n",
			wantErr: []string{"field writer_index: must not be negative, got -1"}},
		{name: "unknown guarantee", yaml: base + "delivery_guarantee: at_most_once\n",
			wantErr: []string{`field delivery_guarantee: unknown value "at_most_once"`}},
		{name: "empty static topic", yaml: "seed_brokers: [ \"localhost:9092\" ]\ntopic: \"\"\n",
			wantErr: []string{"field topic: must not be empty"}},
		{name: "all problems at once", yaml: base + "delivery_guarantee: exactly_once\nmax_in_flight: 0\nmax_message_bytes: 100\ntimeout: 0s\n",
			wantErr: []string{
				"field transactional_id_prefix: required with delivery_guarantee exactly_once",
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
		{name: "exactly once clean", extra: "delivery_guarantee: exactly-once\n    transactional_id_prefix: app\n    batching: { period: 1s }"},
		{name: "exactly once needs prefix", extra: "delivery_guarantee: exactly_once",
			want: []string{"field transactional_id_prefix: required with delivery_guarantee exactly_once"}},
		{name: "exactly once checks", extra: "delivery_guarantee: exactly_once\n    transactional_id_prefix: app\n    transactional_id_suffix: \"\"\n" +
			"    max_in_flight: 8\n    transaction_timeout: 30s\n    batching: { period: 1m }",
			want: []string{
				"field transactional_id_suffix: must not be empty",
				"field max_in_flight: must be 1 with delivery_guarantee exactly_once",
				"field batching.period: must be shorter than transaction_timeout (30s) with delivery_guarantee exactly_once, got 1m",
			}},
		{name: "batching period at the default timeout", extra: "delivery_guarantee: exactly_once\n    transactional_id_prefix: app\n    batching: { period: 60s }",
			want: []string{"field batching.period: must be shorter than transaction_timeout (1m0s)"}},
		{name: "prefix without exactly once", extra: "transactional_id_prefix: app",
			want: []string{"field transactional_id_prefix: only used with delivery_guarantee exactly_once"}},
		{name: "transaction timeout too short", extra: "transaction_timeout: 100us",
			want: []string{"field transaction_timeout: must be at least 1ms, got 100µs"}},
		{name: "transaction timeout wrong type", extra: "transaction_timeout: soon",
			want: []string{"field transaction_timeout: expected a Go duration"}},
		{name: "partitioners clean", extra: "partitioner: fixed\n    writer_index: 3"},
		{name: "manual clean", extra: "partitioner: manual\n    partition: ${! @p }"},
		{name: "manual needs partition", extra: "partitioner: manual", want: []string{"field partition: required with partitioner manual"}},
		{name: "partition needs manual", extra: "partition: \"1\"", want: []string{"field partition: only used with partitioner manual, but partitioner is default"}},
		{name: "unknown partitioner", extra: "partitioner: sticky", want: []string{`field partitioner: unknown partitioner "sticky"`}},
		{name: "negative writer index", extra: "partitioner: fixed\n    writer_index: -2", want: []string{"field writer_index: must not be negative"}},
		{name: "unknown guarantee", extra: "delivery_guarantee: maybe", want: []string{`unknown value "maybe"`}},
		{name: "bounds", extra: "max_in_flight: 0\n    max_message_bytes: 10",
			want: []string{"field max_in_flight: must be at least 1", "field max_message_bytes: must be between 512 and 104857600"}},
		{name: "compression enum", extra: "compression: brotli", want: []string{"brotli"}},
		{name: "buffer below a message", extra: "max_message_bytes: 2097152\n    max_buffered_bytes: 1048576",
			want: []string{"field max_buffered_bytes: must be at least max_message_bytes (2097152 bytes)"}},
		{name: "buffer too large", extra: "max_buffered_bytes: 2147483648",
			want: []string{"field max_buffered_bytes: must be at most 1073741824 bytes (1 GiB)"}},
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

// The spec's examples must lint clean.
func TestSpecExamplesLint(t *testing.T) {
	t.Parallel()
	linter := service.GlobalEnvironment().FullConfigSchema("", "").NewStreamConfigLinter()
	for name, example := range map[string]string{"keyed": exampleKeyed, "exactly once": exampleExactlyOnce} {
		lints, err := linter.LintYAML([]byte("input:\n  generate:\n    mapping: root = {}\n" + example))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lints {
			t.Errorf("%s: line %d: %s", name, l.Line, l.What)
		}
	}
}

// With at_least_once and none, a sink without a batching policy batches by
// default (batches are written one at a time, for order); `count: 1` and any
// policy set keep theirs; exactly_once keeps each input batch as one
// transaction.
func TestDefaultBatching(t *testing.T) {
	t.Parallel()
	def := service.BatchPolicy{Count: defaultBatchCount, ByteSize: defaultBatchBytes, Period: defaultBatchPeriod}
	for _, tc := range []struct {
		name, yaml string
		want       service.BatchPolicy
	}{
		{"at_least_once, unset", "", def},
		{"none, unset", "delivery_guarantee: none\n", def},
		{"empty policy", "batching: {}\n", def},
		{"count 1: each input batch as it comes", "batching: { count: 1 }\n", service.BatchPolicy{Count: 1}},
		{"a policy set", "batching: { count: 500, period: 50ms }\n", service.BatchPolicy{Count: 500, Period: "50ms"}},
		{"exactly_once, unset", "delivery_guarantee: exactly_once\ntransactional_id_prefix: p\n", service.BatchPolicy{}},
	} {
		c, err := parseConfig(t, "seed_brokers: [ \"localhost:9092\" ]\ntopic: events\n"+tc.yaml)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b := c.Batching
		if b.Count != tc.want.Count || b.ByteSize != tc.want.ByteSize || b.Period != tc.want.Period || b.Check != "" {
			t.Errorf("%s: batching %+v, want %+v", tc.name, b, tc.want)
		}
	}
}
