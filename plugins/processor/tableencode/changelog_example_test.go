package tableencode_test

import (
	"context"
	"fmt"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Encode rows as Canal messages (Flink's canal-json format), by the kind
// in row_kind metadata: an insert or update-after is an INSERT, an
// update-before or delete a DELETE, as Flink's CanalJsonSerializationSchema
// writes them.
func Example_canal() {
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
    let n = counter() - 1
    root = {"id": 111, "weight": if $n < 2 { 5.18 } else { 5.15 }}
    meta row_kind = ["+I", "-U", "+U", "DELETE"].index($n)
`); err != nil {
		panic(err)
	}
	if err := builder.AddProcessorYAML(`
table_encode:
  ddl: |
    CREATE TABLE products (id INT, weight DECIMAL(10, 2)) WITH ('format' = 'canal-json')
`); err != nil {
		panic(err)
	}
	if err := builder.AddConsumerFunc(func(_ context.Context, msg *service.Message) error {
		b, err := msg.AsBytes()
		fmt.Println(string(b))
		return err
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
	// {"data":[{"id":111,"weight":5.18}],"type":"INSERT"}
	// {"data":[{"id":111,"weight":5.18}],"type":"DELETE"}
	// {"data":[{"id":111,"weight":5.15}],"type":"INSERT"}
	// {"data":[{"id":111,"weight":5.15}],"type":"DELETE"}
}
