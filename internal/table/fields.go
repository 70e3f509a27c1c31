// Package table binds a Flink table (schema.Table) to the components that
// use one: kafka_source and kafka_sink, as Flink's KafkaDynamicSource and
// KafkaDynamicSink do, and the table_decode, table_encode and cel
// processors. It holds:
//
//   - the config fields that name a table (`table`, `catalog`, `ddl`), the
//     processors' `format` and `options`, and the bad-record policy
//     `on_error`, each defined once, and their resolution into a validated
//     table (resolve.go, processor.go);
//   - the checks that a component's YAML fields do not contradict the
//     table's WITH options (conflicts.go);
//   - Codec, which turns a Kafka record's key, value and metadata into a
//     typed row and back (codec.go), decoding straight from a fetched
//     *kgo.Record;
//   - Flink's readable metadata keys and the kafka_* message metadata that
//     carries each (metadata.go), and a message as CEL sees it (message.go);
//   - Bad, which applies `on_error` to a record that does not decode or
//     encode: `fail` ends the run through internal/halt (bad.go).
//
// The Bloblang lint methods (lint.go) are kept apart: they go when the
// components lint through their Go validators.
package table

import (
	"fmt"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/schema/format"
)

// Field names, the same in every component that takes a table.
const (
	FieldTable   = "table"
	FieldCatalog = "catalog"
	FieldDDL     = "ddl"
	FieldFormat  = "format"
	FieldOptions = "options"
	FieldOnError = "on_error"
)

// The examples of the table fields: `connectd create` writes the first
// example of each optional field into the config it prints, so together
// they make a table that every component taking one can use as it is (a
// catalog path would only resolve from one directory, so catalog has none).
const (
	exampleTable = "events"
	exampleDDL   = "CREATE TABLE events (id STRING, amount DOUBLE, ts TIMESTAMP(3)) WITH ('connector' = 'kafka', 'topic' = 'events', " +
		"'properties.bootstrap.servers' = 'localhost:9092', 'format' = 'json')"
)

// Fields returns the fields that name a table: table, catalog and ddl.
// Which of the table's WITH options a component uses is the component's
// own documentation.
func Fields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewAnyField(FieldTable).
			Description("The Flink table: either its definition in the YAML form (`name`, `columns` with `name` and a Flink SQL `type`, " +
				"optional `metadata` key and `virtual`, or `expr` instead of `type` for a computed column (a Flink SQL expression, as `AS expr`), " +
				"`primary_key`, `watermark` with `column` and `delay`, and the Flink WITH `options`), or the name of a table in `catalog` or `ddl`. " +
				"On kafka_source and kafka_sink the table's WITH options also set the component's connection, topic and delivery fields " +
				"(see Tables in the description): the table is the single source of truth, a field that the table also sets must agree " +
				"with it (a contradiction is a config error naming the field and the option), and a WITH option that connectd does not " +
				"support is an error naming it. Default: none. Flink: the table of `CREATE TABLE`.").
			Example(exampleTable).
			Example(map[string]any{
				"name": "orders",
				"columns": []any{
					map[string]any{"name": "id", "type": "BIGINT NOT NULL"},
					map[string]any{"name": "amount", "type": "DECIMAL(10, 2)"},
					map[string]any{"name": "ts", "type": "TIMESTAMP(3)"},
				},
				"options": map[string]any{"format": "json"},
			}).
			Optional(),
		service.NewStringField(FieldCatalog).
			Description("Path of a catalog file, relative to the working directory: `.sql` with Flink `CREATE TABLE` statements, or " +
				"`.yaml` with a `tables:` list in the YAML form, for example `./config/tables.sql`; `table` names the table to use. " +
				"`connectd lint` reads it, as a run does. Default: none. Flink: a catalog.").
			Optional(),
		service.NewStringField(FieldDDL).
			Description("Flink SQL `CREATE TABLE` statements, inline, instead of `catalog`; with several, `table` names the one to use. " +
				"Default: none. Flink: `CREATE TABLE`.").
			Example(exampleDDL).
			Optional(),
	}
}

// ProcessorFields returns the fields of table_decode and table_encode: the
// table, the format and its options, and on_error. verb is "decode" or
// "encode"; component names the metrics.
func ProcessorFields(component, verb string) []*service.ConfigField {
	return append(Fields(),
		service.NewStringField(FieldFormat).
			Description(fmt.Sprintf("Format to %s with: one of %s. Default: the table's `format` (or `value.format`) option. "+
				"Flink option: `format` / `value.format`.", verb, strings.Join(format.Names(), ", "))).
			Example("json").
			Optional(),
		service.NewAnyField(FieldOptions).
			Description("Format options, named as in Flink without the format prefix (`ignore-parse-errors`, not `json.ignore-parse-errors`); "+
				"they are added to, and override, the table's options for the format. An option the format does not support is an error. "+
				"Default: none. json: `fail-on-missing-field`, `ignore-parse-errors`, `timestamp-format.standard` (SQL | ISO-8601), "+
				"`map-null-key.mode`, `map-null-key.literal`, `encode.decimal-as-plain-number`. csv: `field-delimiter`, `quote-character`, "+
				"`disable-quote-character`, `allow-comments`, `ignore-parse-errors`, `array-element-delimiter`, `escape-character`, `null-literal`. "+
				"raw: `charset` (UTF-8). avro: none. avro-confluent: `url` (the schema registry, required), `subject` (default `<topic>-value` from kafka_topic metadata), "+
				"`basic-auth.credentials-source` (USER_INFO or URL), `basic-auth.user-info` (`user:password`), `auto.register.schemas` (default true; false looks the schema up in the subject). "+
				"protobuf: `descriptor-file` (a .proto file or a protoc descriptor set, required), `message-name` (the message's full name, required), "+
				"`ignore-parse-errors`, `read-default-values` (default false: an unset field with presence is NULL), `write-null-string-literal` (default \"\"); "+
				"Flink's `message-class-name` (a Java class) is refused.").
			Example(map[string]any{"ignore-parse-errors": true, "timestamp-format.standard": "ISO-8601"}).
			Optional(),
		OnErrorField(component, verb),
	)
}

// OnErrorField returns the on_error field of component, which verbs
// ("decode" or "encode") records.
func OnErrorField(component, verb string) *service.ConfigField {
	return service.NewStringEnumField(FieldOnError, string(PolicyFail), string(PolicySkip), string(PolicyDeadLetter)).
		Description(fmt.Sprintf("What to do with a record that cannot be %[1]sd. "+
			"`fail` ends the run, as a Flink job fails: the record does not reach the output, nothing at or after it is committed "+
			"(no offset, no exactly-once transaction), the error is logged once at error level and names topic, partition and offset "+
			"(from the record or its kafka_* metadata; for a message of another input, its index: the number of messages %[2]s received before it), "+
			"and connectd exits with code 1 printing it. "+
			"`skip` drops the record, counts it in `%[2]s_skipped` and logs at most every %[3]s. "+
			"`dead_letter` keeps the message with its original bytes and flags it with the error, for `catch`, `switch` (`errored()`) "+
			"or `reject_errored` to route to a dead-letter output. `skip` and `dead_letter` are the ways to keep the run going past bad records. "+
			"Records that the format itself skips (its `ignore-parse-errors`, a csv comment line), and on kafka_source the tombstones of a "+
			"`kafka` table (as in Flink), are dropped and counted in `%[2]s_skipped` whatever the policy. "+
			"Default `fail`. Flink: a record that does not deserialize fails the job (`fail`); the format's `ignore-parse-errors` = true "+
			"(`json.ignore-parse-errors`) skips it (`skip`).", verb, component, SkipLogInterval)).
		Default(string(PolicyFail))
}
