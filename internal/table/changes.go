package table

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format"
	"github.com/connectd/connectd/schema/format/changelog"
)

// MetaRowKind is the message metadata that carries a row's change kind, as
// Flink prints a RowKind: "+I" (insert), "-U" (update-before), "+U"
// (update-after), "-D" (delete). kafka_source and table_decode set it on
// every row of a table whose value format is a changelog format
// (debezium-json, canal-json, maxwell-json, ogg-json); kafka_sink and
// table_encode read it (also in Flink's long spelling, INSERT,
// UPDATE_BEFORE, UPDATE_AFTER, DELETE) to choose the envelope, and an
// upsert-kafka sink to write a value, a tombstone or nothing. A message
// without it is an insert, or a delete when kafka_tombstone_message is
// true. It is not a record header.
const MetaRowKind = "row_kind"

// formatMetadataKey returns the value format's metadata key of a
// `value.*` metadata key of t (`value.source.timestamp` is
// `source.timestamp`).
func formatMetadataKey(t *schema.Table, key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, "value.")
	if !ok {
		return "", false
	}
	name, _, ok := t.FormatOf()
	if !ok {
		return "", false
	}
	if _, known := schema.FormatMetadata(name)[rest]; !known {
		return "", false
	}
	return rest, true
}

// Changelog reports whether the table's value format is a changelog
// format: a record gives zero or more rows, each with its kind
// (DecodeChanges), and rows are written by kind (EncodeChange).
func (c *Codec) Changelog() bool { return c.changes != nil }

// DecodeChanges returns the rows of a record of a table whose value format
// is a changelog format (Changelog), in order, each with its kind: every
// row gets the key columns, the metadata columns and the computed columns
// as Decode does. ErrSkipped: the record gives no row (a tombstone, a DDL
// event, a table filtered out, `ignore-parse-errors`).
func (c *Codec) DecodeChanges(ctx context.Context, r Record) ([]changelog.Change, error) {
	if c.changes == nil {
		return nil, errors.New("the value format is not a changelog format")
	}
	if len(r.Value) == 0 {
		return nil, ErrSkipped // Flink's CDC formats skip tombstones
	}
	key, err := c.decodeKey(ctx, r, format.Record{Topic: r.Topic})
	if err != nil {
		return nil, err
	}
	var changes []changelog.Change
	if c.changesRec != nil {
		changes, err = c.changesRec.DecodeChangesRecord(ctx, r.Value, changelog.Record{Topic: r.Topic})
	} else {
		changes, err = c.changes.DecodeChanges(r.Value)
	}
	if err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	if len(changes) == 0 {
		return nil, ErrSkipped
	}
	for i := range changes {
		row := changes[i].Row
		if key != nil {
			// The value wins for a column in both, as in Decode.
			merged := make(map[string]any, len(c.table.Columns))
			for k, v := range key {
				merged[k] = v
			}
			for k, v := range row {
				merged[k] = v
			}
			row = merged
		}
		if err := c.finish(row, r, changes[i].Meta); err != nil {
			return nil, err
		}
		changes[i].Row = row
	}
	return changes, nil
}

// KindOf returns the change kind of msg: its row_kind metadata, else a
// delete when kafka_tombstone_message is true (as kafka_source sets it on
// an upsert-kafka delete), else an insert. The error names row_kind.
func KindOf(msg *service.Message) (changelog.Kind, error) {
	if v, ok := msg.MetaGetMut(MetaRowKind); ok {
		k, err := changelog.ParseKind(fmt.Sprint(v))
		if err != nil {
			return 0, fmt.Errorf("metadata %s: %w", MetaRowKind, err)
		}
		return k, nil
	}
	if t, ok := msg.MetaGetMut(MetaTombstone); ok && (t == true || fmt.Sprint(t) == "true") {
		return changelog.Delete, nil
	}
	return changelog.Insert, nil
}

// ErrDropped is EncodeChange's answer for a row that the table does not
// write: an update-before row on upsert-kafka (Flink's upsert sink writes
// the update-after row and drops the one before it).
var ErrDropped = errors.New("update-before row dropped by upsert-kafka")

// EncodeChange builds the record of a row of the given kind, as Flink's
// Kafka sinks write a changelog: a changelog value format writes the kind
// in its envelope (a delete or update-before as the format's delete);
// upsert-kafka writes an insert or update-after as a value, a delete as a
// tombstone, and drops an update-before (ErrDropped); a plain kafka table
// with an insert-only format writes inserts only, and refuses any other
// kind (Flink's planner refuses such a pipeline).
func (c *Codec) EncodeChange(ctx context.Context, row map[string]any, topic string, kind changelog.Kind) (Encoded, error) {
	switch {
	case c.changes != nil:
		return c.encode(ctx, row, topic, false, &kind)
	case c.upsert:
		switch kind {
		case changelog.UpdateBefore:
			return Encoded{}, ErrDropped
		case changelog.Delete:
			return c.Encode(ctx, row, topic, true)
		}
		return c.Encode(ctx, row, topic, false)
	case kind != changelog.Insert:
		name, _, _ := c.table.FormatOf()
		return Encoded{}, fmt.Errorf("a row of kind %s (metadata %s) cannot be written: format %s writes inserts only; "+
			"use a changelog format (debezium-json, canal-json, maxwell-json, ogg-json) or connector upsert-kafka", kind, MetaRowKind, name)
	}
	return c.Encode(ctx, row, topic, false)
}
