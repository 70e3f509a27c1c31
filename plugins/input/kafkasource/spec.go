// Package kafkasource is the `kafka_source` input: Apache Flink's KafkaSource
// for Benthos pipelines. Its enumerator lists the partitions of its
// subscription (topics, a pattern or explicit partitions, with periodic
// discovery), keeps this process's shard, resolves start and stop offsets and
// places each partition on one of its readers with Flink's owner function;
// readers fetch by manual assignment (no group membership). Records go out in
// batches, and only offsets below the lowest record that the output has not
// yet acknowledged are committed to a consumer group. A bounded read ends
// with service.ErrEndOfInput. In group mode the readers are consumer group
// members instead, and the coordinator assigns their partitions.
package kafkasource

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/speclint"
)

// Field names of the kafka_source config.
const (
	fieldTopics            = "topics"
	fieldTopicPattern      = "topic_pattern"
	fieldTopicExclude      = "topic_exclude"
	fieldPartitions        = "partitions"
	fieldDiscoveryInterval = "discovery_interval"
	fieldConsumerGroup     = "consumer_group"
	fieldResetOffsets      = "reset_offsets"
	fieldStartFrom         = "start_from"
	fieldCommittedFallback = "committed_fallback"
	fieldIsolationLevel    = "isolation_level"
	fieldCommitPeriod      = "commit_period"
	fieldCheckpointLimit   = "checkpoint_limit"
	fieldMaxUnackedBytes   = "max_unacknowledged_bytes"
	fieldBatchSize         = "batch_size"
	fieldFetchMaxWait      = "fetch_max_wait"
	fieldMetadataKeys      = "metadata_keys"
	fieldStartTimestamp    = "start_timestamp"
	fieldStartOffsets      = "start_offsets"
	fieldStopAt            = "stop_at"
	fieldStopTimestamp     = "stop_timestamp"
	fieldStopOffsets       = "stop_offsets"
	fieldStopGroup         = "stop_group"
	fieldReaders           = "readers"
	fieldShard             = "shard"
	fieldShardIndex        = "index"
	fieldShardCount        = "count"
	fieldAssignment        = "assignment"
	fieldSessionTimeout    = "group_session_timeout"
	fieldGroupProtocol     = "group_protocol"
	fieldPartitionMetrics  = "partition_metrics"

	fieldFetchMinBytes          = "fetch_min_bytes"
	fieldFetchMaxBytes          = "fetch_max_bytes"
	fieldFetchMaxPartitionBytes = "fetch_max_partition_bytes"
	fieldRackID                 = "rack_id"
	fieldHeartbeatInterval      = "group_heartbeat_interval"
	fieldGroupInstanceID        = "group_instance_id"
)

// Defaults, declared once: the spec uses them, and the tests.
const (
	defaultStartFrom         = StartCommitted
	defaultCommittedFallback = FallbackEarliest
	defaultIsolationLevel    = ReadCommitted
	defaultCommitPeriod      = "5s"
	defaultCheckpointLimit   = 8192
	defaultMaxUnackedBytes   = 16 << 20
	defaultBatchSize         = 1024
	defaultFetchMaxWait      = "500ms"
	defaultStopAt            = StopNone
	defaultReaders           = 1
	defaultDiscoveryInterval = "5m"
	defaultAssignment        = AssignmentEnumerator
	defaultSessionTimeout    = "45s"
	defaultPartitionMetrics  = PartitionMetricsPartition

	defaultFetchMinBytes          = 1
	defaultFetchMaxBytes          = 50 << 20
	defaultFetchMaxPartitionBytes = 1 << 20
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
	metaLag           = "kafka_lag"
)

// Spec returns the config spec of the kafka_source input.
func Spec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Services").
		Summary("Reads Kafka topics like Apache Flink's KafkaSource: every partition by manual assignment, "+
			"offsets committed to a consumer group only below the lowest record not yet acknowledged.").
		Description(`
By default (`+"`assignment: enumerator`"+`) the input reads every partition of its subscription (`+"`topics`"+`,
`+"`topic_pattern`"+` or `+"`partitions`"+`), or its `+"`shard`"+` of them, without joining a consumer group (no rebalances),
starting at the committed offsets of `+"`consumer_group`"+`, else where `+"`start_from`"+` says. Offsets are committed to
`+"`consumer_group`"+` every `+"`commit_period`"+` and when the input closes, with the group offset-commit API as an empty
("simple") group, so the group shows up in the usual tools (`+"`kafka-consumer-groups.sh --describe`"+`) with its lag.
Do not share the group with members of a live consumer group: the broker rejects commits from outside its
generation. With `+"`assignment: group`"+` the readers are members of `+"`consumer_group`"+` instead, and Kafka's
coordinator decides who reads what.

### Restarts: committed offsets are the state

The group's committed offsets are this input's state, as a checkpoint is a Flink job's. At every start, a
partition with a committed offset resumes there, whatever `+"`start_from`"+` says; `+"`start_from`"+` places only the
partitions without one. Flink applies `+"`scan.startup.mode`"+` the same way: only to a job started without state,
while a job that fails over or is restored resumes from its checkpoint. So stopping and starting a pipeline (or
a crash) neither reads again what the group committed nor skips what it did not. Reading again is an explicit
act: a new `+"`consumer_group`"+` (Flink: a new job without a savepoint), or `+"`reset_offsets`"+` for one start.
Without `+"`consumer_group`"+` nothing is committed and every start begins at `+"`start_from`"+` again, which suits
one-off and bounded reads.

### Delivery guarantee

At-least-once. A committed offset is the next offset to read, and it never passes a record that the output
has not acknowledged, whatever the order of acknowledgements and however many batches are in flight. A
batch that is rejected (nacked) is delivered again before new data. After a crash, records that were read
but not committed are read again.

Exactly-once with `+"`kafka_sink`"+` (`+"`delivery_guarantee: exactly_once`"+`) on the same cluster: each message
carries its origin (this input, topic, partition, offset) in its context, not in metadata, and the sink
commits this input's offsets inside its transactions, no config needed. The input then does not commit
those partitions itself while any of their records is in flight (`+"`commit_period`"+` only covers what never
reached the sink, such as filtered records), and `+"`kafka_source_committed_offset`"+` follows the sink's
commits. Committed offsets are always read with require-stable semantics: while a transaction that
commits this group's offsets is open (a killed sink), reading waits, up to 2 minutes, until the broker
ends it. In group mode, a revoked partition is released only after its records in flight were
acknowledged or rejected (at most 45s), so that a transaction in flight ends first; a client holds the
group's rebalances from a poll until this input tracks what it returned. When the 45s pass, the partition is
released with records still in flight; if the group gives it back to this process while they are, the input
starts a new session (reconnects) so that their late acknowledgements cannot count for the partition's new
records. After a sink's transaction aborted, the input reads again from the committed offsets in a new session
and its revocations do not wait.

Through an `+"`event_window`"+` buffer, the sink's transactions commit every partition of this input with window
state in the offset-commit metadata (the last window in the output and the read position); at the next start
this input reads it back, so that the buffer drops replayed records of windows already in the output
(docs/exactly-once.md). Such partitions are then committed only by the sink's transactions while their records
are in flight: to reuse the consumer group for another pipeline, reset its offsets first.

Fetching a partition pauses while `+"`checkpoint_limit`"+` of its records are unacknowledged, and every partition
pauses while the records not yet acknowledged weigh `+"`max_unacknowledged_bytes`"+` (16 MiB), which bounds memory.

Transaction control markers (and, under `+"`read_committed`"+`, records of aborted transactions) are never
delivered, but the position of their partition moves past them: the committed offset of a partition whose
last entries are markers is its end offset.

### Bounded reads and backfills

With `+"`stop_at`"+` other than `+"`none`"+`, every partition has a stop offset, resolved once when the input first
connects. A partition is finished when its position reaches the stop offset, which markers and aborted
records count towards, so a read that ends on a transaction marker still ends. When every partition is
finished and every record is acknowledged and committed, the input ends and `+"`connectd run`"+` exits 0.
A partition whose remaining records are deleted by retention before they are read finishes too; the skipped
range is logged as an error and counted in `+"`kafka_source_offset_resets`"+`.

A bounded read reports its progress: at the start and every 10 seconds a line with the splits done, the
records left (offsets between the fetch positions and the stop offsets: an upper bound, exact without
transactions or compaction) and the estimated time left at the recent fetch rate, with a line per unfinished
split (at debug level beyond 16 of them); and a line when each split reaches its stop offset. The gauges
`+"`kafka_source_records_left`"+` and `+"`kafka_source_seconds_left`"+` show the same.

### Readers, sharding and group mode: which to pick

- One process: the default. Raise `+"`readers`"+` to fetch with several clients in parallel; partitions are placed
  on readers with Flink's owner function, each partition on exactly one reader, in order.
- A fixed number of processes (a StatefulSet, a batch of backfill jobs): `+"`shard: {index, count}`"+`. No group
  protocol, no rebalance pauses, bounded reads work; changing `+"`count`"+` means restarting every process.
- Processes that come and go (autoscaling, rolling deploys): `+"`assignment: group`"+`. Kafka's coordinator moves
  partitions between processes (cooperative-sticky); a crashed process's partitions move after
  `+"`group_session_timeout`"+`, and records it had not committed are read again. No bounded reads.

### Tables (Flink's CREATE TABLE)

With `+"`table`"+` (a name in `+"`catalog`"+` or `+"`ddl`"+`, or an inline table), the table's WITH options set
`+"`topics`"+` (`+"`topic`"+`, semicolon-separated), `+"`topic_pattern`"+` (`+"`topic-pattern`"+`), `+"`seed_brokers`"+`
(`+"`properties.bootstrap.servers`"+`), `+"`consumer_group`"+` (`+"`properties.group.id`"+`, optional as in Flink), `+"`start_from`"+`
(`+"`scan.startup.mode`"+`: earliest-offset, latest-offset, group-offsets = committed, timestamp, specific-offsets; like
`+"`start_from`"+` it places only partitions without a committed offset in the group, see Restarts above),
`+"`start_timestamp`"+` / `+"`start_offsets`"+` (`+"`scan.startup.timestamp-millis`"+` / `+"`scan.startup.specific-offsets`"+`),
`+"`stop_at`"+`, `+"`stop_timestamp`"+`, `+"`stop_offsets`"+` (`+"`scan.bounded.*`"+`; `+"`group-offsets`"+` = `+"`stop_at: committed`"+` with `+"`properties.group.id`"+` as `+"`stop_group`"+`, not as `+"`consumer_group`"+`)
and `+"`discovery_interval`"+` (`+"`scan.topic-partition-discovery.interval`"+`). The message content becomes the
typed row: key columns decoded from the key (`+"`key.format`"+`, `+"`key.fields`"+`, `+"`key.fields-prefix`"+`),
value columns from the value (`+"`format`"+` / `+"`value.format`"+`, `+"`value.fields-include`"+`; the value wins for a
column in both, as in Flink), metadata columns from the record (`+"`timestamp`"+`, `+"`partition`"+`, `+"`offset`"+`,
`+"`topic`"+`, `+"`headers`"+`, `+"`leader-epoch`"+`, `+"`timestamp-type`"+`) and computed columns evaluated last. The
metadata columns read the fetched record itself, as Flink's do, not the message metadata: `+"`headers`"+` holds every
record header (one named `+"`kafka_...`"+` too), and `+"`timestamp`"+` of a record without a timestamp type (a v0 message,
written before Kafka 0.10) is Kafka's NO_TIMESTAMP, -1 ms, as in Flink. The metadata below is still set as
`+"`metadata_keys`"+` selects it; a table declares no extra keys. A tombstone of a `+"`kafka`"+` table is dropped (as in Flink) and counted in
`+"`kafka_source_skipped`"+`, except with the value format `+"`raw`"+`, where it is a row whose value column is null (as in
Flink, whose raw format writes a null column as a tombstone); with `+"`upsert-kafka`"+` it is a delete: the row holds the key columns, the rest is null,
and `+"`kafka_tombstone_message`"+` is true (set on every message of an `+"`upsert-kafka`"+` table, whatever
`+"`metadata_keys`"+` says: it is the row's kind, which `+"`kafka_sink`"+` writes back as a tombstone); an `+"`upsert-kafka`"+` table reads from the earliest offset, as in Flink. An empty key reads as a null key. A record that does not decode
follows `+"`on_error`"+`. With a changelog value format (`+"`debezium-json`"+`, `+"`debezium-avro-confluent`"+`, `+"`canal-json`"+`,
`+"`maxwell-json`"+`, `+"`ogg-json`"+`) a record gives zero or more rows, one message each, with the row's kind in
metadata `+"`row_kind`"+` (`+"`+I`"+`, `+"`-U`"+`, `+"`+U`"+`, `+"`-D`"+`, as Flink prints a RowKind; a Debezium update is a `+"`-U`"+` and
a `+"`+U`"+` message), whatever `+"`metadata_keys`"+` says; the record's offset is committed once all its rows are
acknowledged, and `+"`value.*`"+` metadata columns read the envelope (`+"`value.source.timestamp`"+`, ...). See docs/changelog.md.

The table is the single source of truth: a field that it also sets must agree with it, or the config is
refused with an error naming the field and the option. Benthos fills in defaults before connectd sees a config (at lint and
at run time), so a field written with its default value (say `+"`start_from: committed`"+` against
`+"`'latest-offset'`"+`) cannot be told from an absent one: the table wins over it. Options of the writing side (`+"`sink.*`"+`) are allowed
and unused; options connectd does not support are errors naming them.

### Metadata

This input adds the following metadata fields to each message (`+"`metadata_keys`"+` selects them; the two
marked opt-in are set only when listed there):

`+"```text"+`
- kafka_key                (string)
- kafka_topic              (string)
- kafka_partition          (int)
- kafka_offset             (int64)
- kafka_timestamp_ms       (int64, milliseconds since the Unix epoch)
- kafka_timestamp_unix     (int64, seconds since the Unix epoch)
- kafka_timestamp_type     (string: CreateTime or LogAppendTime; opt-in)
- kafka_tombstone_message  (bool, true when the record value is null)
- kafka_leader_epoch       (int, -1 if unknown; opt-in)
- kafka_lag                (int64, records after this one in its partition when it was fetched: high watermark minus next offset)
- row_kind                 (string: +I, -U, +U or -D; on every row of a table with a changelog value format)
- every record header      (string)
`+"```"+`

The message content is the record value. A header never overwrites a `+"`kafka_`"+` field above.
Read metadata with the `+"`meta`"+` function or the `+"`@`"+` operator in Bloblang.

### Event time and watermarks

With `+"`watermark`"+` (or a table with `+"`WATERMARK FOR`"+`), each message also carries:

`+"```text"+`
- kafka_event_time_ms      (int64, the record's event time: its timestamp, or watermark.column of the row)
- kafka_watermark_ms       (int64, the source's combined watermark when the record was emitted; -9223372036854775808 before there is one)
- kafka_late               (bool, set only on late records: event time at or below the watermark)
`+"```"+`

Each partition's watermark is its largest event time minus `+"`max_out_of_orderness`"+` minus 1ms; the source's watermark is the
minimum over its partitions that are not idle, and never goes backwards. A reader that owns no partitions does not hold it back.
A partition that reached its stop offset, was revoked or released stops holding it back. Event times are observed when a batch is
delivered (so that with several readers no watermark runs ahead of records not yet delivered); a record delivered again
after a nack keeps the event time, watermark and lateness of its first delivery. With a table and `+"`column`"+` or
`+"`expression`"+`, the reader decodes each row as it fetches the record and reads its event time from the row, and the row is
observed at delivery like any record; a row whose column is null, whose expression fails, or that did not decode carries no
event time.

**End of a bounded read:** the last message of the last batch of a bounded read (`+"`stop_at`"+`), delivered when every
partition reached its stop offset, carries `+"`kafka_watermark_ms`"+` = 9223372036854775807 (math.MaxInt64, Flink's
`+"`Long.MAX_VALUE`"+`), which fires every open window of an `+"`event_window`"+` buffer (only the last: a watermark applies after
the record that carries it). With a table, a record of that batch that gives no row (skipped) does not take it along: it is on
the last row delivered. A processor that drops that message drops the end-of-input watermark with it. If the last partition ends on a transaction marker fetched after
its last record was delivered, no message carries it: set the buffer's `+"`flush_after_idle`"+`.

Cost: the two keys take a message past eight metadata keys with the default `+"`metadata_keys`"+`, which moves Benthos's
metadata map out of its small form: 31% fewer records/s in docs/benchmarks.md. With six `+"`metadata_keys`"+` (eight
keys in all) watermarks cost nothing measurable against the default without them; list fewer `+"`metadata_keys`"+`
where throughput matters (`+"`BenchmarkWatermarkStamp`"+`, and the watermark rows of `+"`make bench`"+`).

Alignment (`+"`watermark.alignment`"+`) pauses fetching a partition more than `+"`max_drift`"+` ahead of its group's minimum; a
partition paused for `+"`checkpoint_limit`"+` and for alignment is resumed only when neither holds it.

**A watermark that stands still:** a partition without records (none ever written, or its producers stopped) keeps its
watermark, or has none, and with `+"`idle_timeout`"+` unset it holds the source's watermark there for good: windows downstream never
fire. Flink behaves the same. When the watermark has not advanced for `+"`watermark.stall_warning`"+` (default 1m) while partitions
without a record for as long hold it below others, the input warns once (again only after the watermark advanced), naming
those partitions and `+"`idle_timeout`"+`, and `+"`kafka_source_watermark_held_partitions`"+` counts them.

### Many partitions

One process reads 10,000 partitions (100 topics by `+"`topic_pattern`"+`) in either `+"`assignment`"+` (docs/benchmarks.md,
"10,000 partitions on one process", medians of 3 rounds on a 2-core box): start-up takes 0.14-0.37s, a quiet partition
costs about 5 KiB of memory, and a catch-up read of 100 records per partition runs at about a tenth of the rate of the
same records over 8 partitions (10 s against 0.9 s for 1,000,000 records, with per-topic metrics): each fetch is a pass
of the broker over every partition, and `+"`max_unacknowledged_bytes`"+` sets how many records a pass brings (256 MiB read
the same set in 3.5 s at 354 MiB of memory). The broker must serve recent data from memory: a fetch of 10,000
partitions that pages its logs in can outlast the client's request timeout. Offset commits go in requests of at most 512 KiB
of offset records (3 for 10,000 partitions; one request would be over the broker's `+"`message.max.bytes`"+`); each round of
partition discovery (`+"`discovery_interval`"+`, Flink's `+"`scan.topic-partition-discovery.interval`"+`) lists every topic's
metadata, 260 KiB at 10,000 partitions. What bounds more is the broker, which keeps one open file per partition (give it
an open-file limit well above its partitions), and the per-partition metrics: with `+"`partition_metrics: partition`"+` (the
default) a scrape of 10,000 partitions is 2.2 MiB idle and 7.4 MiB during a catch-up read, and the metrics cost most of the
read's CPU (6x that with per-topic metrics), so use `+"`partition_metrics: topic`"+` there.

### Metrics

Each metric's Prometheus HELP line says what it counts and its unit. Labels: `+"`topic`"+`, `+"`partition`"+`, `+"`reader`"+`, `+"`cause`"+` as
listed. With `+"`partition_metrics: topic`"+` the metrics that field lists carry only `+"`topic`"+` (and `+"`reader`"+`):
gauges are summed over the topic's partitions (the partition watermark is their minimum), counters count per topic.

- `+"`kafka_source_records_received`"+` / `+"`kafka_source_bytes_received`"+` (counters, `+"`topic`"+`): records fetched and handed to
  the pipeline, and their key, value and header bytes.
- `+"`kafka_source_records_redelivered`"+` (counter, `+"`topic`"+`): records delivered again after a nack.
- `+"`kafka_source_partition_records`"+` / `+"`kafka_source_partition_bytes`"+` (counters, `+"`topic`"+`, `+"`partition`"+`, `+"`reader`"+`): the
  same per partition and reader (the `+"`reader`"+` of `+"`kafka_source_reader_partitions`"+`), for the distribution of the work:
  `+"`sum by (reader) (rate(kafka_source_partition_records[5m]))`"+` is each reader's rate, and its spread the imbalance.
  A record read again after an exactly-once sink rewound the input counts again.
- `+"`kafka_source_reader_partitions`"+` (gauge, `+"`reader`"+`): partitions assigned to each reader.
- `+"`kafka_source_lag`"+` (gauge, `+"`topic`"+`, `+"`partition`"+`): log end offset (high watermark) minus the next offset to fetch, after each fetch.
- `+"`kafka_source_offset`"+` (gauge, `+"`topic`"+`, `+"`partition`"+`): the next offset to fetch.
- `+"`kafka_source_committed_offset`"+` (gauge, `+"`topic`"+`, `+"`partition`"+`): the last offset committed to the group.
- `+"`kafka_source_commits`"+` (counter, `+"`topic`"+`): partition offsets committed, by the input or in a `+"`kafka_sink`"+` transaction.
- `+"`kafka_source_commit_failures`"+` (counter, `+"`topic`"+`, `+"`cause`"+`): offset commits of the input refused, once per partition
  refused (once per topic when the whole request failed), by `+"`cause`"+`: `+"`rebalance`"+` (the group's membership moved on: a
  rebalance under way, a new generation or member epoch; with `+"`assignment: enumerator`"+`, other live members in the
  group), `+"`fenced`"+` (another member with the same `+"`group_instance_id`"+` took over), `+"`permanent`"+` (an error no retry clears,
  such as a missing ACL on the group: the run ends), `+"`shutdown`"+` (the input closed or reconnected while the commit was in
  flight), `+"`broker`"+` (any other refusal or failed request: the coordinator moving, a timeout, a lost connection; the next
  commit tries again).
- `+"`kafka_source_commit_latency_ns`"+` (timer): how long each offset commit of the input's own took (periodic, final, end of a
  bounded read, a group member's release), from taking the positions to the broker's last answer; the partitions that moved
  go in requests of at most 512 KiB of offset records.
- `+"`kafka_source_unacked_records`"+` (gauge, `+"`topic`"+`, `+"`partition`"+`): records fetched and not yet acknowledged, every `+"`commit_period`"+` (also for partitions an exactly-once sink commits).
- `+"`kafka_source_unacked_bytes`"+` (gauge): what the records fetched and not yet acknowledged weigh against `+"`max_unacknowledged_bytes`"+` (payload plus 768 bytes each), over all partitions; fetching pauses while it is at the bound.
- `+"`kafka_source_fetch_errors`"+` (counter, `+"`topic`"+`, `+"`partition`"+`): failed fetches.
- `+"`kafka_source_offset_resets`"+` (counter, `+"`topic`"+`, `+"`partition`"+`): fetch positions that fell out of range (for example deleted by
  retention) or were truncated, and were reset per `+"`committed_fallback`"+`; each is also logged as an error naming the skipped range.
- `+"`kafka_source_records_left`"+` (gauge, `+"`topic`"+`, `+"`partition`"+`): with `+"`stop_at`"+`, the offsets from the fetch position to
  the stop offset, 0 once the split reached it; updated every two `+"`fetch_max_wait`"+`.
- `+"`kafka_source_seconds_left`"+` (gauge): with `+"`stop_at`"+`, the estimated seconds until every split reaches its stop offset, at
  the smoothed fetch rate; -1 while no rate is known yet.
- `+"`kafka_source_failed`"+` / `+"`kafka_source_skipped`"+` / `+"`kafka_source_dead_letter`"+` (counters): with a `+"`table`"+`, records that
  did not decode, by `+"`on_error`"+` policy (`+"`skipped`"+` also counts the tombstones a `+"`kafka`"+` table drops).

With a watermark:

- `+"`kafka_source_watermark_ms`"+` (gauge): the combined watermark, Unix ms, set when the input connects and every `+"`emit_interval`"+`;
  -9223372036854775808 (math.MinInt64, Flink's `+"`Long.MIN_VALUE`"+`, as the metadata) while there is none, for example while a
  partition has had no record yet.
- `+"`kafka_source_watermark_lag_ms`"+` (gauge): now minus the combined watermark; while there is none, now (the lag from the Unix epoch),
  so that a lag alert fires.
- `+"`kafka_source_partition_watermark_ms`"+` (gauge, `+"`topic`"+`, `+"`partition`"+`): each partition's own watermark, math.MinInt64 before its
  first record; the lowest non-idle one is the combined watermark. A partition no longer read keeps its last value.
- `+"`kafka_source_watermark_held_partitions`"+` (gauge): partitions that hold the watermark back after `+"`stall_warning`"+` of silence (see
  below); 0 while the watermark moves.
- `+"`kafka_source_event_time_lag_ms`"+` (gauge): now minus the event time of the last record emitted.
- `+"`kafka_source_idle_partitions`"+` (gauge): partitions idle per `+"`idle_timeout`"+`.
- `+"`kafka_source_alignment_paused_partitions`"+` (gauge): partitions paused by watermark alignment.
- `+"`kafka_source_late_records`"+` (counter, `+"`topic`"+`): records emitted with `+"`kafka_late`"+`.
`).
		Fields(kafkaconn.Fields()...).
		Fields(
			service.NewStringListField(fieldTopics).
				Description("Topics to read; every partition of each is read. An entry may hold several topics separated by commas. "+
					"Each must exist when the input connects: one that is still missing a second later ends the run (exit code 1, naming "+
					"the topic and this field), as a Flink job fails; a topic deleted later is released. "+
					"Set exactly one of `topics`, `topic_pattern` and `partitions`. Default none. Flink option: `topic`.").
				Example([]string{"orders"}).
				Example([]string{"orders,payments", "refunds"}).
				Optional(),
			service.NewStringField(fieldTopicPattern).
				Description("Read every topic whose whole name matches this regular expression (Go RE2 syntax), including topics "+
					"created later that partition discovery finds. Internal topics are never matched. "+
					"For example `orders\\..*`. Default none. Flink option: `topic-pattern`.").
				Optional(),
			service.NewStringField(fieldTopicExclude).
				Description("With `topic_pattern`: leave out topics whose whole name matches this regular expression, for example "+
					"`.*\\.dlq`. Default none. No Flink equivalent.").
				Optional().
				Advanced(),
			service.NewAnyField(fieldPartitions).
				Description("Read exactly these partitions, as a map of topic to partition numbers; each must exist when the input "+
					"connects (one still missing a second later ends the run, exit code 1), for example `{ orders: [ 0, 1, 2 ] }`. Partition discovery does not apply. Default none. "+
					"Flink equivalent: `KafkaSource.builder().setPartitions`.").
				Optional().
				Advanced(),
			service.NewDurationField(fieldDiscoveryInterval).
				Description("Time between metadata scans for new partitions of the topics read and new topics matching "+
					"`topic_pattern` (Go duration); `0` turns discovery off. New partitions and topics are read from the earliest "+
					"offset (never latest, which would lose what was written before they were seen); topics that were deleted or no "+
					"longer match are released with a log line. Not used with `partitions` or with `stop_at` other than `none` (a "+
					"bounded read keeps the partitions it started with, as in Flink). Default `5m`. "+
					"Flink option: `scan.topic-partition-discovery.interval`.").
				Default(defaultDiscoveryInterval).
				Advanced(),
			service.NewStringField(fieldConsumerGroup).
				Description("Consumer group whose committed offsets are this input's state, as a checkpoint is a Flink job's: offsets "+
					"are committed to it (below the lowest unacknowledged record, or in the transactions of an `exactly_once` "+
					"kafka_sink), and at every start a partition with a committed offset resumes there, whatever `start_from` says. "+
					"Optional: without a group nothing is committed, and every start, a restart included, begins again at "+
					"`start_from` (logged at start-up), which suits one-off and bounded reads. A group is required with "+
					"`start_from: committed` (the default), `assignment: group`, `reset_offsets`, and when this input feeds an "+
					"`exactly_once` kafka_sink. With a `table`, the table's `properties.group.id` sets it, optional there too (as "+
					"in Flink). Default: none. Flink option: `properties.group.id`.").
				Example("orders-to-warehouse").
				Optional(),
			service.NewBoolField(fieldResetOffsets).
				Description("Read again from `start_from`: when the process starts, every partition starts where `start_from` says, "+
					"ignoring the group's committed offsets, and each committed offset that this moves is committed at its new "+
					"place at once and logged at warn level (`topic ... partition ... moved from committed X to Y`). A one-off act: "+
					"it applies at every start of the process, so remove it once the run has started, or the next start reads "+
					"again. A reconnect inside the process resumes from its own position and resets nothing. Needs "+
					"`consumer_group` and a `start_from` other than `committed`; not used with `assignment: group` (reset such a "+
					"group with `kafka-consumer-groups.sh --reset-offsets` while no member runs). The alternative is a new "+
					"`consumer_group`. Default `false`. Flink equivalent: starting the job without state (no savepoint or "+
					"checkpoint), so that `scan.startup.mode` applies again.").
				Default(false).
				Advanced(),
			service.NewStringEnumField(fieldStartFrom, string(StartEarliest), string(StartLatest), string(StartCommitted), string(StartTimestamp), string(StartOffsets)).
				Description("Where a partition without an offset committed in `consumer_group` starts reading: `earliest` (log start), "+
					"`latest` (end of the partition, resolved once at connect), `committed` (where `committed_fallback` says: "+
					"only the group's committed offsets place partitions; needs `consumer_group`), `timestamp` (the first record whose timestamp is at or after `start_timestamp`, else the end "+
					"of the partition), or `offsets` (the offsets in `start_offsets`; unlisted partitions go to `committed_fallback`). "+
					"A partition with a committed offset resumes there in every mode: the group's committed offsets are the "+
					"pipeline's state, and Flink too applies `scan.startup.mode` only to a job started without state, resuming from "+
					"its checkpoint after a failover or restore. A stop and start therefore never reads twice what the group "+
					"committed, nor skips what it did not. To read again from here, use a new `consumer_group` or `reset_offsets`. "+
					"Without `consumer_group` every start begins here. A start offset outside the log (committed or given) goes to "+
					"`committed_fallback`. After a lost connection the input resumes from its own position. Default `committed`. "+
					"Flink option: `scan.startup.mode` = `earliest-offset` / `latest-offset` / `group-offsets` / `timestamp` / `specific-offsets`.").
				Default(string(defaultStartFrom)),
			service.NewAnyField(fieldStartTimestamp).
				Description("With `start_from: timestamp`: the point in time to start at, as milliseconds since the Unix epoch "+
					"(`1714521600000`) or an RFC 3339 time (`2024-05-01T00:00:00Z`). Each partition starts at its first record with "+
					"a timestamp at or after it (Kafka ListOffsets by timestamp). No default; required with `start_from: timestamp` "+
					"and refused otherwise. Flink option: `scan.startup.timestamp-millis`.").
				Optional(),
			service.NewAnyField(fieldStartOffsets).
				Description("With `start_from: offsets`: the offset to start at per topic and partition, in any of these forms: "+
					"per topic, a map of partition to offset (`{ orders: { 0: 42, \"1\": 300 } }`, keys quoted or not) or Flink's "+
					"string (`{ orders: \"partition:0,offset:42;partition:1,offset:300\" }`); `topic:partition` keys "+
					"(`{ \"orders:0\": 42 }`); or, when `topics` names a single topic, partition keys (`{ \"0\": 42 }`). "+
					"Partitions not listed start at `committed_fallback`, and a partition with an offset committed in `consumer_group` starts there instead. No default; required with "+
					"`start_from: offsets` and refused otherwise. Flink option: `scan.startup.specific-offsets`.").
				Optional(),
			service.NewStringEnumField(fieldStopAt, string(StopNone), string(StopLatest), string(StopTimestamp), string(StopOffsets), string(StopCommitted)).
				Description("Where a bounded read ends, per partition: `none` (never), `latest` (the end offset when the input first "+
					"connects: the last stable offset under `read_committed`, else the high watermark), `timestamp` (before the "+
					"first record whose timestamp is at or after `stop_timestamp`), `offsets` (the offsets in `stop_offsets`; "+
					"unlisted partitions stop at latest), or `committed` (the offsets committed in `stop_group`; a partition without one is an error)."+
					" Stop offsets are exclusive and resolved once. A partition is finished when "+
					"its position reaches the stop offset, even when the last entries are transaction markers or aborted records; "+
					"an empty partition is finished at once. When every partition is finished and every record is acknowledged "+
					"and committed, the input ends and `connectd run` exits 0. Default `none`. "+
					"Flink option: `scan.bounded.mode` = `unbounded` / `latest-offset` / `timestamp` / `specific-offsets` / `group-offsets`.").
				Default(string(defaultStopAt)),
			service.NewStringField(fieldStopGroup).
				Description("With `stop_at: committed`: the consumer group whose committed offsets (read when the input first connects) "+
					"end the read, exclusive. The group is only read: this input neither joins nor commits to it, and it must differ from "+
					"`consumer_group`. No default; required with `stop_at: committed` and refused otherwise. Flink option: "+
					"`properties.group.id` with `scan.bounded.mode` = `group-offsets` (a table with that mode reads its group.id here, "+
					"not as `consumer_group`).").
				Optional(),
			service.NewAnyField(fieldStopTimestamp).
				Description("With `stop_at: timestamp`: the point in time to stop before, as milliseconds since the Unix epoch or an "+
					"RFC 3339 time. No default; required with `stop_at: timestamp` and refused otherwise. "+
					"Flink option: `scan.bounded.timestamp-millis`.").
				Optional(),
			service.NewAnyField(fieldStopOffsets).
				Description("With `stop_at: offsets`: the exclusive offset to stop at per topic and partition, in the same forms as "+
					"`start_offsets`. Partitions not listed stop at latest. No default; required with `stop_at: offsets` and "+
					"refused otherwise. Flink option: `scan.bounded.specific-offsets`.").
				Optional(),
			service.NewStringEnumField(fieldAssignment, string(AssignmentEnumerator), string(AssignmentGroup)).
				Description("How this process gets its partitions. `enumerator` (as Flink): the process lists the partitions itself "+
					"and reads all of them, or its `shard`; no group protocol, no rebalance pauses, offsets still committed to "+
					"`consumer_group`. Pick it for one process, for a fixed number of processes (`shard`), and for bounded reads. "+
					"`group`: each of the `readers` joins `consumer_group` and Kafka's group coordinator spreads the partitions "+
					"over the readers of every process (cooperative-sticky), so processes can be added or removed at any time; "+
					"new partitions are seen every `discovery_interval` (the members' metadata refresh). Members start at the "+
					"group's committed offsets, else `committed_fallback`; on a rebalance the acknowledged offsets of revoked "+
					"partitions are committed and records still in flight are read again by the new owner (at-least-once, "+
					"nothing lost). Group mode takes `start_from: committed` only and no `shard`, `stop_at` or `partitions`. "+
					"Default `enumerator`. No Flink option (Flink always enumerates).").
				Default(string(defaultAssignment)),
			service.NewDurationField(fieldSessionTimeout).
				Description("With `assignment: group`: how long the coordinator waits for a silent member (a crashed process) "+
					"before giving its partitions to the others (Go duration). The broker bounds it with "+
					"`group.min.session.timeout.ms` and `group.max.session.timeout.ms` (6s to 30m by default). "+
					"With `group_protocol: consumer` the broker decides instead (`group.consumer.session.timeout.ms`, 45s by "+
					"default) and this field is not used. Default `45s`. Flink option: `properties.session.timeout.ms`.").
				Default(defaultSessionTimeout).
				Advanced(),
			service.NewStringEnumField(fieldGroupProtocol, string(GroupProtocolClassic), string(GroupProtocolConsumer)).
				Description("With `assignment: group`: the group protocol. `classic`: the members assign partitions among "+
					"themselves (cooperative-sticky, incremental rebalances). `consumer`: KIP-848, the broker's coordinator "+
					"assigns partitions itself and rebalances without a group-wide barrier; needs Kafka 4.0 or later "+
					"(`group.coordinator.rebalance.protocols` including `consumer`, the default from 4.0), and franz-go advises "+
					"Kafka 4.3 or later, before which an offset commit can meet a STALE_MEMBER_EPOCH the client cannot "+
					"handle (the commit is retried at the next `commit_period`; no record is lost). Default `classic`. "+
					"Flink option: `properties.group.protocol`.").
				Default(string(GroupProtocolClassic)).
				Advanced(),
			service.NewIntField(fieldReaders).
				Description("Number of readers in this process, each with its own Kafka client and fetch loop, fetching in parallel. "+
					"Partitions are spread over them with Flink's owner function, "+
					"`((hash(topic) * 31 & 0x7FFFFFFF) % n + partition) % n` with Java's `String.hashCode`, so the same topic and "+
					"parallelism give the same placement as Flink; each partition's records keep their order to the output. "+
					"A client has one fetch in flight per broker: against one or two brokers, `readers: 2` reads about 1.2x faster "+
					"(measured in `make bench`). Between 1 and 256. Default `1`. Flink option: the source parallelism.").
				Default(defaultReaders),
			service.NewObjectField(fieldShard,
				service.NewIntField(fieldShardIndex).
					Description("This process's shard, from 0 to `count - 1`. Default `0`. Flink equivalent: the index of a source subtask (`getIndexOfThisSubtask`).").
					Default(0),
				service.NewIntField(fieldShardCount).
					Description("Number of processes sharing the topics. Default `1` (this process reads every partition). "+
						"Flink equivalent: the source parallelism (`parallelism.default`), spread here over processes.").
					Default(1),
			).
				Description("Static sharding across processes without the group protocol: with `count` processes (for example a "+
					"Kubernetes StatefulSet) each given its own `index`, Flink's owner function is applied over `count x readers` "+
					"slots and this process owns the partitions of slots `index x readers` to `(index+1) x readers - 1`, "+
					"so the processes together read every partition exactly once. Give each process its own consumer group "+
					"or the same one (commits are per partition). Default `{index: 0, count: 1}`. "+
					"Flink equivalent: the source subtasks of one job.").
				Advanced(),
			service.NewStringEnumField(fieldCommittedFallback, string(FallbackEarliest), string(FallbackLatest), string(FallbackError)).
				Description("Where a partition starts whose committed offset is out of range (in every `start_from` mode; likewise "+
					"a `start_offsets` offset), or that has none with `start_from: committed` (or is not listed in `start_offsets`): "+
					"`earliest` or `latest`, or `error`: refuse to start, ending the run (exit code 1) with an error naming the group, topic "+
					"and partition. "+
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
					"Default `5s`. With an exactly-once kafka_sink the sink commits the offsets of the records it writes, in its "+
					"transactions, and this period only applies to what never reached it. Flink option: the checkpoint interval "+
					"(`execution.checkpointing.interval`), or `properties.auto.commit.interval.ms` without checkpoints.").
				Default(defaultCommitPeriod),
			service.NewIntField(fieldCheckpointLimit).
				Description("Number of records per partition that may be fetched and not yet acknowledged; at this limit fetching "+
					"that partition pauses until acknowledgements bring it below. Bounds memory: roughly "+
					"partitions x limit x record size, and `max_unacknowledged_bytes` bounds the sum over all partitions in bytes. "+
					"Must be at least `batch_size`. Default `8192` (records): at 1024 a partition "+
					"paused after every batch and throughput halved in `make bench`; lower it for large records. "+
					"Behind an `event_window` buffer, which holds a window's records unacknowledged until the window fires, it must exceed "+
					"the records one partition delivers within a window's span (size + allowed lateness + max_out_of_orderness), or the "+
					"partition pauses, holds the watermark back and no window fires. The input keeps each unacknowledged record for "+
					"redelivery, so that costs about the records' size times the limit in memory. A partition paused for 30s is logged "+
					"with this advice. In front of a `kafka_sink` with `at_least_once` or `exactly_once`, a batch is acknowledged as "+
					"soon as the sink handed its records to its producer (the source then only holds their offsets back until they "+
					"are durable or committed, without keeping the records), so the limit bounds the records fetched and not yet "+
					"written, not a transaction. "+
					"Flink has no direct equivalent (its bound is `source.reader.element.queue.capacity` and checkpoint alignment).").
				Default(defaultCheckpointLimit).
				Advanced(),
			service.NewIntField(fieldMaxUnackedBytes).
				Description("Bytes of records that may be fetched and not yet acknowledged, over all partitions of this input; "+
					"once they reach it, fetching pauses on every partition until acknowledgements bring them below. Each record "+
					"counts its key, value and headers plus 768 bytes for what the input keeps of it in memory (the fetched record "+
					"and its message with the default metadata), so this bounds memory, not payload alone: at the default, about "+
					"17,000 records of 200 bytes, or 970 records of 16 KiB. A fetch asks for what weighs a quarter of it, from the "+
					"record sizes seen so far (about 850 KiB for records of 200 bytes; at least 256 KiB, at most 4 MiB at the default; "+
					"unless `fetch_max_bytes` is set; `fetch_max_partition_bytes` per partition), and a fetch on its way "+
					"when fetching pauses still lands: the input holds at most this bound plus one fetch per broker and reader. "+
					"`checkpoint_limit` bounds the records of each partition besides. In front of a `kafka_sink` with `at_least_once` "+
					"or `exactly_once`, records are acknowledged once the sink handed them to its producer, so the bound covers the "+
					"records between the two (the sink's `max_buffered_bytes` those on their way to Kafka); behind an `event_window` "+
					"buffer it must exceed what the windows open at once hold, or fetching pauses until windows fire; likewise in front of a "+
					"`batching` policy with a `period` (the messages it holds are unacknowledged: 100ms batches of 200-byte records at the "+
					"default pass at most about 170,000 records a second). Without "+
					"GOMEMLIMIT and a cgroup memory limit, the process's Go memory limit is 40 MiB plus twice the sum of these "+
					"bounds and the sinks' buffers (README, Memory). "+
					"Default `16777216` (16 MiB); at least `4194304` (4 MiB). "+
					"Flink has no direct equivalent: Kafka's consumer bounds a fetch with `fetch.max.bytes` (default 50 MiB), "+
					"Flink's reader its queue with `source.reader.element.queue.capacity`.").
				Default(defaultMaxUnackedBytes).
				Advanced(),
			service.NewIntField(fieldBatchSize).
				Description("Maximum number of records in one message batch; a batch holds what was fetched, up to this many. "+
					"Default `1024` (records). Flink option: `properties.max.poll.records`.").
				Default(defaultBatchSize).
				Advanced(),
			service.NewDurationField(fieldFetchMaxWait).
				Description("Longest time the broker holds a fetch request open while waiting for data (Go duration). "+
					"It also bounds how long a partition resumed after `checkpoint_limit` may wait for its next fetch. "+
					"Default `500ms`, at least `10ms`. Flink option: `properties.fetch.max.wait.ms`.").
				Default(defaultFetchMaxWait).
				Advanced(),
			service.NewIntField(fieldFetchMinBytes).
				Description("Fewest bytes the broker gathers for a fetch before it answers (up to `fetch_max_wait`). Default `1` (bytes): "+
					"answer as soon as there is data. Raise it to trade latency for fewer, larger fetches. "+
					"Flink option: `properties.fetch.min.bytes`.").
				Default(defaultFetchMinBytes).
				Advanced(),
			service.NewIntField(fieldFetchMaxBytes).
				Description("Most bytes one fetch response may hold, over all its partitions (a record batch larger than this is still "+
					"returned whole, so reading makes progress). Default `52428800` (bytes, 50 MiB, Kafka's); left at it, a fetch asks "+
					"instead for what weighs a quarter of `max_unacknowledged_bytes`, from the record sizes seen so far (see there; "+
					"at most a quarter of it in bytes, 4 MiB at its default, at least 256 KiB). "+
					"Flink option: `properties.fetch.max.bytes`.").
				Default(defaultFetchMaxBytes).
				Advanced(),
			service.NewIntField(fieldFetchMaxPartitionBytes).
				Description("Most bytes one fetch response may hold for one partition (a larger record batch is still returned whole). "+
					"Default `1048576` (bytes, 1 MiB). Flink option: `properties.max.partition.fetch.bytes`.").
				Default(defaultFetchMaxPartitionBytes).
				Advanced(),
			service.NewStringField(fieldRackID).
				Description("The rack of this process: with brokers that have a `replica.selector.class` (KIP-392), records are fetched "+
					"from a replica in the same rack instead of the leader. Default empty (fetch from leaders). "+
					"Flink option: `properties.client.rack`.").
				Default("").
				Advanced(),
			service.NewDurationField(fieldHeartbeatInterval).
				Description("With `assignment: group` and `group_protocol: classic`: time between a member's heartbeats to the group "+
					"coordinator (Go duration); must be below `group_session_timeout`. Default: a third of `group_session_timeout`, "+
					"at most `3s` (the Java client's default). Flink option: `properties.heartbeat.interval.ms`.").
				Optional().
				Advanced(),
			service.NewStringField(fieldGroupInstanceID).
				Description("With `assignment: group`: the static member id (KIP-345). A member that restarts within "+
					"`group_session_timeout` under the same id gets its partitions back without a rebalance. Give each process its own; "+
					"with several `readers`, reader `i` above 0 uses `<id>-<i>`. Default empty (dynamic membership). "+
					"Flink option: `properties.group.instance.id`.").
				Default("").
				Advanced(),
			service.NewStringListField(fieldMetadataKeys).
				Description("Metadata set on each message: any of the names in the Metadata section, and `headers` for the record "+
					"headers. Default: the keys Benthos's own Kafka input sets (`kafka_key`, `kafka_topic`, `kafka_partition`, "+
					"`kafka_offset`, `kafka_timestamp_ms`, `kafka_timestamp_unix`, `kafka_tombstone_message`, `kafka_lag`) and the "+
					"headers; `kafka_timestamp_type` and `kafka_leader_epoch` are set only when listed. Each value costs CPU (about "+
					"0.1 us per key, and past eight keys Benthos's metadata map grows, doubling the cost per message), so a pipeline "+
					"that reads few keys can list just those, as a Flink table reads only the metadata columns it declares. "+
					"Flink option: the `METADATA FROM` columns of the table.").
				Default(metaKeyNames(metaDefault)).
				Example([]string{"kafka_key", "kafka_topic", "kafka_partition", "kafka_offset"}).
				Advanced(),
			service.NewStringEnumField(fieldPartitionMetrics, string(PartitionMetricsPartition), string(PartitionMetricsTopic)).
				Description("Labels of the per-partition metrics (`kafka_source_lag`, `kafka_source_offset`, "+
					"`kafka_source_committed_offset`, `kafka_source_unacked_records`, `kafka_source_fetch_errors`, "+
					"`kafka_source_offset_resets`, `kafka_source_partition_watermark_ms`, `kafka_source_records_left`, "+
					"`kafka_source_partition_records`, `kafka_source_partition_bytes`). `partition`: one series per partition, "+
					"labels `topic` and `partition` (and `reader` for the last two). `topic`: one series per topic, label `topic` only "+
					"(and `reader`): each gauge is the sum over "+
					"the topic's partitions that this process reads (the partition watermark: their minimum), each counter counts "+
					"per topic; a query that sums (or takes the minimum) by topic gives the same answer in both. With thousands of "+
					"partitions per process, per-partition series make each scrape megabytes long (see Metrics); the input logs "+
					"this at start-up past 1,000 partitions. Default `partition`. Flink has no such switch: its per-partition "+
					"`currentOffset` / `committedOffset` gauges are always registered, and `register.consumer.metrics` only "+
					"switches the Kafka client's own metrics.").
				Default(string(defaultPartitionMetrics)).
				Advanced(),
		).
		Fields(tableFields()...).
		Fields(watermarkFields()).
		Example("Backfill up to now, then exit",
			"Read everything written before the input started, from the group's committed offsets (else the start), "+
				"with two readers; the input ends and `connectd run` exits 0 once every partition reached its end offset "+
				"and every record is acknowledged and committed.",
			`
input:
  kafka_source:
    seed_brokers: [ localhost:9092 ]
    topics: [ orders ]
    consumer_group: orders-backfill
    stop_at: latest
    readers: 2
`).
		Example("Replay a time window",
			"Read the records of one day of every topic matching a pattern, then exit. Without `consumer_group` nothing is "+
				"committed: every run reads the day again.",
			`
input:
  kafka_source:
    seed_brokers: [ localhost:9092 ]
    topic_pattern: 'orders\..*'
    start_from: timestamp
    start_timestamp: 2024-05-01T00:00:00Z
    stop_at: timestamp
    stop_timestamp: 2024-05-02T00:00:00Z
`).
		Example("Shard partitions across processes",
			"The second of three processes (for example pod 1 of a StatefulSet), each with four readers: the three "+
				"together read every partition once, without a consumer group protocol.",
			`
input:
  kafka_source:
    seed_brokers: [ localhost:9092 ]
    topics: [ clicks ]
    consumer_group: clicks-to-lake
    readers: 4
    shard: { index: 1, count: 3 }
`).
		Example("Read a Flink table",
			"Every setting comes from the table's WITH options, as in Flink: topic, brokers, group, start mode, discovery "+
				"interval, and the JSON format; each message becomes a typed row (`event_time` a timestamp, `ts` the record "+
				"timestamp). A record that does not decode goes on with its raw bytes and the error, for a dead-letter route.",
			`
input:
  kafka_source:
    on_error: dead_letter
    ddl: |
      CREATE TABLE user_events (
        user_id STRING,
        event_time TIMESTAMP(3),
        ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL
      ) WITH (
        'connector' = 'kafka',
        'topic' = 'user_events',
        'properties.bootstrap.servers' = 'localhost:9092',
        'properties.group.id' = 'user-events-reader',
        'scan.startup.mode' = 'earliest-offset',
        'scan.topic-partition-discovery.interval' = '1 min',
        'format' = 'json'
      )
`).
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
	spec := Spec()
	speclint.Register(speclint.Input, "kafka_source", spec, func(conf *service.ParsedConfig) error {
		_, err := configFromParsed(conf)
		return err
	})
	service.MustRegisterBatchInput("kafka_source", spec,
		func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchInput, error) {
			c, err := configFromParsed(conf)
			if err != nil {
				return nil, err
			}
			if c.ConsumerGroup == "" {
				mgr.Logger().Infof("kafka_source: no %s: nothing is committed, and every start (a restart too) reads from %s: %s again",
					fieldConsumerGroup, fieldStartFrom, c.StartFrom)
			}
			return newSource(c, mgr), nil
		})
}
