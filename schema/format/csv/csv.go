// Package csv is Flink's `csv` format: one CSV line per record, fields in
// the order of the table's physical columns.
//
// Text forms follow Flink's CsvRowDataSerializationSchema: BOOLEAN
// true/false, DECIMAL plain with its scale (or, with
// `write-bigdecimal-in-scientific-notation` = true, without trailing zeros in
// Java's BigDecimal.toString form), DATE `2006-01-02`, TIME `15:04:05.999`,
// TIMESTAMP `2006-01-02 15:04:05.999`, TIMESTAMP_LTZ with a trailing `Z`,
// BYTES as base64, ARRAY elements joined by `array-element-delimiter`.
// MAP and ROW columns are not supported, as in Flink's csv format.
//
// An empty field reads as NULL for every type but the character and binary
// strings, which read it as the empty string or empty bytes;
// `null-literal` gives NULL a text of its own. As in Flink, the null
// literal as a whole ARRAY field reads as an array of one NULL element (a
// NULL array and [NULL] are written alike). An encoded record has no line terminator; one trailing "\n" or
// "\r\n" is accepted on decode.
package csv

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/connectd/connectd/schema"
)

// Options are the csv format options, named as in Flink without the `csv.`
// prefix.
type Options struct {
	// FieldDelimiter separates fields. Default ','. Flink: `csv.field-delimiter`.
	FieldDelimiter rune
	// QuoteCharacter encloses fields that hold special characters. Default
	// '"'. Flink: `csv.quote-character`.
	QuoteCharacter rune
	// DisableQuoteCharacter turns quoting off; a delimiter inside a value
	// then needs EscapeCharacter. Default false. Flink: `csv.disable-quote-character`.
	DisableQuoteCharacter bool
	// AllowComments skips records that start with '#'. Default false.
	// Flink: `csv.allow-comments`.
	AllowComments bool
	// IgnoreParseErrors reads NULL for a field that does not parse and skips
	// a record that does not split into the columns. Default false. Flink:
	// `csv.ignore-parse-errors`.
	IgnoreParseErrors bool
	// ArrayElementDelimiter separates ARRAY elements. Default ";". Flink:
	// `csv.array-element-delimiter`.
	ArrayElementDelimiter string
	// EscapeCharacter, when set, makes the next character literal. Default
	// none. Flink: `csv.escape-character`.
	EscapeCharacter rune
	HasEscape       bool
	// NullLiteral, when set, is the text of NULL. Default none. Flink:
	// `csv.null-literal`.
	NullLiteral    string
	HasNullLiteral bool
	// DecimalScientific writes DECIMAL values without trailing zeros, in
	// scientific notation where Java's BigDecimal.toString uses it (100.00
	// as 1E+2, 12.50 as 12.5, zero as 0); otherwise they are written plain
	// with the column's scale (100.00). Flink:
	// `csv.write-bigdecimal-in-scientific-notation`. Flink documents the
	// option's default as true, but its csv format factory reads it only
	// when it is set (getOptional), so unset writes plain, as 'false' does:
	// true only when the option says 'true', as Flink 2.2 writes.
	DecimalScientific bool
}

// ParseOptions reads Flink option values (keys without the `csv.` prefix).
func ParseOptions(opts map[string]string) (Options, error) {
	if err := schema.ValidateFormatOptions(schema.FormatCSV, opts); err != nil {
		return Options{}, err
	}
	o := Options{FieldDelimiter: ',', QuoteCharacter: '"', ArrayElementDelimiter: ";"}
	o.DecimalScientific = strings.EqualFold(opts["write-bigdecimal-in-scientific-notation"], "true")
	if v, ok := opts["field-delimiter"]; ok {
		o.FieldDelimiter, _ = schema.ParseCharOption(v)
	}
	if v, ok := opts["quote-character"]; ok {
		o.QuoteCharacter, _ = schema.ParseCharOption(v)
	}
	if v, ok := opts["escape-character"]; ok {
		o.EscapeCharacter, _ = schema.ParseCharOption(v)
		o.HasEscape = true
	}
	if v, ok := opts["array-element-delimiter"]; ok {
		o.ArrayElementDelimiter = v
	}
	if v, ok := opts["null-literal"]; ok {
		o.NullLiteral, o.HasNullLiteral = v, true
	}
	o.DisableQuoteCharacter = strings.EqualFold(opts["disable-quote-character"], "true")
	o.AllowComments = strings.EqualFold(opts["allow-comments"], "true")
	o.IgnoreParseErrors = strings.EqualFold(opts["ignore-parse-errors"], "true")
	if err := o.validate(); err != nil {
		return Options{}, err
	}
	return o, nil
}

func (o Options) validate() error {
	var errs []error
	if _, set := map[rune]bool{'\n': true, '\r': true}[o.FieldDelimiter]; set {
		errs = append(errs, errors.New("format csv: option 'field-delimiter' cannot be a line break"))
	}
	if !o.DisableQuoteCharacter && o.QuoteCharacter == o.FieldDelimiter {
		errs = append(errs, errors.New("format csv: options 'quote-character' and 'field-delimiter' must differ"))
	}
	if o.HasEscape && (o.EscapeCharacter == o.FieldDelimiter || !o.DisableQuoteCharacter && o.EscapeCharacter == o.QuoteCharacter) {
		errs = append(errs, errors.New("format csv: option 'escape-character' must differ from the field delimiter and the quote character"))
	}
	return errors.Join(errs...)
}

// Format decodes and encodes rows of a ROW type (the physical columns).
type Format struct {
	row  *schema.Type
	opts Options
	// ascii: the delimiter, quote and escape characters are ASCII, so that
	// split may scan bytes (splitASCII) instead of runes.
	ascii bool
}

// New returns the csv format for rows of type row (kind ROW).
func New(row *schema.Type, opts Options) (*Format, error) {
	if row.Kind != schema.KindRow {
		return nil, fmt.Errorf("format csv: want a ROW type, got %s", row)
	}
	for _, f := range row.Fields {
		t := f.Type
		if t.Kind == schema.KindArray {
			t = t.Elem
		}
		switch t.Kind {
		case schema.KindArray, schema.KindMap, schema.KindRow:
			return nil, fmt.Errorf("format csv: column %s: type %s is not supported (Flink's csv format takes scalar columns and arrays of scalars)", f.Name, f.Type)
		}
		if f.Type.Kind == schema.KindArray && strings.ContainsRune(opts.ArrayElementDelimiter, opts.FieldDelimiter) {
			return nil, fmt.Errorf("format csv: column %s: option 'array-element-delimiter' (%q) must not contain the field delimiter %q", f.Name, opts.ArrayElementDelimiter, opts.FieldDelimiter)
		}
	}
	ascii := opts.FieldDelimiter < utf8.RuneSelf && opts.QuoteCharacter < utf8.RuneSelf &&
		(!opts.HasEscape || opts.EscapeCharacter < utf8.RuneSelf)
	return &Format{row: row, opts: opts, ascii: ascii}, nil
}

// Decode reads one CSV line into a row. With AllowComments a comment line,
// and with IgnoreParseErrors a line that does not split into the columns,
// return a nil row and no error: skip it.
func (f *Format) Decode(data []byte) (map[string]any, error) {
	line := string(data)
	line = strings.TrimSuffix(line, "\n")
	line = strings.TrimSuffix(line, "\r")
	if f.opts.AllowComments && strings.HasPrefix(line, "#") {
		return nil, nil
	}
	fields, err := f.split(line)
	if err == nil && len(fields) != len(f.row.Fields) {
		err = fmt.Errorf("want %d fields, got %d", len(f.row.Fields), len(fields))
	}
	if err != nil {
		if f.opts.IgnoreParseErrors {
			return nil, nil
		}
		return nil, fmt.Errorf("format csv: %w", err)
	}
	row := make(map[string]any, len(fields))
	for i, fld := range f.row.Fields {
		v, err := f.decodeField(fld.Type, fields[i], fld.Name)
		if err != nil {
			if !f.opts.IgnoreParseErrors {
				return nil, fmt.Errorf("format csv: %w", err)
			}
			if fld.Type.NotNull {
				return nil, nil
			}
			v = nil
		}
		row[fld.Name] = v
	}
	return row, nil
}

// field is one split field: its text and whether it was quoted (a quoted
// empty field is an empty string, never NULL).
type field struct {
	text   string
	raw    string // the unquoted field as written, escapes included
	quoted bool
}

func (f *Format) split(line string) ([]field, error) {
	if f.ascii && utf8.ValidString(line) { // the rune path reads invalid UTF-8 as U+FFFD
		return f.splitASCII(line)
	}
	var out []field
	rs := []rune(line)
	quoting := !f.opts.DisableQuoteCharacter
	i := 0
	for {
		var b strings.Builder
		fl := field{}
		if quoting && i < len(rs) && rs[i] == f.opts.QuoteCharacter {
			fl.quoted = true
			i++
			closed := false
			for i < len(rs) {
				r := rs[i]
				switch {
				case f.opts.HasEscape && r == f.opts.EscapeCharacter && i+1 < len(rs):
					b.WriteRune(rs[i+1])
					i += 2
					continue
				case r == f.opts.QuoteCharacter:
					if i+1 < len(rs) && rs[i+1] == f.opts.QuoteCharacter {
						b.WriteRune(r)
						i += 2
						continue
					}
					closed = true
					i++
				default:
					b.WriteRune(r)
					i++
					continue
				}
				break
			}
			if !closed {
				return nil, fmt.Errorf("field %d: quote is not closed", len(out)+1)
			}
			if i < len(rs) && rs[i] != f.opts.FieldDelimiter {
				return nil, fmt.Errorf("field %d: unexpected %q after the closing quote", len(out)+1, rs[i])
			}
		} else {
			start := i
			for i < len(rs) && rs[i] != f.opts.FieldDelimiter {
				if f.opts.HasEscape && rs[i] == f.opts.EscapeCharacter && i+1 < len(rs) {
					i++
				}
				b.WriteRune(rs[i])
				i++
			}
			fl.raw = string(rs[start:i])
		}
		fl.text = b.String()
		out = append(out, fl)
		if i >= len(rs) {
			return out, nil
		}
		i++ // the delimiter
	}
}

// splitASCII is split for ASCII delimiter, quote and escape characters: it
// scans bytes (a UTF-8 multi-byte sequence never holds an ASCII byte), and a
// field without quotes or escapes is a substring of line, not a copy.
func (f *Format) splitASCII(line string) ([]field, error) {
	out := make([]field, 0, len(f.row.Fields))
	delim := byte(f.opts.FieldDelimiter)
	quote := byte(f.opts.QuoteCharacter)
	esc := byte(f.opts.EscapeCharacter)
	hasEsc := f.opts.HasEscape
	quoting := !f.opts.DisableQuoteCharacter
	i := 0
	for {
		fl := field{}
		if quoting && i < len(line) && line[i] == quote {
			fl.quoted = true
			i++
			start := i
			var b []byte // nil while the text is line[start:i]
			closed := false
			for i < len(line) {
				c := line[i]
				switch {
				case hasEsc && c == esc && i+1 < len(line):
					if b == nil {
						b = append(make([]byte, 0, len(line)-start), line[start:i]...)
					}
					b = append(b, line[i+1])
					i += 2
					continue
				case c == quote:
					if i+1 < len(line) && line[i+1] == quote {
						if b == nil {
							b = append(make([]byte, 0, len(line)-start), line[start:i]...)
						}
						b = append(b, c)
						i += 2
						continue
					}
					closed = true
				default:
					if b != nil {
						b = append(b, c)
					}
					i++
					continue
				}
				break
			}
			if !closed {
				return nil, fmt.Errorf("field %d: quote is not closed", len(out)+1)
			}
			if b != nil {
				fl.text = string(b)
			} else {
				fl.text = line[start:i]
			}
			i++ // the closing quote
			if i < len(line) && line[i] != delim {
				r, _ := utf8.DecodeRuneInString(line[i:])
				return nil, fmt.Errorf("field %d: unexpected %q after the closing quote", len(out)+1, r)
			}
		} else {
			start := i
			escaped := false
			for i < len(line) && line[i] != delim {
				if hasEsc && line[i] == esc && i+1 < len(line) {
					escaped = true
					i++
				}
				i++
			}
			fl.raw = line[start:i]
			fl.text = fl.raw
			if escaped {
				fl.text = f.unescape(fl.raw)
			}
		}
		out = append(out, fl)
		if i >= len(line) {
			return out, nil
		}
		i++ // the delimiter
	}
}

// unescape drops the escape character before each escaped character.
func (f *Format) unescape(s string) string {
	esc := byte(f.opts.EscapeCharacter)
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == esc && i+1 < len(s) {
			i++
		}
		b = append(b, s[i])
	}
	return string(b)
}

func (f *Format) decodeField(t *schema.Type, fl field, path string) (any, error) {
	// As Flink's CsvToRowDataConverters: an empty field is NULL but for
	// character and binary strings (the empty string, empty bytes); with a
	// null literal, that text is NULL, except for a whole ARRAY field,
	// which Flink splits into elements first (the literal reads as an
	// array of one NULL element).
	isNull := !fl.quoted && fl.text == "" && !t.IsString() && !t.IsBinary()
	if f.opts.HasNullLiteral {
		isNull = !fl.quoted && fl.raw == f.opts.NullLiteral
		if isNull && t.Kind == schema.KindArray {
			if t.Elem.NotNull {
				return nil, fmt.Errorf("field %s[0]: %w", path, schema.ErrNotNull)
			}
			return []any{nil}, nil
		}
	}
	if isNull {
		if t.NotNull {
			return nil, fmt.Errorf("field %s: %w", path, schema.ErrNotNull)
		}
		return nil, nil
	}
	if t.Kind == schema.KindArray {
		if fl.text == "" {
			return []any{}, nil
		}
		parts := strings.Split(fl.text, f.opts.ArrayElementDelimiter)
		out := make([]any, len(parts))
		for i, p := range parts {
			var err error
			if out[i], err = f.decodeField(t.Elem, field{text: p, raw: p}, ""); err != nil {
				// Again with the element's path, built only for the error.
				_, err = f.decodeField(t.Elem, field{text: p, raw: p}, fmt.Sprintf("%s[%d]", path, i))
				return nil, err
			}
		}
		return out, nil
	}
	v, err := decodeScalar(t, fl.text)
	if err != nil {
		return nil, fmt.Errorf("field %s: cannot read %q as %s: %w", path, clip(fl.text), t, err)
	}
	return v, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func decodeScalar(t *schema.Type, s string) (any, error) {
	switch t.Kind {
	case schema.KindChar, schema.KindVarchar:
		return s, nil
	case schema.KindBoolean:
		return strconv.ParseBool(strings.TrimSpace(s))
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt, schema.KindBigint:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, err
		}
		if err := schema.CheckIntRange(t.Kind, n); err != nil {
			return nil, err
		}
		return n, nil
	case schema.KindFloat, schema.KindDouble:
		x, err := schema.ParseFloat(s)
		if err != nil {
			return nil, err
		}
		if t.Kind == schema.KindFloat {
			x = float64(float32(x))
		}
		return x, nil
	case schema.KindDecimal:
		return schema.ParseDecimal(s, t.Precision, t.Scale)
	case schema.KindDate:
		return schema.ParseDate(s)
	case schema.KindTime:
		return schema.ParseTime(s, t.Precision)
	case schema.KindTimestamp, schema.KindTimestampLTZ:
		return schema.TimestampSQL.ParseTimestamp(s, t.Kind == schema.KindTimestampLTZ, t.Precision)
	case schema.KindBinary, schema.KindVarbinary:
		return base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	}
	return nil, fmt.Errorf("unsupported type")
}

// Encode writes a row as one CSV line without a terminator. The row may
// hold any value that schema.Coerce accepts.
func (f *Format) Encode(row map[string]any) ([]byte, error) {
	buf := make([]byte, 0, 128)
	for i, fld := range f.row.Fields {
		if i > 0 {
			buf = utf8.AppendRune(buf, f.opts.FieldDelimiter)
		}
		start := len(buf)
		var isNull bool
		var err error
		if buf, isNull, err = f.appendText(buf, fld.Type, row[fld.Name], fld.Name); err != nil {
			return nil, err
		}
		if isNull {
			buf = append(buf, f.opts.NullLiteral...)
			continue
		}
		if len(buf) == start && fld.Type.Kind == schema.KindArray {
			// An empty array: a quoted empty field, or an empty one when a
			// null literal tells NULL apart.
			switch {
			case !f.opts.DisableQuoteCharacter:
				buf = utf8.AppendRune(buf, f.opts.QuoteCharacter)
				buf = utf8.AppendRune(buf, f.opts.QuoteCharacter)
			case !f.opts.HasNullLiteral || f.opts.NullLiteral == "":
				return nil, fmt.Errorf("format csv: field %s: an empty array cannot be told from NULL with quoting disabled and no 'null-literal'", fld.Name)
			}
			continue
		}
		// The text is in buf[start:]; quoted or escaped when it needs it.
		if f.needsQuoting(buf[start:], start == 0) {
			text := string(buf[start:])
			if buf, err = f.appendQuoted(buf[:start], text, start == 0, fld.Name); err != nil {
				return nil, err
			}
		}
	}
	return buf, nil
}

// appendText appends the text of a field's value; isNull reports NULL (and
// appends nothing).
func (f *Format) appendText(buf []byte, t *schema.Type, v any, path string) (_ []byte, isNull bool, _ error) {
	if v == nil {
		if t.NotNull {
			return nil, false, fmt.Errorf("format csv: field %s: %w", path, schema.ErrNotNull)
		}
		return buf, true, nil
	}
	if t.Kind != schema.KindArray {
		b, err := f.appendScalar(buf, t, v, path)
		if err != nil {
			return nil, false, fmt.Errorf("format csv: field %w", err)
		}
		return b, false, nil
	}
	list, ok := v.([]any)
	if !ok {
		c, err := schema.Coerce(t, v, path)
		if err != nil {
			return nil, false, fmt.Errorf("format csv: field %w", err)
		}
		list = c.([]any)
	}
	delim := f.opts.ArrayElementDelimiter
	for i, e := range list {
		if i > 0 {
			buf = append(buf, delim...)
		}
		if e == nil {
			if !f.opts.HasNullLiteral || t.Elem.NotNull {
				return nil, false, arrayError(t, list, path, fmt.Errorf("format csv: field %s[%d]: a NULL array element needs option 'null-literal'", path, i))
			}
			buf = append(buf, f.opts.NullLiteral...)
			continue
		}
		start := len(buf)
		var err error
		if buf, err = f.appendScalar(buf, t.Elem, e, path); err != nil {
			return nil, false, arrayError(t, list, path, err)
		}
		s := buf[start:]
		if delim != "" && bytes.Contains(s, []byte(delim)) || len(s) == 0 && len(list) == 1 {
			return nil, false, arrayError(t, list, path, fmt.Errorf("format csv: field %s[%d]: value %q cannot be written in an array (it holds the element delimiter or is empty)", path, i, clip(string(s))))
		}
		if f.opts.HasNullLiteral && string(s) == f.opts.NullLiteral {
			return nil, false, arrayError(t, list, path, fmt.Errorf("format csv: field %s[%d]: value %q is the null literal", path, i, clip(string(s))))
		}
	}
	return buf, false, nil
}

// arrayError returns the error of an array field: the first element that
// schema.Coerce refuses, named with its path, else err (an element that has
// no text in an array).
func arrayError(t *schema.Type, list []any, path string, err error) error {
	if _, cerr := schema.Coerce(t, list, path); cerr != nil {
		return fmt.Errorf("format csv: field %w", cerr)
	}
	return err
}

// appendScalar appends the text of a scalar value of type t: the row's own
// Go types directly, anything else through schema.Coerce (path names the
// value in its errors).
func (f *Format) appendScalar(buf []byte, t *schema.Type, v any, path string) ([]byte, error) {
	switch t.Kind {
	case schema.KindChar, schema.KindVarchar:
		if s, ok := v.(string); ok {
			return append(buf, s...), nil
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
			return schema.AppendFloat(buf, x, t.Kind), nil
		}
	case schema.KindBinary, schema.KindVarbinary:
		if b, ok := v.([]byte); ok {
			return base64.StdEncoding.AppendEncode(buf, b), nil
		}
	}
	c, err := schema.Coerce(t, v, path)
	if err != nil {
		return nil, err
	}
	if c == nil { // Coerce of a non-nil value is never NULL
		return buf, nil
	}
	switch t.Kind {
	case schema.KindChar, schema.KindVarchar:
		return append(buf, c.(string)...), nil
	case schema.KindBoolean:
		return strconv.AppendBool(buf, c.(bool)), nil
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt, schema.KindBigint:
		return strconv.AppendInt(buf, c.(int64), 10), nil
	case schema.KindFloat, schema.KindDouble:
		return schema.AppendFloat(buf, c.(float64), t.Kind), nil
	case schema.KindDecimal:
		return appendBigDecimal(buf, string(c.(json.Number)), f.opts.DecimalScientific), nil
	case schema.KindDate:
		return schema.AppendDate(buf, c.(time.Time)), nil
	case schema.KindTime:
		return schema.AppendTime(buf, c.(time.Time)), nil
	case schema.KindTimestamp, schema.KindTimestampLTZ:
		return schema.TimestampSQL.AppendTimestamp(buf, c.(time.Time), t.Kind == schema.KindTimestampLTZ), nil
	case schema.KindBinary, schema.KindVarbinary:
		return base64.StdEncoding.AppendEncode(buf, c.([]byte)), nil
	}
	return buf, nil
}

// needsQuoting reports whether a field's text must be quoted or escaped to
// read back as the same value (what appendQuoted does to it).
func (f *Format) needsQuoting(text []byte, atLineStart bool) bool {
	o := f.opts
	if f.ascii {
		for _, c := range text {
			switch {
			case c == '\n' || c == '\r' || rune(c) == o.FieldDelimiter:
				return true
			case !o.DisableQuoteCharacter && rune(c) == o.QuoteCharacter:
				return true
			case o.HasEscape && rune(c) == o.EscapeCharacter:
				return true
			}
		}
	} else if bytes.ContainsRune(text, o.FieldDelimiter) || bytes.ContainsAny(text, "\n\r") ||
		o.HasEscape && bytes.ContainsRune(text, o.EscapeCharacter) ||
		!o.DisableQuoteCharacter && bytes.ContainsRune(text, o.QuoteCharacter) {
		return true
	}
	return o.HasNullLiteral && string(text) == o.NullLiteral ||
		o.AllowComments && atLineStart && len(text) > 0 && text[0] == '#'
}

// appendQuoted appends text quoted or escaped as needed, so that it reads
// back as the same value.
func (f *Format) appendQuoted(buf []byte, text string, atLineStart bool, path string) ([]byte, error) {
	o := f.opts
	needs := strings.ContainsRune(text, o.FieldDelimiter) || strings.ContainsAny(text, "\n\r") ||
		o.HasEscape && strings.ContainsRune(text, o.EscapeCharacter) ||
		o.HasNullLiteral && text == o.NullLiteral ||
		o.AllowComments && atLineStart && strings.HasPrefix(text, "#")
	if !o.DisableQuoteCharacter {
		if !needs && !strings.ContainsRune(text, o.QuoteCharacter) {
			return append(buf, text...), nil
		}
		buf = utf8.AppendRune(buf, o.QuoteCharacter)
		for _, r := range text {
			if r == o.QuoteCharacter || o.HasEscape && r == o.EscapeCharacter {
				buf = utf8.AppendRune(buf, r) // doubled quote; escaped escape
			}
			buf = utf8.AppendRune(buf, r)
		}
		return utf8.AppendRune(buf, o.QuoteCharacter), nil
	}
	if !needs {
		return append(buf, text...), nil
	}
	if !o.HasEscape || strings.ContainsAny(text, "\n\r") || o.HasNullLiteral && text == o.NullLiteral {
		return nil, fmt.Errorf("format csv: field %s: value %q cannot be written with quoting disabled (it holds the field delimiter, a line break or the null literal)", path, clip(text))
	}
	for i, r := range text {
		if r == o.FieldDelimiter || r == o.EscapeCharacter || i == 0 && r == '#' && o.AllowComments && atLineStart {
			buf = utf8.AppendRune(buf, o.EscapeCharacter)
		}
		buf = utf8.AppendRune(buf, r)
	}
	return buf, nil
}
