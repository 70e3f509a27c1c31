// Package format turns record bytes into typed rows of a table and back, by
// format name: json, csv and raw (packages below this one). Rows hold the
// Go values documented in package schema.
package format

import (
	"fmt"
	"sort"
	"strings"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/avro"
	"github.com/connectd/connectd/schema/format/csv"
	"github.com/connectd/connectd/schema/format/json"
	"github.com/connectd/connectd/schema/format/raw"
)

// Codec decodes and encodes the rows of one ROW type.
//
// Decode returns a nil row and a nil error for a record that the format's
// options say to skip (`ignore-parse-errors`, `allow-comments`). Encode
// accepts every value that schema.Coerce accepts, and ignores row keys that
// are not fields.
type Codec interface {
	Decode(data []byte) (map[string]any, error)
	Encode(row map[string]any) ([]byte, error)
}

type factory func(row *schema.Type, opts map[string]string) (Codec, error)

var factories = map[string]factory{
	schema.FormatAvro: func(row *schema.Type, opts map[string]string) (Codec, error) {
		o, err := avro.ParseOptions(opts)
		if err != nil {
			return nil, err
		}
		return avro.New(row, o)
	},
	schema.FormatJSON: func(row *schema.Type, opts map[string]string) (Codec, error) {
		o, err := json.ParseOptions(opts)
		if err != nil {
			return nil, err
		}
		return json.New(row, o)
	},
	schema.FormatCSV: func(row *schema.Type, opts map[string]string) (Codec, error) {
		o, err := csv.ParseOptions(opts)
		if err != nil {
			return nil, err
		}
		return csv.New(row, o)
	},
	schema.FormatRaw: func(row *schema.Type, opts map[string]string) (Codec, error) {
		o, err := raw.ParseOptions(opts)
		if err != nil {
			return nil, err
		}
		return raw.New(row, o)
	},
}

// Names returns the formats that New builds.
func Names() []string {
	out := make([]string, 0, len(factories))
	for k := range factories {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// New returns the codec of the named format for rows of type row (a ROW,
// usually Table.PhysicalRowType), with Flink options without the format
// prefix ("ignore-parse-errors", not "json.ignore-parse-errors").
func New(name string, row *schema.Type, opts map[string]string) (Codec, error) {
	f, ok := factories[name]
	if !ok {
		return nil, fmt.Errorf("format %q is not supported by connectd's codecs yet (supported: %s)", name, strings.Join(Names(), ", "))
	}
	return f(row, opts)
}
