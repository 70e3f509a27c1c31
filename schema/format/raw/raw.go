// Package raw is Flink's `raw` format: the record bytes as the single
// physical column, a character string (UTF-8) or a binary string.
//
// An empty record decodes to the empty string (or empty bytes). NULL is a
// Kafka record without a value, as in Flink: DecodeNull and EncodesNull tell
// the connector so (a kafka_source reads a tombstone as a row whose column
// is NULL, a kafka_sink writes NULL as a tombstone); Encode alone, as the
// table processors use it, writes NULL as no bytes. A BYTES column takes a
// string as base64, as every format does (schema.Coerce). Flink's raw
// format also takes numeric columns with `raw.endianness`; connectd does
// not.
package raw

import (
	"encoding/base64"
	"fmt"
	"unicode/utf8"

	"github.com/connectd/connectd/schema"
)

// Options are the raw format options without the `raw.` prefix. Charset is
// Flink's `raw.charset`; only UTF-8, the default, is supported.
type Options struct{}

// ParseOptions reads Flink option values (keys without the `raw.` prefix).
func ParseOptions(opts map[string]string) (Options, error) {
	if err := schema.ValidateFormatOptions(schema.FormatRaw, opts); err != nil {
		return Options{}, err
	}
	return Options{}, nil
}

// Format decodes and encodes rows of one column.
type Format struct {
	name   string
	binary bool
}

// New returns the raw format for rows of type row, which must have exactly
// one field of a string or binary type.
func New(row *schema.Type, _ Options) (*Format, error) {
	if row.Kind != schema.KindRow || len(row.Fields) != 1 {
		return nil, fmt.Errorf("format raw: the table must have exactly one physical column, got %d", len(row.Fields))
	}
	f := row.Fields[0]
	if !f.Type.IsString() && !f.Type.IsBinary() {
		return nil, fmt.Errorf("format raw: column %s: type %s is not supported (want STRING, VARCHAR, CHAR, BYTES, VARBINARY or BINARY)", f.Name, f.Type)
	}
	return &Format{name: f.Name, binary: f.Type.IsBinary()}, nil
}

// Decode returns the record as the column's value. A string column must be
// valid UTF-8.
func (f *Format) Decode(data []byte) (map[string]any, error) {
	if f.binary {
		return map[string]any{f.name: append([]byte{}, data...)}, nil
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("format raw: column %s: the record is not valid UTF-8", f.name)
	}
	return map[string]any{f.name: string(data)}, nil
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
	switch x := v.(type) {
	case nil:
		return []byte{}, nil
	case string:
		if f.binary {
			b, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				return nil, fmt.Errorf("format raw: column %s: a string for a binary column must be base64: %w", f.name, err)
			}
			return b, nil
		}
		return []byte(x), nil
	case []byte:
		return x, nil
	}
	return nil, fmt.Errorf("format raw: column %s: cannot write %T, want a string or bytes", f.name, v)
}
