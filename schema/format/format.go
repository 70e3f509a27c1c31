// Package format turns record bytes into typed rows of a table and back, by
// format name: json, csv, raw, avro, avro-confluent and protobuf (packages
// below this one). Rows hold the Go values documented in package schema.
package format

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/avro"
	"github.com/connectd/connectd/schema/format/avroconfluent"
	"github.com/connectd/connectd/schema/format/csv"
	"github.com/connectd/connectd/schema/format/json"
	"github.com/connectd/connectd/schema/format/protobuf"
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

// NullValueCodec is a Codec whose NULL row is a Kafka record without a
// value: Flink's raw format writes a NULL column as a null value (a
// tombstone) and reads a null value as a row whose column is NULL, on a
// plain kafka table too, where every other format skips a tombstone.
// Decode and Encode themselves see bytes (Encode writes NULL as no bytes,
// for the table processors); the connector asks these methods first.
type NullValueCodec interface {
	Codec
	// DecodeNull returns the row of a record with a null value.
	DecodeNull() map[string]any
	// EncodesNull reports whether row is written as a null value.
	EncodesNull(row map[string]any) bool
}

// Record is what a RecordCodec may use besides the bytes or the row.
type Record struct {
	// Topic is the record's Kafka topic (kafka_topic metadata); "" when
	// unknown.
	Topic string
}

// RecordCodec is a Codec whose records depend on more than their bytes:
// avro-confluent talks to a schema registry (so it takes a context) and
// names its subject after the topic. Processors call these methods when the
// codec has them; Decode and Encode then use no topic.
type RecordCodec interface {
	Codec
	DecodeRecord(ctx context.Context, data []byte, rec Record) (map[string]any, error)
	EncodeRecord(ctx context.Context, row map[string]any, rec Record) ([]byte, error)
}

type confluentCodec struct{ *avroconfluent.Format }

func (c confluentCodec) DecodeRecord(ctx context.Context, data []byte, rec Record) (map[string]any, error) {
	return c.Format.DecodeRecord(ctx, data, avroconfluent.Record{Topic: rec.Topic})
}

func (c confluentCodec) EncodeRecord(ctx context.Context, row map[string]any, rec Record) ([]byte, error) {
	return c.Format.EncodeRecord(ctx, row, avroconfluent.Record{Topic: rec.Topic})
}

type factory func(row *schema.Type, opts map[string]string) (Codec, error)

// codec makes the factory of a format from its option parser and
// constructor.
func codec[O any, C Codec](parse func(map[string]string) (O, error), build func(*schema.Type, O) (C, error)) factory {
	return func(row *schema.Type, opts map[string]string) (Codec, error) {
		o, err := parse(opts)
		if err != nil {
			return nil, err
		}
		c, err := build(row, o)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

var factories = map[string]factory{
	schema.FormatAvro: codec(avro.ParseOptions, avro.New),
	schema.FormatAvroConfluent: codec(avroconfluent.ParseOptions, func(row *schema.Type, o avroconfluent.Options) (confluentCodec, error) {
		f, err := avroconfluent.New(row, o)
		return confluentCodec{f}, err
	}),
	schema.FormatJSON:     codec(json.ParseOptions, json.New),
	schema.FormatCSV:      codec(csv.ParseOptions, csv.New),
	schema.FormatRaw:      codec(raw.ParseOptions, raw.New),
	schema.FormatProtobuf: codec(protobuf.ParseOptions, protobuf.New),
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
