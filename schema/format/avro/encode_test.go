package avro

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/linkedin/goavro/v2"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/rowgen"
)

// encodeTypes has every type the avro format writes, nested: ROWs in ARRAYs
// and MAPs, decimals on both sides of the int64 fast path.
const encodeTypes = `CREATE TABLE t (
  s STRING, c CHAR(2) NOT NULL, b BOOLEAN, ti TINYINT, si SMALLINT, i INT NOT NULL, bi BIGINT,
  f FLOAT, d DOUBLE NOT NULL, dec DECIMAL(20, 4), d18 DECIMAL(18, 0), d19 DECIMAL(19, 0) NOT NULL,
  d38 DECIMAL(38, 10), frac DECIMAL(5, 5), d8 DATE, tm TIME(3), tm0 TIME(0), ts TIMESTAMP(3), ts0 TIMESTAMP(0),
  by BYTES, vb VARBINARY(4) NOT NULL,
  arr ARRAY<INT>, nn ARRAY<BIGINT NOT NULL>, aa ARRAY<ARRAY<DOUBLE>>, m MAP<STRING, DOUBLE>,
  mr MAP<STRING, ROW<k DECIMAL(10, 2), t TIMESTAMP(3)>>,
  r ROW<x STRING, y ARRAY<ROW<z BIGINT NOT NULL, w DATE>>, n ROW<q BOOLEAN NOT NULL> NOT NULL>
) WITH ('format' = 'avro')`

func encodeFormat(t testing.TB) *Format {
	t.Helper()
	tables, err := schema.ParseDDL(encodeTypes)
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(tables[0].PhysicalRowType(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// goavroEncode is the encoder before the hand-written one (commit
// 99c0587): the row coerced, converted to goavro's native values (unions
// as one-key maps, decimals as *big.Rat) and written by goavro.
func (f *Format) goavroEncode(row map[string]any) ([]byte, error) {
	native := make(map[string]any, len(f.row.Fields))
	for _, fld := range f.row.Fields {
		v, err := schema.Coerce(fld.Type, row[fld.Name], fld.Name)
		if err != nil {
			return nil, fmt.Errorf("format avro: field %w", err)
		}
		if native[fld.Name], err = toNative(fld.Type, v, childRowName(RecordName, fld)); err != nil {
			return nil, fmt.Errorf("format avro: %w", err)
		}
	}
	out, err := f.codec.BinaryFromNative(nil, native)
	if err != nil {
		return nil, fmt.Errorf("format avro: %w", err)
	}
	return out, nil
}

func toNative(t *schema.Type, v any, rowName string) (any, error) {
	if v == nil {
		return nil, nil
	}
	var n any
	switch t.Kind {
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt:
		n = int32(v.(int64))
	case schema.KindFloat:
		n = float32(v.(float64))
	case schema.KindDecimal:
		r, ok := new(big.Rat).SetString(string(v.(json.Number)))
		if !ok {
			return nil, fmt.Errorf("decimal %v", v)
		}
		n = r
	case schema.KindTime:
		tm := v.(time.Time)
		n = time.Duration(tm.Hour())*time.Hour + time.Duration(tm.Minute())*time.Minute +
			time.Duration(tm.Second())*time.Second + time.Duration(tm.Nanosecond()/1e6)*time.Millisecond
	case schema.KindArray:
		list := v.([]any)
		out := make([]any, len(list))
		for i, e := range list {
			var err error
			if out[i], err = toNative(t.Elem, e, rowName); err != nil {
				return nil, err
			}
		}
		n = out
	case schema.KindMap:
		m := v.(map[string]any)
		out := make(map[string]any, len(m))
		for k, e := range m {
			var err error
			if out[k], err = toNative(t.Value, e, rowName); err != nil {
				return nil, err
			}
		}
		n = out
	case schema.KindRow:
		m := v.(map[string]any)
		out := make(map[string]any, len(t.Fields))
		for _, f := range t.Fields {
			var err error
			if out[f.Name], err = toNative(f.Type, m[f.Name], childRowName(rowName, f)); err != nil {
				return nil, err
			}
		}
		n = out
	default:
		n = v
	}
	if !t.NotNull {
		return goavro.Union(unionName(t, rowName), n), nil
	}
	return n, nil
}

// hasBigMap reports whether v holds a map of two entries or more, whose
// order goavro leaves to Go's map iteration.
func hasBigMap(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 1 {
			return true
		}
		for _, e := range x {
			if hasBigMap(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasBigMap(e) {
				return true
			}
		}
	}
	return false
}

// checkAgainstGoavro compares Encode with goavro for one row: the same bytes
// (the same record, decoded, when a map's entry order may differ), or an
// error from both.
func checkAgainstGoavro(t *testing.T, f *Format, row map[string]any) {
	t.Helper()
	want, wantErr := f.goavroEncode(row)
	got, gotErr := f.Encode(row)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("row %#v:\n got %x, %v\nwant %x, %v", row, got, gotErr, want, wantErr)
	}
	if wantErr != nil {
		if strings.HasPrefix(wantErr.Error(), "format avro: field ") && gotErr.Error() != wantErr.Error() {
			t.Fatalf("row %#v: error\n got %v\nwant %v", row, gotErr, wantErr)
		}
		return
	}
	mapped := false
	for _, v := range row {
		mapped = mapped || hasBigMap(v)
	}
	if !mapped {
		if string(got) != string(want) {
			t.Fatalf("row %#v:\n got %x\nwant %x (goavro)", row, got, want)
		}
		return
	}
	if len(got) != len(want) {
		t.Fatalf("row %#v: %d bytes, goavro %d", row, len(got), len(want))
	}
	g, err := f.Decode(got)
	if err != nil {
		t.Fatalf("row %#v: decoding %x: %v", row, got, err)
	}
	w, err := f.Decode(want)
	if err != nil {
		t.Fatal(err)
	}
	if !schema.Equal(g, w) {
		t.Fatalf("row %#v:\n got %#v\nwant %#v (goavro)", row, g, w)
	}
}

// TestEncodeMatchesGoavro: random rows of every type (the row's own Go
// values, the other forms Coerce accepts, NULLs and bad values) encode to
// goavro's bytes.
func TestEncodeMatchesGoavro(t *testing.T) {
	f := encodeFormat(t)
	n := 5000
	if testing.Short() {
		n = 500
	}
	for seed := uint64(0); seed < 2; seed++ {
		g := rowgen.New(seed)
		g.Invalid = 0.003
		g.Canonical = seed == 1
		for i := 0; i < n; i++ {
			checkAgainstGoavro(t, f, g.Row(f.row))
		}
	}
}

// FuzzEncodeMatchesGoavro is TestEncodeMatchesGoavro with the fuzzer
// choosing the generator's seed.
func FuzzEncodeMatchesGoavro(fz *testing.F) {
	f := encodeFormat(fz)
	fz.Add(uint64(0), false)
	fz.Add(uint64(7), true)
	fz.Fuzz(func(t *testing.T, seed uint64, canonical bool) {
		g := rowgen.New(seed)
		g.Canonical = canonical
		checkAgainstGoavro(t, f, g.Row(f.row))
	})
}

// TestEncodeEdgeValues: values at the edges of the encodings, against
// goavro.
func TestEncodeEdgeValues(t *testing.T) {
	f := encodeFormat(t)
	base := map[string]any{"c": "ab", "i": int64(0), "d": 0.0, "d19": json.Number("0"), "vb": []byte{},
		"r": map[string]any{"n": map[string]any{"q": true}}}
	with := func(k string, v any) map[string]any {
		m := make(map[string]any, len(base)+1)
		for k, v := range base {
			m[k] = v
		}
		m[k] = v
		return m
	}
	var rows []map[string]any
	for _, d := range []string{"0", "1", "-1", "127", "128", "-128", "-129", "255", "256", "-256", "-257", "32767", "32768", "-32768", "-32769",
		"9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809", "9999999999999999999", "-9999999999999999999",
		"999999999999999999", "-999999999999999999", "1000000000000000000"} {
		rows = append(rows, with("d19", json.Number(d)))
	}
	for _, d := range []string{"0.0000000000", "-0.0000000001", "9999999999999999999999999999.9999999999", "-9999999999999999999999999999.9999999999",
		"-1.0000000000", "12345678.0000000001", "-170141183460469231731.6873037211"} {
		rows = append(rows, with("d38", json.Number(d)))
	}
	for _, d := range []string{"0.00000", "0.99999", "-0.99999", "-0.00001", "0.00128", "-0.00128", "-0.00129"} {
		rows = append(rows, with("frac", json.Number(d)))
	}
	for _, n := range []int64{0, 1, -1, 63, 64, -64, -65, 8191, 8192, math.MaxInt32, math.MinInt32} {
		rows = append(rows, with("i", n))
	}
	for _, n := range []int64{math.MaxInt64, math.MinInt64, 1 << 62, -(1 << 62)} {
		rows = append(rows, with("bi", n))
	}
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64, math.Copysign(0, -1)} {
		rows = append(rows, with("d", x), with("f", x))
	}
	for _, ts := range []time.Time{time.Unix(0, 0), time.Unix(-1, 999000000), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(2262, 4, 12, 0, 0, 0, 0, time.UTC), time.Date(1677, 9, 21, 0, 0, 0, 1, time.UTC)} {
		rows = append(rows, with("ts", ts), with("ts0", ts), with("d8", ts), with("tm", ts), with("tm0", ts))
	}
	big := make([]any, 200)
	for i := range big {
		big[i] = int64(i * 1000)
	}
	rows = append(rows, with("arr", big), with("s", strings.Repeat("x", 300)), with("arr", []any{}), with("m", map[string]any{}),
		with("m", map[string]any{"only": 1.5}))
	for _, row := range rows {
		checkAgainstGoavro(t, f, row)
	}
}

// TestEncodeErrorPaths: an error names the column and the element, entry
// or field inside it.
func TestEncodeErrorPaths(t *testing.T) {
	f := encodeFormat(t)
	base := func() map[string]any {
		return map[string]any{"c": "ab", "i": int64(0), "d": 0.0, "d19": json.Number("0"), "vb": []byte{},
			"r": map[string]any{"n": map[string]any{"q": true}}}
	}
	for _, tc := range []struct {
		col  string
		v    any
		want string
	}{
		{"i", nil, "format avro: field i: NULL in a NOT NULL column"},
		{"ti", int64(128), "format avro: field ti: 128 is out of range for TINYINT"},
		{"arr", []any{int64(1), nil, "x"}, `format avro: field arr[2]: cannot use string value "x" as INT`},
		{"nn", []any{int64(1), nil}, "format avro: field nn[1]: NULL in a NOT NULL column"},
		{"aa", []any{[]any{}, []any{1.5, "y"}}, `format avro: field aa[1][1]: cannot use string value "y" as DOUBLE`},
		{"m", map[string]any{"a": 1.0, "b": true}, `format avro: field m.b: cannot use bool value "true" as DOUBLE`},
		{"mr", map[string]any{"a": map[string]any{"k": "123456789012"}}, "format avro: field mr.a.k: decimal 123456789012 does not fit DECIMAL(10, 2)"},
		{"r", map[string]any{"y": []any{map[string]any{"z": int64(1)}, map[string]any{}}, "n": map[string]any{"q": true}}, "format avro: field r.y[1].z: NULL in a NOT NULL column"},
		{"r", map[string]any{}, "format avro: field r.n: NULL in a NOT NULL column"},
		{"d8", time.Date(6000000, 1, 1, 0, 0, 0, 0, time.UTC), "format avro: field d8: date"},
	} {
		row := base()
		row[tc.col] = tc.v
		_, err := f.Encode(row)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s = %#v: got error %v, want %q", tc.col, tc.v, err, tc.want)
		}
	}
}
