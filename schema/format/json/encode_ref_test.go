package json

// The encoder before the row fast paths (commit 99c0587), kept as the
// reference that TestEncodeMatchesReference compares Encode with.

import (
	"encoding/base64"
	stdjson "encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/rowgen"
)

const refTypes = `CREATE TABLE t (
  s STRING, v VARCHAR(10), c CHAR(2) NOT NULL, b BOOLEAN, ti TINYINT, si SMALLINT, i INT, bi BIGINT NOT NULL,
  f FLOAT, d DOUBLE NOT NULL, dec DECIMAL(20, 4), tiny_dec DECIMAL(10, 9), z DECIMAL(5, 0), d8 DATE, tm TIME(3),
  ts TIMESTAMP(3), ts0 TIMESTAMP(0), ltz TIMESTAMP_LTZ(6), by BYTES, vb VARBINARY(4),
  arr ARRAY<INT>, nn ARRAY<BIGINT NOT NULL>, aa ARRAY<ARRAY<DOUBLE>>, m MAP<STRING, DOUBLE>,
  r ROW<x STRING, y ARRAY<ROW<z BIGINT NOT NULL>>>
) WITH ('format' = 'json')`

// TestEncodeMatchesReference: for random rows (every type, the row's own
// Go values and the other forms Coerce accepts, NULLs, bad values), Encode
// writes the reference's bytes, or fails where it fails.
func TestEncodeMatchesReference(t *testing.T) {
	tables, err := schema.ParseDDL(refTypes)
	if err != nil {
		t.Fatal(err)
	}
	row := tables[0].PhysicalRowType()
	n := 5000
	if testing.Short() {
		n = 500
	}
	for _, opts := range []Options{{}, {TimestampStyle: schema.TimestampISO8601, DecimalAsPlainNumber: true}} {
		f, err := New(row, opts)
		if err != nil {
			t.Fatal(err)
		}
		g := rowgen.New(1)
		g.Invalid = 0.003
		for i := 0; i < n; i++ {
			r := g.Row(row)
			want, wantErr := f.refEncode(r)
			got, gotErr := f.Encode(r)
			if (wantErr != nil) != (gotErr != nil) || string(got) != string(want) {
				t.Fatalf("row %d %#v:\n got %s, %v\nwant %s, %v", i, r, got, gotErr, want, wantErr)
			}
			if wantErr != nil && gotErr.Error() != wantErr.Error() {
				t.Fatalf("row %d %#v: error\n got %v\nwant %v", i, r, gotErr, wantErr)
			}
		}
	}
}

// Encode writes a row as one JSON object, fields in column order. The row
// may hold any value that schema.Coerce accepts.
func (f *Format) refEncode(row map[string]any) ([]byte, error) {
	buf := make([]byte, 0, 256)
	buf = append(buf, '{')
	for i, fld := range f.row.Fields {
		v, err := schema.Coerce(fld.Type, row[fld.Name], fld.Name)
		if err != nil {
			return nil, fmt.Errorf("format json: field %w", err)
		}
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, f.keys[i]...)
		buf = f.refAppendValue(buf, fld.Type, v)
	}
	return append(buf, '}'), nil
}

// appendValue writes a coerced value.
func (f *Format) refAppendValue(buf []byte, t *schema.Type, v any) []byte {
	if v == nil {
		return append(buf, "null"...)
	}
	switch t.Kind {
	case schema.KindChar, schema.KindVarchar:
		return appendString(buf, v.(string))
	case schema.KindBoolean:
		return strconv.AppendBool(buf, v.(bool))
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt, schema.KindBigint:
		return strconv.AppendInt(buf, v.(int64), 10)
	case schema.KindFloat, schema.KindDouble:
		bits := 64
		if t.Kind == schema.KindFloat {
			bits = 32
		}
		s := schema.FormatFloat(v.(float64), bits)
		if s == "NaN" || strings.HasSuffix(s, "Infinity") {
			return appendString(buf, s)
		}
		return append(buf, s...)
	case schema.KindDecimal:
		d := string(v.(stdjson.Number))
		if !f.opts.DecimalAsPlainNumber {
			d = javaDecimalString(d, t.Scale)
		}
		return append(buf, d...)
	case schema.KindDate:
		return appendString(buf, schema.FormatDate(v.(time.Time)))
	case schema.KindTime:
		return appendString(buf, schema.FormatTime(v.(time.Time)))
	case schema.KindTimestamp, schema.KindTimestampLTZ:
		return appendString(buf, f.opts.TimestampStyle.FormatTimestamp(v.(time.Time), t.Kind == schema.KindTimestampLTZ))
	case schema.KindBinary, schema.KindVarbinary:
		b := v.([]byte)
		buf = append(buf, '"')
		buf = base64.StdEncoding.AppendEncode(buf, b)
		return append(buf, '"')
	case schema.KindArray:
		buf = append(buf, '[')
		for i, e := range v.([]any) {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = f.refAppendValue(buf, t.Elem, e)
		}
		return append(buf, ']')
	case schema.KindMap:
		m := v.(map[string]any)
		buf = append(buf, '{')
		for i, k := range schema.SortedMapKeys(m) {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendString(buf, k)
			buf = append(buf, ':')
			buf = f.refAppendValue(buf, t.Value, m[k])
		}
		return append(buf, '}')
	case schema.KindRow:
		m := v.(map[string]any)
		buf = append(buf, '{')
		for i, fld := range t.Fields {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendString(buf, fld.Name)
			buf = append(buf, ':')
			buf = f.refAppendValue(buf, fld.Type, m[fld.Name])
		}
		return append(buf, '}')
	}
	return append(buf, "null"...)
}
