package tabledecode

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

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
			p.meta = append(p.meta, metaColumn{name: col.Name, key: col.MetadataKey, typ: col.Type})
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
	"topic":          "kafka_topic",
	"partition":      "kafka_partition",
	"offset":         "kafka_offset",
	"timestamp":      "kafka_timestamp_ms",
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
		return schema.Coerce(mc.typ, headers, "metadata column "+mc.name)
	}
	v, ok := msg.MetaGetMut(kafkaMeta[mc.key])
	if !ok {
		return schema.Coerce(mc.typ, nil, "metadata column "+mc.name)
	}
	if mc.key == "timestamp" {
		ms, err := strconv.ParseInt(strings.TrimSpace(fmt.Sprint(v)), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("metadata column %s: kafka_timestamp_ms %q is not milliseconds", mc.name, fmt.Sprint(v))
		}
		v = time.UnixMilli(ms)
	} else if s, isString := v.(string); isString && !mc.typ.IsString() {
		v = strings.TrimSpace(s) // metadata set from YAML or headers is text
	}
	return schema.Coerce(mc.typ, v, "metadata column "+mc.name)
}

func (p *processor) Close(context.Context) error { return nil }
