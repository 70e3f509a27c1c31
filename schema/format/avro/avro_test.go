package avro_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/linkedin/goavro/v2"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/avro"
)

const allTypes = `CREATE TABLE t (
  s STRING, c CHAR(2), b BOOLEAN, ti TINYINT, si SMALLINT, i INT NOT NULL, bi BIGINT,
  f FLOAT, d DOUBLE, dec DECIMAL(20, 4), d8 DATE, tm TIME(3), ts TIMESTAMP(3), by BYTES,
  arr ARRAY<INT>, m MAP<STRING, DOUBLE>, r ROW<x STRING, y ARRAY<ROW<z BIGINT NOT NULL>>>
) WITH ('format' = 'avro')`

func rowType(t testing.TB, ddl string) *schema.Type {
	t.Helper()
	tables, err := schema.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	if err := tables[0].Validate(); err != nil {
		t.Fatal(err)
	}
	return tables[0].PhysicalRowType()
}

func TestSchemaLikeFlink(t *testing.T) {
	t.Parallel()
	got, err := avro.Schema(rowType(t, `CREATE TABLE t (id BIGINT NOT NULL, price DECIMAL(10, 2), ts TIMESTAMP(3), tags ARRAY<STRING>, addr ROW<city STRING>) WITH ('format' = 'avro')`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"fields":[{"name":"id","type":"long"},` +
		`{"default":null,"name":"price","type":["null",{"logicalType":"decimal","precision":10,"scale":2,"type":"bytes"}]},` +
		`{"default":null,"name":"ts","type":["null",{"logicalType":"timestamp-millis","type":"long"}]},` +
		`{"default":null,"name":"tags","type":["null",{"items":["null","string"],"type":"array"}]},` +
		`{"default":null,"name":"addr","type":["null",{"fields":[{"default":null,"name":"city","type":["null","string"]}],"name":"org.apache.flink.avro.generated.record_addr","type":"record"}]}],` +
		`"name":"org.apache.flink.avro.generated.record","type":"record"}`
	if got != want {
		t.Fatalf("schema\n got %s\nwant %s", got, want)
	}
	for ddl, msg := range map[string]string{
		"a TIMESTAMP_LTZ(3)": "TIMESTAMP_LTZ is not supported",
		"a TIMESTAMP(6)":     "TIMESTAMP with precision 6",
		"a TIME(6)":          "TIME with precision 6",
		"`a-b` INT":          `"a-b" is not a valid Avro field name`,
	} {
		if _, err := avro.Schema(rowType(t, "CREATE TABLE t ("+ddl+") WITH ('format' = 'avro')")); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: want %q, got %v", ddl, msg, err)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	f, err := avro.New(rowType(t, allTypes), avro.Options{})
	if err != nil {
		t.Fatal(err)
	}
	full := map[string]any{
		"s": "héllo", "c": "ab", "b": true, "ti": int64(-128), "si": int64(32767), "i": int64(math.MinInt32), "bi": int64(math.MaxInt64),
		"f": float64(float32(3.14)), "d": math.Inf(1), "dec": json.Number("-1234567890123456.7891"),
		"d8": time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), "tm": time.Date(1970, 1, 1, 23, 59, 58, 120000000, time.UTC),
		"ts": time.Date(2026, 12, 2, 12, 13, 14, 123000000, time.UTC), "by": []byte{0, 1, 255},
		"arr": []any{int64(1), nil}, "m": map[string]any{"a": 1.5, "b": nil},
		"r": map[string]any{"x": nil, "y": []any{map[string]any{"z": int64(7)}, nil}},
	}
	nulls := map[string]any{}
	for k := range full {
		nulls[k] = nil
	}
	nulls["i"] = int64(0)
	for _, want := range []map[string]any{full, nulls} {
		data, err := f.Encode(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		if !schema.Equal(got, want) {
			t.Fatalf("round trip\n got %#v\nwant %#v", got, want)
		}
	}
}

// A record written by goavro from the schema alone (as another Avro writer
// would) decodes into the typed row.
func TestDecodeForeignRecord(t *testing.T) {
	t.Parallel()
	f, err := avro.New(rowType(t, `CREATE TABLE t (id BIGINT NOT NULL, name STRING) WITH ('format' = 'avro')`), avro.Options{})
	if err != nil {
		t.Fatal(err)
	}
	codec, err := goavro.NewCodec(f.SchemaJSON())
	if err != nil {
		t.Fatal(err)
	}
	data, err := codec.BinaryFromNative(nil, map[string]any{"id": int64(9), "name": goavro.Union("string", "ada")})
	if err != nil {
		t.Fatal(err)
	}
	row, err := f.Decode(data)
	if err != nil || row["id"] != int64(9) || row["name"] != "ada" {
		t.Fatalf("got %#v, %v", row, err)
	}
	if _, err := f.Decode(append(data, 0)); err == nil || !strings.Contains(err.Error(), "1 bytes after the record") {
		t.Fatalf("trailing bytes: %v", err)
	}
	if _, err := f.Encode(map[string]any{"name": "x"}); err == nil || !strings.Contains(err.Error(), "field id: NULL in a NOT NULL column") {
		t.Fatalf("NOT NULL: %v", err)
	}
}

// FuzzDecode: no panic and no hang on any input; what decodes encodes to
// bytes that decode to the same row.
func FuzzDecode(f *testing.F) {
	format, err := avro.New(rowType(f, allTypes), avro.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		row, err := format.Decode(data)
		if err != nil {
			return
		}
		enc, err := format.Encode(row)
		if err != nil {
			t.Fatalf("decoded row %#v does not encode: %v", row, err)
		}
		again, err := format.Decode(enc)
		if err != nil || !schema.Equal(again, row) {
			t.Fatalf("round trip: %#v, %v; want %#v", again, err, row)
		}
	})
}

// A record that declares a huge array block is refused without allocating
// for it.
func TestHugeBlockCount(t *testing.T) {
	t.Parallel()
	f, err := avro.New(rowType(t, `CREATE TABLE t (a ARRAY<INT NOT NULL> NOT NULL) WITH ('format' = 'avro')`), avro.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// zig-zag varint of 2^31-1 items
	if _, err := f.Decode([]byte{0xfe, 0xff, 0xff, 0xff, 0x0f, 0x02}); err == nil || !strings.Contains(err.Error(), "MaxBlockCount") {
		t.Fatalf("want the block count refused, got %v", err)
	}
}
