package csv

// The encoder before the row fast paths (commit 99c0587), kept as the
// reference that TestEncodeMatchesReference compares Encode with.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/rowgen"
)

const refTypes = `CREATE TABLE t (
  s STRING, c CHAR(2) NOT NULL, b BOOLEAN, ti TINYINT, si SMALLINT, i INT, bi BIGINT NOT NULL,
  f FLOAT, d DOUBLE, dec DECIMAL(20, 4), z DECIMAL(5, 0), d8 DATE, tm TIME(3),
  ts TIMESTAMP(3), ltz TIMESTAMP_LTZ(6), by BYTES,
  arr ARRAY<INT>, nn ARRAY<BIGINT NOT NULL>, words ARRAY<STRING>, tss ARRAY<TIMESTAMP(3)>
) WITH ('format' = 'csv')`

// TestEncodeMatchesReference: for random rows (every type, the row's own
// Go values and the other forms Coerce accepts, NULLs, bad values, text
// that needs quoting) and several dialects, Encode writes the reference's
// bytes, or fails where it fails.
func TestEncodeMatchesReference(t *testing.T) {
	tables, err := schema.ParseDDL(refTypes)
	if err != nil {
		t.Fatal(err)
	}
	row := tables[0].PhysicalRowType()
	n := 3000
	if testing.Short() {
		n = 300
	}
	for di, opts := range []map[string]string{
		nil,
		{"null-literal": "NULL"},
		{"null-literal": "", "allow-comments": "true", "escape-character": `\\`},
		{"disable-quote-character": "true", "escape-character": "^", "null-literal": `\N`},
		{"disable-quote-character": "true", "write-bigdecimal-in-scientific-notation": "true"},
		{"field-delimiter": "|", "quote-character": "'", "array-element-delimiter": ","},
		{"field-delimiter": "§", "quote-character": "«", "null-literal": "∅", "array-element-delimiter": "¦"},
	} {
		o, err := ParseOptions(opts)
		if err != nil {
			t.Fatal(err)
		}
		f, err := New(row, o)
		if err != nil {
			t.Fatal(err)
		}
		g := rowgen.New(uint64(di))
		g.Invalid = 0.003
		for i := 0; i < n; i++ {
			r := g.Row(row)
			want, wantErr := f.refEncode(r)
			got, gotErr := f.Encode(r)
			if (wantErr != nil) != (gotErr != nil) || string(got) != string(want) {
				t.Fatalf("dialect %v, row %d %#v:\n got %q, %v\nwant %q, %v", opts, i, r, got, gotErr, want, wantErr)
			}
			if wantErr != nil && gotErr.Error() != wantErr.Error() {
				t.Errorf("dialect %v, row %d: error\n got %v\nwant %v", opts, i, gotErr, wantErr)
			}
		}
	}
}

// Encode writes a row as one CSV line without a terminator. The row may
// hold any value that schema.Coerce accepts.
func (f *Format) refEncode(row map[string]any) ([]byte, error) {
	var b strings.Builder
	b.Grow(256)
	for i, fld := range f.row.Fields {
		v, err := schema.Coerce(fld.Type, row[fld.Name], fld.Name)
		if err != nil {
			return nil, fmt.Errorf("format csv: field %w", err)
		}
		if i > 0 {
			b.WriteRune(f.opts.FieldDelimiter)
		}
		text, isNull, err := f.refFieldText(fld.Type, v, fld.Name)
		if err != nil {
			return nil, err
		}
		if isNull {
			b.WriteString(f.opts.NullLiteral)
			continue
		}
		if text == "" && fld.Type.Kind == schema.KindArray {
			// An empty array: a quoted empty field, or an empty one when a
			// null literal tells NULL apart.
			switch {
			case !f.opts.DisableQuoteCharacter:
				b.WriteRune(f.opts.QuoteCharacter)
				b.WriteRune(f.opts.QuoteCharacter)
			case !f.opts.HasNullLiteral || f.opts.NullLiteral == "":
				return nil, fmt.Errorf("format csv: field %s: an empty array cannot be told from NULL with quoting disabled and no 'null-literal'", fld.Name)
			}
			continue
		}
		if err := f.refWriteField(&b, text, fld.Name); err != nil {
			return nil, err
		}
	}
	return []byte(b.String()), nil
}

// fieldText renders a coerced value; isNull reports NULL.
func (f *Format) refFieldText(t *schema.Type, v any, path string) (string, bool, error) {
	if v == nil {
		return "", true, nil
	}
	if t.Kind != schema.KindArray {
		return f.refScalarText(t, v), false, nil
	}
	list := v.([]any)
	parts := make([]string, len(list))
	for i, e := range list {
		if e == nil {
			if !f.opts.HasNullLiteral {
				return "", false, fmt.Errorf("format csv: field %s[%d]: a NULL array element needs option 'null-literal'", path, i)
			}
			parts[i] = f.opts.NullLiteral
			continue
		}
		s := f.refScalarText(t.Elem, e)
		if strings.Contains(s, f.opts.ArrayElementDelimiter) || s == "" && len(list) == 1 {
			return "", false, fmt.Errorf("format csv: field %s[%d]: value %q cannot be written in an array (it holds the element delimiter or is empty)", path, i, clip(s))
		}
		if f.opts.HasNullLiteral && s == f.opts.NullLiteral {
			return "", false, fmt.Errorf("format csv: field %s[%d]: value %q is the null literal", path, i, clip(s))
		}
		parts[i] = s
	}
	return strings.Join(parts, f.opts.ArrayElementDelimiter), false, nil
}

func (f *Format) refScalarText(t *schema.Type, v any) string {
	switch t.Kind {
	case schema.KindChar, schema.KindVarchar:
		return v.(string)
	case schema.KindBoolean:
		return strconv.FormatBool(v.(bool))
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt, schema.KindBigint:
		return strconv.FormatInt(v.(int64), 10)
	case schema.KindFloat:
		return schema.FormatFloat(v.(float64), 32)
	case schema.KindDouble:
		return schema.FormatFloat(v.(float64), 64)
	case schema.KindDecimal:
		return string(appendBigDecimal(nil, string(v.(json.Number)), f.opts.DecimalScientific))
	case schema.KindDate:
		return schema.FormatDate(v.(time.Time))
	case schema.KindTime:
		return schema.FormatTime(v.(time.Time))
	case schema.KindTimestamp, schema.KindTimestampLTZ:
		return schema.TimestampSQL.FormatTimestamp(v.(time.Time), t.Kind == schema.KindTimestampLTZ)
	case schema.KindBinary, schema.KindVarbinary:
		return base64.StdEncoding.EncodeToString(v.([]byte))
	}
	return ""
}

// writeField writes text quoted or escaped as needed, so that it reads back
// as the same value.
func (f *Format) refWriteField(b *strings.Builder, text string, path string) error {
	o := f.opts
	atLineStart := b.Len() == 0
	needs := strings.ContainsRune(text, o.FieldDelimiter) || strings.ContainsAny(text, "\n\r") ||
		o.HasEscape && strings.ContainsRune(text, o.EscapeCharacter) ||
		o.HasNullLiteral && text == o.NullLiteral ||
		o.AllowComments && atLineStart && strings.HasPrefix(text, "#")
	if !o.DisableQuoteCharacter {
		if !needs && !strings.ContainsRune(text, o.QuoteCharacter) {
			b.WriteString(text)
			return nil
		}
		b.WriteRune(o.QuoteCharacter)
		for _, r := range text {
			if r == o.QuoteCharacter || o.HasEscape && r == o.EscapeCharacter {
				b.WriteRune(r) // doubled quote; escaped escape
			}
			b.WriteRune(r)
		}
		b.WriteRune(o.QuoteCharacter)
		return nil
	}
	if !needs {
		b.WriteString(text)
		return nil
	}
	if !o.HasEscape || strings.ContainsAny(text, "\n\r") || o.HasNullLiteral && text == o.NullLiteral {
		return fmt.Errorf("format csv: field %s: value %q cannot be written with quoting disabled (it holds the field delimiter, a line break or the null literal)", path, clip(text))
	}
	for i, r := range text {
		if r == o.FieldDelimiter || r == o.EscapeCharacter || i == 0 && r == '#' && o.AllowComments && atLineStart {
			b.WriteRune(o.EscapeCharacter)
		}
		b.WriteRune(r)
	}
	return nil
}
