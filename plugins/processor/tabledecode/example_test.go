package tabledecode_test

import (
	"context"
	"fmt"
	"sort"
	"strings"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"

	_ "github.com/connectd/connectd/plugins/processor/tabledecode"
)

// Decode JSON records of a Flink DDL table into typed rows: BIGINT as int64,
// DECIMAL exact, timestamps as time values, a metadata column from the
// Kafka record timestamp. A record that does not decode keeps its bytes and
// carries an error naming its topic, partition and offset (dead_letter).
func Example() {
	builder := service.NewStreamBuilder()
	builder.SetThreads(1)
	if err := builder.AddInputYAML(`
generate:
  count: 3
  interval: ""
  mapping: |
    let n = counter() - 1
    root = [
      "{\"id\":1,\"amount\":\"12.5\",\"ts\":\"2026-12-02 12:13:14.123\"}",
      "{\"id\":\"two\"}",
      "{\"id\":3,\"amount\":0.125,\"ts\":null}",
    ].index($n)
    meta kafka_topic = "orders"
    meta kafka_partition = 0
    meta kafka_offset = $n
    meta kafka_timestamp_ms = 1764677594000 + $n
`); err != nil {
		panic(err)
	}
	if err := builder.AddProcessorYAML(`
table_decode:
  ddl: |
    CREATE TABLE orders (
      id BIGINT NOT NULL,
      amount DECIMAL(10, 2),
      ts TIMESTAMP(3),
      kafka_ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL
    ) WITH ('format' = 'json')
  on_error: dead_letter
`); err != nil {
		panic(err)
	}
	if err := builder.AddConsumerFunc(func(_ context.Context, msg *service.Message) error {
		if err := msg.GetError(); err != nil {
			raw, _ := msg.AsBytes()
			fmt.Printf("dead letter %s: %v\n", raw, err)
			return nil
		}
		v, err := msg.AsStructured()
		if err != nil {
			return err
		}
		row := v.(map[string]any)
		keys := make([]string, 0, len(row))
		for k := range row {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s=%v (%T)", k, row[k], row[k]))
		}
		fmt.Println(strings.Join(parts, " "))
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
	// amount=12.50 (json.Number) id=1 (int64) kafka_ts=2025-12-02 12:13:14 +0000 UTC (time.Time) ts=2026-12-02 12:13:14.123 +0000 UTC (time.Time)
	// dead letter {"id":"two"}: table_decode (topic orders, partition 0, offset 1): format json: field id: cannot read a string as BIGINT NOT NULL: strconv.ParseInt: parsing "two": invalid syntax
	// amount=0.13 (json.Number) id=3 (int64) kafka_ts=2025-12-02 12:13:14.002 +0000 UTC (time.Time) ts=<nil> (<nil>)
}
