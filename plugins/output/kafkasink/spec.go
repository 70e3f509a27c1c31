// Package kafkasink is the `kafka_sink` output: Apache Flink's KafkaSink for
// Benthos pipelines. It writes each message as one Kafka record (topic, key,
// headers and timestamp taken from the message), partitions keys exactly as
// the Java client does, and keeps each partition's order: batches are written
// one at a time, records that fail for a reason that can clear are written
// again in place, and only records that cannot be written are reported back,
// each on its own.
//
// With delivery_guarantee exactly_once it writes each batch in one Kafka
// transaction with a transactional producer that fences its predecessors.
//
// Files by concern: spec.go (fields and registration), config.go (typed
// configuration and validation), sink.go (the service.BatchOutput and the
// independent, non-transactional write), retry.go (retry in place or give
// up), txn.go (transactions, fencing),
// partitioner.go (partitioners), record.go (message -> kgo.Record),
// metrics.go (metric names).
package kafkasink

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/speclint"
	"github.com/connectd/connectd/internal/table"
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
	FieldMaxBufferedBytes  = "max_buffered_bytes"
	FieldTimeout           = "timeout"
	FieldAutoCreateTopics  = "allow_auto_topic_creation"
	FieldAcks              = "acks"

	FieldTransactionalIDPrefix = "transactional_id_prefix"
	FieldTransactionalIDSuffix = "transactional_id_suffix"
	FieldTransactionTimeout    = "transaction_timeout"
	FieldCommitInterval        = "commit_interval"
	FieldPartition             = "partition"
	FieldPartitionExpression   = "partition_expression"
	FieldWriterIndex           = "writer_index"
)

// Defaults, shared by the spec and the typed Config.
const (
	defaultMaxInFlight = 1
	// The batching policy of at_least_once and none when none is set: a
	// write waits up to defaultBatchPeriod (the Java producer's linger.ms
	// default since Kafka 4.0) for more messages, up to defaultBatchCount
	// messages or defaultBatchBytes bytes.
	defaultBatchCount      = 10000
	defaultBatchBytes      = 4 << 20
	defaultBatchPeriod     = "5ms"
	defaultMaxMessageBytes = 1 << 20
	// defaultMaxBufferedBytes is a quarter of Java's buffer.memory (32 MiB):
	// franz-go keeps each record as an object beside its bytes.
	defaultMaxBufferedBytes = 8 << 20
	maxBufferedBytes        = 1 << 30
	defaultTimeout          = "10s"

	defaultTransactionalIDSuffix = "0"
	defaultTransactionTimeout    = "1m"
	defaultCommitInterval        = "1s"
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
		Summary("Writes messages to Kafka topics as Apache Flink's KafkaSink does: key-hashed partitioning identical to the Java client, "+
			"headers and timestamps from message metadata, a per-message error report, and exactly-once writes in Kafka transactions.").
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
- `+"`exactly_once`"+` (Flink `+"`EXACTLY_ONCE`"+`): Kafka transactions, described below.

### Exactly-once

With `+"`delivery_guarantee: exactly_once`"+` the sink uses a transactional producer
whose transactional id is `+"`<transactional_id_prefix>-<transactional_id_suffix>`"+`.
The producer is initialised when the output connects, before the first batch,
which fences any earlier producer with the same id (a previous run of this
process) and makes the broker abort that producer's open transaction.

Records read from a `+"`kafka_source`"+` on the same cluster (with a consumer group)
flow as in Flink between checkpoints: each batch is written into the open
transaction and acknowledged at once (the source holds back its offsets, not the
records), and the transaction commits every `+"`commit_interval`"+` (default `+"`1s`"+`, Flink's
`+"`execution.checkpointing.interval`"+`) together with the source offsets. While it
commits, the next transaction fills on a second producer, transactional id
`+"`<transactional_id_prefix>-<transactional_id_suffix>-1`"+` (both are initialised,
and so fence their predecessors, at connect). Any failure aborts the failing
transaction and the open one, and the source reads again from its committed
offsets (docs/exactly-once.md).

Batches from other inputs are one transaction each: the `+"`batching`"+` policy plays the role of
Flink's checkpoint interval (count, byte size, period). All records of a batch
become visible to `+"`read_committed`"+` readers together, and the batch is
acknowledged to the input only after the commit succeeded. If a record is not
written, or the commit fails, the transaction is aborted and nothing of it is
visible to `+"`read_committed`"+` readers; the batch is then written again in
place as a new transaction when the cause can clear (a record not acknowledged
within `+"`timeout`"+`, a connection error, a retriable Kafka error), with a back-off
and a warning per attempt, and fails as a whole (delivered again by the input)
only when it cannot (a record Kafka refuses for good). A message that cannot become a record at
all (its topic, key, timestamp or partition cannot be computed, or its
partition does not exist) never joins the transaction: it fails alone and the
rest of the batch commits. So does a record Kafka refuses for what it holds,
alone (larger than `+"`max_message_bytes`"+`): the transaction is aborted and the
rest of the batch committed in a new one.

Without a batching policy each batch the pipeline hands over is one
transaction: a single message for most inputs (correct but slow: set
`+"`batching`"+`), a fetch of up to `+"`batch_size`"+` records from `+"`kafka_source`"+`, the
results of one watermark step from an `+"`event_window`"+` buffer. `+"`batching.period`"+` must be shorter than
`+"`transaction_timeout`"+`. `+"`max_in_flight`"+` must be 1 (its default with exactly_once):
a transactional producer runs one transaction at a time.

What this guarantees end to end depends on the input. **From an input that is
not Kafka, exactly_once is at-least-once with atomic batches**: a batch is
written all or nothing and acknowledged only after commit, but if the process
dies after a commit and before the input has taken the acknowledgement, the
input delivers the batch again and it is written twice.

**From a `+"`kafka_source`"+` on the same cluster, exactly_once is end-to-end
exactly-once, with no config needed**: every message of `+"`kafka_source`"+` carries
its origin (source, topic, partition, offset) in its context, and the sink
commits the source consumer group's offsets for the messages of a batch inside
the batch's transaction (AddOffsetsToTxn + TxnOffsetCommit, KIP-98/KIP-447):
the records and the offsets that produced them commit together or not at all.
The offset committed for a partition is the next offset to read after the
batch, held back by any earlier record of that partition still in flight (as
the source's own commits are), and the source does not commit those offsets
itself. A refused offset commit aborts the transaction: a transient refusal
(a rebalance under way, a coordinator moving, a group generation that
changed) retries the same batch in place until it commits (a failed batch
would come back after later ones, out of per-key order); any other refusal
fails the batch. In `+"`assignment: group`"+` mode the commit carries the
live member id and generation of the reader that owns the partition, so a
zombie whose partition moved is refused by the broker; the messages of
partitions the source no longer owns fail alone (their new owner reads them
again) and the rest is committed. Revoking a partition waits for its records
in flight. After a crash,
the restarted process fences its predecessor, the broker aborts the open
transaction, and the source resumes from the committed offsets, read with
require-stable semantics (it waits while a transaction holding them is open).
A read_committed reader then sees every input record exactly once. Per-key
order needs per-partition order from the source to the sink: keep
`+"`pipeline.threads: 1`"+` (or no processors), and `+"`max_in_flight: 1`"+`. The source and sink
pair when they see the same cluster id (or, if either does not know it, the
same seed brokers); a `+"`kafka_source`"+` on another cluster does not pair, which is
logged once at info level, and that pipeline is at-least-once with atomic
batches. Messages that a processor creates (rather than copies) carry no
origin and do not pair either.

Each writer needs its own transactional id that stays the same across
restarts: set `+"`transactional_id_suffix`"+` per instance (for example
`+"`${HOSTNAME}`"+` in a StatefulSet, or an instance index). A producer that is
fenced (another writer took its id, or a transaction outlived
`+"`transaction_timeout`"+` and the broker aborted it), or that fails beyond repair,
is closed; the sink logs an error naming the transactional id, counts a
fencing in `+"`kafka_sink_txn_fenced`"+`, and creates a new producer after a back-off
that doubles per lost producer until a commit succeeds (1s up to 1m), then
retries the batch. Two live writers with the same id therefore fence each
other visibly and slowly, never silently.

### Partitioning

Flink option `+"`sink.partitioner`"+`; every partitioner uses the topic's current
partition count, refreshed every `+"`metadata_max_age`"+`, so partitions added to a
topic are used without a restart.

- `+"`default`"+`: Flink's and the Java client's. A record with a key goes to
  `+"`toPositive(murmur2(key)) % partitions`"+`, so connectd and Java producers put the
  same key on the same partition. A record without a key sticks to one
  partition until a batch fills up, then moves on (sticky partitioning, KIP-480).
- `+"`fixed`"+`: Flink's `+"`FlinkFixedPartitioner`"+`. Every record goes to partition
  `+"`writer_index % partitions`"+`, whatever its key. Give each instance its own
  `+"`writer_index`"+` (Flink's subtask index), for example from an environment variable.
- `+"`round_robin`"+` (also `+"`round-robin`"+`): consecutive records of a topic go to
  consecutive partitions, whatever their key. Unlike Flink's, it is not sticky:
  it moves on at every record.
- `+"`manual`"+`: the partition is the interpolated `+"`partition`"+` field. A value that is
  not a number, negative, or not a partition of the topic fails that message
  only, naming the value.
- `+"`expression`"+`: the partition is the result of `+"`partition_expression`"+`, a CEL
  expression over `+"`key`"+` and `+"`value`"+` (bytes; empty for a null key), `+"`metadata`"+`
  (map of string to string), `+"`topic`"+` (string) and `+"`num_partitions`"+` (int, the
  topic's current partition count). It is compiled once when the output is
  built, so syntax and type errors are reported by `+"`connectd lint`"+`. A result that
  is negative or not below `+"`num_partitions`"+`, or an evaluation error, fails that
  message only, naming the value. This replaces Flink's custom partitioner
  class.

### Tables (Flink's CREATE TABLE)

With `+"`table`"+` (a name in `+"`catalog`"+` or `+"`ddl`"+`, or an inline table), the table's WITH options
set `+"`topic`"+` (`+"`topic`"+`), `+"`seed_brokers`"+` (`+"`properties.bootstrap.servers`"+`), `+"`delivery_guarantee`"+`
(`+"`sink.delivery-guarantee`"+`), `+"`transactional_id_prefix`"+` (`+"`sink.transactional-id-prefix`"+`) and
`+"`partitioner`"+` (`+"`sink.partitioner`"+`), and each message is a row (structured content, as
kafka_source or table_decode produce) that is encoded into the record:

- the value with `+"`format`"+` / `+"`value.format`"+` and its options; with `+"`value.fields-include`"+` =
  `+"`EXCEPT_KEY`"+` the key columns are left out;
- the key from the key columns (`+"`key.fields`"+`, else the PRIMARY KEY) with `+"`key.format`"+`, named
  without `+"`key.fields-prefix`"+`; an avro-confluent key uses the subject `+"`<topic>-key`"+`;
- the record timestamp from a `+"`METADATA FROM 'timestamp'`"+` column and the headers from a
  `+"`METADATA FROM 'headers'`"+` column (`+"`MAP<STRING, BYTES>`"+`); other metadata columns are
  read-only and must be `+"`VIRTUAL`"+`, as in Flink.

A PRIMARY KEY on the plain `+"`kafka`"+` connector, which Flink refuses with an insert-only format,
is accepted: its columns are the key (one STRING or BYTES column defaults to `+"`key.format`"+` =
`+"`raw`"+`; otherwise `+"`key.format`"+` is required). With `+"`upsert-kafka`"+` the key is the PRIMARY KEY
and a message with metadata `+"`kafka_tombstone_message`"+` = true (as kafka_source sets on a
tombstone it read) is a delete: a record with the key and a null value; its
`+"`sink.buffer-flush.max-rows`"+` / `+"`sink.buffer-flush.interval`"+` become `+"`batching`"+` `+"`count`"+` / `+"`period`"+`
(a batch is not reduced to the last row per key, as Flink's buffer is: the topic's compaction does that). A row that cannot be
encoded fails that message, naming the table and topic.

The table is the single source of truth: a field that it also sets must agree with it, or the
config is refused with an error naming the field and the option (`+"`key`"+` against key columns,
`+"`timestamp_ms`"+` and `+"`metadata`"+` against the timestamp and headers columns too). Benthos fills in
defaults before connectd sees a config (at lint and at run time), so a field written with its default
value (say `+"`delivery_guarantee: at_least_once`"+` against `+"`'exactly-once'`"+`) cannot be told from an
absent one: the table wins over it. Options of the reading side (`+"`scan.*`"+`, `+"`properties.group.id`"+`) are allowed
and unused; options connectd does not support are errors naming them.

### Ordering and retries

Records a sink receives for one partition reach Kafka in that order, at the
defaults and across retries, as with Flink's KafkaSink and the Java producer
with idempotence. Batches are written one at a time (`+"`max_in_flight: 1`"+`);
inside a batch the producer pipelines up to 5 requests per broker and Kafka
keeps them in order (idempotence; with `+"`none`"+`, one request at a time). So
that one batch at a time stays fast, `+"`at_least_once`"+` and `+"`none`"+` batch by
default (see `+"`batching`"+`). The sink keeps the order it receives: pipeline
processors on several threads (`+"`pipeline.threads`"+`, default one per CPU) can
reorder messages before they reach it, so keep `+"`pipeline.threads: 1`"+` when
order matters from end to end.

A record that is not written for a reason that can clear (not acknowledged
within `+"`timeout`"+`, a connection error, a retriable Kafka error) is written
again in place, inside the same write, with a back-off (50ms doubling up to
2s) and a warning per attempt, until it is written or the pipeline stops; the
next batch waits. It goes again together with every later record of the batch
in the same partition, written or not, so a partition never holds a newer
record before an older one that was missing. A record that timed out may have
been written all the same, so the retry can repeat a run of records
(at-least-once): for each key, every value read after another is at most the
next one, a step back always starts an exact replay of values already there,
and the last value is the last one written. With exactly_once the whole
transaction is aborted and written again in place (see above). When no record
of a batch reached Kafka because of connection errors, the sink reports itself
disconnected; Benthos then reconnects and writes the same batch again before
the next one.

With `+"`max_in_flight`"+` above 1, batches race into the producer and a retried
batch can land after a later one: per-partition order is then not guaranteed.

### Errors

A message that cannot be written at all fails alone, and the rest of its batch
is written: its topic, key, timestamp or partition cannot be computed, its
topic does not exist (after the client's own retries), or Kafka refuses it for
good (too large, invalid, not authorised). The batch is then reported as a
batch error naming each failed message with its topic and partition.

Errors are sorted into classes (docs/errors.md lists them):

- Transient (a broker down or restarting, a leader moving, a coordinator
  loading, a timeout): retried. Benthos calls Connect again after its
  back-off, logging one line per failed attempt; a failed batch is retried.
- Permanent, which no retry clears: the run ends, `+"`connectd`"+` exits 1 and prints
  the error, which names the field to change: a `+"`transaction_timeout`"+` above the
  brokers' `+"`transaction.max.timeout.ms`"+`, a missing ACL (topic, consumer group,
  transactional id, cluster), a topic that does not exist and is not created
  (`+"`allow_auto_topic_creation: false`"+` or the brokers' `+"`auto.create.topics.enable=false`"+`:
  after 4 metadata refreshes without it, about a second, and a last check), an
  illegal topic name, a codec or request the brokers do not support, SASL or TLS
  credentials the brokers never accepted in this run (credentials refused after
  they worked are retried, the wait doubling from 1s to 1m).
- A record refused for what it holds (too large, a timestamp the topic
  refuses): that message fails alone; route it with a `+"`fallback`"+` output.

Once the run stops on an error, here or in another component (a bad record
under `+"`on_error: fail`"+`), the sink writes nothing more, and with exactly_once a
transaction open at that moment is aborted instead of committed.

### Shutdown

On SIGTERM or SIGINT the sink finishes the batch in flight (each step at most
`+"`timeout`"+`), gives up connecting if it cannot reach Kafka (it no longer holds the
shutdown until `+"`shutdown_timeout`"+`), and logs at info level what it still waits
for. Messages the `+"`batching`"+` policy still holds keep the input waiting until
three quarters of `+"`shutdown_timeout`"+`; what was not committed is read again on
the next run.

### Metrics

Each metric's Prometheus HELP line says what it counts and its unit.

- `+"`kafka_sink_records_sent`"+` (counter, `+"`topic`"+`): records Kafka acknowledged (with exactly_once: records committed).
- `+"`kafka_sink_bytes_sent`"+` (counter, `+"`topic`"+`): key, value and header bytes of those records, before compression.
- `+"`kafka_sink_records_failed`"+` (counter, `+"`topic`"+`): failed attempts to write a record; a record written again in place
  counts once per failed attempt. The topic is empty when it could not be computed.
- `+"`kafka_sink_produce_latency_ns`"+` (timer, `+"`topic`"+`): one observation per batch and topic, from handing the batch's
  records to the client to Kafka's acknowledgement of the last of them (per batch, not per record: a per-record summary
  cost more than the produce).

With exactly_once:

- `+"`kafka_sink_txn_begun`"+` / `+"`kafka_sink_txn_committed`"+` (counters): transactions begun and committed. Every transaction
  begun ends committed or aborted: begun = committed + aborted, but for the one open.
- `+"`kafka_sink_txn_aborted`"+` (counter, `+"`cause`"+`): transactions aborted, each counted once with one `+"`cause`"+`: `+"`failure`"+` (a
  record was not written, refused or not acknowledged within `+"`timeout`"+`, or the commit, EndTxn, failed), `+"`offsets`"+` (the
  source offsets could not join the transaction: a rebalance moved the partitions, the group coordinator refused them),
  `+"`rewind`"+` (an earlier transaction failed, and this one, open meanwhile, is aborted with it; its `+"`kafka_source`"+` inputs
  read again from their committed offsets), `+"`shutdown`"+` (the run is stopping on an error elsewhere, such as a bad record
  under `+"`on_error: fail`"+`: aborted instead of committed), `+"`fenced`"+` (another writer took the transactional id; also
  counted in `+"`kafka_sink_txn_fenced`"+`), `+"`timeout`"+` (open longer than `+"`transaction_timeout`"+` when the broker refused it as
  fenced or in an invalid state: the broker aborted it on its own; raise `+"`transaction_timeout`"+` or lower
  `+"`commit_interval`"+`). A transaction whose producer is lost is counted too: the broker aborts it when the new producer
  starts.
- `+"`kafka_sink_txn_commit_latency_ns`"+` (timer): duration of the commit (EndTxn).
- `+"`kafka_sink_txn_duration_ns`"+` (timer): from a transaction's begin (its first record) to the end of its commit or abort;
  with records from `+"`kafka_source`"+` it is about `+"`commit_interval`"+` plus the commit: how long a read_committed reader waits.
- `+"`kafka_sink_txn_interval_ns`"+` (timer): time between the ends of two successive committed transactions of the sink
  (Flink's checkpoint interval, observed); an abort in between lengthens it. The first commit observes none.
- `+"`kafka_sink_txn_records`"+` (gauge): records in the last committed transaction;
  the average is `+"`rate(kafka_sink_records_sent) / rate(kafka_sink_txn_committed)`"+`.
- `+"`kafka_sink_txn_fenced`"+` (counter): fencing events; any increase needs attention.
`+service.OutputPerformanceDocs(true, true)).
		Fields(kafkaconn.Fields()...).
		Fields(
			service.NewInterpolatedStringField(FieldTopic).
				Description("Topic to write each message to, interpolated per message. Required, no default, unless a `table` sets `topic`. Flink option: `topic`.").
				Examples("events", `${! @kafka_topic }-copy`).
				Optional(),
			service.NewInterpolatedStringField(FieldKey).
				Description("Record key, interpolated per message. Absent or evaluating to an empty string means a null key "+
					"(sticky partitioning). Default: absent. Flink option: `key.fields` with `key.format` (here an expression instead of columns).").
				Examples(`${! @kafka_key }`, `${! json("user_id") }`).
				Optional(),
			service.NewStringField(FieldPartitioner).
				Description("How records are spread over a topic's partitions: `default` (murmur2 of the key exactly as the Java client, "+
					"`Utils.toPositive(Utils.murmur2(key)) % partitions`, sticky partitioning for null keys), `fixed` (partition "+
					"`writer_index % partitions`, key ignored), `round_robin` (consecutive records to consecutive partitions, key ignored) "+
					"`manual` (the `partition` field) or `expression` (the CEL `partition_expression`). Flink spellings such as "+
					"`round-robin` are accepted. See Partitioning above. "+
					"Default `default`. Flink option: `sink.partitioner`.").
				Examples("default", "fixed", "round_robin", "manual").
				Default(string(PartitionerDefault)),
			service.NewInterpolatedStringField(FieldPartition).
				Description("Partition number (integer >= 0) of each message, interpolated per message; required with, and only allowed "+
					"with, `partitioner: manual`, for example `${! @kafka_partition }` or `${! json(\"shard\") % 8 }`. A value that is not "+
					"a partition of the topic fails that message only. Default: absent. "+
					"Flink has no option for it (a custom `FlinkKafkaPartitioner` class).").
				Optional().
				Advanced(),
			service.NewStringField(FieldPartitionExpression).
				Description("CEL expression returning each record's partition (an int); required with, and only allowed with, "+
					"`partitioner: expression`. Variables: `key` and `value` (bytes), `metadata` (map(string, string)), `topic` "+
					"(string), `num_partitions` (int). A result outside `0` to `num_partitions - 1` fails that message only. "+
					"Default empty. Flink option: a custom `sink.partitioner` class.").
				Examples(`int(metadata["tenant_id"]) % num_partitions`, `size(key) == 0 ? 0 : num_partitions - 1`).
				Default("").
				Advanced(),
			service.NewIntField(FieldWriterIndex).
				Description("Index of this writer for `partitioner: fixed`, which sends every record to partition "+
					"`writer_index % partitions` (Flink's subtask index). Integer >= 0; set it per instance, for example "+
					"`${INSTANCE_INDEX:0}`. Default 0. Flink option: none (Flink uses the sink subtask index).").
				Default(0).
				Advanced(),
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
				Description("`at_least_once` (idempotent producer, `acks=all`), `exactly_once` (one Kafka transaction per batch; "+
					"with records from a kafka_source on the same cluster their source offsets are committed in the same "+
					"transaction, no config needed: end-to-end exactly-once; from any other input this is at-least-once with "+
					"atomic batches; see Exactly-once above) or `none` (`acks=1`, "+
					"no idempotence; errors are still reported). Flink spellings such as `exactly-once` and `AT_LEAST_ONCE` are accepted. "+
					"Default `at_least_once`. Flink option: `sink.delivery-guarantee`.").
				Examples("at_least_once", "exactly_once", "none").
				Default(string(DeliveryAtLeastOnce)),
			service.NewStringField(FieldTransactionalIDPrefix).
				Description("Prefix of the transactional id `<prefix>-<transactional_id_suffix>`. Required with, and only allowed with, "+
					"`delivery_guarantee: exactly_once`. Must be the same across restarts of a writer and distinct from every other "+
					"application's. Default empty. Flink option: `sink.transactional-id-prefix`.").
				Examples("orders-enricher").
				Default(""),
			service.NewStringField(FieldTransactionalIDSuffix).
				Description("Suffix of the transactional id `<transactional_id_prefix>-<suffix>`, used with exactly_once. Each live writer "+
					"needs its own, stable across its restarts, so that a restarted writer fences its predecessor: use an instance "+
					"name or index, for example `\"${HOSTNAME}\"` in a StatefulSet (quoted, so that a numeric value stays a string). "+
					"Must not be empty. Default `0` (one writer). "+
					"Flink option: none (Flink appends the subtask index).").
				Examples("${HOSTNAME}", "pod-${INSTANCE_INDEX:0}").
				Default(defaultTransactionalIDSuffix),
			service.NewDurationField(FieldTransactionTimeout).
				Description("How long the broker lets a transaction stay open before aborting it (Go duration, at least 1ms; sent in whole "+
					"milliseconds). Must be longer than `batching.period` and at most the brokers' `transaction.max.timeout.ms` "+
					"(default 15m); a refused value ends the run at connect (exit 1) naming both. Only used with exactly_once. Default `1m`. "+
					"Flink option: `properties.transaction.timeout.ms`.").
				Default(defaultTransactionTimeout).
				Advanced(),
			service.NewDurationField(FieldCommitInterval).
				Description("With `exactly_once`, how often the transaction that records from a `kafka_source` flow into is "+
					"committed, with the source offsets (Go duration, at least 1ms, shorter than `transaction_timeout`). "+
					"Records are written as they arrive and acknowledged to the source at once; they become visible to "+
					"read_committed readers when their transaction commits, so this is also the latency those readers see. "+
					"While one transaction commits the next fills on a second transactional producer. Longer intervals "+
					"cost the broker less per record; shorter ones show records sooner and replay less after a crash. "+
					"Batches from other inputs (and `event_window` results) are still one transaction each. Default `1s`. "+
					"Flink option: `execution.checkpointing.interval` (the checkpoint interval, at which Flink's KafkaSink "+
					"commits its transactions).").
				Examples("1s", "200ms", "10s").
				Default(defaultCommitInterval).
				Advanced(),
			service.NewIntField(FieldMaxInFlight).
				Description("Number of batches written in parallel (count, at least 1). Default `1`: one batch at a time, so that "+
					"the records of a partition reach Kafka in the order the sink received them, also across retries (see "+
					"Ordering and retries above). Within a batch the producer still pipelines up to 5 requests per broker, in order "+
					"(idempotence), so larger batches (`batching`) are the way to more throughput. **Above 1, per-partition "+
					"order is not guaranteed**: batches race into the producer, and a batch retried after a failure can "+
					"land after a later one; the sink logs a warning at start. With `delivery_guarantee: exactly_once` it "+
					"must be 1 (a transactional producer runs one transaction at a time). Flink has no such option (its "+
					"sink writes in order); the Java producer's equivalent is `max.in.flight.requests.per.connection` with "+
					"idempotence (at most 5 requests, order kept), which connectd applies inside each batch.").
				Examples(1).
				Default(defaultMaxInFlight),
			service.NewBatchPolicyField(FieldBatching).
				Description("How messages are grouped into one write; with `exactly_once` a batch is one transaction. "+
					"Default with `at_least_once` and `none`: `count: 10000`, `byte_size: 4194304`, `period: 5ms` (a write waits up to "+
					"5ms for more messages, as the Java producer's `linger.ms` default): batches are written one at a time to keep "+
					"per-partition order, so an input that hands over one message at a time would otherwise wait for a round trip "+
					"per message; set `count: 1` to write each input batch as it comes. Default with `exactly_once`: none (each "+
					"input batch is one transaction). Units: `count` in messages, `byte_size` in bytes, `period` a Go duration. "+
					"Flink option: with exactly-once, the checkpoint interval (`execution.checkpointing.interval`); otherwise "+
					"`properties.linger.ms` / `properties.batch.size`."),
			// A string, not an enum field: empty (as `connectd create`
			// prints an optional field) means the default, which
			// depends on delivery_guarantee; the validator checks values.
			service.NewStringField(FieldAcks).
				Description("Acknowledgements a write waits for: `all` (every in-sync replica), `1` (the partition leader only) or `0` "+
					"(none: a record counts as written once sent). Must be `all` with `at_least_once` and `exactly_once`, which use the "+
					"idempotent producer (it needs `all`, and keeps per-partition order across retries). Default: `all`, and `1` with "+
					"`delivery_guarantee: none` (also when empty). Flink option: `properties.acks` (`-1` is `all`).").
				Examples(string(AcksAll), string(AcksLeader), string(AcksNone)).
				Optional().
				Advanced(),
			service.NewStringEnumField(FieldCompression,
				string(CompressionNone), string(CompressionGzip), string(CompressionSnappy), string(CompressionLZ4), string(CompressionZstd)).
				Description("Compression codec of record batches. Default `none`. Flink option: `properties.compression.type`.").
				Default(string(CompressionNone)).
				Advanced(),
			service.NewIntField(FieldMaxMessageBytes).
				Description("Largest record batch the producer sends, in bytes (uncompressed); a single message larger than this fails "+
					"alone without being sent (with exactly_once too: the rest of its batch commits). Between 512 and 104857600. "+
					"Default 1048576 (1 MiB). Keep it at most the topics' `max.message.bytes`: when the broker refuses a whole batch "+
					"of records, the bad one cannot be told apart, and with exactly_once the run ends. "+
					"Flink option: `properties.max.request.size`.").
				Default(defaultMaxMessageBytes).
				Advanced(),
			service.NewIntField(FieldMaxBufferedBytes).
				Description("Bytes of records (keys, values and headers) handed to the producer and not yet acknowledged by Kafka; "+
					"at this bound a write waits until Kafka acknowledges earlier records. It bounds the sink's memory: records "+
					"from a `kafka_source` are acknowledged to it once handed to the producer (`at_least_once`, `exactly_once`), "+
					"so this buffer, not the source, holds them until Kafka has them. Each record costs about 250 bytes of "+
					"memory besides. At least `max_message_bytes`, at most 1073741824 (1 GiB). Default `16777216` (16 MiB). "+
					"Flink option: `properties.buffer.memory` (Java default 32 MiB).").
				Default(defaultMaxBufferedBytes).
				Advanced(),
			service.NewBoolField(FieldAutoCreateTopics).
				Description("Ask the broker to create a topic that does not exist when a record is written to it, as the Java producer "+
					"does by default; the broker creates it only if its `auto.create.topics.enable` is true, with its default partitions. "+
					"A topic that does not exist and is not created (with `false`, or when the brokers do not create topics) "+
					"ends the run (exit 1) naming the topic, after 9 metadata refreshes without it (about 12 s) and a last check. Default `true`. "+
					"Flink option: `properties.allow.auto.create.topics`.").
				Default(true).
				Advanced(),
			service.NewDurationField(FieldTimeout).
				Description("How long one attempt of a write may wait for Kafka's acknowledgement before its unacknowledged records "+
					"are written again (Go duration, must be positive). Default `10s`. Roughly enforced: a record gives up its attempt at "+
					"the client's next retry point after the deadline. A record that timed out is written again in place, with the "+
					"later records of its partition (see Ordering and retries); it may still have been written, so the retry can "+
					"duplicate it (at-least-once). With exactly_once a timed-out record aborts its transaction, so nothing of the "+
					"batch is committed, and the transaction is written again; the same bound applies to the commit itself. "+
					"Flink option: `properties.delivery.timeout.ms`.").
				Default(defaultTimeout).
				Advanced(),
		).
		Fields(table.Fields()...).
		Example("Key-partitioned JSON events",
			"Writes each message to `orders`, keyed by its `customer_id` so that a customer's orders share a partition, "+
				"with the `trace_id` metadata as a header and the event time as the record timestamp.",
			exampleKeyed).
		Example("Write a Flink table",
			"The seed's sink table: rows (structured messages) are written to `device_metrics` in avro-confluent, keyed by the "+
				"PRIMARY KEY `device_id` (raw bytes), exactly-once with the table's transactional id prefix. The table names a "+
				"table of a catalog file of `CREATE TABLE` statements.",
			`
output:
  kafka_sink:
    catalog: ./config/tables.sql
    table: device_metrics
    transactional_id_suffix: ${HOSTNAME}
`).
		Example("Exactly-once batches",
			"Writes batches of up to 1000 messages (or what arrived within 500ms) as Kafka transactions, routing each message "+
				"to a topic named after its `kind` field. Each instance needs its own stable `transactional_id_suffix`; here the "+
				"host name. From an input that is not Kafka this is at-least-once with atomic batches.",
			exampleExactlyOnce)
}

// The spec's examples, also linted by the tests.
const (
	exampleKeyed = `
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
`
	exampleExactlyOnce = `
output:
  kafka_sink:
    seed_brokers: [ localhost:9092 ]
    topic: events-${! json("kind") }
    key: ${! json("id") }
    delivery_guarantee: exactly_once
    transactional_id_prefix: events-router
    transactional_id_suffix: "${HOSTNAME:0}"
    transaction_timeout: 1m
    batching:
      count: 1000
      period: 500ms
`
)

func init() {
	spec := Spec()
	speclint.Register(speclint.Output, "kafka_sink", spec, func(conf *service.ParsedConfig) error {
		_, err := ConfigFromParsed(conf)
		return err
	})
	err := service.RegisterBatchOutput("kafka_sink", spec,
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
