// Package raw is Flink's `raw` format: the record bytes as the single
// physical column, a character string (UTF-8) or a binary string.
//
// An empty record decodes to the empty string (or empty bytes), and NULL
// encodes to an empty record: a Kafka tombstone has no value, which the
// kafka_tombstone_message metadata tells apart. Flink's raw format also
// takes numeric columns with `raw.endianness`; connectd does not.
package raw

import (
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

// Encode returns the column's value as the record; NULL is an empty record.
func (f *Format) Encode(row map[string]any) ([]byte, error) {
	v := row[f.name]
	switch x := v.(type) {
	case nil:
		return []byte{}, nil
	case string:
		return []byte(x), nil
	case []byte:
		return x, nil
	}
	return nil, fmt.Errorf("format raw: column %s: cannot write %T, want a string or bytes", f.name, v)
}
