package tableencode_test

import (
	"context"
	"fmt"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"

	_ "github.com/connectd/connectd/plugins/processor/tabledecode"
	_ "github.com/connectd/connectd/plugins/processor/tableencode"
)

// Re-encode JSON rows as CSV with one table: table_decode reads the JSON
// format, table_encode writes the same row with the csv format. A row that
// breaks the table (a NOT NULL column missing) is flagged for a dead-letter
// route and keeps its content.
func Example() {
	builder := service.NewStreamBuilder()
	builder.SetThreads(1)
	if err := builder.AddInputYAML(`
generate:
  count: 3
  interval: ""
  mapping: |
    root = [
      {"sensor": "a-1", "value": 21.5, "at": "2026-12-02T12:13:14.5Z", "tags": ["lab", "north"]},
      {"value": 3},
      {"sensor": "b,2", "value": null, "at": "2026-12-02 12:13:15Z", "tags": []},
    ].index(counter() - 1)
`); err != nil {
		panic(err)
	}
	if err := builder.AddProcessorYAML(`
table_encode:
  table:
    name: readings
    columns:
      - { name: sensor, type: STRING NOT NULL }
      - { name: value, type: DOUBLE }
      - { name: at, type: TIMESTAMP_LTZ(3) }
      - { name: tags, type: ARRAY<STRING> }
    options: { format: csv, csv.null-literal: "NULL" }
  on_error: dead_letter
`); err != nil {
		panic(err)
	}
	if err := builder.AddConsumerFunc(func(_ context.Context, msg *service.Message) error {
		raw, _ := msg.AsBytes()
		if err := msg.GetError(); err != nil {
			fmt.Printf("dead letter %s: %v\n", raw, err)
			return nil
		}
		fmt.Printf("%s\n", raw)
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
	// a-1,21.5,2026-12-02 12:13:14.5Z,lab;north
	// dead letter {"value":3}: table_encode (message index 1): format csv: field sensor: NULL in a NOT NULL column
	// "b,2",NULL,2026-12-02 12:13:15Z,""
}
