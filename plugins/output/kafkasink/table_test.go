package kafkasink

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/schema/registry/registrytest"

	// kafka_source reads back what the sink wrote.
	_ "github.com/connectd/connectd/plugins/input/kafkasource"
)

const tableTestTimeout = 30 * time.Second

// yamlDDL quotes DDL as a YAML block scalar under key ddl, indented by
// indent spaces.
func yamlDDL(ddl string, indent int) string {
	pad := strings.Repeat(" ", indent)
	return pad + "ddl: |\n" + pad + "  " + strings.ReplaceAll(ddl, "\n", "\n"+pad+"  ") + "\n"
}

// sinkDDL has key fields with a prefix, EXCEPT_KEY, writable metadata
// (timestamp, headers) and read-only metadata declared VIRTUAL.
func sinkDDL(addr string) string {
	return fmt.Sprintf(`CREATE TABLE orders (
  k_id BIGINT,
  name STRING,
  amount DECIMAL(10, 2),
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  hdrs MAP<STRING, BYTES> METADATA FROM 'headers',
  off BIGINT METADATA FROM 'offset' VIRTUAL
) WITH (
  'connector' = 'kafka', 'topic' = 'orders', 'properties.bootstrap.servers' = '%s',
  'properties.group.id' = 'orders-reader', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
  'key.format' = 'json', 'key.fields' = 'k_id', 'key.fields-prefix' = 'k_',
  'value.format' = 'json', 'value.fields-include' = 'EXCEPT_KEY'
)`, addr)
}

// runStream runs a stream from YAML until it ends, and returns what
// consume saw.
func runStream(t *testing.T, yaml string) []*service.Message {
	t.Helper()
	b := service.NewStreamBuilder()
	if err := b.SetYAML(yaml + "logger:\n  level: " + logLevel() + "\n"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []*service.Message
	if strings.Contains(yaml, "kafka_source") {
		if err := b.AddConsumerFunc(func(_ context.Context, m *service.Message) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, m.Copy())
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), tableTestTimeout)
	defer cancel()
	if err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return got
}

func consumeAll(t *testing.T, addr, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), tableTestTimeout)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		f := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("got %d of %d records of %s: %v", len(out), n, topic, err)
		}
		out = append(out, f.Records()...)
	}
	return out
}

// key.fields with a prefix and EXCEPT_KEY put the right bytes in the key
// and the value; the timestamp and headers columns become the record's; and
// kafka_source with the same table gives back the same typed row.
func TestTableSinkKeyValueRoundTrip(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(1, "orders"))
	ddl := sinkDDL(addr)
	runStream(t, `
input:
  generate:
    count: 1
    interval: ""
    mapping: |
      root = {"k_id": 7, "name": "ada", "amount": "12.30", "ts": "2023-11-14T22:13:20.123Z", "hdrs": {"trace": "YWJj"}}
output:
  kafka_sink:
`+yamlDDL(ddl, 4))

	recs := consumeAll(t, addr, "orders", 1)
	r := recs[0]
	if string(r.Key) != `{"id":7}` {
		t.Errorf("key = %s, want {\"id\":7}", r.Key)
	}
	var value map[string]any
	if err := json.Unmarshal(r.Value, &value); err != nil {
		t.Fatalf("value %s: %v", r.Value, err)
	}
	if _, has := value["k_id"]; has || value["name"] != "ada" || len(value) != 2 {
		t.Errorf("value = %s, want name and amount only (EXCEPT_KEY)", r.Value)
	}
	if r.Timestamp.UnixMilli() != 1700000000123 {
		t.Errorf("timestamp = %v, want the ts column", r.Timestamp)
	}
	if len(r.Headers) != 1 || r.Headers[0].Key != "trace" || string(r.Headers[0].Value) != "abc" {
		t.Errorf("headers = %v, want trace=abc", r.Headers)
	}

	// Back through kafka_source with the same table (bounded by the
	// table's scan.bounded.mode): the same typed row.
	got := runStream(t, "input:\n  kafka_source:\n"+yamlDDL(ddl, 4)+"output:\n  drop: {}\n")
	if len(got) != 1 {
		t.Fatalf("kafka_source read %d rows, want 1", len(got))
	}
	v, err := got[0].AsStructured()
	if err != nil {
		t.Fatal(err)
	}
	row := v.(map[string]any)
	ts, _ := row["ts"].(time.Time)
	hdrs, _ := row["hdrs"].(map[string]any)
	if row["k_id"] != int64(7) || row["name"] != "ada" || row["amount"] != json.Number("12.30") || ts.UnixMilli() != 1700000000123 ||
		hdrs == nil || string(hdrs["trace"].([]byte)) != "abc" || row["off"] != int64(0) {
		t.Fatalf("row read back = %#v", row)
	}
}

// The seed's two CREATE TABLE statements (issue 5) drive a pipeline:
// kafka_source reads JSON user events by the first table, a mapping turns
// them into device metrics, and kafka_sink writes them by the second table
// (avro-confluent against a fake registry, exactly-once, keyed by its
// PRIMARY KEY). kafka_source then reads device_metrics by the second table
// and gets the rows that were written, typed.
func TestTableSeedPipeline(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(1, "user_events", "device_metrics"))
	reg := registrytest.New()
	t.Cleanup(reg.Close)
	seed, err := os.ReadFile("../../../schema/testdata/seed.sql")
	if err != nil {
		t.Fatal(err)
	}
	sql := strings.ReplaceAll(string(seed), "kafka:9092", addr)
	sql = strings.ReplaceAll(sql, "http://schema-registry:8081", reg.URL())
	cat := filepath.Join(t.TempDir(), "seed.sql")
	if err := os.WriteFile(cat, []byte(sql), 0o600); err != nil {
		t.Fatal(err)
	}

	b := service.NewStreamBuilder()
	if err := b.SetYAML(fmt.Sprintf(`
input:
  kafka_source:
    catalog: %[1]q
    table: kafka_source
    commit_period: 100ms
pipeline:
  processors:
    - mapping: |
        root.device_id = this.user_id
        root.metric_value = this.event_time.ts_unix_milli()
output:
  kafka_sink:
    catalog: %[1]q
    table: kafka_sink
logger:
  level: warn
`, cat)); err != nil {
		t.Fatal(err)
	}
	stream, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), tableTestTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- stream.Run(ctx) }()

	// The table starts at latest-offset, resolved when the input connects:
	// produce events until three metrics arrive, then stop.
	producer, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	base := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	want := map[string]float64{}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("device_metrics"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	var metrics []*kgo.Record
	for i := 0; len(metrics) < 3; i++ {
		if ctx.Err() != nil {
			t.Fatalf("after %d events: %d metrics", i, len(metrics))
		}
		user := fmt.Sprintf("u%d", i)
		ts := base.Add(time.Duration(i) * time.Second)
		want[user] = float64(ts.UnixMilli())
		ev := fmt.Sprintf(`{"user_id":%q,"event_time":%q}`, user, ts.Format("2006-01-02 15:04:05.000"))
		if err := producer.ProduceSync(ctx, &kgo.Record{Topic: "user_events", Value: []byte(ev)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		metrics = append(metrics, consumer.PollFetches(pctx).Records()...)
		pcancel()
	}
	if err := stream.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	<-done
	for _, r := range metrics {
		if len(r.Value) < 5 || r.Value[0] != 0 {
			t.Fatalf("value %x is not in the Confluent wire format", r.Value)
		}
		if _, ok := want[string(r.Key)]; !ok {
			t.Fatalf("key %q is not a device_id (the PRIMARY KEY, raw)", r.Key)
		}
	}
	if reg.Requests("POST", "/subjects/device_metrics-value/versions") == 0 {
		t.Fatal("the value schema was not registered under device_metrics-value")
	}

	// Round trip: kafka_source by the kafka_sink table reads the typed
	// rows back (bounded by YAML; the table has no scan.bounded.mode).
	got := runStream(t, fmt.Sprintf(`
input:
  kafka_source:
    catalog: %q
    table: kafka_sink
    consumer_group: check
    start_from: earliest
    stop_at: latest
output:
  drop: {}
`, cat))
	if len(got) < 3 {
		t.Fatalf("read back %d rows, want at least 3", len(got))
	}
	for _, m := range got {
		v, err := m.AsStructured()
		if err != nil {
			t.Fatal(err)
		}
		row := v.(map[string]any)
		id, _ := row["device_id"].(string)
		if w, ok := want[id]; !ok || row["metric_value"] != w || len(row) != 2 {
			t.Fatalf("row %#v: want device_id of a produced user and metric_value %v", row, w)
		}
		if k, _ := m.MetaGet("kafka_key"); k != id {
			t.Fatalf("kafka_key %q, want the device_id %q", k, id)
		}
	}
}

// seedDDL returns the CREATE TABLE statement of the seed's table name
// (issue 5) from its one fixture, schema/testdata/seed.sql.
func seedDDL(t *testing.T, name string) string {
	t.Helper()
	seed, err := os.ReadFile("../../../schema/testdata/seed.sql")
	if err != nil {
		t.Fatal(err)
	}
	head := "CREATE TABLE " + name + " ("
	_, rest, ok := strings.Cut(string(seed), head)
	if !ok {
		t.Fatalf("schema/testdata/seed.sql has no %q", head)
	}
	stmt, _, _ := strings.Cut(rest, "\nCREATE TABLE ")
	return head + strings.TrimRight(stmt, "\n")
}

func TestTableSinkConfig(t *testing.T) {
	t.Parallel()
	seedSink := seedDDL(t, "kafka_sink")
	c, err := parseConfig(t, yamlDDL(seedSink, 0))
	if err != nil {
		t.Fatal(err)
	}
	if topic, _ := c.Topic.Static(); topic != "device_metrics" || c.DeliveryGuarantee != DeliveryExactlyOnce || c.MaxInFlight != 1 ||
		c.TransactionalIDPrefix != "flink-producer-" || strings.Join(c.Conn.SeedBrokers, ",") != "kafka:9092" || c.Table == nil {
		t.Fatalf("derived: %+v", c)
	}

	// A field that agrees with the table lints and parses clean, and the
	// exactly-once checks see the table's guarantee.
	agree := yamlDDL(seedSink, 0) + "transactional_id_prefix: flink-producer-\ntransactional_id_suffix: host-1\n"
	if _, err := parseConfig(t, agree); err != nil {
		t.Fatalf("agreeing fields: %v", err)
	}
	if err := service.NewStreamBuilder().SetYAML("input:\n  generate:\n    mapping: 'root = {}'\noutput:\n  kafka_sink:\n    " +
		strings.ReplaceAll(strings.TrimSpace(agree), "\n", "\n    ") + "\n"); err != nil {
		t.Fatalf("agreeing fields lint: %v", err)
	}

	// upsert-kafka's buffer flush is the batching policy.
	upsert := yamlDDL(`CREATE TABLE u (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = 'u',
  'properties.bootstrap.servers' = 'h:1', 'key.format' = 'json', 'value.format' = 'json',
  'sink.buffer-flush.max-rows' = '500', 'sink.buffer-flush.interval' = '1 s')`, 0)
	c, err = parseConfig(t, upsert)
	if err != nil {
		t.Fatal(err)
	}
	if c.Batching.Count != 500 || c.Batching.Period != "1s" {
		t.Fatalf("buffer flush: batching %+v, want count 500 period 1s", c.Batching)
	}
	if _, err := parseConfig(t, upsert+"batching:\n  count: 10\n"); err == nil || !strings.Contains(err.Error(), "field batching:") ||
		!strings.Contains(err.Error(), "'sink.buffer-flush.max-rows' / 'sink.buffer-flush.interval'") {
		t.Fatalf("batching against the buffer flush: %v", err)
	}

	// The table inline, in the YAML form.
	c, err = parseConfig(t, `
table:
  name: metrics
  columns:
    - { name: device_id, type: STRING }
    - { name: metric_value, type: DOUBLE }
  primary_key: [ device_id ]
  options:
    connector: kafka
    topic: metrics
    properties.bootstrap.servers: h:1
    format: json
    sink.partitioner: round-robin
`)
	if err != nil {
		t.Fatal(err)
	}
	if topic, _ := c.Topic.Static(); topic != "metrics" || c.Partitioner != PartitionerRoundRobin || !c.Table.HasKey() {
		t.Fatalf("inline table: topic %q partitioner %s", topic, c.Partitioner)
	}

	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"delivery contradicts", yamlDDL(seedSink, 0) + "delivery_guarantee: none\n",
			[]string{`field delivery_guarantee: "none" contradicts option 'sink.delivery-guarantee' = 'exactly-once' of table kafka_sink`}},
		{"topic contradicts", yamlDDL(seedSink, 0) + "topic: other\n",
			[]string{`field topic: "other" contradicts option 'topic' = 'device_metrics'`}},
		{"key contradicts", yamlDDL(seedSink, 0) + "key: ${! @id }\n",
			[]string{`field key: "${! @id }" contradicts option 'key.fields' = 'device_id'`}},
		{"partitioner contradicts", yamlDDL(strings.Replace(seedSink, "'sink.delivery-guarantee'", "'sink.partitioner' = 'fixed', 'sink.delivery-guarantee'", 1), 0) + "partitioner: round_robin\n",
			[]string{`field partitioner: "round_robin" contradicts option 'sink.partitioner' = 'fixed'`}},
		{"unsupported option", yamlDDL(strings.Replace(seedSink, "'sink.delivery-guarantee'", "'sink.parallelism' = '4', 'sink.delivery-guarantee'", 1), 0),
			[]string{"option 'sink.parallelism' is not supported by connectd: connectd has no operator parallelism"}},
		{"exactly-once from the table, max_in_flight from YAML", yamlDDL(seedSink, 0) + "max_in_flight: 4\n",
			[]string{"field max_in_flight: must be 1 with delivery_guarantee exactly_once"}},
		{"read-only metadata", yamlDDL(`CREATE TABLE t (a STRING, o BIGINT METADATA FROM 'offset') WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'raw', 'properties.bootstrap.servers' = 'h:1')`, 0),
			[]string{"column o: metadata 'offset' is read-only"}},
		{"topic pattern", yamlDDL(`CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', 'topic-pattern' = 'x.*', 'format' = 'raw', 'properties.bootstrap.servers' = 'h:1')`, 0),
			[]string{"option 'topic-pattern' = 'x.*' is for reading"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseConfig(t, tc.yaml)
			lintErr := service.NewStreamBuilder().SetYAML("input:\n  generate:\n    mapping: 'root = {}'\noutput:\n  kafka_sink:\n" +
				"    " + strings.ReplaceAll(strings.TrimSpace(tc.yaml), "\n", "\n    ") + "\n")
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("config: want %q, got %v", w, err)
				}
				if lintErr == nil || !strings.Contains(lintErr.Error(), w) {
					t.Errorf("lint: want %q, got %v", w, lintErr)
				}
			}
		})
	}
}

// upsert-kafka: the key is the PRIMARY KEY, a row flagged as deleted
// (kafka_tombstone_message, as kafka_source sets it) is a tombstone, and
// kafka_source reads a tombstone back as a delete row: the key columns, the
// rest NULL, flagged the same way.
func TestTableUpsertTombstones(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(1, "users"))
	ddl := fmt.Sprintf(`CREATE TABLE users (
  id BIGINT,
  name STRING,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'users', 'properties.bootstrap.servers' = '%s', 'properties.group.id' = 'users-reader',
  'key.format' = 'json', 'value.format' = 'json'
)`, addr)
	// Bloblang's count() counters live as long as the process: named by
	// addr, this run's start at 1 (go test -count).
	runStream(t, fmt.Sprintf(`
input:
  generate:
    count: 2
    interval: ""
    mapping: |
      root = if count("upsert-%[1]s") == 1 { {"id": 1, "name": "ada"} } else { {"id": 1} }
      meta kafka_tombstone_message = if count("upsert-meta-%[1]s") == 2 { true } else { false }
output:
  kafka_sink:
`, addr)+yamlDDL(ddl, 4))
	recs := consumeAll(t, addr, "users", 2)
	if string(recs[0].Key) != `{"id":1}` || recs[0].Value == nil {
		t.Fatalf("upsert: key %s value %s", recs[0].Key, recs[0].Value)
	}
	if string(recs[1].Key) != `{"id":1}` || recs[1].Value != nil {
		t.Fatalf("delete: want a tombstone with key {\"id\":1}, got key %s value %q", recs[1].Key, recs[1].Value)
	}

	got := runStream(t, "input:\n  kafka_source:\n"+yamlDDL(ddl, 4)+"    stop_at: latest\noutput:\n  drop: {}\n")
	if len(got) != 2 {
		t.Fatalf("read %d rows, want 2", len(got))
	}
	v, _ := got[1].AsStructured()
	row := v.(map[string]any)
	if tomb, _ := got[1].MetaGetMut("kafka_tombstone_message"); row["id"] != int64(1) || row["name"] != nil || tomb != true {
		t.Fatalf("delete row %#v (tombstone flag %v)", row, tomb)
	}
}

func logLevel() string {
	if l := os.Getenv("CONNECTD_TEST_LOG"); l != "" {
		return l
	}
	return "warn"
}
