package tabledecode

import (
	"context"
	"fmt"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/plugins/processor/tablespec"
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
	bad      *tablespec.Bad
}

func newProcessor(c *tablespec.Config, mgr *service.Resources) *processor {
	p := &processor{codec: c.Codec, computed: c.Computed, bad: tablespec.NewBad(component, c.OnError, mgr)}
	p.record, _ = c.Codec.(format.RecordCodec)
	for _, col := range c.Table.Columns {
		if col.Kind == schema.Metadata {
			p.meta = append(p.meta, metaColumn{name: col.Name, key: col.MetadataKey, typ: col.Type, what: "metadata column " + col.Name})
		}
	}
	return p
}

func (p *processor) Process(ctx context.Context, msg *service.Message) (service.MessageBatch, error) {
	data, err := msg.AsBytes()
	if err != nil {
		return p.bad.Handle(msg, err)
	}
	var row map[string]any
	if p.record != nil {
		row, err = p.record.DecodeRecord(ctx, data, tablespec.RecordOf(msg))
	} else {
		row, err = p.codec.Decode(data)
	}
	if err != nil {
		return p.bad.Handle(msg, err)
	}
	if row == nil {
		p.bad.Skipped()
		return nil, nil
	}
	for _, mc := range p.meta {
		v, err := metadataValue(msg, mc)
		if err != nil {
			return p.bad.Handle(msg, err)
		}
		row[mc.name] = v
	}
	if p.computed != nil {
		if err := p.computed.EvalComputed(row, expr.Input{}); err != nil {
			return p.bad.Handle(msg, err)
		}
	}
	msg.SetStructuredMut(row)
	return service.MessageBatch{msg}, nil
}

// kafkaMeta maps Flink's Kafka metadata keys to kafka_source metadata.
var kafkaMeta = map[string]string{
	"topic":          tablespec.MetaTopic,
	"partition":      tablespec.MetaPartition,
	"offset":         tablespec.MetaOffset,
	"timestamp":      tablespec.MetaTimestamp,
	"timestamp-type": "kafka_timestamp_type",
	"leader-epoch":   "kafka_leader_epoch",
}

func metadataValue(msg *service.Message, mc metaColumn) (any, error) {
	if mc.key == "headers" {
		headers := map[string]any{}
		_ = msg.MetaWalkMut(func(k string, v any) error {
			if !strings.HasPrefix(k, "kafka_") {
				headers[k] = []byte(fmt.Sprint(v))
			}
			return nil
		})
		return schema.Coerce(mc.typ, headers, mc.what)
	}
	v, ok := msg.MetaGetMut(kafkaMeta[mc.key])
	if !ok {
		return schema.Coerce(mc.typ, nil, mc.what)
	}
	if mc.key == "timestamp" {
		ts, err := tablespec.ParseTimestamp(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %s %q is not milliseconds", mc.what, tablespec.MetaTimestamp, fmt.Sprint(v))
		}
		v = ts
	} else if s, isString := v.(string); isString && !mc.typ.IsString() {
		v = strings.TrimSpace(s) // metadata set from YAML or headers is text
	}
	return schema.Coerce(mc.typ, v, mc.what)
}

func (p *processor) Close(context.Context) error { return nil }
