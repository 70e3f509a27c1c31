package tabledecode

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/table"
	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/expr"
	"github.com/connectd/connectd/schema/format"
	"github.com/connectd/connectd/schema/format/changelog"
)

// metaColumn is a metadata column and the message metadata it reads.
type metaColumn struct {
	name string
	key  string // Flink metadata key
	typ  *schema.Type
	what string // "metadata column <name>", for errors
	// formatKey is the format's metadata key of a `value.*` column
	// (`source.timestamp`); "" for message metadata.
	formatKey string
}

type processor struct {
	codec format.Codec
	// record is codec as a RecordCodec, or nil.
	record format.RecordCodec
	// changes is codec as a ChangelogCodec, or nil: a message gives zero
	// or more rows, each with its kind in row_kind metadata.
	changes format.ChangelogCodec
	meta    []metaColumn
	// computed evaluates the computed columns; nil when there are none.
	computed *expr.Env
	bad      *table.Bad
	// received counts the messages Process was given: the index that names
	// a bad message without kafka_* metadata.
	received atomic.Int64
}

func newProcessor(c *table.ProcessorConfig, mgr *service.Resources) *processor {
	p := &processor{codec: c.Codec, computed: c.Computed, bad: table.NewBad(component, c.OnError, mgr)}
	p.record, _ = c.Codec.(format.RecordCodec)
	p.changes, _ = c.Codec.(format.ChangelogCodec)
	known := schema.FormatMetadata(c.Format)
	for _, col := range c.Table.Columns {
		if col.Kind != schema.Metadata {
			continue
		}
		mc := metaColumn{name: col.Name, key: col.MetadataKey, typ: col.Type, what: "metadata column " + col.Name}
		if k, ok := strings.CutPrefix(col.MetadataKey, "value."); ok && known[k] != nil && p.changes != nil {
			mc.formatKey = k
			p.changes.ReadMetadata()
		}
		p.meta = append(p.meta, mc)
	}
	return p
}

// processChanges decodes msg, a record of a changelog format, into its
// rows: one message per row (copies of msg), with its kind in row_kind
// metadata.
func (p *processor) processChanges(ctx context.Context, msg *service.Message, index int64) (service.MessageBatch, error) {
	out, err := p.decodeChanges(ctx, msg)
	if err != nil {
		kept, _ := p.bad.Handle(msg, table.LocateIndex(msg, index), err)
		return kept, nil
	}
	if len(out) == 0 {
		p.bad.Skipped()
		return nil, nil
	}
	return out, nil
}

func (p *processor) decodeChanges(ctx context.Context, msg *service.Message) (service.MessageBatch, error) {
	data, err := msg.AsBytes()
	if err != nil {
		return nil, err
	}
	var changes []changelog.Change
	if rc, ok := p.changes.(format.ChangelogRecordCodec); ok {
		changes, err = rc.DecodeChangesRecord(ctx, data, changelog.Record{Topic: table.FormatRecordOf(msg).Topic})
	} else {
		changes, err = p.changes.DecodeChanges(data)
	}
	if err != nil {
		return nil, err
	}
	out := make(service.MessageBatch, 0, len(changes))
	for _, ch := range changes {
		if err := p.complete(msg, ch.Row, ch.Meta); err != nil {
			return nil, err
		}
		m := msg.Copy()
		m.SetStructuredMut(ch.Row)
		m.MetaSetMut(table.MetaRowKind, ch.Kind.String())
		out = append(out, m)
	}
	return out, nil
}

// Process decodes msg into a row. A bad record goes by on_error; under
// fail it is dropped and the run stops (Bad.Handle).
func (p *processor) Process(ctx context.Context, msg *service.Message) (service.MessageBatch, error) {
	index := p.received.Add(1) - 1
	if p.changes != nil {
		return p.processChanges(ctx, msg, index)
	}
	row, err := p.decode(ctx, msg)
	if err != nil {
		out, _ := p.bad.Handle(msg, table.LocateIndex(msg, index), err)
		return out, nil
	}
	if row == nil {
		p.bad.Skipped()
		return nil, nil
	}
	msg.SetStructuredMut(row)
	return service.MessageBatch{msg}, nil
}

// decode returns the row of msg, nil when the format skips it.
func (p *processor) decode(ctx context.Context, msg *service.Message) (map[string]any, error) {
	data, err := msg.AsBytes()
	if err != nil {
		return nil, err
	}
	var row map[string]any
	if p.record != nil {
		row, err = p.record.DecodeRecord(ctx, data, table.FormatRecordOf(msg))
	} else {
		row, err = p.codec.Decode(data)
	}
	if row == nil || err != nil {
		return nil, err
	}
	if err := p.complete(msg, row, nil); err != nil {
		return nil, err
	}
	return row, nil
}

// complete adds the metadata columns (from msg's metadata, or from
// formatMeta for `value.*` keys) and the computed columns to row.
func (p *processor) complete(msg *service.Message, row, formatMeta map[string]any) error {
	for _, mc := range p.meta {
		var v any
		var err error
		if mc.formatKey != "" {
			v, err = schema.Coerce(mc.typ, formatMeta[mc.formatKey], mc.what)
		} else {
			v, err = metadataValue(msg, mc)
		}
		if err != nil {
			return err
		}
		row[mc.name] = v
	}
	if p.computed != nil {
		if err := p.computed.EvalComputed(row, expr.Input{}); err != nil {
			return err
		}
	}
	return nil
}

// metadataValue is the value of a metadata column, from the message
// metadata that carries its key (table.MessageMetadata); missing metadata
// is NULL.
func metadataValue(msg *service.Message, mc metaColumn) (any, error) {
	v, err := table.MessageMetadata(msg, mc.key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mc.what, err)
	}
	if s, isString := v.(string); isString && !mc.typ.IsString() {
		v = strings.TrimSpace(s) // metadata set from YAML or headers is text
	}
	return schema.Coerce(mc.typ, v, mc.what)
}

func (p *processor) Close(context.Context) error { return nil }
