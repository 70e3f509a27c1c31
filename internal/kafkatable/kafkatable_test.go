package kafkatable

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/registry/registrytest"
)

func table(t *testing.T, ddl string) *schema.Table {
	t.Helper()
	tables, err := schema.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	if err := tables[0].Validate(); err != nil {
		t.Fatal(err)
	}
	return tables[0]
}

func TestWritten(t *testing.T) {
	t.Parallel()
	m := map[string]any{
		"start_from": "committed", "stop_at": "latest", "topics": []any{}, "seed_brokers": []any{"h:1"},
		"metadata": map[string]any{"include_prefixes": []any{}, "include_patterns": []any{}}, "key": "", "group": nil, "other": "x",
	}
	got := Written(m, []string{"start_from", "stop_at", "topics", "seed_brokers", "metadata", "key", "group"},
		map[string]string{"start_from": "committed", "stop_at": "none"})
	if len(got) != 2 || got["stop_at"] != "latest" || got["seed_brokers"] == nil {
		t.Fatalf("written = %v, want stop_at and seed_brokers", got)
	}
}

// Decode: key columns from the key, the value wins for a column in both
// (ALL), metadata columns from the record; a tombstone of a kafka table is
// skipped.
func TestCodecDecode(t *testing.T) {
	t.Parallel()
	c, err := NewCodec(table(t, `CREATE TABLE t (id BIGINT, name STRING, p INT METADATA FROM 'partition' VIRTUAL, e INT METADATA FROM 'leader-epoch' VIRTUAL)
	  WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'json', 'key.format' = 'json', 'key.fields' = 'id')`))
	if err != nil {
		t.Fatal(err)
	}
	row, err := c.Decode(context.Background(), Record{Topic: "x", Partition: 3, LeaderEpoch: -1, Key: []byte(`{"id":1}`), Value: []byte(`{"id":2,"name":"a"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if row["id"] != int64(2) || row["name"] != "a" || row["p"] != int64(3) || row["e"] != nil {
		t.Fatalf("row = %#v", row)
	}
	row, err = c.Decode(context.Background(), Record{Topic: "x", Value: []byte(`{"name":"b"}`)})
	if err != nil || row["id"] != nil {
		t.Fatalf("null key: row %#v, err %v", row, err)
	}
	if _, err := c.Decode(context.Background(), Record{Topic: "x", Key: []byte(`{"id":1}`)}); !errors.Is(err, ErrSkipped) {
		t.Fatalf("tombstone of a kafka table: want ErrSkipped, got %v", err)
	}
	if _, err := c.Decode(context.Background(), Record{Topic: "x", Key: []byte(`{"id":`), Value: []byte(`{}`)}); err == nil || !strings.HasPrefix(err.Error(), "key: ") {
		t.Fatalf("bad key: want an error naming the key, got %v", err)
	}
}

// An avro-confluent key registers under <topic>-key, the value under
// <topic>-value, and both decode back.
func TestCodecConfluentKey(t *testing.T) {
	t.Parallel()
	reg := registrytest.New()
	t.Cleanup(reg.Close)
	c, err := NewCodec(table(t, `CREATE TABLE t (id BIGINT, v DOUBLE, PRIMARY KEY (id) NOT ENFORCED)
	  WITH ('connector' = 'upsert-kafka', 'topic' = 'm',
	        'key.format' = 'avro-confluent', 'key.avro-confluent.url' = '`+reg.URL()+`',
	        'value.format' = 'avro-confluent', 'value.avro-confluent.url' = '`+reg.URL()+`', 'value.fields-include' = 'EXCEPT_KEY')`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	enc, err := c.Encode(ctx, map[string]any{"id": 5, "v": 1.5}, "m", false)
	if err != nil {
		t.Fatal(err)
	}
	if reg.Requests("POST", "/subjects/m-key/versions") != 1 || reg.Requests("POST", "/subjects/m-value/versions") != 1 {
		t.Fatalf("want one registration under m-key and one under m-value")
	}
	row, err := c.Decode(ctx, Record{Topic: "m", Key: enc.Key, Value: enc.Value})
	if err != nil {
		t.Fatal(err)
	}
	if row["id"] != int64(5) || row["v"] != 1.5 {
		t.Fatalf("row = %#v", row)
	}
	del, err := c.Encode(ctx, map[string]any{"id": 5}, "m", true)
	if err != nil || del.Value != nil || len(del.Key) == 0 {
		t.Fatalf("delete: key %x value %x err %v", del.Key, del.Value, err)
	}
}
