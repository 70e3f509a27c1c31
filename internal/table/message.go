package table

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/schema/expr"
)

// A message as a CEL expression (schema/expr) sees it: its content is the
// row, and its metadata and Kafka timestamp are the rest of the input. The
// cel processor and kafka_source's event-time expression read messages this
// way.

// RowOf returns the content of msg as a row: a structured object; content
// that is not a JSON object is an empty row.
func RowOf(msg *service.Message) map[string]any {
	v, err := msg.AsStructured()
	if err != nil {
		return map[string]any{}
	}
	row, _ := v.(map[string]any)
	if row == nil {
		return map[string]any{}
	}
	return row
}

// ExprInput returns what an expression sees of msg besides its row: every
// metadata field (`meta`), and kafka_timestamp_ms as a UTC time
// (`kafka_timestamp`), nil when absent or not milliseconds.
func ExprInput(msg *service.Message) expr.Input {
	in := expr.Input{Meta: map[string]any{}}
	_ = msg.MetaWalkMut(func(k string, v any) error {
		in.Meta[k] = v
		return nil
	})
	if v, ok := in.Meta[MetaTimestamp]; ok {
		if ts, err := ParseTimestamp(v); err == nil {
			ts = ts.UTC()
			in.KafkaTimestamp = &ts
		}
	}
	return in
}
