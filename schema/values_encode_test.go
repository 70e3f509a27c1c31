package schema_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/rowgen"
)

const coerceTypes = `CREATE TABLE t (
  s STRING, c CHAR(2) NOT NULL, b BOOLEAN, ti TINYINT, si SMALLINT, i INT NOT NULL, bi BIGINT,
  f FLOAT, d DOUBLE, dec DECIMAL(20, 4), z DECIMAL(5, 0), frac DECIMAL(3, 3), d8 DATE, tm TIME(3), tm0 TIME(0),
  ts TIMESTAMP(3), ts9 TIMESTAMP(9), ltz TIMESTAMP_LTZ(6), by BYTES,
  arr ARRAY<INT>, nn ARRAY<BIGINT NOT NULL>, aa ARRAY<ARRAY<DOUBLE>>, m MAP<STRING, DECIMAL(10, 2)>,
  r ROW<x STRING, y ARRAY<ROW<z BIGINT NOT NULL, w DATE>>, n ROW<q BOOLEAN NOT NULL> NOT NULL>
) WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'json')`

func coerceRowType(t testing.TB) *schema.Type {
	t.Helper()
	tables, err := schema.ParseDDL(coerceTypes)
	if err != nil {
		t.Fatal(err)
	}
	return tables[0].PhysicalRowType()
}

// TestCoerceMatchesReference: on random values of every type (the row's
// own, the other accepted forms, NULLs, bad values), Coerce returns what it
// returned before the fast paths, or the same error (the element, entry or
// field path included).
func TestCoerceMatchesReference(t *testing.T) {
	row := coerceRowType(t)
	g := rowgen.New(3)
	g.Invalid = 0.01
	n := 5000
	if testing.Short() {
		n = 500
	}
	for i := 0; i < n; i++ {
		for _, f := range row.Fields {
			v := g.Value(f.Type, 0)
			got, gotErr := schema.Coerce(f.Type, v, f.Name)
			want, wantErr := schema.RefCoerce(f.Type, v, f.Name)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("%s = %#v: error\n got %v\nwant %v", f.Name, v, gotErr, wantErr)
			}
			if g, w := fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", want); g != w {
				t.Fatalf("%s = %#v:\n got %s\nwant %s", f.Name, v, g, w)
			}
		}
		r := g.Row(row)
		got, gotErr := schema.CoerceRow(row, r, "")
		want, wantErr := schema.RefCoerceRow(row, r, "")
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
			t.Fatalf("row %#v:\n got %#v, %v\nwant %#v, %v", r, got, gotErr, want, wantErr)
		}
	}
}

// TestCoerceKeepsRowValues: a value that already has the row type comes
// back as is, without an allocation.
func TestCoerceKeepsRowValues(t *testing.T) {
	row := coerceRowType(t)
	typ := func(name string) *schema.Type {
		for _, f := range row.Fields {
			if f.Name == name {
				return f.Type
			}
		}
		t.Fatalf("no column %s", name)
		return nil
	}
	for _, tc := range []struct {
		col string
		v   any
	}{
		{"s", "text"}, {"b", true}, {"ti", int64(-128)}, {"bi", int64(math.MinInt64)}, {"f", float64(float32(0.1))}, {"d", 0.1},
		{"dec", json.Number("-12.3400")}, {"z", json.Number("0")}, {"frac", json.Number("0.125")},
		{"d8", time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)}, {"tm", time.Date(1970, 1, 1, 1, 2, 3, 4000000, time.UTC)},
		{"ts", time.Date(2026, 12, 2, 12, 13, 14, 123000000, time.UTC)}, {"ts9", time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)},
		{"by", []byte("x")},
	} {
		typ := typ(tc.col)
		allocs := testing.AllocsPerRun(100, func() {
			got, err := schema.Coerce(typ, tc.v, tc.col)
			if err != nil || !schema.Equal(got, tc.v) {
				t.Fatalf("%s: Coerce(%#v) = %#v, %v", tc.col, tc.v, got, err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: Coerce(%#v) allocates %v times", tc.col, tc.v, allocs)
		}
	}
}

// TestCoerceErrorPaths: errors name the element, entry or field.
func TestCoerceErrorPaths(t *testing.T) {
	row := coerceRowType(t)
	for _, tc := range []struct {
		row  map[string]any
		want string
	}{
		{map[string]any{"arr": []any{int64(1), "x"}}, `arr[1]: cannot use string value "x" as INT`},
		{map[string]any{"nn": []any{nil}}, "nn[0]: NULL in a NOT NULL column"},
		{map[string]any{"aa": []any{[]any{}, []any{1.0, 2.0, true}}}, `aa[1][2]: cannot use bool value "true" as DOUBLE`},
		{map[string]any{"m": map[string]any{"b": "1", "a": "x", "c": "y"}}, `m.a: invalid decimal "x"`},
		{map[string]any{"r": map[string]any{"y": []any{map[string]any{"z": int64(1)}, map[string]any{"w": "no"}}}}, "r.y[1].z: NULL in a NOT NULL column"},
		{map[string]any{"r": map[string]any{}}, "r.n: NULL in a NOT NULL column"},
		{map[string]any{"i": int64(1) << 40}, "i: 1099511627776 is out of range for INT"},
	} {
		full := map[string]any{"c": "ab", "i": int64(0)}
		for k, v := range tc.row {
			full[k] = v
		}
		if _, ok := tc.row["r"]; !ok {
			full["r"] = map[string]any{"n": map[string]any{"q": true}}
		}
		_, err := schema.CoerceRow(row, full, "")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.row, err, tc.want)
		}
	}
}

// TestCanonicalDecimal: CanonicalDecimal accepts exactly ParseDecimal's
// results.
func TestCanonicalDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const chars = "0123456789.-+e"
	for i := 0; i < 200000; i++ {
		p := 1 + r.IntN(20)
		s := r.IntN(p + 1)
		b := make([]byte, 1+r.IntN(8))
		for j := range b {
			b[j] = chars[r.IntN(len(chars))]
			if r.IntN(3) > 0 {
				b[j] = chars[r.IntN(10)]
			}
		}
		in := string(b)
		d, err := schema.ParseDecimal(in, p, s)
		if schema.CanonicalDecimal(in, p, s) && (err != nil || string(d) != in) {
			t.Fatalf("CanonicalDecimal(%q, %d, %d) but ParseDecimal = %q, %v", in, p, s, d, err)
		}
		if err == nil && !schema.CanonicalDecimal(string(d), p, s) {
			t.Fatalf("ParseDecimal(%q, %d, %d) = %q, which CanonicalDecimal refuses", in, p, s, d)
		}
	}
}

// TestAppendTimes: the Append forms write what the Format forms return.
func TestAppendTimes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	zones := []*time.Location{time.UTC, time.FixedZone("A", 5*3600+1800), time.FixedZone("B", -11*3600)}
	for i := 0; i < 100000; i++ {
		sec := r.Int64N(2*253402300799) - 253402300799 // years -9999..9999
		if i%3 == 0 {
			sec = r.Int64N(4102444800)
		}
		ns := int64(0)
		switch r.IntN(3) {
		case 0:
			ns = r.Int64N(1e9)
		case 1:
			ns = r.Int64N(1000) * 1e6
		}
		ts := time.Unix(sec, ns).In(zones[r.IntN(len(zones))])
		for _, style := range []schema.TimestampStyle{schema.TimestampSQL, schema.TimestampISO8601} {
			for _, ltz := range []bool{false, true} {
				if got, want := string(style.AppendTimestamp([]byte("x"), ts, ltz)), "x"+style.FormatTimestamp(ts, ltz); got != want {
					t.Fatalf("AppendTimestamp(%v, %v, %v) = %q, want %q", ts, style, ltz, got, want)
				}
			}
		}
		if got, want := string(schema.AppendDate(nil, ts)), schema.FormatDate(ts); got != want {
			t.Fatalf("AppendDate(%v) = %q, want %q", ts, got, want)
		}
		if got, want := string(schema.AppendTime(nil, ts)), schema.FormatTime(ts); got != want {
			t.Fatalf("AppendTime(%v) = %q, want %q", ts, got, want)
		}
	}
}
