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
)

// metaColumn is a metadata column and the message metadata it reads.
type metaColumn struct {
	name string
	key  string // Flink metadata key
	typ  *schema.Type
	what string // "metadata column <name>", for errors
}

type processor struct {
	codec format.Codec
	// record is codec as a RecordCodec, or nil.
	record format.RecordCodec
	meta   []metaColumn
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
	for _, col := range c.Table.Columns {
		if col.Kind == schema.Metadata {
			p.meta = append(p.meta, metaColumn{name: col.Name, key: col.MetadataKey, typ: col.Type, what: "metadata column " + col.Name})
		}
	}
	return p
}

// Process decodes msg into a row. A bad record goes by on_error; under
// fail it is dropped and the run stops (Bad.Handle).
func (p *processor) Process(ctx context.Context, msg *service.Message) (service.MessageBatch, error) {
	index := p.received.Add(1) - 1
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
	for _, mc := range p.meta {
		v, err := metadataValue(msg, mc)
		if err != nil {
			return nil, err
		}
		row[mc.name] = v
	}
	if p.computed != nil {
		if err := p.computed.EvalComputed(row, expr.Input{}); err != nil {
			return nil, err
		}
	}
	return row, nil
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
