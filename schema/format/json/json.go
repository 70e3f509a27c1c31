// Package json is Flink's `json` format: one JSON object per record, fields
// by column name, driven by the table's physical columns.
//
// Text forms follow Flink's JsonRowDataSerializationSchema: DATE
// `2006-01-02`, TIME `15:04:05.999`, TIMESTAMP and TIMESTAMP_LTZ in the
// `timestamp-format.standard` style, BYTES as base64, DECIMAL as a JSON
// number, FLOAT and DOUBLE NaN / Infinity as the strings "NaN", "Infinity",
// "-Infinity".
package json

import (
	"bytes"
	"encoding/base64"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"

	"github.com/connectd/connectd/schema"
)

// MapNullKeyMode is Flink's `json.map-null-key.mode`.
type MapNullKeyMode string

// Map null key modes.
const (
	MapNullKeyFail    MapNullKeyMode = "FAIL"
	MapNullKeyDrop    MapNullKeyMode = "DROP"
	MapNullKeyLiteral MapNullKeyMode = "LITERAL"
)

// Options are the json format options, named as in Flink without the
// `json.` prefix.
type Options struct {
	// FailOnMissingField fails a record that lacks a column's field instead
	// of reading NULL. Default false. Flink: `json.fail-on-missing-field`.
	FailOnMissingField bool
	// IgnoreParseErrors reads NULL for a field that does not parse, and
	// skips a record that is not a JSON object. Default false. Flink:
	// `json.ignore-parse-errors`.
	IgnoreParseErrors bool
	// TimestampStyle is the text form of timestamps. Default SQL. Flink:
	// `json.timestamp-format.standard`.
	TimestampStyle schema.TimestampStyle
	// MapNullKeyMode and MapNullKeyLiteral are Flink's
	// `json.map-null-key.mode` (default FAIL) and `json.map-null-key.literal`
	// (default "null"). connectd rows hold MAP keys as Go strings, which are
	// never NULL, so these are validated for compatibility and cannot change
	// the output.
	MapNullKeyMode    MapNullKeyMode
	MapNullKeyLiteral string
	// DecimalAsPlainNumber writes DECIMAL values in plain notation; when
	// false, values whose adjusted exponent is below -6 are written in
	// scientific notation like Java's BigDecimal.toString. Default false.
	// Flink: `json.encode.decimal-as-plain-number`.
	DecimalAsPlainNumber bool
	// IgnoreNullFields leaves a NULL field of a ROW (the row itself and
	// the ROWs nested in it) out of the object instead of writing null;
	// NULL elements of arrays and values of maps are still written.
	// Default false. Flink: `json.encode.ignore-null-fields`.
	IgnoreNullFields bool
}

// ParseOptions reads Flink option values (keys without the `json.` prefix).
func ParseOptions(opts map[string]string) (Options, error) {
	if err := schema.ValidateFormatOptions(schema.FormatJSON, opts); err != nil {
		return Options{}, err
	}
	o := Options{MapNullKeyMode: MapNullKeyFail, MapNullKeyLiteral: "null"}
	o.FailOnMissingField = strings.EqualFold(opts["fail-on-missing-field"], "true")
	o.IgnoreParseErrors = strings.EqualFold(opts["ignore-parse-errors"], "true")
	o.DecimalAsPlainNumber = strings.EqualFold(opts["encode.decimal-as-plain-number"], "true")
	o.IgnoreNullFields = strings.EqualFold(opts["encode.ignore-null-fields"], "true")
	o.TimestampStyle, _ = schema.ParseTimestampStyle(opts["timestamp-format.standard"])
	if m, ok := opts["map-null-key.mode"]; ok {
		o.MapNullKeyMode = MapNullKeyMode(m)
	}
	if l, ok := opts["map-null-key.literal"]; ok {
		o.MapNullKeyLiteral = l
	}
	if o.FailOnMissingField && o.IgnoreParseErrors {
		return Options{}, errors.New("format json: options 'fail-on-missing-field' and 'ignore-parse-errors' cannot both be true")
	}
	return o, nil
}

// Format decodes and encodes rows of a ROW type (the physical columns).
type Format struct {
	row  *schema.Type
	opts Options
	// keys are the top fields' names as JSON object keys with their colon,
	// `"name":`, written once.
	keys [][]byte
}

// New returns the json format for rows of type row (kind ROW).
func New(row *schema.Type, opts Options) (*Format, error) {
	if row.Kind != schema.KindRow {
		return nil, fmt.Errorf("format json: want a ROW type, got %s", row)
	}
	keys := make([][]byte, len(row.Fields))
	for i, fld := range row.Fields {
		keys[i] = append(appendString(nil, fld.Name), ':')
	}
	return &Format{row: row, opts: opts, keys: keys}, nil
}

// Decode reads one JSON object into a row. With IgnoreParseErrors a record
// that is not a JSON object returns a nil row and no error: skip it.
func (f *Format) Decode(data []byte) (map[string]any, error) {
	dec := gojson.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	err := dec.Decode(&doc)
	if err == nil && dec.More() {
		err = errors.New("data after the JSON value")
	}
	obj, isObj := doc.(map[string]any)
	if err == nil && !isObj {
		err = fmt.Errorf("want a JSON object, got %s", jsonKind(doc))
	}
	if err != nil {
		if f.opts.IgnoreParseErrors {
			return nil, nil
		}
		return nil, fmt.Errorf("format json: %w", err)
	}
	// The decoded object becomes the row: fields converted in place, keys
	// that are not columns dropped.
	for _, fld := range f.row.Fields {
		v, present := obj[fld.Name]
		if !present && f.opts.FailOnMissingField {
			return nil, fmt.Errorf("format json: field %s is missing (fail-on-missing-field is set)", fld.Name)
		}
		out, err := f.decodeValue(fld.Type, v, fld.Name)
		if err != nil {
			if f.opts.IgnoreParseErrors {
				if fld.Type.NotNull {
					return nil, nil
				}
				out = nil
			} else {
				return nil, fmt.Errorf("format json: %w", err)
			}
		}
		obj[fld.Name] = out
	}
	if len(obj) != len(f.row.Fields) {
		f.dropExtra(f.row, obj)
	}
	return obj, nil
}

// dropExtra deletes the keys of m that are not fields of row.
func (f *Format) dropExtra(row *schema.Type, m map[string]any) {
	for k := range m {
		known := false
		for _, fld := range row.Fields {
			if fld.Name == k {
				known = true
				break
			}
		}
		if !known {
			delete(m, k)
		}
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

func (f *Format) decodeValue(t *schema.Type, v any, path string) (any, error) {
	if v == nil {
		if t.NotNull {
			return nil, fmt.Errorf("field %s: %w", path, schema.ErrNotNull)
		}
		return nil, nil
	}
	bad := func(cause error) error {
		if cause != nil {
			return fmt.Errorf("field %s: cannot read %s as %s: %w", path, jsonKind(v), t, cause)
		}
		return fmt.Errorf("field %s: cannot read %s as %s", path, jsonKind(v), t)
	}
	switch t.Kind {
	case schema.KindChar, schema.KindVarchar:
		switch x := v.(type) {
		case string:
			return v, nil // as is: boxing x again would allocate
		case stdjson.Number:
			return string(x), nil
		case bool:
			return strconv.FormatBool(x), nil
		default: // objects and arrays as JSON text, like Flink's JsonNode.toString
			b, err := gojson.Marshal(x)
			if err != nil {
				return nil, bad(err)
			}
			return string(b), nil
		}
	case schema.KindBoolean:
		switch x := v.(type) {
		case bool:
			return v, nil
		case string:
			if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
				return b, nil
			}
		}
		return nil, bad(nil)
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt, schema.KindBigint:
		s, ok := numberText(v)
		if !ok {
			return nil, bad(nil)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, bad(err)
		}
		if err := schema.CheckIntRange(t.Kind, n); err != nil {
			return nil, bad(err)
		}
		return n, nil
	case schema.KindFloat, schema.KindDouble:
		s, ok := numberText(v)
		if !ok {
			return nil, bad(nil)
		}
		x, err := schema.ParseFloat(s)
		if err != nil {
			return nil, bad(err)
		}
		if t.Kind == schema.KindFloat {
			x = float64(float32(x))
		}
		return x, nil
	case schema.KindDecimal:
		s, ok := numberText(v)
		if !ok {
			return nil, bad(nil)
		}
		d, err := schema.ParseDecimal(s, t.Precision, t.Scale)
		if err != nil {
			return nil, bad(err)
		}
		return d, nil
	case schema.KindDate:
		s, ok := v.(string)
		if !ok {
			return nil, bad(nil)
		}
		d, err := schema.ParseDate(s)
		if err != nil {
			return nil, bad(err)
		}
		return d, nil
	case schema.KindTime:
		s, ok := v.(string)
		if !ok {
			return nil, bad(nil)
		}
		tm, err := schema.ParseTime(s, t.Precision)
		if err != nil {
			return nil, bad(err)
		}
		return tm, nil
	case schema.KindTimestamp, schema.KindTimestampLTZ:
		s, ok := v.(string)
		if !ok {
			return nil, bad(nil)
		}
		ts, err := f.opts.TimestampStyle.ParseTimestamp(s, t.Kind == schema.KindTimestampLTZ, t.Precision)
		if err != nil {
			return nil, bad(err)
		}
		return ts, nil
	case schema.KindBinary, schema.KindVarbinary:
		s, ok := v.(string)
		if !ok {
			return nil, bad(nil)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, bad(err)
		}
		return b, nil
	case schema.KindArray:
		list, ok := v.([]any)
		if !ok {
			return nil, bad(nil)
		}
		for i, e := range list {
			var err error
			if list[i], err = f.decodeValue(t.Elem, e, path); err != nil {
				return nil, fmt.Errorf("%w (element %d)", err, i)
			}
		}
		return list, nil
	case schema.KindMap:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, bad(nil)
		}
		for k, e := range m {
			var err error
			if m[k], err = f.decodeValue(t.Value, e, path); err != nil {
				return nil, fmt.Errorf("%w (key %q)", err, k)
			}
		}
		return m, nil
	case schema.KindRow:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, bad(nil)
		}
		for _, fld := range t.Fields {
			e, present := m[fld.Name]
			if !present && f.opts.FailOnMissingField {
				return nil, fmt.Errorf("field %s.%s is missing (fail-on-missing-field is set)", path, fld.Name)
			}
			var err error
			if m[fld.Name], err = f.decodeValue(fld.Type, e, path+"."+fld.Name); err != nil {
				return nil, err
			}
		}
		if len(m) != len(t.Fields) {
			f.dropExtra(t, m)
		}
		return m, nil
	}
	return nil, bad(nil)
}

// numberText returns the text of a JSON number, or of a string holding one
// (Flink reads "12" as 12).
func numberText(v any) (string, bool) {
	switch x := v.(type) {
	case stdjson.Number:
		return string(x), true
	case string:
		return x, true
	}
	return "", false
}

// Encode writes a row as one JSON object, fields in column order. The row
// may hold any value that schema.Coerce accepts.
func (f *Format) Encode(row map[string]any) ([]byte, error) {
	buf := make([]byte, 0, 256)
	buf = append(buf, '{')
	first := true
	for i, fld := range f.row.Fields {
		if f.skipNull(fld, row[fld.Name]) {
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = append(buf, f.keys[i]...)
		var err error
		if buf, err = f.appendValue(buf, fld.Type, row[fld.Name], fld.Name); err != nil {
			return nil, fmt.Errorf("format json: field %w", err)
		}
	}
	return append(buf, '}'), nil
}

// appendValue writes v, a value of type t: the row's own Go types directly,
// anything else through schema.Coerce. path names v in errors; the paths of
// elements, entries and fields are built only for an error, by writing the
// value again with its path.
func (f *Format) appendValue(buf []byte, t *schema.Type, v any, path string) ([]byte, error) {
	if v == nil {
		if t.NotNull {
			return nil, fmt.Errorf("%s: %w", path, schema.ErrNotNull)
		}
		return append(buf, "null"...), nil
	}
	switch t.Kind {
	case schema.KindChar, schema.KindVarchar:
		if s, ok := v.(string); ok {
			return appendString(buf, s), nil
		}
	case schema.KindBoolean:
		if b, ok := v.(bool); ok {
			return strconv.AppendBool(buf, b), nil
		}
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt, schema.KindBigint:
		if n, ok := v.(int64); ok && schema.IntInRange(t.Kind, n) {
			return strconv.AppendInt(buf, n, 10), nil
		}
	case schema.KindFloat, schema.KindDouble:
		if x, ok := v.(float64); ok {
			return appendFloat(buf, x, t.Kind), nil
		}
	case schema.KindBinary, schema.KindVarbinary:
		if b, ok := v.([]byte); ok {
			buf = append(buf, '"')
			buf = base64.StdEncoding.AppendEncode(buf, b)
			return append(buf, '"'), nil
		}
	case schema.KindArray:
		if list, ok := v.([]any); ok {
			buf = append(buf, '[')
			for i, e := range list {
				if i > 0 {
					buf = append(buf, ',')
				}
				var err error
				if buf, err = f.appendValue(buf, t.Elem, e, path); err != nil {
					_, err = f.appendValue(nil, t.Elem, e, schema.ElementPath(path, i))
					return nil, err
				}
			}
			return append(buf, ']'), nil
		}
	case schema.KindMap:
		if m, ok := v.(map[string]any); ok {
			buf = append(buf, '{')
			for i, k := range schema.SortedMapKeys(m) {
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = appendString(buf, k)
				buf = append(buf, ':')
				var err error
				if buf, err = f.appendValue(buf, t.Value, m[k], path); err != nil {
					_, err = f.appendValue(nil, t.Value, m[k], path+"."+k)
					return nil, err
				}
			}
			return append(buf, '}'), nil
		}
	case schema.KindRow:
		if m, ok := v.(map[string]any); ok {
			buf = append(buf, '{')
			first := true
			for _, fld := range t.Fields {
				if f.skipNull(fld, m[fld.Name]) {
					continue
				}
				if !first {
					buf = append(buf, ',')
				}
				first = false
				buf = appendString(buf, fld.Name)
				buf = append(buf, ':')
				var err error
				if buf, err = f.appendValue(buf, fld.Type, m[fld.Name], path); err != nil {
					_, err = f.appendValue(nil, fld.Type, m[fld.Name], schema.FieldPath(path, fld.Name))
					return nil, err
				}
			}
			return append(buf, '}'), nil
		}
	}
	// Other Go types, and the kinds whose row values Coerce checks
	// (DECIMAL, DATE, TIME, TIMESTAMP): Coerce returns a value of the row's
	// type, without allocating when v already is one.
	c, err := schema.Coerce(t, v, path)
	if err != nil {
		return nil, err
	}
	switch t.Kind {
	case schema.KindChar, schema.KindVarchar:
		return appendString(buf, c.(string)), nil
	case schema.KindBoolean:
		return strconv.AppendBool(buf, c.(bool)), nil
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt, schema.KindBigint:
		return strconv.AppendInt(buf, c.(int64), 10), nil
	case schema.KindFloat, schema.KindDouble:
		return appendFloat(buf, c.(float64), t.Kind), nil
	case schema.KindDecimal:
		d := string(c.(stdjson.Number))
		if !f.opts.DecimalAsPlainNumber {
			d = javaDecimalString(d, t.Scale)
		}
		return append(buf, d...), nil
	case schema.KindDate:
		buf = append(buf, '"')
		buf = schema.AppendDate(buf, c.(time.Time))
		return append(buf, '"'), nil
	case schema.KindTime:
		buf = append(buf, '"')
		buf = schema.AppendTime(buf, c.(time.Time))
		return append(buf, '"'), nil
	case schema.KindTimestamp, schema.KindTimestampLTZ:
		buf = append(buf, '"')
		buf = f.opts.TimestampStyle.AppendTimestamp(buf, c.(time.Time), t.Kind == schema.KindTimestampLTZ)
		return append(buf, '"'), nil
	case schema.KindBinary, schema.KindVarbinary, schema.KindArray, schema.KindMap, schema.KindRow:
		// Coerce's arrays, maps and rows hold the row's types: written
		// by the cases above.
		return f.appendValue(buf, t, c, path)
	}
	return append(buf, "null"...), nil
}

// skipNull reports whether the ROW field fld with value v is left out:
// NULL under IgnoreNullFields. A NULL in a NOT NULL field is not skipped:
// appendValue refuses it.
func (f *Format) skipNull(fld schema.Field, v any) bool {
	return v == nil && f.opts.IgnoreNullFields && !fld.Type.NotNull
}

// appendFloat writes a FLOAT or DOUBLE: NaN and the infinities as the
// strings Java writes, other values in the shortest form.
func appendFloat(buf []byte, x float64, k schema.Kind) []byte {
	if k == schema.KindFloat {
		x = float64(float32(x)) // as Coerce rounds a FLOAT
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return appendString(buf, schema.FormatFloat(x, 64)) // JSON has no NaN: a string, as Flink writes it
	}
	return schema.AppendFloat(buf, x, k)
}

// javaDecimalString renders a plain decimal with the given scale as Java's
// BigDecimal.toString does: scientific notation when the adjusted exponent
// is below -6.
func javaDecimalString(plain string, scale int) string {
	if scale == 0 || !strings.HasPrefix(plain, "0") && !strings.HasPrefix(plain, "-0") {
		return plain // an integer part other than 0: the adjusted exponent is >= 0
	}
	neg := strings.HasPrefix(plain, "-")
	unscaled := strings.TrimLeft(strings.Replace(strings.TrimPrefix(plain, "-"), ".", "", 1), "0")
	if unscaled == "" {
		unscaled = "0"
	}
	adjusted := -scale + len(unscaled) - 1
	if adjusted >= -6 {
		return plain
	}
	out := unscaled[:1]
	if len(unscaled) > 1 {
		out += "." + unscaled[1:]
	}
	out += "E" + strconv.Itoa(adjusted)
	if neg {
		out = "-" + out
	}
	return out
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string: quotes, backslashes and control
// characters escaped, invalid UTF-8 replaced by U+FFFD.
//
// Runs of bytes that need no escape are copied at once, s[start:i].
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch {
			case c == '"' || c == '\\':
				buf = append(buf, '\\', c)
			case c == '\n':
				buf = append(buf, '\\', 'n')
			case c == '\r':
				buf = append(buf, '\\', 'r')
			case c == '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			start = i + size
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
