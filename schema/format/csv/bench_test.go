package csv_test

import (
	stdcsv "encoding/csv"
	"strings"
	"testing"
)

// benchLine is the 200-byte JSON benchmark row of the json format as CSV.
const benchLine = `1234567,user-000042,1234.56,EUR,true,2026-12-02 12:13:14.123,a;b;c,3.14159,Berlin,10115,`

const benchTable = `CREATE TABLE orders (order_id BIGINT, user_id STRING, amount DECIMAL(10, 2), currency CHAR(3), paid BOOLEAN,
  ts TIMESTAMP(3), tags ARRAY<STRING>, score DOUBLE, city STRING, zip STRING, note STRING) WITH ('format' = 'csv')`

// BenchmarkDecode is the table-driven decoder: a CSV line to a typed row.
func BenchmarkDecode(b *testing.B) {
	f := format(b, rowType(b, benchTable), nil)
	data := []byte(benchLine)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareEncodingCSV splits the same line into strings with the
// standard library, without types.
func BenchmarkBareEncodingCSV(b *testing.B) {
	b.SetBytes(int64(len(benchLine)))
	b.ReportAllocs()
	for b.Loop() {
		r := stdcsv.NewReader(strings.NewReader(benchLine))
		if _, err := r.Read(); err != nil {
			b.Fatal(err)
		}
	}
}
