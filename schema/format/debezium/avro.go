package debezium

import (
	"context"
	"errors"
	"fmt"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/avroconfluent"
	"github.com/connectd/connectd/schema/format/changelog"
)

// AvroFormat is Flink's `debezium-avro-confluent` format: Debezium's
// envelope in Avro, in the Confluent wire format with a schema registry
// (Debezium's AvroConverter, `value.converter=io.confluent.connect.avro.AvroConverter`).
// Its options are avro-confluent's (`debezium-avro-confluent.url`,
// `.subject`, `.basic-auth.*`, `.auto.register.schemas`).
//
// Records are read with the writer schema from the registry, by field
// name: "before", "after" and "op" (Debezium's other fields, "source",
// "ts_ms", "transaction", are not read, as in Flink, which offers no
// metadata for this format). The kinds are those of debezium-json. Records
// are written as Flink's DebeziumAvroSerializationSchema writes them, with
// the schema of ROW<before ROW<...>, after ROW<...>, op STRING>, Flink's
// AvroSchemaConverter naming (record, record_before, record_after).
type AvroFormat struct {
	row      *schema.Type
	envelope *avroconfluent.Format
}

// NewAvro returns the debezium-avro-confluent codec for rows of type row,
// with Flink's options without the `debezium-avro-confluent.` prefix.
func NewAvro(row *schema.Type, opts map[string]string) (*AvroFormat, error) {
	if err := schema.ValidateFormatOptions(schema.FormatDebeziumAvroConfluent, opts); err != nil {
		return nil, err
	}
	// The options are avro-confluent's (schema.changelog.go copies them).
	o, err := avroconfluent.ParseOptions(opts)
	if err != nil {
		return nil, fmt.Errorf("format %s: %w", schema.FormatDebeziumAvroConfluent, err)
	}
	nullable := *row
	nullable.NotNull = false
	env := &schema.Type{Kind: schema.KindRow, NotNull: true, Fields: []schema.Field{
		{Name: "before", Type: &nullable},
		{Name: "after", Type: &nullable},
		{Name: "op", Type: &schema.Type{Kind: schema.KindVarchar, Length: 2147483647}},
	}}
	f, err := avroconfluent.New(env, o)
	if err != nil {
		return nil, fmt.Errorf("format %s: %w", schema.FormatDebeziumAvroConfluent, err)
	}
	return &AvroFormat{row: row, envelope: f}, nil
}

// ReadMetadata does nothing: Flink's debezium-avro-confluent has no
// readable metadata.
func (f *AvroFormat) ReadMetadata() {}

// DecodeChangesRecord returns the changes of one Debezium Avro event.
func (f *AvroFormat) DecodeChangesRecord(ctx context.Context, data []byte, rec changelog.Record) ([]changelog.Change, error) {
	if len(data) == 0 {
		return nil, nil // a tombstone
	}
	env, err := f.envelope.DecodeRecord(ctx, data, avroconfluent.Record{Topic: rec.Topic})
	if err != nil {
		return nil, fmt.Errorf("format %s: %w", schema.FormatDebeziumAvroConfluent, err)
	}
	before, _ := env["before"].(map[string]any)
	after, _ := env["after"].(map[string]any)
	op, _ := env["op"].(string)
	out, err := changes(op, before, after)
	if err != nil {
		return nil, fmt.Errorf("format %s: %w", schema.FormatDebeziumAvroConfluent, err)
	}
	return out, nil
}

// changes gives the rows of a Debezium event as Flink does.
func changes(op string, before, after map[string]any) ([]changelog.Change, error) {
	switch op {
	case "c", "r":
		if after == nil {
			return nil, fmt.Errorf(`the "after" field of an %q message is null`, op)
		}
		return []changelog.Change{{Kind: changelog.Insert, Row: after}}, nil
	case "u":
		if before == nil {
			return nil, fmt.Errorf(replicaIdentity, "UPDATE")
		}
		if after == nil {
			return nil, errors.New(`the "after" field of a "u" message is null`)
		}
		return []changelog.Change{{Kind: changelog.UpdateBefore, Row: before}, {Kind: changelog.UpdateAfter, Row: after}}, nil
	case "d":
		if before == nil {
			return nil, fmt.Errorf(replicaIdentity, "DELETE")
		}
		return []changelog.Change{{Kind: changelog.Delete, Row: before}}, nil
	}
	return nil, fmt.Errorf(`unknown "op" value %q (want c, r, u or d)`, op)
}

// EncodeChangeRecord writes one row of the given kind as Flink does:
// insert and update-after as {before: null, after: row, op: "c"},
// update-before and delete as {before: row, after: null, op: "d"}.
func (f *AvroFormat) EncodeChangeRecord(ctx context.Context, row map[string]any, kind changelog.Kind, rec changelog.Record) ([]byte, error) {
	if row == nil {
		return nil, fmt.Errorf("format %s: want a row, got null", schema.FormatDebeziumAvroConfluent)
	}
	env := map[string]any{"before": nil, "after": row, "op": "c"}
	if kind.IsRetract() {
		env = map[string]any{"before": row, "after": nil, "op": "d"}
	}
	b, err := f.envelope.EncodeRecord(ctx, env, avroconfluent.Record{Topic: rec.Topic})
	if err != nil {
		return nil, fmt.Errorf("format %s: %w", schema.FormatDebeziumAvroConfluent, err)
	}
	return b, nil
}

// SchemaJSON returns the envelope's schema, as registered.
func (f *AvroFormat) SchemaJSON() string { return f.envelope.SchemaJSON() }

// DecodeChanges reads a record with no topic known (the `subject` option
// is not needed to read).
func (f *AvroFormat) DecodeChanges(data []byte) ([]changelog.Change, error) {
	return f.DecodeChangesRecord(context.Background(), data, changelog.Record{})
}

// EncodeChange writes a row; without a topic the subject must come from
// the `subject` option.
func (f *AvroFormat) EncodeChange(row map[string]any, kind changelog.Kind) ([]byte, error) {
	return f.EncodeChangeRecord(context.Background(), row, kind, changelog.Record{})
}

// Decode returns the row of the record's last change, nil when it has
// none.
func (f *AvroFormat) Decode(data []byte) (map[string]any, error) {
	return changelog.Last(f.DecodeChanges(data))
}

// Encode writes row as an insert.
func (f *AvroFormat) Encode(row map[string]any) ([]byte, error) {
	return f.EncodeChange(row, changelog.Insert)
}
