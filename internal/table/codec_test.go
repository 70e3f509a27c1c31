package table

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

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

// DecodeKafka decodes a record as the client fetched it: key, value and
// every readable metadata column straight from the *kgo.Record.
func TestCodecDecodeKafka(t *testing.T) {
	t.Parallel()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "x"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics("x"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	ts := time.UnixMilli(1700000000123)
	for _, r := range []*kgo.Record{
		{Topic: "x", Partition: 1, Key: []byte(`{"id":6}`), Value: []byte(`{"name":"grace"}`), Timestamp: ts},
		{Topic: "x", Partition: 1, Key: []byte(`{"id":7}`), Value: []byte(`{"name":"ada"}`), Timestamp: ts,
			Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("abc")}, {Key: "kafka_x", Value: []byte("kept")}}},
	} {
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var fetched []*kgo.Record
	for len(fetched) < 2 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fetched = append(fetched, fs.Records()...)
	}

	c, err := NewCodec(table(t, `CREATE TABLE t (
	  k_id BIGINT, name STRING,
	  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
	  part INT METADATA FROM 'partition' VIRTUAL,
	  off BIGINT METADATA FROM 'offset' VIRTUAL,
	  src STRING METADATA FROM 'topic' VIRTUAL,
	  hdrs MAP<STRING, BYTES> METADATA FROM 'headers',
	  epoch INT METADATA FROM 'leader-epoch' VIRTUAL,
	  tstype STRING METADATA FROM 'timestamp-type' VIRTUAL
	) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'json', 'key.format' = 'json', 'key.fields' = 'k_id',
	        'key.fields-prefix' = 'k_', 'value.fields-include' = 'EXCEPT_KEY')`))
	if err != nil {
		t.Fatal(err)
	}
	row, err := c.DecodeKafka(ctx, fetched[1])
	if err != nil {
		t.Fatal(err)
	}
	if row["k_id"] != int64(7) || row["name"] != "ada" || row["part"] != int64(1) || row["off"] != int64(1) ||
		row["src"] != "x" || row["tstype"] != TimestampTypeCreate || row["epoch"] != int64(fetched[1].LeaderEpoch) {
		t.Fatalf("row = %#v", row)
	}
	if got, ok := row["ts"].(time.Time); !ok || !got.Equal(ts) {
		t.Fatalf("ts = %#v, want %v", row["ts"], ts)
	}
	h, _ := row["hdrs"].(map[string]any)
	if len(h) != 2 || string(h["trace"].([]byte)) != "abc" || string(h["kafka_x"].([]byte)) != "kept" {
		t.Fatalf("headers = %#v: a record's headers are all its headers", row["hdrs"])
	}
	if row, err := c.DecodeKafka(ctx, fetched[0]); err != nil || row["off"] != int64(0) || len(row["hdrs"].(map[string]any)) != 0 {
		t.Fatalf("first record: row %#v, err %v", row, err)
	}
	if got := LocateRecord(fetched[1]); got != " (topic x, partition 1, offset 1)" {
		t.Fatalf("LocateRecord = %q", got)
	}
}

// FromKafka maps the record attributes to the Java client's timestamp
// types; a record without a timestamp type has no timestamp.
func TestFromKafkaTimestampType(t *testing.T) {
	t.Parallel()
	r := FromKafka(&kgo.Record{Topic: "x", Timestamp: time.UnixMilli(5), LeaderEpoch: -1})
	if r.TimestampType != TimestampTypeCreate || !r.HasTimestamp || r.metadataOf("leader-epoch") != nil {
		t.Fatalf("zero attributes: %+v", r)
	}
	// kgo reports -1 for a v0 message (before Kafka 0.10), with a zero
	// time.Time; Flink's `timestamp` (NOT NULL) reads the Java client's
	// NO_TIMESTAMP, -1 ms, and `timestamp-type` NoTimestampType.
	for _, tc := range []struct {
		typ      int8
		wantType string
		wantMs   int64
	}{{0, TimestampTypeCreate, 5}, {1, TimestampTypeLogAppend, 5}, {-1, TimestampTypeNone, -1}} {
		typ, ts := recordTimestamp(tc.typ, time.UnixMilli(5))
		if typ != tc.wantType || ts.UnixMilli() != tc.wantMs {
			t.Errorf("timestamp type %d: got %s %d ms, want %s %d ms", tc.typ, typ, ts.UnixMilli(), tc.wantType, tc.wantMs)
		}
	}
	if _, ts := recordTimestamp(-1, time.Time{}); ts.UnixMilli() != -1 {
		t.Errorf("no timestamp type, zero time: got %d ms, want -1 (NO_TIMESTAMP)", ts.UnixMilli())
	}
}

// A raw value is NULL as a record without a value, as Flink's raw format
// reads and writes it: a tombstone of a plain kafka table is a row (the key
// columns and a NULL value column), not skipped, and a NULL value column is
// written as a tombstone; the other formats still skip a tombstone.
func TestCodecRawNullValue(t *testing.T) {
	t.Parallel()
	c, err := NewCodec(table(t, `CREATE TABLE t (id BIGINT, body BYTES)
	  WITH ('connector' = 'kafka', 'topic' = 'x', 'key.format' = 'json', 'key.fields' = 'id', 'value.format' = 'raw', 'value.fields-include' = 'EXCEPT_KEY')`))
	if err != nil {
		t.Fatal(err)
	}
	row, err := c.Decode(context.Background(), Record{Topic: "x", Key: []byte(`{"id":7}`)})
	if err != nil {
		t.Fatalf("tombstone of a raw kafka table: %v", err)
	}
	if len(row) != 2 || row["id"] != int64(7) || row["body"] != nil {
		t.Fatalf("tombstone of a raw kafka table: row = %#v, want id 7 and a NULL body", row)
	}
	out, err := c.Encode(context.Background(), map[string]any{"id": int64(7), "body": nil}, "x", false)
	if err != nil {
		t.Fatal(err)
	}
	if out.Value != nil || string(out.Key) != `{"id":7}` {
		t.Fatalf("NULL raw value: key %q, value %#v; want the key and a null value", out.Key, out.Value)
	}
	out, err = c.Encode(context.Background(), map[string]any{"id": int64(7), "body": "AP8="}, "x", false)
	if err != nil || string(out.Value) != "\x00\xff" {
		t.Fatalf("BYTES from base64 text: value %q, %v; want the bytes 00 ff", out.Value, err)
	}
	out, err = c.Encode(context.Background(), map[string]any{"id": int64(7), "body": []byte{}}, "x", false)
	if err != nil || out.Value == nil || len(out.Value) != 0 {
		t.Fatalf("empty raw value: %#v, %v; want an empty, non-null value", out.Value, err)
	}
}
