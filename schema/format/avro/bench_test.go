package avro_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/linkedin/goavro/v2"

	"github.com/connectd/connectd/schema/format/avro"
)

const benchTable = `CREATE TABLE orders (order_id BIGINT, user_id STRING, amount DECIMAL(10, 2), currency STRING, paid BOOLEAN,
  ts TIMESTAMP(3), tags ARRAY<STRING>, score DOUBLE, address ROW<city STRING, zip STRING>, note STRING) WITH ('format' = 'avro')`

func benchRecord(b *testing.B) (*avro.Format, []byte) {
	f, err := avro.New(rowType(b, benchTable), avro.Options{})
	if err != nil {
		b.Fatal(err)
	}
	data, err := f.Encode(map[string]any{
		"order_id": 1234567, "user_id": "user-000042", "amount": json.Number("1234.56"), "currency": "EUR", "paid": true,
		"ts": time.Date(2026, 12, 2, 12, 13, 14, 123000000, time.UTC), "tags": []any{"a", "b", "c"}, "score": 3.14159,
		"address": map[string]any{"city": "Berlin", "zip": "10115"},
	})
	if err != nil {
		b.Fatal(err)
	}
	return f, data
}

// BenchmarkDecode is the table-driven decoder: Avro binary to a typed row.
func BenchmarkDecode(b *testing.B) {
	f, data := benchRecord(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareGoavro decodes the same record with goavro alone, to its
// native values.
func BenchmarkBareGoavro(b *testing.B) {
	f, data := benchRecord(b)
	// goavro reads a nested `"type": "record"` as a reference to Flink's top
	// record name `...generated.record`; rename the top record as New does.
	const top = `"name":"org.apache.flink.avro.generated.record","type":"record"}`
	codec, err := goavro.NewCodec(strings.TrimSuffix(f.SchemaJSON(), top) + `"name":"top","type":"record"}`)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := codec.NativeFromBinary(data); err != nil {
			b.Fatal(err)
		}
	}
}
