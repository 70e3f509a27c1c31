// Package kafkasource is the `kafka_source` input: Apache Flink's KafkaSource
// for Benthos pipelines. It reads every partition of its topics by manual
// assignment (no group membership), hands records out in batches, and commits
// to a consumer group only offsets below the lowest record that the output has
// not yet acknowledged.
package kafkasource

import (
	"fmt"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/speclint"
)

// Field names of the kafka_source config.
const (
	fieldTopics            = "topics"
	fieldConsumerGroup     = "consumer_group"
	fieldStartFrom         = "start_from"
	fieldCommittedFallback = "committed_fallback"
	fieldIsolationLevel    = "isolation_level"
	fieldCommitPeriod      = "commit_period"
	fieldCheckpointLimit   = "checkpoint_limit"
	fieldBatchSize         = "batch_size"
	fieldFetchMaxWait      = "fetch_max_wait"
)

// Defaults, shared by the spec, the lint rule and the tests.
const (
	defaultStartFrom         = StartCommitted
	defaultCommittedFallback = FallbackEarliest
	defaultIsolationLevel    = ReadCommitted
	defaultCommitPeriod      = "5s"
	defaultCheckpointLimit   = 1024
	defaultBatchSize         = 1024
	defaultFetchMaxWait      = "500ms"
)

// Metadata keys set on every message. The names match Benthos's own Kafka
// inputs (kafka_franz); kafka_timestamp_type and kafka_leader_epoch are
// Flink's readable metadata `timestamp-type` and `leader-epoch`.
const (
	metaKey           = "kafka_key"
	metaTopic         = "kafka_topic"
	metaPartition     = "kafka_partition"
	metaOffset        = "kafka_offset"
	metaTimestampMs   = "kafka_timestamp_ms"
	metaTimestampUnix = "kafka_timestamp_unix"
	metaTimestampType = "kafka_timestamp_type"
	metaTombstone     = "kafka_tombstone_message"
	metaLeaderEpoch   = "kafka_leader_epoch"
)

// lintRule repeats the cross-field checks of Config.validate for `connectd
// lint`. Absent fields take their defaults.
// lintFields are type-checked by the lint rule and by speclint.CheckFiles.
var lintFields = append(kafkaconn.LintFields(),
	speclint.Field{Path: fieldTopics, Kind: speclint.StringList},
	speclint.Field{Path: fieldConsumerGroup, Kind: speclint.String},
	speclint.Field{Path: fieldStartFrom, Kind: speclint.String},
	speclint.Field{Path: fieldCommittedFallback, Kind: speclint.String},
	speclint.Field{Path: fieldIsolationLevel, Kind: speclint.String},
	speclint.Field{Path: fieldCommitPeriod, Kind: speclint.Duration},
	speclint.Field{Path: fieldCheckpointLimit, Kind: speclint.Int},
	speclint.Field{Path: fieldBatchSize, Kind: speclint.Int},
	speclint.Field{Path: fieldFetchMaxWait, Kind: speclint.Duration},
)

var lintRule = speclint.Rule(lintFields, fmt.Sprintf(`
let topics = this.topics.or([]).map_each(t -> t.string().split(",")).flatten().map_each(t -> t.trim()).filter(t -> t != "").catch([])
let batch_size = this.batch_size.or(1024)
let limit = this.checkpoint_limit.or(1024)
let period = this.commit_period.or("5s").string().trim()
let max_wait = this.fetch_max_wait.or("500ms").string().trim()
root = [%[7]s
  if ![%[1]q, %[2]q, %[3]q].contains(this.start_from.or(%[3]q)) { "field start_from: unknown value %%q (want %[1]s, %[2]s or %[3]s)".format(this.start_from) } else { null },
  if ![%[1]q, %[2]q, %[4]q].contains(this.committed_fallback.or(%[1]q)) { "field committed_fallback: unknown value %%q (want %[1]s, %[2]s or %[4]s)".format(this.committed_fallback) } else { null },
  if ![%[5]q, %[6]q].contains(this.isolation_level.or(%[5]q)) { "field isolation_level: unknown value %%q (want %[5]s or %[6]s)".format(this.isolation_level) } else { null },
  if $topics.length() == 0 { "field topics: at least one topic is required" } else { null },
  if this.consumer_group.or("").string().trim() == "" { "field consumer_group: a group id is required (offsets are committed to it)" } else { null },
  if $period.re_match("^-") || !$period.re_match("[1-9]") { "field commit_period: must be a positive Go duration such as 5s, got %%v".format(this.commit_period.or("")) } else { null },
  if $max_wait.re_match("^-") || !$max_wait.re_match("[1-9]") { "field fetch_max_wait: must be a positive Go duration such as 500ms, got %%v".format(this.fetch_max_wait.or("")) } else { null },
  if $batch_size < 1 { "field batch_size: must be at least 1, got %%v".format($batch_size) } else { null },
  if $limit < 1 { "field checkpoint_limit: must be at least 1, got %%v".format($limit) } else if $batch_size > $limit {
    "field checkpoint_limit: %%v is below batch_size %%v; one batch could exceed the limit, raise checkpoint_limit to at least %%v".format($limit, $batch_size, $batch_size)
  } else { null },
].filter(e -> e != null)
`, StartEarliest, StartLatest, StartCommitted, FallbackError, ReadCommitted, ReadUncommitted, kafkaconn.LintChecks))

// Spec returns the config spec of the kafka_source input.
func Spec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Services").
		Summary("Reads Kafka topics like Apache Flink's KafkaSource: every partition by manual assignment, "+
			"offsets committed to a consumer group only below the lowest record not yet acknowledged.").
		Description(`
The input reads every partition of `+"`topics`"+` without joining a consumer group (no rebalances), starting
where `+"`start_from`"+` says. Offsets are committed to `+"`consumer_group`"+` every `+"`commit_period`"+` and when the
input closes, with the group offset-commit API as an empty ("simple") group, so the group shows up in the
usual tools (`+"`kafka-consumer-groups.sh --describe`"+`) with its lag. Do not share the group with members of
a live consumer group: the broker rejects commits from outside its generation.

### Delivery guarantee

At-least-once. A committed offset is the next offset to read, and it never passes a record that the output
has not acknowledged, whatever the order of acknowledgements and however many batches are in flight. A
batch that is rejected (nacked) is delivered again before new data. After a crash, records that were read
but not committed are read again.

Fetching a partition pauses while `+"`checkpoint_limit`"+` of its records are unacknowledged, which bounds memory.

With `+"`isolation_level: read_committed`"+`, transaction control markers leave gaps in offsets; the commit
position follows the records returned, so a trailing marker is passed once the next record arrives.

### Metadata

This input adds the following metadata fields to each message:

`+"```text"+`
- kafka_key                (string)
- kafka_topic              (string)
- kafka_partition          (int)
- kafka_offset             (int64)
- kafka_timestamp_ms       (int64, milliseconds since the Unix epoch)
- kafka_timestamp_unix     (int64, seconds since the Unix epoch)
- kafka_timestamp_type     (string: CreateTime or LogAppendTime)
- kafka_tombstone_message  (bool, true when the record value is null)
- kafka_leader_epoch       (int, -1 if unknown)
- every record header      (string)
`+"```"+`

The message content is the record value. A header never overwrites a `+"`kafka_`"+` field above.
Read metadata with the `+"`meta`"+` function or the `+"`@`"+` operator in Bloblang.

### Metrics

- `+"`kafka_source_records_received`"+` (counter, label `+"`topic`"+`): records fetched.
- `+"`kafka_source_records_redelivered`"+` (counter, label `+"`topic`"+`): records delivered again after a nack.
- `+"`kafka_source_commits`"+` / `+"`kafka_source_commit_failures`"+` (counters, label `+"`topic`"+`): partition offsets committed or refused.
- `+"`kafka_source_unacked_records`"+` (gauge, labels `+"`topic`"+`, `+"`partition`"+`): records fetched and not yet acknowledged, after each commit.
`).
		Fields(kafkaconn.Fields()...).
		Fields(
			service.NewStringListField(fieldTopics).
				Description("Topics to read; every partition of each is read. An entry may hold several topics separated by commas. "+
					"No default: at least one topic is required, and each must exist when the input connects. Flink option: `topic`.").
				Example([]string{"orders"}).
				Example([]string{"orders,payments", "refunds"}),
			service.NewStringField(fieldConsumerGroup).
				Description("Consumer group that receives the committed offsets and, with `start_from: committed`, provides the start offsets. "+
					"No default: required. Flink option: `properties.group.id`."),
			service.NewStringEnumField(fieldStartFrom, string(StartEarliest), string(StartLatest), string(StartCommitted)).
				Description("Where to start reading when the input connects: `earliest` (log start), `latest` (end of each partition, "+
					"resolved once at connect), or `committed` (the group's committed offset, else `committed_fallback`). "+
					"After a lost connection the input resumes from its own position instead. Default `committed`. "+
					"Flink option: `scan.startup.mode` = `earliest-offset` / `latest-offset` / `group-offsets`.").
				Default(string(defaultStartFrom)),
			service.NewStringEnumField(fieldCommittedFallback, string(FallbackEarliest), string(FallbackLatest), string(FallbackError)).
				Description("What to do for a partition without a committed offset, or whose committed offset is out of range: "+
					"start at `earliest` or `latest`, or refuse to connect with an `error` naming the group, topic and partition. "+
					"Also applies when a fetch position falls out of range while running. Default `earliest`. "+
					"Flink option: `properties.auto.offset.reset` = `earliest` / `latest` / `none`.").
				Default(string(defaultCommittedFallback)),
			service.NewStringEnumField(fieldIsolationLevel, string(ReadCommitted), string(ReadUncommitted)).
				Description("`read_committed` returns only records of committed transactions (and `latest` means the last stable offset); "+
					"`read_uncommitted` returns every record. Default `read_committed`. Flink option: `properties.isolation.level`.").
				Default(string(defaultIsolationLevel)).
				Advanced(),
			service.NewDurationField(fieldCommitPeriod).
				Description("Time between offset commits (Go duration). Offsets are also committed when the input closes, and "+
					"offsets that did not move are committed again every minute so that they do not expire (`offsets.retention.minutes`). "+
					"Default `5s`. Flink option: the checkpoint interval (`execution.checkpointing.interval`), or "+
					"`properties.auto.commit.interval.ms` without checkpoints.").
				Default(defaultCommitPeriod),
			service.NewIntField(fieldCheckpointLimit).
				Description("Number of records per partition that may be fetched and not yet acknowledged; at this limit fetching "+
					"that partition pauses until acknowledgements bring it below. Bounds memory: roughly "+
					"partitions x limit x record size. Must be at least `batch_size`. Default `1024` (records). "+
					"Flink has no direct equivalent (its bound is `source.reader.element.queue.capacity` and checkpoint alignment).").
				Default(defaultCheckpointLimit).
				Advanced(),
			service.NewIntField(fieldBatchSize).
				Description("Maximum number of records in one message batch; a batch holds what was fetched, up to this many. "+
					"Default `1024` (records). Flink option: `properties.max.poll.records`.").
				Default(defaultBatchSize).
				Advanced(),
			service.NewDurationField(fieldFetchMaxWait).
				Description("Longest time the broker holds a fetch request open while waiting for data (Go duration). "+
					"It also bounds how long a partition resumed after `checkpoint_limit` may wait for its next fetch. "+
					"Default `500ms`. Flink option: `properties.fetch.max.wait.ms`.").
				Default(defaultFetchMaxWait).
				Advanced(),
		).
		LintRule(lintRule).
		Example("Resume a consumer group",
			"Read two topics from the group's committed offsets (from the start for new partitions), and commit every second.",
			`
input:
  kafka_source:
    seed_brokers: [ localhost:9092 ]
    topics: [ orders, payments ]
    consumer_group: orders-to-warehouse
    start_from: committed
    committed_fallback: earliest
    commit_period: 1s
`)
}

func init() {
	speclint.Register("kafka_source", lintFields)
	service.MustRegisterBatchInput("kafka_source", Spec(),
		func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchInput, error) {
			c, err := configFromParsed(conf)
			if err != nil {
				return nil, err
			}
			return newSource(c, mgr), nil
		})
}
