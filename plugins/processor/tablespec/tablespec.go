// Package tablespec holds the config fields that the table_decode and
// table_encode processors share: where the table comes from (inline YAML, a
// catalog file, or Flink DDL), the format and its options, and the
// bad-record policy, turned once into a typed Config.
package tablespec

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/expr"
	"github.com/connectd/connectd/schema/format"
)

// Field names.
const (
	FieldTable   = "table"
	FieldCatalog = "catalog"
	FieldDDL     = "ddl"
	FieldFormat  = "format"
	FieldOptions = "options"
	FieldOnError = "on_error"
)

// Policy is what a processor does with a record it cannot decode or encode.
type Policy string

// Bad-record policies.
const (
	// PolicyFail returns the error, naming topic, partition and offset when
	// the message carries kafka_* metadata. Benthos flags the message as
	// failed and logs the error; with `reject_errored` the input nacks it and
	// it is delivered again, which stops progress at that record.
	PolicyFail Policy = "fail"
	// PolicySkip drops the message, counts it and logs at most every
	// SkipLogInterval.
	PolicySkip Policy = "skip"
	// PolicyDeadLetter keeps the message with its original bytes and flags
	// it with the error (msg.SetError), for `catch`, `switch` with
	// `errored()` or `reject_errored` to route.
	PolicyDeadLetter Policy = "dead_letter"
)

// SkipLogInterval is the shortest time between two logs of skipped records.
const SkipLogInterval = 10 * time.Second

// Config is the parsed, validated table and format of a processor.
type Config struct {
	Table   *schema.Table
	Format  string
	Options map[string]string // Flink format options without the format prefix
	OnError Policy
	Codec   format.Codec
	// Computed evaluates the table's computed columns; nil when it has none.
	Computed *expr.Env
}

// Fields returns the shared fields; verb is "decode" or "encode".
func Fields(verb string) []*service.ConfigField {
	return append(TableFields(), formatFields(verb)...)
}

// TableFields returns the fields that name a table: table, catalog, ddl.
func TableFields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewAnyField(FieldTable).
			Description("The table: either its definition in the YAML form (`name`, `columns` with `name` and a Flink SQL `type`, " +
				"optional `metadata` key and `virtual`, or `expr` instead of `type` for a computed column (a Flink SQL expression, as `AS expr`), `primary_key`, `watermark` with `column` and `delay`, and the Flink WITH `options`), " +
				"or the name of a table in `catalog` or `ddl`. No default. Flink: the table of `CREATE TABLE`.").
			Example(map[string]any{
				"name": "orders",
				"columns": []any{
					map[string]any{"name": "id", "type": "BIGINT NOT NULL"},
					map[string]any{"name": "amount", "type": "DECIMAL(10, 2)"},
					map[string]any{"name": "ts", "type": "TIMESTAMP(3)"},
				},
				"options": map[string]any{"format": "json"},
			}).
			Example("orders").
			Optional(),
		service.NewStringField(FieldCatalog).
			Description("Path of a catalog file, relative to the working directory: `.sql` with Flink `CREATE TABLE` statements, or " +
				"`.yaml` with a `tables:` list in the YAML form, for example `./config/tables.sql`. `table` names the table to use. " +
				"`connectd lint` reads it, as a run does. No default. Flink: a catalog.").
			Optional(),
		service.NewStringField(FieldDDL).
			Description("Flink SQL `CREATE TABLE` statements, inline, for example " +
				"`CREATE TABLE orders (id BIGINT, amount DECIMAL(10, 2)) WITH ('format' = 'json')`. With several, `table` names the one to use. No default.").
			Optional(),
	}
}

func formatFields(verb string) []*service.ConfigField {
	return []*service.ConfigField{
		service.NewStringField(FieldFormat).
			Description(fmt.Sprintf("Format to %s with: one of %s. Default: the table's `format` (or `value.format`) option. "+
				"Flink option: `format` / `value.format`.", verb, strings.Join(format.Names(), ", "))).
			Example("json").
			Optional(),
		service.NewAnyField(FieldOptions).
			Description("Format options, named as in Flink without the format prefix (`ignore-parse-errors`, not `json.ignore-parse-errors`); " +
				"they are added to, and override, the table's options for the format. An option the format does not support is an error. " +
				"Default: none. json: `fail-on-missing-field`, `ignore-parse-errors`, `timestamp-format.standard` (SQL | ISO-8601), " +
				"`map-null-key.mode`, `map-null-key.literal`, `encode.decimal-as-plain-number`. csv: `field-delimiter`, `quote-character`, " +
				"`disable-quote-character`, `allow-comments`, `ignore-parse-errors`, `array-element-delimiter`, `escape-character`, `null-literal`. " +
				"raw: `charset` (UTF-8). avro: none. avro-confluent: `url` (the schema registry, required), `subject` (default `<topic>-value` from kafka_topic metadata), " +
				"`basic-auth.credentials-source` (USER_INFO or URL), `basic-auth.user-info` (`user:password`), `auto.register.schemas` (default true; false looks the schema up in the subject).").
			Example(map[string]any{"ignore-parse-errors": true, "timestamp-format.standard": "ISO-8601"}).
			Optional(),
		service.NewStringEnumField(FieldOnError, string(PolicyFail), string(PolicySkip), string(PolicyDeadLetter)).
			Description(fmt.Sprintf("What to do with a record that cannot be %sd: `fail` returns an error naming topic, partition and offset "+
				"(from kafka_* metadata, when present), so Benthos flags the message and `reject_errored` makes the input deliver it again; "+
				"`skip` drops it, counts it in a metric and logs at most every %s; `dead_letter` keeps the message with its original bytes "+
				"and flags it with the error, for `catch`, `switch` (`errored()`) or `reject_errored` to route to a dead-letter output. "+
				"Default `fail`. Flink has `ignore-parse-errors` (skip) and failing the job.", verb, SkipLogInterval)).
			Default(string(PolicyFail)),
	}
}

// Kafka metadata names set by kafka_source (and Benthos's Kafka inputs).
const (
	MetaTopic     = "kafka_topic"
	MetaPartition = "kafka_partition"
	MetaOffset    = "kafka_offset"
	MetaTimestamp = "kafka_timestamp_ms"
)

// ParseTimestamp reads a kafka_timestamp_ms metadata value: milliseconds
// since the epoch, as a number or text.
func ParseTimestamp(v any) (time.Time, error) {
	ms, err := strconv.ParseInt(strings.TrimSpace(fmt.Sprint(v)), 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(ms), nil
}

// Locate returns " (topic t, partition p, offset o)" for a message carrying
// kafka_* metadata, else "".
func Locate(msg *service.Message) string {
	topic, ok1 := msg.MetaGetMut(MetaTopic)
	part, ok2 := msg.MetaGetMut(MetaPartition)
	off, ok3 := msg.MetaGetMut(MetaOffset)
	if !ok1 && !ok2 && !ok3 {
		return ""
	}
	return fmt.Sprintf(" (topic %v, partition %v, offset %v)", orDash(topic, ok1), orDash(part, ok2), orDash(off, ok3))
}

// RecordOf returns what a format.RecordCodec uses of a message: its
// kafka_topic metadata.
func RecordOf(msg *service.Message) format.Record {
	var rec format.Record
	if v, ok := msg.MetaGetMut(MetaTopic); ok {
		rec.Topic = fmt.Sprint(v)
	}
	return rec
}

func orDash(v any, ok bool) any {
	if !ok {
		return "-"
	}
	return v
}

// Bad handles bad records by policy: metrics and the rate-limited log.
type Bad struct {
	policy     Policy
	component  string
	log        *service.Logger
	failed     *service.MetricCounter
	skipped    *service.MetricCounter
	deadLetter *service.MetricCounter

	mu struct {
		sync.Mutex
		lastLog    time.Time
		suppressed int
	}
}

// NewBad returns the bad-record handler of a component, with counters
// `<component>_failed`, `<component>_skipped` and `<component>_dead_letter`.
func NewBad(component string, policy Policy, mgr *service.Resources) *Bad {
	m := mgr.Metrics()
	return &Bad{
		policy: policy, component: component, log: mgr.Logger(),
		failed:     m.NewCounter(component + "_failed"),
		skipped:    m.NewCounter(component + "_skipped"),
		deadLetter: m.NewCounter(component + "_dead_letter"),
	}
}

// Handle applies the policy to msg, which could not be processed because of
// cause, and returns what the processor returns.
func (b *Bad) Handle(msg *service.Message, cause error) (service.MessageBatch, error) {
	err := fmt.Errorf("%s%s: %w", b.component, Locate(msg), cause)
	switch b.policy {
	case PolicySkip:
		b.skipped.Incr(1)
		b.logSkipped(err, time.Now())
		return nil, nil
	case PolicyDeadLetter:
		b.deadLetter.Incr(1)
		msg.SetError(err)
		return service.MessageBatch{msg}, nil
	}
	b.failed.Incr(1)
	return nil, err
}

// Skipped counts a record that the format itself skipped
// (`ignore-parse-errors`, `allow-comments`).
func (b *Bad) Skipped() { b.skipped.Incr(1) }

func (b *Bad) logSkipped(err error, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.mu.lastLog) < SkipLogInterval {
		b.mu.suppressed++
		return
	}
	if b.mu.suppressed > 0 {
		b.log.Warnf("skipped a bad record (and %d more since the last report): %v", b.mu.suppressed, err)
	} else {
		b.log.Warnf("skipped a bad record: %v", err)
	}
	b.mu.lastLog, b.mu.suppressed = now, 0
}
