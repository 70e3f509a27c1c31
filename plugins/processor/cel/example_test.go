package cel_test

import (
	"context"
	"fmt"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"

	_ "github.com/connectd/connectd/plugins/processor/cel"
	_ "github.com/connectd/connectd/plugins/processor/tabledecode"
)

// WHERE and SELECT over decoded rows: table_decode computes the `total`
// column from the DDL, cel keeps orders of at least 100 and projects three
// columns. An order whose amount is NULL makes `amount >= 100.0` fail: it is
// not dropped but flagged with an error naming the expression.
func Example() {
	const ddl = `
    CREATE TABLE orders (
      id BIGINT NOT NULL,
      amount DECIMAL(10, 2),
      vat DECIMAL(4, 2) NOT NULL,
      total AS amount * (1 + vat)
    ) WITH ('format' = 'json')`
	builder := service.NewStreamBuilder()
	builder.SetThreads(1)
	if err := builder.AddInputYAML(`
generate:
  count: 3
  interval: ""
  mapping: |
    root = [
      "{\"id\":1,\"amount\":\"250.00\",\"vat\":0.2}",
      "{\"id\":2,\"amount\":\"12.00\",\"vat\":0.2}",
      "{\"id\":3,\"amount\":null,\"vat\":0.2}",
    ].index(counter() - 1)
    meta kafka_timestamp_ms = 1764677594000
`); err != nil {
		panic(err)
	}
	if err := builder.AddProcessorYAML(`
table_decode:
  ddl: |` + ddl + `
`); err != nil {
		panic(err)
	}
	if err := builder.AddProcessorYAML(`
cel:
  ddl: |` + ddl + `
  filter: amount >= 100.0
  map: '{"id": id, "total": total, "at": kafka_timestamp}'
`); err != nil {
		panic(err)
	}
	if err := builder.AddConsumerFunc(func(_ context.Context, msg *service.Message) error {
		if err := msg.GetError(); err != nil {
			fmt.Println("flagged:", err)
			return nil
		}
		b, err := msg.AsBytes()
		if err != nil {
			return err
		}
		fmt.Println(string(b))
		return nil
	}); err != nil {
		panic(err)
	}
	if err := builder.SetLoggerYAML("level: none"); err != nil {
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
	// {"at":"2025-12-02T12:13:14Z","id":1,"total":300}
	// flagged: cel: field filter: expression "amount >= 100.0": no such overload: _>=_ (an operand is NULL or of an unexpected type; guard nullable columns: col != null && ...)
}
