// Package cel is the `cel` processor: Flink SQL's WHERE and SELECT for YAML
// pipelines, as CEL expressions over the row, its metadata and its Kafka
// timestamp, type-checked against a table when one is given.
package cel

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/speclint"
	"github.com/connectd/connectd/internal/table"
)

const component = "cel"

// Field names.
const (
	FieldFilter = "filter"
	FieldMap    = "map"
)

// Spec returns the config spec of the cel processor.
func Spec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Mapping").
		Summary("Filters and reshapes rows with CEL expressions: Flink SQL's WHERE (`filter`) and SELECT (`map`) for YAML pipelines.").
		Description(`
Both expressions are compiled once, when the processor starts, and by `+"`connectd lint`"+`, which reads a `+"`catalog`"+`
file as a run does (its path is relative to the working directory). With a table (`+"`table`"+` inline, `+"`catalog`"+` + `+"`table`"+`, or `+"`ddl`"+`, as for `+"`table_decode`"+`), every
column is a variable of its SQL type and the expressions are type-checked against the columns: an unknown column or a
type mismatch is a config error naming the field and the line:column of the expression. Without a table, the row is
only reachable as `+"`row`"+` (dynamic).

`+"`filter`"+` runs first: a message for which it is false (or null, as in SQL) is dropped. Then `+"`map`"+` replaces the
message content with the map it returns. Metadata is kept.

### Variables

- each column of the table whose name is a CEL identifier, typed; computed columns (`+"`AS expr`"+`) too
- `+"`row`"+`: the message content, `+"`map(string, dyn)`"+` (`+"`row[\"my-col\"]`"+` reads a column whose name is not an identifier).
  Content that is not a JSON object reads as an empty row.
- `+"`meta`"+`: the message metadata, `+"`map(string, dyn)`"+`, e.g. `+"`meta.kafka_topic`"+`
- `+"`kafka_timestamp`"+`: the `+"`kafka_timestamp_ms`"+` metadata as a CEL timestamp; null when absent

### Types

STRING/VARCHAR/CHAR: string. BOOLEAN: bool. TINYINT..BIGINT: int. FLOAT, DOUBLE: double. DECIMAL: **double** (the row
keeps an exact decimal; CEL sees a double, which rounds beyond 15-17 significant digits). DATE, TIME, TIMESTAMP,
TIMESTAMP_LTZ: timestamp (time values in the row). BYTES: bytes. ARRAY: list. MAP, ROW: map. NULL: null. Nullable
scalar columns are nullable CEL types, so `+"`amount != null && amount > 10.0`"+` type-checks; test ARRAY, MAP and ROW
columns for null through the row (`+"`row.tags != null`"+`). CEL has no implicit int/double conversion in arithmetic:
write `+"`amount * 2.0`"+`, not `+"`amount * 2`"+` (comparisons across int and double are allowed). Without a table, a JSON
number is an int when integral, else a double. Results map back: timestamp to a time value, bytes to bytes, duration
to its string ("1.5s").

### Errors and NULL

An expression that fails on a message (a null operand, a missing key, a division by zero) does not drop it: the
message passes on unchanged, flagged with an error that names the field and the expression, for `+"`catch`"+`,
`+"`switch`"+` on `+"`errored()`"+` or `+"`reject_errored`"+` to handle. To get SQL's WHERE semantics instead, where a
comparison with NULL is UNKNOWN and the row is dropped, wrap the condition in `+"`sql_true(...)`"+`: it is true only when
the condition is true, and false when it is null or fails on a null or mistyped operand (other failures, such as a
division by zero, are still errors). Without it, guard nullable columns: `+"`amount != null && amount > 10.0`"+`.
`).
		Fields(
			service.NewStringField(FieldFilter).
				Description("A boolean CEL expression; a message for which it is false or null is dropped. "+
					"Default: none (keep every message). Flink: the `WHERE` clause of a `SELECT ... FROM table`.").
				Example(`amount != null && amount > 100.0`).
				Example(`meta.kafka_topic == "orders" && kafka_timestamp > timestamp("2026-01-01T00:00:00Z")`).
				Optional(),
			service.NewStringField(FieldMap).
				Description("A CEL expression that returns a map with string keys: the new content of the message. "+
					"Default: none (keep the content). Flink: the select list of `SELECT a, b + 1 AS c FROM table` "+
					"(computed columns of a table are the same thing inside the table definition).").
				Example(`{"id": id, "amount_cents": int(amount * 100.0), "day": string(ts).substring(0, 10)}`).
				Optional(),
		).
		Fields(table.Fields()...).
		Example("WHERE and SELECT on decoded rows",
			"Keep large refunds of a catalog table and project three columns, one computed; a row whose expression fails is flagged and goes to a dead-letter file.",
			`
pipeline:
  processors:
    - table_decode:
        catalog: ./config/tables.sql
        table: refunds
    - cel:
        catalog: ./config/tables.sql
        table: refunds
        filter: amount != null && amount >= 100.0
        map: '{"refund": refund_id, "order": order_id, "amount_usd": amount * 1.08}'
output:
  switch:
    cases:
      - check: errored()
        output:
          file: { path: ./dead_letters.jsonl, codec: lines }
      - output:
          stdout: {}
`).
		Example("Route on metadata and event time, without a table",
			"Drop records older than a cut-off by their Kafka timestamp, and keep only the fields a downstream system needs.",
			`
pipeline:
  processors:
    - cel:
        filter: kafka_timestamp != null && kafka_timestamp >= timestamp("2026-12-01T00:00:00Z")
        map: '{"user": row.user_id, "topic": meta.kafka_topic, "at": kafka_timestamp}'
`)
}

func init() {
	spec := Spec()
	speclint.Register(speclint.Processor, component, spec, func(conf *service.ParsedConfig) error {
		_, err := configFromParsed(conf)
		return err
	})
	if err := service.RegisterProcessor(component, spec, func(conf *service.ParsedConfig, mgr *service.Resources) (service.Processor, error) {
		c, err := configFromParsed(conf)
		if err != nil {
			return nil, err
		}
		return newProcessor(c), nil
	}); err != nil {
		panic(err)
	}
}
