package json_test

import (
	"bytes"
	stdjson "encoding/json"
	"testing"

	gojson "github.com/goccy/go-json"

	"github.com/connectd/connectd/schema/format/json"
)

// benchRow is a 200-byte JSON record.
var benchRow = []byte(`{"order_id":1234567,"user_id":"user-000042","amount":1234.56,"currency":"EUR","paid":true,"ts":"2026-12-02 12:13:14.123","tags":["a","b","c"],"score":3.14159,"address":{"city":"Berlin","zip":"10115"},"note":null}`)

const benchTable = `CREATE TABLE orders (order_id BIGINT, user_id STRING, amount DECIMAL(10, 2), currency CHAR(3), paid BOOLEAN,
  ts TIMESTAMP(3), tags ARRAY<STRING>, score DOUBLE, address ROW<city STRING, zip STRING>, note STRING) WITH ('format' = 'json')`

// BenchmarkDecode is the table-driven decoder: JSON to a typed row.
func BenchmarkDecode(b *testing.B) {
	f, err := json.New(rowType(b, benchTable), json.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(benchRow)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Decode(benchRow); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareGoccy is the library the decoder uses, alone: JSON to
// map[string]any with exact numbers.
func BenchmarkBareGoccy(b *testing.B) {
	b.SetBytes(int64(len(benchRow)))
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		d := gojson.NewDecoder(bytes.NewReader(benchRow))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareEncodingJSON is the standard library doing the same.
func BenchmarkBareEncodingJSON(b *testing.B) {
	b.SetBytes(int64(len(benchRow)))
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		d := stdjson.NewDecoder(bytes.NewReader(benchRow))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncode writes the decoded row back.
func BenchmarkEncode(b *testing.B) {
	f, err := json.New(rowType(b, benchTable), json.Options{})
	if err != nil {
		b.Fatal(err)
	}
	row, err := f.Decode(benchRow)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Encode(row); err != nil {
			b.Fatal(err)
		}
	}
}
