// Package tabledecode is the `table_decode` processor: it turns record bytes
// into a typed row of a table (Flink's DeserializationSchema driven by a
// CREATE TABLE), as a structured Benthos message.
package tabledecode

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/metricdoc"
	"github.com/connectd/connectd/internal/speclint"
	"github.com/connectd/connectd/internal/table"
	"github.com/connectd/connectd/schema"
)

const component = "table_decode"

// Spec returns the config spec of the table_decode processor.
func Spec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Parsing").
		Summary("Decodes each message into a typed row of a table defined in Flink SQL DDL or YAML, with Flink's json, csv, avro, avro-confluent, raw or protobuf format.").
		Description(`
The message bytes are decoded by the table's format into the table's physical columns; the message becomes a
structured row keyed by column name. Types are kept: TIMESTAMP, TIMESTAMP_LTZ, DATE and TIME as time values,
DECIMAL(p, s) as an exact number with s fraction digits (never a float), BYTES as bytes, ARRAY as a list, MAP and
ROW as objects, and NULL as null, so Bloblang and JSON output see them naturally. `+"`table_encode`"+` accepts what
this processor produces.

Metadata columns (`+"`METADATA FROM 'key'`"+`) are filled from the message metadata that `+"`kafka_source`"+` sets:
`+"`topic`"+` from kafka_topic, `+"`partition`"+` from kafka_partition, `+"`offset`"+` from kafka_offset, `+"`timestamp`"+`
from kafka_timestamp_ms, `+"`timestamp-type`"+` from kafka_timestamp_type, `+"`leader-epoch`"+` from kafka_leader_epoch,
and `+"`headers`"+` from every other metadata field (as bytes). Missing metadata reads as null: `+"`kafka_source`"+` sets
kafka_timestamp_type and kafka_leader_epoch only when its `+"`metadata_keys`"+` lists them. Computed columns
(`+"`col AS expr`"+`) are evaluated after decoding, in table order, from the physical and metadata columns: the Flink SQL
expression is translated to CEL and type-checked when the processor starts. The SQL supported is: `+schema.ComputedSQL+`.
Anything else is a config error naming the column and the construct. As in Flink, a computed column is NULL when its
expression fails on a NULL input, and a CASE WHEN condition that is NULL is not true; any other evaluation failure
(a division by zero) is a bad record (`+"`on_error`"+`). CEL does not mix int and double in arithmetic: an integer
literal next to a DECIMAL or DOUBLE column is read as a double (`+"`1 + vat`"+`), but two columns need a CAST
(`+"`price * CAST(qty AS DOUBLE)`"+`).

### avro-confluent

Records in Confluent's wire format (magic byte 0, 4-byte schema id, Avro binary) are read with their writer schema,
fetched from the schema registry (`+"`avro-confluent.url`"+`) by id once and cached. Fields are matched by name; a field
the writer lacks is NULL (an error for a NOT NULL column); values follow Avro's schema resolution (int to BIGINT or
DOUBLE, float to DOUBLE, enum to STRING, ...), and anything else is a bad record naming the field, both types and the
schema id. `+"`table_encode`"+` registers the schema derived from the table (as Flink's AvroSchemaConverter) under the
subject `+"`<kafka_topic>-value`"+`, or `+"`avro-confluent.subject`"+`.

### protobuf

Records are Protocol Buffers messages of `+"`protobuf.message-name`"+` (its full name), whose schema is
`+"`protobuf.descriptor-file`"+`: a .proto file (compiled at start; imports beside it, Google's well-known types built
in) or a descriptor set from `+"`protoc --descriptor_set_out --include_imports`"+`. Columns are the message's fields by
name, typed as Flink maps them (int32 kinds INT, int64 kinds BIGINT, unsigned ones wrapping as Java's int and long,
enum STRING or an integer type, message ROW, repeated ARRAY, map MAP); a column without such a field is a config error
naming both. A field with presence (proto2, proto3 `+"`optional`"+`, messages) that a record leaves unset is NULL, or its
default with `+"`protobuf.read-default-values`"+`. Flink's `+"`protobuf.message-class-name`"+` (a compiled Java class) is
refused with a pointer to these two options.

### Bad records

`+"`on_error`"+` picks what happens to a record that does not decode. `+"`fail`"+` (the default) ends the run, as a
Flink job fails: the record is dropped before the output, nothing at or after it is committed (kafka_source commits no
further offset, an exactly-once kafka_sink aborts), the error is logged once at error level naming topic, partition
and offset (from the kafka_* metadata; for another input, the message index: how many messages the processor received
before it), and connectd exits with code 1 printing it. `+"`skip`"+` drops it; `+"`dead_letter`"+` keeps the original
bytes and flags the message with the error, so that a `+"`switch`"+` output on `+"`errored()`"+` or
`+"`reject_errored`"+` can route it: these two keep the run going. A record that the format's own options skip
(`+"`ignore-parse-errors`"+` on a record that is not JSON, Flink's `+"`format.ignore-parse-errors`"+`; a csv comment
line) is dropped and counted as skipped.

### Metrics

- `+"`table_decode_failed`"+`, `+"`table_decode_skipped`"+`, `+"`table_decode_dead_letter`"+` (counters): bad records by policy.
`).
		Fields(table.ProcessorFields(component, "decode")...).
		Example("Orders from JSON with a dead-letter output",
			"Decode JSON orders by a Flink DDL table; records that do not decode keep their bytes and go to a dead-letter file.",
			`
pipeline:
  processors:
    - table_decode:
        ddl: |
          CREATE TABLE orders (
            id BIGINT NOT NULL,
            amount DECIMAL(10, 2),
            ts TIMESTAMP(3),
            kafka_ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL
          ) WITH ('format' = 'json')
        on_error: dead_letter
output:
  switch:
    cases:
      - check: errored()
        output:
          file: { path: ./dead_letters.jsonl, codec: lines }
      - output:
          stdout: {}
`).
		Example("CSV lines from a catalog",
			"Decode CSV with the table `refunds` of a catalog of CREATE TABLE statements, skipping bad lines.",
			`
pipeline:
  processors:
    - table_decode:
        catalog: ./config/tables.sql
        table: refunds
        format: csv
        options:
          field-delimiter: ";"
          null-literal: "NULL"
        on_error: skip
`)
}

func init() {
	metricdoc.Register(table.BadMetrics(component)...)
	spec := Spec()
	speclint.Register(speclint.Processor, component, spec, func(conf *service.ParsedConfig) error {
		_, err := table.ProcessorFromParsed(conf)
		return err
	})
	service.MustRegisterProcessor(component, spec,
		func(conf *service.ParsedConfig, mgr *service.Resources) (service.Processor, error) {
			c, err := table.ProcessorFromParsed(conf)
			if err != nil {
				return nil, err
			}
			return newProcessor(c, mgr), nil
		})
}
