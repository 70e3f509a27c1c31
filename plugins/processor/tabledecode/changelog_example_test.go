package tabledecode_test

import (
	"context"
	"fmt"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Decode Debezium change events (Flink's debezium-json format): a create
// gives an insert (+I), an update the row before (-U) and after (+U), a
// delete the row it removed (-D), a tombstone nothing. Each row is a
// message with its kind in row_kind metadata; `value.*` metadata columns
// read the envelope.
func Example_debezium() {
	builder := service.NewStreamBuilder()
	builder.SetThreads(1)
	if err := builder.SetLoggerYAML("level: none"); err != nil {
		panic(err)
	}
	if err := builder.AddInputYAML(`
generate:
  count: 4
  interval: ""
  mapping: |
    root = [
      "{\"before\":null,\"after\":{\"id\":1004,\"first_name\":\"Anne\"},\"source\":{\"db\":\"inventory\",\"table\":\"customers\"},\"op\":\"c\",\"ts_ms\":1465491411815}",
      "{\"before\":{\"id\":1004,\"first_name\":\"Anne\"},\"after\":{\"id\":1004,\"first_name\":\"Anne Marie\"},\"source\":{\"db\":\"inventory\",\"table\":\"customers\"},\"op\":\"u\",\"ts_ms\":1465581029523}",
      "",
      "{\"before\":{\"id\":1004,\"first_name\":\"Anne Marie\"},\"after\":null,\"source\":{\"db\":\"inventory\",\"table\":\"customers\"},\"op\":\"d\",\"ts_ms\":1465581902461}",
    ].index(counter() - 1)
`); err != nil {
		panic(err)
	}
	if err := builder.AddProcessorYAML(`
table_decode:
  ddl: |
    CREATE TABLE customers (
      id INT,
      first_name STRING,
      origin STRING METADATA FROM 'value.source.table' VIRTUAL,
      ingested TIMESTAMP_LTZ(3) METADATA FROM 'value.ingestion-timestamp' VIRTUAL
    ) WITH ('format' = 'debezium-json')
`); err != nil {
		panic(err)
	}
	if err := builder.AddConsumerFunc(func(_ context.Context, msg *service.Message) error {
		kind, _ := msg.MetaGet("row_kind")
		v, err := msg.AsStructured()
		if err != nil {
			return err
		}
		row := v.(map[string]any)
		fmt.Println(kind, row["id"], row["first_name"], row["origin"], row["ingested"])
		return nil
	}); err != nil {
		panic(err)
	}
	stream, err := builder.Build()
	if err != nil {
		panic(err)
	}
	if err := stream.Run(context.Background()); err != nil {
		panic(err)
	}
	// Output:
	// +I 1004 Anne customers 2016-06-09 16:56:51.815 +0000 UTC
	// -U 1004 Anne customers 2016-06-10 17:50:29.523 +0000 UTC
	// +U 1004 Anne Marie customers 2016-06-10 17:50:29.523 +0000 UTC
	// -D 1004 Anne Marie customers 2016-06-10 18:05:02.461 +0000 UTC
}
