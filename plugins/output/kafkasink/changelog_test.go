package kafkasink

import (
	"context"
	"fmt"
	"testing"

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
