// Package kafkasink is the `kafka_sink` output: Apache Flink's KafkaSink for
// Benthos pipelines. It writes each message as one Kafka record (topic, key,
// headers and timestamp taken from the message), partitions keys exactly as
// the Java client does, and reports per-message failures so that Benthos
// retries only what Kafka did not accept.
//
// Files by concern: spec.go (fields and registration), config.go (typed
// configuration and validation), sink.go (the service.BatchOutput),
// partitioner.go (partitioners), record.go (message -> kgo.Record).
package kafkasink

import (
	"fmt"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/speclint"
)

// Field names of the kafka_sink config. The connection fields come from
// kafkaconn.
const (
	FieldTopic             = "topic"
	FieldKey               = "key"
	FieldPartitioner       = "partitioner"
	FieldMetadata          = "metadata"
	FieldTimestampMs       = "timestamp_ms"
	FieldDeliveryGuarantee = "delivery_guarantee"
	FieldMaxInFlight       = "max_in_flight"
	FieldBatching          = "batching"
	FieldCompression       = "compression"
	FieldMaxMessageBytes   = "max_message_bytes"
	FieldTimeout           = "timeout"
	FieldAutoCreateTopics  = "allow_auto_topic_creation"
)

// Defaults, shared by the spec and the typed Config.
const (
	defaultMaxInFlight     = 64
	defaultMaxMessageBytes = 1 << 20
	defaultTimeout         = "10s"
)

// Bounds of max_message_bytes: franz-go refuses batches under 512 bytes, and a
// broker refuses requests over its socket.request.max.bytes (default 100 MiB).
const (
	minMessageBytes = 512
	maxMessageBytes = 100 << 20
)

// Spec returns the config spec of the kafka_sink output.
func Spec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Services").
		Summary("Writes messages to Kafka topics as Apache Flink's KafkaSink does: key-hashed partitioning identical to the Java client, headers and timestamps from message metadata, and a per-message error report.").
		Description(`
Each message becomes one Kafka record. The topic, key and timestamp are
interpolated per message; chosen metadata become record headers; the message
payload is the record value.

### Delivery guarantees

- `+"`at_least_once`"+` (default, Flink `+"`AT_LEAST_ONCE`"+`): the idempotent producer with
  `+"`acks=all`"+`. A message is acknowledged to the input only after every in-sync
  replica holds it; Kafka drops the duplicates of the producer's own retries.
- `+"`none`"+` (Flink `+"`NONE`"+`): `+"`acks=1`"+` (leader only), no idempotence. Errors are still
  reported, but a leader failure can lose acknowledged records, and retries
  can duplicate them.
- `+"`exactly_once`"+` (Kafka transactions) is not supported yet.

### Partitioning

The `+"`default`"+` partitioner is Flink's and the Java client's: a record with a key
goes to `+"`toPositive(murmur2(key)) % partitions`"+`, so connectd and Java producers put
the same key on the same partition. A record without a key sticks to one
partition until a batch fills up, then moves on (sticky partitioning, KIP-480).

### Errors

Messages are written in parallel and each one succeeds or fails on its own. A
batch in which some messages failed is reported as a batch error naming each
failed message with its topic and partition, so only those are retried. A
message whose topic, key or timestamp cannot be computed fails alone too.

### Ordering

Within one batch, records with the same key are written in order. With
`+"`max_in_flight`"+` above 1, batches are written in parallel and a retried batch can
land after a later one; set `+"`max_in_flight: 1`"+` for strict per-key order.

### Metrics

- `+"`kafka_sink_records_sent`"+` (counter, label `+"`topic`"+`): records Kafka acknowledged.
- `+"`kafka_sink_records_failed`"+` (counter, label `+"`topic`"+`, empty when the topic could
  not be computed): records that failed.
- `+"`kafka_sink_produce_latency_ns`"+` (timer, label `+"`topic`"+`): from handing a record to
  the client to Kafka's acknowledgement.
`+service.OutputPerformanceDocs(true, true)).
		Fields(kafkaconn.Fields()...).
		Fields(
			service.NewInterpolatedStringField(FieldTopic).
				Description("Topic to write each message to, interpolated per message. Required, no default. Flink option: `topic`.").
				Examples("events", `${! @kafka_topic }-copy`),
			service.NewInterpolatedStringField(FieldKey).
				Description("Record key, interpolated per message. Absent or evaluating to an empty string means a null key "+
					"(sticky partitioning). Default: absent. Flink option: `key.fields` with `key.format` (here an expression instead of columns).").
				Examples(`${! @kafka_key }`, `${! json("user_id") }`).
				Optional(),
			service.NewStringEnumField(FieldPartitioner, string(PartitionerDefault)).
				Description("How records are spread over a topic's partitions. `default`: murmur2 of the key exactly as the Java client "+
					"(`Utils.toPositive(Utils.murmur2(key)) % partitions`), sticky partitioning for null keys. Default `default`. "+
					"Flink option: `sink.partitioner`.").
				Default(string(PartitionerDefault)),
			service.NewMetadataFilterField(FieldMetadata).
				Description("Which message metadata become record headers (metadata key = header key, value as a string). "+
					"Default: none. Flink option: the writable metadata column `headers`."),
			service.NewInterpolatedStringField(FieldTimestampMs).
				Description("Record timestamp in milliseconds since the Unix epoch, interpolated per message; must be an integer >= 0. "+
					"Absent or evaluating to an empty string means the time the record is produced. Default: absent. "+
					"Flink option: the writable metadata column `timestamp`.").
				Examples(`${! @kafka_timestamp_ms }`, `${! timestamp_unix_milli() }`).
				Optional().
				Advanced(),
			service.NewStringField(FieldDeliveryGuarantee).
				Description("`at_least_once` (idempotent producer, `acks=all`) or `none` (`acks=1`, no idempotence; errors are still reported). "+
					"Flink spellings such as `at-least-once` and `AT_LEAST_ONCE` are accepted. `exactly_once` is not supported yet. "+
					"Default `at_least_once`. Flink option: `sink.delivery-guarantee`.").
				Examples("at_least_once", "none").
				Default(string(DeliveryAtLeastOnce)),
			service.NewOutputMaxInFlightField().
				Description("Number of batches written in parallel (count, at least 1). Default 64. "+
					"Flink has no direct equivalent: its parallelism is the number of sink subtasks.").
				Default(defaultMaxInFlight),
			service.NewBatchPolicyField(FieldBatching),
			service.NewStringEnumField(FieldCompression,
				string(CompressionNone), string(CompressionGzip), string(CompressionSnappy), string(CompressionLZ4), string(CompressionZstd)).
				Description("Compression codec of record batches. Default `none`. Flink option: `properties.compression.type`.").
				Default(string(CompressionNone)).
				Advanced(),
			service.NewIntField(FieldMaxMessageBytes).
				Description("Largest record batch the producer sends, in bytes (uncompressed); a single message larger than this fails "+
					"without being sent. Between 512 and 104857600. Default 1048576 (1 MiB). The topic's `max.message.bytes` on the broker "+
					"also applies. Flink option: `properties.max.request.size`.").
				Default(defaultMaxMessageBytes).
				Advanced(),
			service.NewBoolField(FieldAutoCreateTopics).
				Description("Ask the broker to create a topic that does not exist when a record is written to it, as the Java producer "+
					"does by default; the broker creates it only if its `auto.create.topics.enable` is true, with its default partitions. "+
					"With `false`, a record for a missing topic fails naming the topic. Default `true`. "+
					"Flink option: `properties.allow.auto.create.topics`.").
				Default(true).
				Advanced(),
			service.NewDurationField(FieldTimeout).
				Description("How long a write may wait for Kafka's acknowledgement before its records fail (Go duration, must be positive). "+
					"Default `10s`. Roughly enforced: a record fails at the client's next retry point after the deadline. "+
					"A record that timed out may still have been written, so its retry can duplicate it (at-least-once). "+
					"Flink option: `properties.delivery.timeout.ms`.").
				Default(defaultTimeout).
				Advanced(),
		).
		LintRule(lintRule).
		Example("Key-partitioned JSON events",
			"Writes each message to `orders`, keyed by its `customer_id` so that a customer's orders share a partition, "+
				"with the `trace_id` metadata as a header and the event time as the record timestamp.",
			`
output:
  kafka_sink:
    seed_brokers: [ localhost:9092 ]
    topic: orders
    key: ${! json("customer_id") }
    metadata:
      include_prefixes: [ trace_ ]
    timestamp_ms: ${! json("event_time").ts_parse("2006-01-02T15:04:05Z07:00").ts_unix_milli() }
    delivery_guarantee: at_least_once
    batching:
      count: 500
      period: 50ms
`)
}

// lintRule reports at lint time the problems that validate() also reports
// when the component is built (lint can be skipped).
// lintFields are type-checked by the lint rule and by speclint.CheckFiles.
var lintFields = append(kafkaconn.LintFields(),
	speclint.Field{Path: FieldTopic, Kind: speclint.String},
	speclint.Field{Path: FieldKey, Kind: speclint.String},
	speclint.Field{Path: FieldTimestampMs, Kind: speclint.String},
	speclint.Field{Path: FieldPartitioner, Kind: speclint.String},
	speclint.Field{Path: FieldMetadata, Kind: speclint.Object},
	speclint.Field{Path: FieldDeliveryGuarantee, Kind: speclint.String},
	speclint.Field{Path: FieldMaxInFlight, Kind: speclint.Int},
	speclint.Field{Path: FieldBatching, Kind: speclint.Object},
	speclint.Field{Path: FieldBatching + ".count", Kind: speclint.Int},
	speclint.Field{Path: FieldBatching + ".byte_size", Kind: speclint.Int},
	speclint.Field{Path: FieldBatching + ".period", Kind: speclint.String},
	speclint.Field{Path: FieldCompression, Kind: speclint.String},
	speclint.Field{Path: FieldMaxMessageBytes, Kind: speclint.Int},
	speclint.Field{Path: FieldTimeout, Kind: speclint.Duration},
	speclint.Field{Path: FieldAutoCreateTopics, Kind: speclint.Bool},
)

var lintRule = speclint.Rule(lintFields, fmt.Sprintf(`
let dg = this.delivery_guarantee.or(%[1]q).string().lowercase().replace_all("-", "_")
let mmb = this.max_message_bytes.or(%[4]d)
root = [%[8]s
  if $dg == %[3]q { "field delivery_guarantee: %[3]s is not yet supported; use %[1]s or %[2]s" } else { null },
  if ![%[1]q, %[2]q, %[3]q].contains($dg) { "field delivery_guarantee: unknown value %%q (want %[1]s or %[2]s)".format(this.delivery_guarantee) } else { null },
  if this.max_in_flight.or(%[7]d) < 1 { "field max_in_flight: must be at least 1, got %%v".format(this.max_in_flight) } else { null },
  if $mmb < %[5]d || $mmb > %[6]d { "field max_message_bytes: must be between %[5]d and %[6]d, got %%v".format($mmb) } else { null },
].filter(e -> e != null)
`, DeliveryAtLeastOnce, DeliveryNone, DeliveryExactlyOnce, defaultMaxMessageBytes, minMessageBytes, maxMessageBytes, defaultMaxInFlight, kafkaconn.LintChecks))

func init() {
	speclint.Register("kafka_sink", lintFields)
	err := service.RegisterBatchOutput("kafka_sink", Spec(),
		func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchOutput, service.BatchPolicy, int, error) {
			cfg, err := ConfigFromParsed(conf)
			if err != nil {
				return nil, service.BatchPolicy{}, 0, err
			}
			s, err := NewSink(cfg, mgr)
			if err != nil {
				return nil, service.BatchPolicy{}, 0, err
			}
			return s, cfg.Batching, cfg.MaxInFlight, nil
		})
	if err != nil {
		panic(err)
	}
}
