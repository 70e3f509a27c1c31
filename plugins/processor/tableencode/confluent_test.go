package tableencode_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/registry/registrytest"
)

// TestAvroConfluentRoundTrip runs every type of the avro format through
// table_encode and table_decode with avro-confluent and a fake registry: the
// subject follows kafka_topic, the schema is registered once and fetched
// once, and bad bytes name topic, partition and offset.
func TestAvroConfluentRoundTrip(t *testing.T) {
	t.Parallel()
	reg := registrytest.New()
	defer reg.Close()
	reg.RequireAuth("u:p")
	tbl := `
  ddl: |
    CREATE TABLE t (
      s STRING, c CHAR(2), b BOOLEAN, ti TINYINT, si SMALLINT, i INT NOT NULL, bi BIGINT,
      f FLOAT, d DOUBLE, dec DECIMAL(20, 4), d8 DATE, tm TIME(3), ts TIMESTAMP(3), by BYTES,
      arr ARRAY<INT>, m MAP<STRING, DOUBLE>, r ROW<x STRING, y ARRAY<ROW<z BIGINT NOT NULL>>>
    ) WITH ('format' = 'avro-confluent', 'avro-confluent.url' = '` + reg.URL() + `',
            'avro-confluent.basic-auth.credentials-source' = 'USER_INFO', 'avro-confluent.basic-auth.user-info' = 'u:p')
`
	enc := buildProc(t, "table_encode:"+tbl)
	dec := buildProc(t, "table_decode:"+tbl)
	full := map[string]any{
		"s": "héllo", "c": "ab", "b": true, "ti": int64(-128), "si": int64(32767), "i": int64(math.MinInt32), "bi": int64(math.MaxInt64),
		"f": float64(float32(3.14)), "d": math.Inf(-1), "dec": json.Number("-1234567890123456.7891"),
		"d8": time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), "tm": time.Date(1970, 1, 1, 23, 59, 58, 120000000, time.UTC),
		"ts": time.Date(2026, 12, 2, 12, 13, 14, 123000000, time.UTC), "by": []byte{0, 1, 255},
		"arr": []any{int64(1), nil}, "m": map[string]any{"a": 1.5, "b": nil},
		"r": map[string]any{"x": nil, "y": []any{map[string]any{"z": int64(7)}, nil}},
	}
	nulls := map[string]any{"i": int64(0)}
	for k := range full {
		if k != "i" {
			nulls[k] = nil
		}
	}
	ctx := context.Background()
	for _, row := range []map[string]any{full, nulls, full} {
		msg := service.NewMessage(nil)
		msg.SetStructured(row)
		msg.MetaSetMut("kafka_topic", "metrics")
		out, err := enc.Process(ctx, msg)
		if err != nil || len(out) != 1 || out[0].GetError() != nil {
			t.Fatalf("encode: %v %v", out, err)
		}
		raw, _ := out[0].AsBytes()
		if raw[0] != 0 {
			t.Fatalf("not the wire format: % x", raw)
		}
		back, err := dec.Process(ctx, out[0])
		if err != nil || len(back) != 1 || back[0].GetError() != nil {
			t.Fatalf("decode: %v %v", back, err)
		}
		got, _ := back[0].AsStructured()
		if !schema.Equal(got, row) {
			t.Fatalf("round trip\n got %#v\nwant %#v", got, row)
		}
	}
	if n := reg.Requests("POST", "/subjects/metrics-value/versions"); n != 1 {
		t.Errorf("register: %d requests, want 1", n)
	}
	if n := reg.Requests("GET", "/schemas/ids/1"); n != 1 {
		t.Errorf("schema by id: %d requests, want 1", n)
	}

	bad := service.NewMessage([]byte{0, 0, 0, 0, 42, 1})
	bad.MetaSetMut("kafka_topic", "metrics")
	bad.MetaSetMut("kafka_partition", 3)
	bad.MetaSetMut("kafka_offset", 1234)
	deadLetter := "  on_error: dead_letter\n"
	out, err := buildProc(t, "table_decode:"+tbl+deadLetter).Process(ctx, bad)
	if err != nil || len(out) != 1 || out[0].GetError() == nil ||
		!strings.Contains(out[0].GetError().Error(), "table_decode (topic metrics, partition 3, offset 1234): format avro-confluent: schema id 42: schema registry GET "+reg.URL()+"/schemas/ids/42: HTTP 404, error_code 40403") {
		t.Fatalf("unknown id: %v %v", out, err)
	}
	noTopic := service.NewMessage(nil)
	noTopic.SetStructured(full)
	out, _ = buildProc(t, "table_encode:"+tbl+deadLetter).Process(ctx, noTopic)
	if len(out) != 1 || out[0].GetError() == nil || !strings.Contains(out[0].GetError().Error(), "no subject: set the format option 'subject'") {
		t.Fatalf("no topic: %v", out)
	}
}
