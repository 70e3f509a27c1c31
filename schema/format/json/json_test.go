package json_test

import (
	stdjson "encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/json"
)

const allTypes = `CREATE TABLE t (
  s STRING, v VARCHAR(10), c CHAR(2), b BOOLEAN, ti TINYINT, si SMALLINT, i INT, bi BIGINT NOT NULL,
  f FLOAT, d DOUBLE, dec DECIMAL(20, 4), tiny_dec DECIMAL(10, 9), d8 DATE, tm TIME(3),
  ts TIMESTAMP(3), ltz TIMESTAMP_LTZ(6), by BYTES, vb VARBINARY(4),
  arr ARRAY<INT>, m MAP<STRING, DOUBLE>, r ROW<x STRING, y ARRAY<ROW<z BIGINT>>>
) WITH ('format' = 'json')`

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

func fullRow() map[string]any {
	return map[string]any{
		"s": "héllo \"q\" \n\x01", "v": "v", "c": "ab", "b": true, "ti": int64(-128), "si": int64(32767),
		"i": int64(math.MinInt32), "bi": int64(math.MaxInt64), "f": float64(float32(3.14)), "d": 1e-300,
		"dec": stdjson.Number("-1234567890123456.7891"), "tiny_dec": stdjson.Number("0.000000012"),
		"d8": time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), "tm": time.Date(1970, 1, 1, 23, 59, 58, 120000000, time.UTC),
		"ts": time.Date(2026, 12, 2, 12, 13, 14, 123000000, time.UTC), "ltz": time.Date(1969, 7, 20, 20, 17, 40, 123456000, time.UTC),
		"by": []byte{0, 1, 2, 255}, "vb": []byte{},
		"arr": []any{int64(1), nil, int64(3)}, "m": map[string]any{"a": 1.5, "": nil},
		"r": map[string]any{"x": "in", "y": []any{map[string]any{"z": int64(7)}, nil}},
	}
}

func nullRow() map[string]any {
	row := map[string]any{}
	for k := range fullRow() {
		row[k] = nil
	}
	row["bi"] = int64(0)
	return row
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	row := rowType(t, allTypes)
	for _, opts := range []map[string]string{
		{},
		{"timestamp-format.standard": "ISO-8601", "encode.decimal-as-plain-number": "true"},
		{"ignore-parse-errors": "true"},
		{"fail-on-missing-field": "true"},
	} {
		o, err := json.ParseOptions(opts)
		if err != nil {
			t.Fatal(err)
		}
		f, err := json.New(row, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []map[string]any{fullRow(), nullRow()} {
			data, err := f.Encode(want)
			if err != nil {
				t.Fatalf("%v: encode: %v", opts, err)
			}
			got, err := f.Decode(data)
			if err != nil {
				t.Fatalf("%v: decode %s: %v", opts, data, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%v: round trip through %s\n got %#v\nwant %#v", opts, data, got, want)
			}
		}
	}
}

func TestEncodeText(t *testing.T) {
	t.Parallel()
	row := rowType(t, `CREATE TABLE t (ts TIMESTAMP(3), ltz TIMESTAMP_LTZ(3), small DECIMAL(10, 9), f FLOAT, d DOUBLE, tm TIME(0)) WITH ('format' = 'json')`)
	in := map[string]any{
		"ts": "2026-12-02T12:13:14.1Z", "ltz": time.Date(2026, 12, 2, 12, 13, 14, 0, time.UTC),
		"small": "0.00000001", "f": 0.1, "d": math.Inf(-1), "tm": "07:08:09",
	}
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{}, `{"ts":"2026-12-02 12:13:14.1","ltz":"2026-12-02 12:13:14Z","small":1.0E-8,"f":0.1,"d":"-Infinity","tm":"07:08:09"}`},
		{map[string]string{"timestamp-format.standard": "ISO-8601", "encode.decimal-as-plain-number": "true"},
			`{"ts":"2026-12-02T12:13:14.1","ltz":"2026-12-02T12:13:14Z","small":0.000000010,"f":0.1,"d":"-Infinity","tm":"07:08:09"}`},
	} {
		o, err := json.ParseOptions(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := json.New(row, o)
		got, err := f.Encode(in)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.opts, got, tc.want)
		}
	}
}

func TestDecodeOptions(t *testing.T) {
	t.Parallel()
	row := rowType(t, `CREATE TABLE t (id BIGINT, price DECIMAL(5, 2), ts TIMESTAMP(3), n INT NOT NULL) WITH ('format' = 'json')`)
	for _, tc := range []struct {
		name string
		opts map[string]string
		in   string
		want map[string]any // nil: skipped
		err  string
	}{
		{"strings as numbers, rounding half up", nil, `{"id":"12","price":"1.005","ts":"2026-12-02 12:13:14.123456","n":1}`,
			map[string]any{"id": int64(12), "price": stdjson.Number("1.01"), "ts": time.Date(2026, 12, 2, 12, 13, 14, 123000000, time.UTC), "n": int64(1)}, ""},
		{"missing field is null", nil, `{"n":1}`, map[string]any{"id": nil, "price": nil, "ts": nil, "n": int64(1)}, ""},
		{"fail on missing field", map[string]string{"fail-on-missing-field": "true"}, `{"n":1}`, nil, "field id is missing"},
		{"not null", nil, `{"n":null}`, nil, "field n: NULL in a NOT NULL column"},
		{"overflow", nil, `{"price":1000,"n":1}`, nil, "field price: cannot read a number as DECIMAL(5, 2): decimal 1000 does not fit DECIMAL(5, 2)"},
		{"int range", nil, `{"n":2147483648}`, nil, "2147483648 is out of range for INT"},
		{"wrong timestamp style", nil, `{"ts":"2026-12-02T12:13:14","n":1}`, nil, "want the SQL form 2026-12-02 12:13:14.123"},
		{"not json", nil, `{"id":`, nil, "format json:"},
		{"not an object", nil, `[1]`, nil, "want a JSON object, got an array"},
		{"ignore: bad field is null", map[string]string{"ignore-parse-errors": "true"}, `{"id":"x","n":1}`,
			map[string]any{"id": nil, "price": nil, "ts": nil, "n": int64(1)}, ""},
		{"ignore: bad record skipped", map[string]string{"ignore-parse-errors": "true"}, `nope`, nil, ""},
		{"ignore: not null skipped", map[string]string{"ignore-parse-errors": "true"}, `{"n":"x"}`, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := json.ParseOptions(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			f, _ := json.New(row, o)
			got, err := f.Decode([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("want error %q, got %v", tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestParseOptionsErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"fail-on-missing-field": "true", "ignore-parse-errors": "true"}, "cannot both be true"},
		{map[string]string{"timestamp-format.standard": "RFC"}, "'timestamp-format.standard' = 'RFC'"},
		{map[string]string{"decode.json-parser.enabled": "true"}, "option 'decode.json-parser.enabled' is not supported"},
		{map[string]string{"encode.ignore-null-fields": "yes"}, "'encode.ignore-null-fields' = 'yes': want true or false"},
	} {
		if _, err := json.ParseOptions(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want %q, got %v", tc.opts, tc.want, err)
		}
	}
}

// FuzzDecode: no panic and no hang on any input; what decodes encodes, and
// decodes again to the same row. Seeds are in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	row := rowType(f, allTypes)
	plain, _ := json.New(row, json.Options{})
	lenient, _ := json.New(row, json.Options{IgnoreParseErrors: true})
	f.Add([]byte(`{"bi":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []*json.Format{plain, lenient} {
			got, err := format.Decode(data)
			if err != nil || got == nil {
				continue
			}
			enc, err := format.Encode(got)
			if err != nil {
				t.Fatalf("decoded row %#v does not encode: %v", got, err)
			}
			again, err := format.Decode(enc)
			if err != nil || !schema.Equal(again, got) {
				t.Fatalf("round trip of %s: %#v, %v; want %#v", enc, again, err, got)
			}
		}
	})
}

// Hostile nesting is refused by the parser's depth limit, not the stack.
func TestDeepNesting(t *testing.T) {
	t.Parallel()
	f, err := json.New(rowType(t, "CREATE TABLE t (s STRING) WITH ('format' = 'json')"), json.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := `{"s":` + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + `}`
	if _, err := f.Decode([]byte(in)); err == nil || !strings.Contains(err.Error(), "max depth") {
		t.Fatalf("want the depth limit, got %v", err)
	}
}

// TestEncodeErrorPaths: an encode error names the column and the element,
// entry or field inside it.
func TestEncodeErrorPaths(t *testing.T) {
	t.Parallel()
	f, err := json.New(rowType(t, allTypes), json.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		col  string
		v    any
		want string
	}{
		{"bi", nil, "format json: field bi: NULL in a NOT NULL column"},
		{"ti", int64(300), "format json: field ti: 300 is out of range for TINYINT"},
		{"arr", []any{int64(1), "x"}, `format json: field arr[1]: cannot use string value "x" as INT`},
		{"m", map[string]any{"a": 1.0, "b": true}, `format json: field m.b: cannot use bool value "true" as DOUBLE`},
		{"r", map[string]any{"y": []any{map[string]any{"z": int64(1)}, map[string]any{"z": "x"}}}, `format json: field r.y[1].z: cannot use string value "x" as BIGINT`},
		{"dec", "1e30", "format json: field dec: decimal 1e30 does not fit DECIMAL(20, 4)"},
	} {
		row := fullRow()
		row[tc.col] = tc.v
		if _, err := f.Encode(row); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s = %#v: got %v, want %q", tc.col, tc.v, err, tc.want)
		}
	}
}

// json.encode.ignore-null-fields leaves NULL fields out of the object and
// of the ROWs nested in it, as Flink's RowDataToJsonConverters; NULL
// elements of arrays and NULL values of maps stay, and so does every field
// without the option. A NULL in a NOT NULL column is still refused.
func TestEncodeIgnoreNullFields(t *testing.T) {
	t.Parallel()
	row := rowType(t, `CREATE TABLE t (a STRING, b BIGINT, arr ARRAY<INT>, m MAP<STRING, INT>, r ROW<x STRING, y INT>, n INT NOT NULL) WITH ('format' = 'json')`)
	in := map[string]any{"a": nil, "b": int64(1), "arr": []any{nil, int64(2)}, "m": map[string]any{"k": nil}, "r": map[string]any{"x": nil, "y": int64(3)}, "n": int64(4)}
	for _, tc := range []struct {
		opts map[string]string
		row  map[string]any
		want string
	}{
		{map[string]string{}, in, `{"a":null,"b":1,"arr":[null,2],"m":{"k":null},"r":{"x":null,"y":3},"n":4}`},
		{map[string]string{"encode.ignore-null-fields": "false"}, in, `{"a":null,"b":1,"arr":[null,2],"m":{"k":null},"r":{"x":null,"y":3},"n":4}`},
		{map[string]string{"encode.ignore-null-fields": "true"}, in, `{"b":1,"arr":[null,2],"m":{"k":null},"r":{"y":3},"n":4}`},
		// Every field NULL but the NOT NULL one; a row missing its keys.
		{map[string]string{"encode.ignore-null-fields": "true"}, map[string]any{"n": int64(0), "r": map[string]any{}}, `{"r":{},"n":0}`},
		{map[string]string{"encode.ignore-null-fields": "true"}, map[string]any{"b": int64(1), "n": nil}, "error: format json: field n: NULL in a NOT NULL column"},
	} {
		o, err := json.ParseOptions(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := json.New(row, o)
		got, err := f.Encode(tc.row)
		if err != nil {
			got = []byte("error: " + err.Error())
		}
		if string(got) != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.opts, got, tc.want)
		}
		if err == nil && !stdjson.Valid(got) {
			t.Errorf("%v: %s is not JSON", tc.opts, got)
		}
	}
}
