package tableencode

import (
	"context"
	"fmt"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/plugins/processor/tablespec"
	"github.com/connectd/connectd/schema/format"
)

type processor struct {
	codec format.Codec
	// record is codec as a RecordCodec, or nil.
	record format.RecordCodec
	bad    *tablespec.Bad
}

func (p *processor) Process(ctx context.Context, msg *service.Message) (service.MessageBatch, error) {
	v, err := msg.AsStructured()
	if err != nil {
		return p.bad.Handle(msg, fmt.Errorf("the message is not structured data: %w", err))
	}
	row, ok := v.(map[string]any)
	if !ok {
		return p.bad.Handle(msg, fmt.Errorf("want an object (a row), got %T", v))
	}
	var data []byte
	if p.record != nil {
		data, err = p.record.EncodeRecord(ctx, row, tablespec.RecordOf(msg))
	} else {
		data, err = p.codec.Encode(row)
	}
	if err != nil {
		return p.bad.Handle(msg, err)
	}
	out := msg.Copy()
	out.SetBytes(data)
	return service.MessageBatch{out}, nil
}

func (p *processor) Close(context.Context) error { return nil }
