package kafkasink

import (
	"context"
	"fmt"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// An upsert-kafka sink fed a changelog (row_kind metadata, as kafka_source
// sets it for a debezium-json table) writes as Flink's upsert-kafka sink:
// an insert and an update-after as a value, a delete as a tombstone, and
// nothing for an update-before.
func TestTableUpsertChangelog(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(1, "users"))
	ddl := fmt.Sprintf(`CREATE TABLE users (
  id BIGINT,
  name STRING,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'users', 'properties.bootstrap.servers' = '%s',
  'key.format' = 'json', 'value.format' = 'json'
)`, addr)
	runStream(t, fmt.Sprintf(`
input:
  generate:
    count: 5
    interval: ""
    batch_size: 5
    mapping: |
      let n = count("changelog-%[1]s")
      root = match $n {
        1 => {"id": 1, "name": "ada"},
        2 => {"id": 1, "name": "ada"},
        3 => {"id": 1, "name": "bob"},
        4 => {"id": 2, "name": "eve"},
        _ => {"id": 1, "name": "bob"},
      }
      meta row_kind = match $n {
        1 => "+I",
        2 => "-U",
        3 => "+U",
        4 => "UPDATE_BEFORE",
        _ => "-D",
      }
output:
  kafka_sink:
`, addr)+yamlDDL(ddl, 4))
	recs := consumeAll(t, addr, "users", 3)
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s=%s", r.Key, r.Value))
	}
	want := []string{`{"id":1}={"id":1,"name":"ada"}`, `{"id":1}={"id":1,"name":"bob"}`, `{"id":1}=`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records %q, want %q", got, want)
	}
	if recs[2].Value != nil {
		t.Fatalf("the delete is not a tombstone: value %q", recs[2].Value)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), "users")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup("users", 0); o.Offset != 3 {
		t.Fatalf("%d records in the topic, want 3 (update-before rows dropped)", o.Offset)
	}
}

// A debezium-json sink writes each kind in Debezium's envelope, as
// Flink's DebeziumJsonSerializationSchema; a plain json table refuses a
// row that is not an insert.
func TestTableChangelogSink(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(1, "cdc"))
	ddl := fmt.Sprintf(`CREATE TABLE users (id BIGINT, name STRING) WITH (
  'connector' = 'kafka', 'topic' = 'cdc', 'properties.bootstrap.servers' = '%s', 'format' = 'debezium-json'
)`, addr)
	runStream(t, fmt.Sprintf(`
input:
  generate:
    count: 4
    interval: ""
    mapping: |
      let n = count("dbz-%[1]s")
      root = {"id": 1, "name": if $n < 3 { "ada" } else { "bob" }}
      meta row_kind = ["+I", "-U", "+U", "-D"].index($n - 1)
output:
  kafka_sink:
`, addr)+yamlDDL(ddl, 4))
	recs := consumeAll(t, addr, "cdc", 4)
	want := []string{
		`{"before":null,"after":{"id":1,"name":"ada"},"op":"c"}`,
		`{"before":{"id":1,"name":"ada"},"after":null,"op":"d"}`,
		`{"before":null,"after":{"id":1,"name":"bob"},"op":"c"}`,
		`{"before":{"id":1,"name":"bob"},"after":null,"op":"d"}`,
	}
	for i, r := range recs {
		if string(r.Value) != want[i] {
			t.Errorf("record %d: %s, want %s", i, r.Value, want[i])
		}
	}
}

// kafka_source (a debezium-json table) -> exactly-once kafka_sink (an
// upsert-kafka table): the rows of each record go out in the transaction
// that commits the record's offset, the update-before rows are dropped, and
// the group's committed offset passes every record, the tombstone that gives
// no row included.
func TestTableChangelogExactlyOnce(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(1, "cdc-in", "cdc-out"))
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("cdc-in"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), tableTestTimeout)
	defer cancel()
	for _, v := range []string{
		`{"before":null,"after":{"id":1,"name":"ada"},"op":"c"}`,
		`{"before":{"id":1,"name":"ada"},"after":{"id":1,"name":"bob"},"op":"u"}`,
		`{"before":null,"after":{"id":2,"name":"eve"},"op":"c"}`,
		`{"before":{"id":2,"name":"eve"},"after":null,"op":"d"}`,
		"",
	} {
		r := &kgo.Record{Value: []byte(v)}
		if v == "" {
			r.Value = nil
		}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	b := service.NewStreamBuilder()
	if err := b.SetYAML(fmt.Sprintf(`
input:
  kafka_source:
    ddl: |
      CREATE TABLE cdc (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH (
        'connector' = 'kafka', 'topic' = 'cdc-in', 'properties.bootstrap.servers' = '%[1]s',
        'properties.group.id' = 'cdc-eos', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
        'format' = 'debezium-json')
output:
  kafka_sink:
    ddl: |
      CREATE TABLE users (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH (
        'connector' = 'upsert-kafka', 'topic' = 'cdc-out', 'properties.bootstrap.servers' = '%[1]s',
        'key.format' = 'json', 'value.format' = 'json',
        'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'cdc-eos')
logger:
  level: %[2]s
`, addr, logLevel())); err != nil {
		t.Fatal(err)
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	recs := consumeAll(t, addr, "cdc-out", 4)
	var got []string
	for _, r := range recs {
		v := string(r.Value)
		if r.Value == nil {
			v = "<null>"
		}
		got = append(got, fmt.Sprintf("%s=%s", r.Key, v))
	}
	want := []string{`{"id":1}={"id":1,"name":"ada"}`, `{"id":1}={"id":1,"name":"bob"}`, `{"id":2}={"id":2,"name":"eve"}`, `{"id":2}=<null>`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records %q, want %q", got, want)
	}
	offs, err := kadm.NewClient(cl).FetchOffsets(ctx, "cdc-eos")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("cdc-in", 0); o.At != 5 {
		t.Fatalf("committed offset %d of cdc-in/0, want 5 (past every record)", o.At)
	}
}
