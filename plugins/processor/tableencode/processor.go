package tableencode

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/table"
	"github.com/connectd/connectd/schema/format"
	"github.com/connectd/connectd/schema/format/changelog"
)

type processor struct {
	codec format.Codec
	// record is codec as a RecordCodec, or nil.
	record format.RecordCodec
	// changes is codec as a ChangelogCodec, or nil: the row is written
	// by its kind (row_kind metadata).
	changes format.ChangelogCodec
	bad     *table.Bad
	// received counts the messages Process was given: the index that names
	// a bad message without kafka_* metadata.
	received atomic.Int64
}

func newProcessor(c *table.ProcessorConfig, mgr *service.Resources) *processor {
	p := &processor{codec: c.Codec, bad: table.NewBad(component, c.OnError, mgr)}
	p.record, _ = c.Codec.(format.RecordCodec)
	p.changes, _ = c.Codec.(format.ChangelogCodec)
	return p
}

// Process encodes the row of msg. A bad record goes by on_error; under
// fail it is dropped and the run stops (Bad.Handle).
func (p *processor) Process(ctx context.Context, msg *service.Message) (service.MessageBatch, error) {
	index := p.received.Add(1) - 1
	data, err := p.encode(ctx, msg)
	if err != nil {
		out, _ := p.bad.Handle(msg, table.LocateIndex(msg, index), err)
		return out, nil
	}
	out := msg.Copy()
	out.SetBytes(data)
	return service.MessageBatch{out}, nil
}

func (p *processor) encode(ctx context.Context, msg *service.Message) ([]byte, error) {
	v, err := msg.AsStructured()
	if err != nil {
		return nil, fmt.Errorf("the message is not structured data: %w", err)
	}
	row, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want an object (a row), got %T", v)
	}
	if p.changes != nil {
		kind, err := table.KindOf(msg)
		if err != nil {
			return nil, err
		}
		if rc, ok := p.changes.(format.ChangelogRecordCodec); ok {
			return rc.EncodeChangeRecord(ctx, row, kind, changelog.Record{Topic: table.FormatRecordOf(msg).Topic})
		}
		return p.changes.EncodeChange(row, kind)
	}
	if p.record != nil {
		return p.record.EncodeRecord(ctx, row, table.FormatRecordOf(msg))
	}
	return p.codec.Encode(row)
}

func (p *processor) Close(context.Context) error { return nil }
