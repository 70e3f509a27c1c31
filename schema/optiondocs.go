package schema

import (
	"fmt"
	"slices"
	"strings"
)

// This file documents every WITH option: what connectd does with the ones
// it maps (optionDocs), why it refuses the Flink options it knows and does
// not map (refusedOptions, refusedValues), and renders them as
// docs/flink-options.md (FlinkOptionsMarkdown), the "Flink option ->
// connectd" table. A test keeps optionDocs and the option tables of
// options.go in step.

// optionDocs is, per option connectd maps, what it sets in connectd: the
// kafka_source / kafka_sink field of the same meaning, or the behaviour.
// Format options carry their format prefix ("json.ignore-parse-errors");
// with 'key.format' and 'value.format' they take a "key." or "value."
// prefix too.
var optionDocs = map[string]string{
	OptConnector:          "`kafka`: the plain connector; `upsert-kafka`: PRIMARY KEY as the Kafka key, deletes as tombstones (kafka_sink), tombstones read as deletes (kafka_source, from the earliest offset); none: a table only to decode and encode (table_decode, table_encode, cel)",
	OptTopic:              "kafka_source field `topics` (a `;` list); kafka_sink field `topic` (one topic)",
	OptTopicPattern:       "kafka_source field `topic_pattern` (a regular expression; new matching topics are read from earliest); refused on a sink",
	OptBootstrapServers:   "field `seed_brokers`",
	OptGroupID:            "kafka_source field `consumer_group`: offsets are committed there and resumed from (connectd's checkpoint)",
	OptFormat:             "the record value's format (json, csv, raw, avro, avro-confluent, protobuf, and the changelog formats debezium-json, debezium-avro-confluent, canal-json, maxwell-json, ogg-json: docs/changelog.md); the same as `value.format`",
	OptKeyFormat:          "the record key's format",
	OptValueFormat:        "the record value's format",
	OptKeyFields:          "the columns that form the Kafka key (`;` list); a PRIMARY KEY on plain kafka forms it too (connectd's extension)",
	OptKeyFieldsPrefix:    "prefix of the key columns' names, removed in the key's fields (needs `value.fields-include` = `EXCEPT_KEY`)",
	OptValueFieldsInclude: "`ALL`: the value holds every physical column; `EXCEPT_KEY`: the key columns are left out of it",
	OptStartupMode: "kafka_source field `start_from` (`earliest-offset` earliest, `latest-offset` latest, `group-offsets` committed, " +
		"`timestamp`, `specific-offsets` offsets), for partitions without an offset committed in the group (a restart resumes from those)",
	OptStartupSpecificOffsets: "kafka_source field `start_offsets`",
	OptStartupTimestampMillis: "kafka_source field `start_timestamp` (milliseconds since the epoch)",
	OptBoundedMode: "kafka_source field `stop_at` (`unbounded` none, `latest-offset` latest, `timestamp`, `specific-offsets` offsets): " +
		"the input ends when every partition reached its stop offset; `group-offsets` is `stop_at: committed` with `properties.group.id` as `stop_group` " +
		"(the group is only read, as the bound: the input does not resume from or commit to it)",
	OptBoundedSpecificOffsets:  "kafka_source field `stop_offsets`",
	OptBoundedTimestampMillis:  "kafka_source field `stop_timestamp` (milliseconds since the epoch)",
	OptPartitionDiscovery:      "kafka_source field `discovery_interval` (0 turns discovery off)",
	OptWatermarkIdleTimeout:    "kafka_source field `watermark.idle_timeout`",
	OptWatermarkEmitStrategy:   "`on-event` (kafka_source stamps each record with the current watermark); `on-periodic` is refused: kafka_source has no periodic emission to switch to",
	OptLocalTimeZone:           "the zone of zone-dependent computed-column functions and metadata casts (default UTC; IANA names or `GMT+08:00`); the YAML field `local_time_zone` of the components that take a table",
	OptWatermarkAlignGroup:     "kafka_source field `watermark.alignment.group`",
	OptWatermarkAlignMaxDrift:  "kafka_source field `watermark.alignment.max_drift`",
	OptWatermarkAlignInterval:  "kafka_source field `watermark.alignment.update_interval`",
	OptDeliveryGuarantee:       "kafka_sink field `delivery_guarantee` (`none`, `at_least_once`, `exactly_once`: Kafka transactions, with the source offsets in them for Kafka -> Kafka)",
	OptTransactionalIDPrefix:   "kafka_sink field `transactional_id_prefix`",
	OptSinkPartitioner:         "kafka_sink field `partitioner` (`default`: murmur2 of the key as the Java client; `fixed`; `round-robin` as `round_robin`); a class name is refused",
	OptSinkBufferFlushMaxRows:  "kafka_sink field `batching.count`; each batch is a flush that writes only the last row per key (Flink's ReducingUpsertWriter)",
	OptSinkBufferFlushInterval: "kafka_sink field `batching.period`; goes with `sink.buffer-flush.max-rows`",

	"json.fail-on-missing-field":          "a record without a column's field fails instead of reading NULL",
	"json.ignore-parse-errors":            "a field that does not parse reads as NULL; a record that is not an object is skipped",
	"json.timestamp-format.standard":      "`SQL` (`2006-01-02 15:04:05.999`) or `ISO-8601` (`2006-01-02T15:04:05.999`) text of timestamps",
	"json.map-null-key.mode":              "validated as in Flink; connectd rows hold MAP keys as strings, never NULL, so it changes no output",
	"json.map-null-key.literal":           "validated as in Flink; see `json.map-null-key.mode`",
	"json.encode.decimal-as-plain-number": "DECIMAL written in plain notation, never Java's scientific one",
	"json.encode.ignore-null-fields":      "NULL fields of the row and of nested ROWs are left out of the object (NULL array elements and map values stay)",

	"csv.field-delimiter":         "the field separator (one character, or `\\t`-style escapes)",
	"csv.disable-quote-character": "quoting off: a special character needs `csv.escape-character`; refused together with `csv.quote-character`, as in Flink",
	"csv.quote-character":         "the quote character (default `\"`)",
	"csv.allow-comments":          "records starting with `#` are skipped",
	"csv.ignore-parse-errors":     "a field that does not parse reads as NULL; a record with the wrong number of fields is skipped",
	"csv.array-element-delimiter": "the separator of ARRAY elements (default `;`)",
	"csv.escape-character":        "the escape character (default none)",
	"csv.null-literal":            "the text of NULL (default: an empty field reads as NULL but for strings)",
	"csv.write-bigdecimal-in-scientific-notation": "`true`: DECIMAL without trailing zeros in Java's BigDecimal.toString form (`100.00` as `1E+2`); " +
		"unset or `false`: plain with the column's scale (`100.00`). Flink documents true as the default, but its csv format reads the option " +
		"only when it is set, and so does connectd",

	"protobuf.descriptor-file":           "connectd's option: the message's schema, a `.proto` file or a descriptor set (`protoc --descriptor_set_out`); required",
	"protobuf.message-name":              "connectd's option: the message's full name (`shop.v1.Order`); required",
	"protobuf.message-class-name":        "refused: a compiled Java class, which connectd cannot load; give `protobuf.descriptor-file` and `protobuf.message-name`",
	"protobuf.ignore-parse-errors":       "a record that does not parse is skipped",
	"protobuf.read-default-values":       "an unset field with presence reads as its default value instead of NULL (default false)",
	"protobuf.write-null-string-literal": "the string written for a NULL in a string array or map (default empty)",

	"raw.charset":    "the charset of a character string column, as Java's Charset.forName names it (default UTF-8); unmappable characters are written as `?`",
	"raw.endianness": "byte order of SMALLINT, INT, BIGINT, FLOAT and DOUBLE columns (default `big-endian`)",

	"avro-confluent.url":                           "the schema registry's URL",
	"avro-confluent.subject":                       "the subject (default `<topic>-value` / `<topic>-key`)",
	"avro-confluent.schema-registry.url":           "the older spelling of `avro-confluent.url` (must agree with it when both are set)",
	"avro-confluent.schema-registry.subject":       "the older spelling of `avro-confluent.subject` (must agree with it when both are set)",
	"avro-confluent.basic-auth.credentials-source": "`USER_INFO` or `URL`",
	"avro-confluent.basic-auth.user-info":          "`user:password` for the registry",
	"avro-confluent.auto.register.schemas":         "register the table's schema on write (default true), or look it up and fail when absent",
}

// refusedOptions are options of Flink's Kafka connectors that connectd
// knows and refuses, with the reason and what to do instead.
var refusedOptions = map[string]string{
	"sink.parallelism": "connectd has no operator parallelism: a kafka_sink keeps up to max_in_flight batches in flight " +
		"(each partition's records in order); run more processes to scale out",
	"scan.parallelism": "connectd has no operator parallelism: kafka_source field readers spreads the partitions over " +
		"readers with Flink's owner function (shard and assignment scale across processes)",
	"sink.semantic": "the old name (Flink 1.14 and before) of 'sink.delivery-guarantee', which Flink's current connector " +
		"no longer reads; use 'sink.delivery-guarantee' ('none', 'at-least-once' or 'exactly-once')",
	"sink.transaction-naming-strategy": "connectd names its transactional ids after 'sink.transactional-id-prefix' its " +
		"own way (kafka_sink field transactional_id_prefix) and keeps none of Flink's pooled ids",
}

// refusedValues are option values connectd refuses, with the reason.
var refusedValues = map[string]string{}

// FlinkOptionsMarkdown returns docs/flink-options.md: every WITH option,
// what connectd does with it or why it refuses it. `make docs` writes it
// and a test of internal/docsgen keeps it current.
func FlinkOptionsMarkdown() string {
	var b strings.Builder
	b.WriteString(`# Flink option → connectd

<!-- Generated from schema/options.go and schema/optiondocs.go by ` + "`make docs`" + `; do not edit. -->

Every ` + "`WITH`" + ` option of a Flink Kafka table either works in connectd as it does in Flink,
through the kafka_source or kafka_sink field of the same meaning (a field written in YAML must
agree with the option), or is refused by name with the reason. Nothing is ignored. An option
not listed here is refused as unknown.

## Connector options

| option | connectors | connectd |
|---|---|---|
`)
	all := map[string][]string{}
	for _, c := range []string{ConnectorKafka, ConnectorUpsertKafka, ""} {
		for k := range connectorOptions[c] {
			all[k] = append(all[k], connectorLabel(c))
		}
	}
	for _, k := range sortedKeys(all) {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k, strings.Join(all[k], ", "), cellText(optionDocs[k]))
	}
	fmt.Fprintf(&b, "| `%s*` | kafka, upsert-kafka | the Kafka client properties: each applied with the Java client's meaning or refused with the reason, listed in [kafka-properties.md](kafka-properties.md) |\n", PropertyPrefix)
	b.WriteString(`
## Format options

With ` + "`format`" + ` the options are written ` + "`<format>.<option>`" + `; with ` + "`key.format`" + ` or
` + "`value.format`" + `, ` + "`key.<format>.<option>`" + ` or ` + "`value.<format>.<option>`" + `.

| option | connectd |
|---|---|
`)
	for _, f := range sortedKeys(formatOptions) {
		for _, o := range sortedKeys(formatOptions[f]) {
			k := f + "." + o
			fmt.Fprintf(&b, "| `%s` | %s |\n", k, cellText(optionDocs[k]))
		}
	}
	b.WriteString(`
## Refused

| option | why |
|---|---|
`)
	var refused []string
	for k := range refusedOptions {
		refused = append(refused, k)
	}
	for k := range refusedValues {
		refused = append(refused, k)
	}
	slices.Sort(refused)
	for _, k := range refused {
		why, ok := refusedOptions[k]
		if !ok {
			why = refusedValues[k]
		}
		name := "`" + k + "`"
		if opt, val, isValue := strings.Cut(k, " = "); isValue {
			name = fmt.Sprintf("`%s` = `%s`", opt, val)
		}
		fmt.Fprintf(&b, "| %s | %s |\n", name, cellText(why))
	}
	return b.String()
}

// cellText makes s fit a Markdown table cell.
func cellText(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ")
}
