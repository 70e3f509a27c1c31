// Package raw is Flink's `raw` format: the record bytes as the single
// physical column.
//
// A character string (CHAR, VARCHAR, STRING) is the text in `raw.charset`
// (default UTF-8; a record that is not valid UTF-8 is an error, other
// charsets read invalid bytes as U+FFFD and write characters they cannot
// encode as '?', as Java does). A binary string (BINARY, VARBINARY, BYTES)
// is the bytes themselves. BOOLEAN is one byte (0 false, anything else
// true; written 0 or 1), TINYINT one signed byte, SMALLINT, INT and BIGINT
// two, four and eight bytes, FLOAT and DOUBLE the four and eight bytes of
// IEEE 754, in `raw.endianness` (default big-endian); a numeric record of
// another length is an error. These are Flink's
// RawFormatSerializationSchema and RawFormatDeserializationSchema; Flink's
// RAW type has no connectd counterpart.
//
// An empty record decodes to the empty string (or empty bytes). NULL is a
// Kafka record without a value, as in Flink: DecodeNull and EncodesNull tell
// the connector so (a kafka_source reads a tombstone as a row whose column
// is NULL, a kafka_sink writes NULL as a tombstone); Encode alone, as the
// table processors use it, writes NULL as no bytes. A BYTES column takes a
// string as base64, as every format does (schema.Coerce).
package raw

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"

	"github.com/connectd/connectd/schema"
)

// Options are the raw format options without the `raw.` prefix.
type Options struct {
	// Charset is the text encoding of a character string column; nil is
	// UTF-8, the default. Flink: `raw.charset` (a name as Java's
	// Charset.forName reads it).
	Charset encoding.Encoding
	// LittleEndian orders the bytes of numeric columns least significant
	// first. Default false (big-endian). Flink: `raw.endianness` =
	// `big-endian` / `little-endian`.
	LittleEndian bool
}

// ParseOptions reads Flink option values (keys without the `raw.` prefix).
func ParseOptions(opts map[string]string) (Options, error) {
	if err := schema.ValidateFormatOptions(schema.FormatRaw, opts); err != nil {
		return Options{}, err
	}
	var o Options
	if v, ok := opts["charset"]; ok {
		var err error
		if o.Charset, err = schema.LookupCharset(v); err != nil {
			return Options{}, fmt.Errorf("format raw: option 'charset' = '%s': %w", v, err)
		}
	}
	o.LittleEndian = strings.EqualFold(strings.TrimSpace(opts["endianness"]), "little-endian")
	return o, nil
}

// Format decodes and encodes rows of one column.
type Format struct {
	name  string
	typ   *schema.Type
	opts  Options
	order binary.ByteOrder
}

// New returns the raw format for rows of type row, which must have exactly
// one field of a string, binary, boolean or numeric type other than
// DECIMAL.
func New(row *schema.Type, opts Options) (*Format, error) {
	if row.Kind != schema.KindRow || len(row.Fields) != 1 {
		return nil, fmt.Errorf("format raw: the table must have exactly one physical column, got %d", len(row.Fields))
	}
	f := row.Fields[0]
	switch {
	case f.Type.IsString(), f.Type.IsBinary():
	case width(f.Type.Kind) > 0:
	default:
		return nil, fmt.Errorf("format raw: column %s: type %s is not supported (want a character string, a binary string, BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT or DOUBLE, as Flink's raw format)", f.Name, f.Type)
	}
	var order binary.ByteOrder = binary.BigEndian
	if opts.LittleEndian {
		order = binary.LittleEndian
	}
	return &Format{name: f.Name, typ: f.Type, opts: opts, order: order}, nil
}

// width is the size in bytes of a fixed-size kind, 0 for others.
func width(k schema.Kind) int {
	switch k {
	case schema.KindBoolean, schema.KindTinyint:
		return 1
	case schema.KindSmallint:
		return 2
	case schema.KindInt, schema.KindFloat:
		return 4
	case schema.KindBigint, schema.KindDouble:
		return 8
	}
	return 0
}

// Decode returns the record as the column's value.
func (f *Format) Decode(data []byte) (map[string]any, error) {
	switch {
	case f.typ.IsBinary():
		return map[string]any{f.name: append([]byte{}, data...)}, nil
	case f.typ.IsString():
		if f.opts.Charset != nil {
			s, err := f.opts.Charset.NewDecoder().Bytes(data)
			if err != nil {
				return nil, fmt.Errorf("format raw: column %s: %w", f.name, err)
			}
			return map[string]any{f.name: string(s)}, nil
		}
		if !utf8.Valid(data) {
			return nil, fmt.Errorf("format raw: column %s: the record is not valid UTF-8", f.name)
		}
		return map[string]any{f.name: string(data)}, nil
	}
	if n := width(f.typ.Kind); len(data) != n {
		return nil, fmt.Errorf("format raw: column %s: a %s is %d bytes, the record has %d", f.name, f.typ, n, len(data))
	}
	var v any
	switch f.typ.Kind {
	case schema.KindBoolean:
		v = data[0] != 0
	case schema.KindTinyint:
		v = int64(int8(data[0]))
	case schema.KindSmallint:
		v = int64(int16(f.order.Uint16(data)))
	case schema.KindInt:
		v = int64(int32(f.order.Uint32(data)))
	case schema.KindBigint:
		v = int64(f.order.Uint64(data))
	case schema.KindFloat:
		v = float64(math.Float32frombits(f.order.Uint32(data)))
	case schema.KindDouble:
		v = math.Float64frombits(f.order.Uint64(data))
	}
	return map[string]any{f.name: v}, nil
}

// DecodeNull returns the row of a record without a value: the column is
// NULL (Flink's RawFormatDeserializationSchema).
func (f *Format) DecodeNull() map[string]any {
	return map[string]any{f.name: nil}
}

// EncodesNull reports whether the row's column is NULL, which Flink's raw
// format writes as a record without a value.
func (f *Format) EncodesNull(row map[string]any) bool {
	return row[f.name] == nil
}

// Encode returns the column's value as the record; NULL is an empty record
// (see EncodesNull). A string for a binary column is base64, as
// schema.Coerce reads it.
func (f *Format) Encode(row map[string]any) ([]byte, error) {
	v := row[f.name]
	if v == nil {
		return []byte{}, nil
	}
	switch {
	case f.typ.IsBinary():
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			b, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				return nil, fmt.Errorf("format raw: column %s: a string for a binary column must be base64: %w", f.name, err)
			}
			return b, nil
		}
		return nil, fmt.Errorf("format raw: column %s: cannot write %T, want a string or bytes", f.name, v)
	case f.typ.IsString():
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case []byte:
			s = string(x)
		default:
			return nil, fmt.Errorf("format raw: column %s: cannot write %T, want a string or bytes", f.name, v)
		}
		if f.opts.Charset != nil {
			return encodeReplacing(f.opts.Charset, s), nil
		}
		return []byte(s), nil
	}
	c, err := schema.Coerce(f.typ, v, f.name)
	if err != nil {
		return nil, fmt.Errorf("format raw: column %w", err)
	}
	buf := make([]byte, width(f.typ.Kind))
	switch f.typ.Kind {
	case schema.KindBoolean:
		if c.(bool) {
			buf[0] = 1
		}
	case schema.KindTinyint:
		buf[0] = byte(int8(c.(int64)))
	case schema.KindSmallint:
		f.order.PutUint16(buf, uint16(int16(c.(int64))))
	case schema.KindInt:
		f.order.PutUint32(buf, uint32(int32(c.(int64))))
	case schema.KindBigint:
		f.order.PutUint64(buf, uint64(c.(int64)))
	case schema.KindFloat:
		f.order.PutUint32(buf, math.Float32bits(float32(c.(float64))))
	case schema.KindDouble:
		f.order.PutUint64(buf, math.Float64bits(c.(float64)))
	}
	return buf, nil
}

// encodeReplacing encodes s in enc, each character enc cannot encode
// written as '?', as Java's String.getBytes(charset) does. The empty string
// is no bytes, without the byte order mark that UTF-16 writes before text.
func encodeReplacing(enc encoding.Encoding, s string) []byte {
	if s == "" {
		return []byte{}
	}
	if b, err := enc.NewEncoder().Bytes([]byte(s)); err == nil {
		return b
	}
	e := enc.NewEncoder()
	question, _ := e.Bytes([]byte("?"))
	var out []byte
	for _, r := range s {
		b, err := e.Bytes([]byte(string(r)))
		if err != nil {
			e.Reset()
			b = question
		}
		out = append(out, b...)
	}
	return out
}
