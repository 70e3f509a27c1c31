package kafkasink

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/speclint"
	"github.com/connectd/connectd/internal/table"
)

// DeliveryGuarantee is what the sink promises about a message once the input
// has been told it was written. Flink option: `sink.delivery-guarantee`.
type DeliveryGuarantee string

const (
	// DeliveryAtLeastOnce uses the idempotent producer with acks=all: an
	// acknowledged message is on every in-sync replica, and the producer's
	// own retries do not duplicate it. Benthos retries of failed messages
	// can. This is the default.
	DeliveryAtLeastOnce DeliveryGuarantee = "at_least_once"
	// DeliveryNone uses acks=1 (leader only) without idempotence: errors
	// are reported, but acknowledged records can be lost when a leader
	// fails, and retries can duplicate them.
	DeliveryNone DeliveryGuarantee = "none"
	// DeliveryExactlyOnce writes each batch in one Kafka transaction with
	// a transactional producer (acks=all, idempotent): a batch's records
	// become visible to read_committed readers all together, and the
	// batch is acknowledged only after the commit. Retries after a failed
	// commit can still repeat a batch that an input redelivers, so from a
	// non-Kafka input this is at-least-once with atomic batches.
	DeliveryExactlyOnce DeliveryGuarantee = "exactly_once"
)

// parseDeliveryGuarantee accepts the connectd spelling and Flink's
// (`at-least-once`, `AT_LEAST_ONCE`). Unknown values pass through for
// validate to report.
func parseDeliveryGuarantee(s string) DeliveryGuarantee {
	return DeliveryGuarantee(normalizeName(s))
}

// normalizeName turns a Flink spelling of an option value (`at-least-once`,
// `AT_LEAST_ONCE`, `round-robin`) into the connectd one. The lint rule
// normalises the same way.
func normalizeName(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
}

// Acks is how many replicas acknowledge a write. Flink option:
// `properties.acks`.
type Acks string

// Acks values, as the Java client's `acks`.
const (
	// AcksAll waits for every in-sync replica; the idempotent producer
	// (at_least_once, exactly_once) needs it.
	AcksAll Acks = "all"
	// AcksLeader waits for the partition leader only.
	AcksLeader Acks = "1"
	// AcksNone waits for nothing.
	AcksNone Acks = "0"
)

// parseAcks accepts the Java spellings (`-1` is `all`).
func parseAcks(s string) Acks {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "-1" {
		return AcksAll
	}
	return Acks(s)
}

// Compression is the codec of produced record batches. Flink option:
// `properties.compression.type`.
type Compression string

// Compression codecs.
const (
	CompressionNone   Compression = "none"
	CompressionGzip   Compression = "gzip"
	CompressionSnappy Compression = "snappy"
	CompressionLZ4    Compression = "lz4"
	CompressionZstd   Compression = "zstd"
)

// codec returns the franz-go codec, and false for an unknown value.
func (c Compression) codec() (kgo.CompressionCodec, bool) {
	switch c {
	case CompressionNone:
		return kgo.NoCompression(), true
	case CompressionGzip:
		return kgo.GzipCompression(), true
	case CompressionSnappy:
		return kgo.SnappyCompression(), true
	case CompressionLZ4:
		return kgo.Lz4Compression(), true
	case CompressionZstd:
		return kgo.ZstdCompression(), true
	}
	return kgo.CompressionCodec{}, false
}

// Config is the typed configuration of a kafka_sink. The zero value is not
// usable; ConfigFromParsed fills it from YAML, and programmatic users set
// every field.
type Config struct {
	// Conn holds the connection settings (brokers, TLS, SASL).
	Conn kafkaconn.Config
	// Topic is evaluated per message. Required.
	Topic *service.InterpolatedString
	// Key is evaluated per message; nil, or an empty result, is a null key.
	Key *service.InterpolatedString
	// Partitioner chooses a record's partition. Default PartitionerDefault.
	Partitioner Partitioner
	// Headers selects the metadata written as record headers; nil selects
	// none.
	Headers *service.MetadataFilter
	// TimestampMs is evaluated per message to milliseconds since the epoch;
	// nil, or an empty result, is the produce time.
	TimestampMs *service.InterpolatedString
	// DeliveryGuarantee defaults to DeliveryAtLeastOnce.
	DeliveryGuarantee DeliveryGuarantee
	// MaxInFlight is the number of batches written in parallel. Default 1,
	// which keeps per-partition order; above 1 batches race into the
	// producer and order is not guaranteed. With DeliveryExactlyOnce it
	// must be 1, since a transactional producer runs one transaction at a
	// time.
	MaxInFlight int
	// TransactionalIDPrefix, joined with TransactionalIDSuffix, is the
	// transactional id. Required with DeliveryExactlyOnce, and only
	// allowed with it. Flink option: `sink.transactional-id-prefix`.
	TransactionalIDPrefix string
	// TransactionalIDSuffix makes the transactional id unique per writer
	// and stable across restarts, so that a restarted writer fences its
	// predecessor. Default "0".
	TransactionalIDSuffix string
	// TransactionTimeout is how long the broker lets a transaction stay
	// open before aborting it. Default 1m. Flink option:
	// `properties.transaction.timeout.ms`.
	TransactionTimeout time.Duration
	// CommitInterval is how often an exactly_once sink commits the
	// transaction that records from a kafka_source flow into (rounds.go).
	// Default 1s. Flink option: `execution.checkpointing.interval`.
	CommitInterval time.Duration
	// Partition is evaluated per message to the partition number with
	// PartitionerManual; nil otherwise.
	Partition *service.InterpolatedString
	// PartitionExpression is the CEL program of PartitionerExpression;
	// empty otherwise.
	PartitionExpression string
	// WriterIndex is this writer's index for PartitionerFixed (Flink's
	// subtask index). Default 0.
	WriterIndex int
	// Batching is the Benthos batch policy in front of the sink.
	Batching service.BatchPolicy
	// Compression defaults to CompressionNone.
	Compression Compression
	// Acks: "" is AcksAll, and AcksLeader with DeliveryNone. Must be
	// AcksAll (or "") with DeliveryAtLeastOnce and DeliveryExactlyOnce.
	Acks Acks
	// MaxMessageBytes bounds a record batch (and so a single record), in
	// bytes. Default 1 MiB.
	MaxMessageBytes int
	// MaxBufferedBytes bounds the keys, values and headers of the records
	// handed to the producer and not yet acknowledged by Kafka, in bytes;
	// a write waits at the bound. Default 16 MiB (defaultMaxBufferedBytes).
	MaxBufferedBytes int
	// Timeout is how long a record may wait for its acknowledgement.
	// Default 10s.
	Timeout time.Duration
	// AllowAutoTopicCreation asks the broker to create missing topics.
	// Default true, as the Java producer.
	AllowAutoTopicCreation bool
	// ReduceByKey writes, of the records of one batch that share a topic
	// and key, only the last: upsert-kafka's sink.buffer-flush.max-rows /
	// sink.buffer-flush.interval, where a batch is a flush (Flink's
	// ReducingUpsertWriter). Set by an upsert-kafka table that buffers.
	// Default false.
	ReduceByKey bool
	// Table, when set, encodes each message's row into the record's value,
	// key, timestamp and headers; its WITH options also set the topic,
	// brokers, delivery guarantee, transactional id prefix and partitioner
	// (table.go). nil: the message content is the value.
	Table *table.Codec
}

// ConfigFromParsed reads and validates a kafka_sink config.
func ConfigFromParsed(conf *service.ParsedConfig) (Config, error) {
	var (
		c       Config
		err     error
		connErr error // kafkaconn reads and validates its fields in one step
		errs    []error
	)
	// Every field is read even after a failure so that all problems are
	// reported at once. validate runs only when every field could be read,
	// so that a field left at its zero value is not reported twice; a
	// duration that does not parse takes its default instead, so that the
	// checks of validate still run.
	keep := func(e error) {
		if e != nil {
			errs = append(errs, e)
		}
	}
	// keepField names the field of an error Benthos words without it.
	keepField := func(field string, e error) {
		if e != nil {
			errs = append(errs, fmt.Errorf("field %s: %w", field, e))
		}
	}
	var durErrs []error
	duration := func(field, def string) time.Duration {
		d, err := speclint.Duration(conf, field)
		if err != nil {
			durErrs = append(durErrs, err)
			d, _ = time.ParseDuration(def)
		}
		return d
	}
	table, tset, err := tableFromParsed(conf)
	if err != nil {
		// The table's problems first: the rest depends on its settings.
		return c, err
	}
	c.Conn, connErr = kafkaconn.FromParsedTable(conf, tset.conn)
	if conf.Contains(FieldTopic) {
		c.Topic, err = conf.FieldInterpolatedString(FieldTopic)
		keepField(FieldTopic, err)
	}
	if conf.Contains(FieldKey) {
		c.Key, err = conf.FieldInterpolatedString(FieldKey)
		keepField(FieldKey, err)
	}
	if conf.Contains(FieldTimestampMs) {
		c.TimestampMs, err = conf.FieldInterpolatedString(FieldTimestampMs)
		keepField(FieldTimestampMs, err)
	}
	part, err := conf.FieldString(FieldPartitioner)
	keep(err)
	c.Partitioner = parsePartitioner(part)
	// An empty partition is unset, as `connectd create` writes it.
	if s, _ := conf.FieldString(FieldPartition); s != "" {
		c.Partition, err = conf.FieldInterpolatedString(FieldPartition)
		keepField(FieldPartition, err)
	}
	c.PartitionExpression, err = conf.FieldString(FieldPartitionExpression)
	keep(err)
	c.WriterIndex, err = conf.FieldInt(FieldWriterIndex)
	keep(err)
	c.Headers, err = conf.FieldMetadataFilter(FieldMetadata)
	keepField(FieldMetadata, err)
	dg, err := conf.FieldString(FieldDeliveryGuarantee)
	keep(err)
	c.DeliveryGuarantee = parseDeliveryGuarantee(dg)
	c.MaxInFlight, err = conf.FieldInt(FieldMaxInFlight)
	keep(err)
	c.TransactionalIDPrefix, err = conf.FieldString(FieldTransactionalIDPrefix)
	keep(err)
	c.TransactionalIDSuffix, err = conf.FieldString(FieldTransactionalIDSuffix)
	keep(err)
	c.TransactionTimeout = duration(FieldTransactionTimeout, defaultTransactionTimeout)
	c.CommitInterval = duration(FieldCommitInterval, defaultCommitInterval)
	c.Batching, err = conf.FieldBatchPolicy(FieldBatching)
	keepField(FieldBatching, err)
	comp, err := conf.FieldString(FieldCompression)
	keep(err)
	c.Compression = Compression(comp)
	if conf.Contains(FieldAcks) {
		acks, err := conf.FieldString(FieldAcks)
		keep(err)
		if acks != "" {
			c.Acks = parseAcks(acks)
		}
	}
	c.MaxMessageBytes, err = conf.FieldInt(FieldMaxMessageBytes)
	keep(err)
	c.MaxBufferedBytes, err = conf.FieldInt(FieldMaxBufferedBytes)
	keep(err)
	c.Timeout = duration(FieldTimeout, defaultTimeout)
	c.AllowAutoTopicCreation, err = conf.FieldBool(FieldAutoCreateTopics)
	keep(err)
	if table != nil {
		c.Table = table
		keep(c.applyTable(tset, conf.Contains(FieldMaxInFlight)))
	}
	c.Batching = c.defaultBatching()
	if len(errs) > 0 {
		return c, errors.Join(append([]error{connErr}, append(errs, durErrs...)...)...)
	}
	return c, errors.Join(append([]error{connErr}, append(durErrs, c.validate())...)...)
}

// defaultBatching returns the batching policy: the one set, or, with
// at_least_once and none when none is set, defaultBatchCount messages or
// defaultBatchBytes bytes within defaultBatchPeriod. Batches are written one
// at a time (max_in_flight 1, for order), so without batching an input that
// hands over one message at a time would wait for a round trip per message.
// `count: 1` (a no-op policy, unlike the unset count 0) keeps each input
// batch as it comes. exactly_once keeps its batches: each is a transaction.
func (c Config) defaultBatching() service.BatchPolicy {
	b := c.Batching
	if c.DeliveryGuarantee == DeliveryExactlyOnce || !b.IsNoop() || b.Count != 0 {
		return b
	}
	b.Count, b.ByteSize, b.Period = defaultBatchCount, defaultBatchBytes, defaultBatchPeriod
	return b
}

// validate collects every problem of the sink's own fields (the connection
// fields are validated by kafkaconn). It runs again in NewSink, since
// programmatic users do not go through ConfigFromParsed.
func (c Config) validate() error {
	var errs []error
	if c.Topic == nil {
		errs = append(errs, fmt.Errorf("field %s: required", FieldTopic))
	} else if s, static := c.Topic.Static(); static && s == "" {
		errs = append(errs, fmt.Errorf("field %s: must not be empty", FieldTopic))
	}
	errs = append(errs, c.validatePartitioner()...)
	errs = append(errs, c.validateGuarantee()...)
	if c.MaxInFlight < 1 {
		errs = append(errs, fmt.Errorf("field %s: must be at least 1, got %d", FieldMaxInFlight, c.MaxInFlight))
	}
	if c.TransactionTimeout < time.Millisecond {
		// Kafka takes whole milliseconds and refuses 0.
		errs = append(errs, fmt.Errorf("field %s: must be at least 1ms, got %v", FieldTransactionTimeout, c.TransactionTimeout))
	}
	switch c.Acks {
	case "", AcksAll, AcksLeader, AcksNone:
	default:
		errs = append(errs, fmt.Errorf("field %s: unknown value %q (want %s, %s or %s)", FieldAcks, c.Acks, AcksAll, AcksLeader, AcksNone))
	}
	if _, ok := c.Compression.codec(); !ok {
		errs = append(errs, fmt.Errorf("field %s: unknown codec %q (want %s, %s, %s, %s or %s)", FieldCompression, c.Compression,
			CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd))
	}
	if c.MaxMessageBytes < minMessageBytes || c.MaxMessageBytes > maxMessageBytes {
		errs = append(errs, fmt.Errorf("field %s: must be between %d and %d bytes, got %d",
			FieldMaxMessageBytes, minMessageBytes, maxMessageBytes, c.MaxMessageBytes))
	}
	switch {
	case c.MaxBufferedBytes > maxBufferedBytes:
		errs = append(errs, fmt.Errorf("field %s: must be at most %d bytes (1 GiB), got %d", FieldMaxBufferedBytes, maxBufferedBytes, c.MaxBufferedBytes))
	case c.MaxBufferedBytes < c.MaxMessageBytes:
		// franz-go fails a record larger than the buffer at once.
		errs = append(errs, fmt.Errorf("field %s: must be at least %s (%d bytes), or a record of that size could never be written; got %d",
			FieldMaxBufferedBytes, FieldMaxMessageBytes, c.MaxMessageBytes, c.MaxBufferedBytes))
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("field %s: must be positive, got %v", FieldTimeout, c.Timeout))
	}
	if c.Batching.Period != "" {
		if _, err := time.ParseDuration(c.Batching.Period); err != nil {
			errs = append(errs, fmt.Errorf("field %s.period: expected a Go duration such as \"500ms\", \"5s\" or \"1m\", got %q", FieldBatching, c.Batching.Period))
		}
	}
	return errors.Join(errs...)
}

// validateGuarantee collects the problems of delivery_guarantee and the
// fields that depend on it.
func (c Config) validateGuarantee() []error {
	var errs []error
	switch c.DeliveryGuarantee {
	case DeliveryAtLeastOnce, DeliveryNone:
		if c.DeliveryGuarantee == DeliveryAtLeastOnce && c.Acks != "" && c.Acks != AcksAll {
			errs = append(errs, fmt.Errorf("field %s: must be %s with %s %s (the idempotent producer needs it and keeps per-partition order with it), got %s",
				FieldAcks, AcksAll, FieldDeliveryGuarantee, c.DeliveryGuarantee, c.Acks))
		}
		if c.TransactionalIDPrefix != "" {
			errs = append(errs, fmt.Errorf("field %s: only used with %s %s, but %s is %s",
				FieldTransactionalIDPrefix, FieldDeliveryGuarantee, DeliveryExactlyOnce, FieldDeliveryGuarantee, c.DeliveryGuarantee))
		}
	case DeliveryExactlyOnce:
		if c.Acks != "" && c.Acks != AcksAll {
			errs = append(errs, fmt.Errorf("field %s: must be %s with %s %s (transactions need the idempotent producer), got %s",
				FieldAcks, AcksAll, FieldDeliveryGuarantee, c.DeliveryGuarantee, c.Acks))
		}
		errs = append(errs, c.validateExactlyOnce()...)
	default:
		errs = append(errs, fmt.Errorf("field %s: unknown value %q (want %s, %s or %s)",
			FieldDeliveryGuarantee, c.DeliveryGuarantee, DeliveryAtLeastOnce, DeliveryExactlyOnce, DeliveryNone))
	}
	return errs
}

// validateExactlyOnce collects the problems of the exactly_once fields.
func (c Config) validateExactlyOnce() []error {
	var errs []error
	if strings.TrimSpace(c.TransactionalIDPrefix) == "" {
		errs = append(errs, fmt.Errorf("field %s: required with %s %s",
			FieldTransactionalIDPrefix, FieldDeliveryGuarantee, DeliveryExactlyOnce))
	}
	if strings.TrimSpace(c.TransactionalIDSuffix) == "" {
		errs = append(errs, fmt.Errorf("field %s: must not be empty with %s %s (an unset environment variable?)",
			FieldTransactionalIDSuffix, FieldDeliveryGuarantee, DeliveryExactlyOnce))
	}
	if c.MaxInFlight > 1 {
		errs = append(errs, fmt.Errorf("field %s: must be 1 with %s %s (a transactional producer runs one transaction at a time), got %d",
			FieldMaxInFlight, FieldDeliveryGuarantee, DeliveryExactlyOnce, c.MaxInFlight))
	}
	switch {
	case c.CommitInterval < time.Millisecond:
		errs = append(errs, fmt.Errorf("field %s: must be at least 1ms, got %v", FieldCommitInterval, c.CommitInterval))
	case c.TransactionTimeout > 0 && c.CommitInterval >= c.TransactionTimeout:
		errs = append(errs, fmt.Errorf("field %s: must be shorter than %s (%v) with %s %s, got %v",
			FieldCommitInterval, FieldTransactionTimeout, c.TransactionTimeout, FieldDeliveryGuarantee, DeliveryExactlyOnce, c.CommitInterval))
	}
	if c.Batching.Period != "" && c.TransactionTimeout > 0 {
		period, err := time.ParseDuration(c.Batching.Period)
		switch {
		case err != nil:
			// validate reports it.
		case period >= c.TransactionTimeout:
			errs = append(errs, fmt.Errorf("field %s.period: must be shorter than %s (%v) with %s %s, got %v",
				FieldBatching, FieldTransactionTimeout, c.TransactionTimeout, FieldDeliveryGuarantee, DeliveryExactlyOnce, period))
		}
	}
	return errs
}

// producers is the number of producers of the sink: two for exactly_once
// (rounds.go), else one.
func (c Config) producers() int {
	if c.DeliveryGuarantee == DeliveryExactlyOnce {
		return 2
	}
	return 1
}

// TransactionalID is the transactional id of an exactly_once sink:
// `<prefix>-<suffix>`.
func (c Config) TransactionalID() string {
	return c.TransactionalIDPrefix + "-" + c.TransactionalIDSuffix
}

// spareTransactionalID is the transactional id of the second producer of an
// exactly_once sink's pool (rounds.go): `<prefix>-<suffix>-1`.
func (c Config) spareTransactionalID() string {
	return c.TransactionalID() + "-1"
}

// unknownTopicRetries is how many metadata loads without the topic fail a
// record (kgo.UnknownTopicRetries): about 12 s from the first, measured on
// kfake at the client's default timings.
const unknownTopicRetries = 9

// producerOpts turns the sink's fields into client options, with part as
// the partitioner; the connection options come from kafkaconn. Call only on a
// validated Config.
func (c Config) producerOpts(part kgo.Partitioner) []kgo.Opt {
	codec, _ := c.Compression.codec()
	opts := []kgo.Opt{
		kgo.RecordPartitioner(part),
		kgo.ProducerBatchCompression(codec),
		kgo.ProducerBatchMaxBytes(int32(c.MaxMessageBytes)),
		kgo.MaxBufferedBytes(c.MaxBufferedBytes),
		// No kgo.RecordDeliveryTimeout: franz-go measures it from the
		// record's timestamp, so a record with an old timestamp_ms
		// would fail at once. The sink bounds each write with a context
		// deadline of Timeout instead (Sink.produce).
		// Benthos batches in front of the sink: a batch's records are
		// produced back to back, so waiting for more only adds latency.
		kgo.ProducerLinger(0),
		// A topic created just before the run can be missing from a
		// broker's metadata for a moment (KRaft brokers apply the
		// controller's metadata asynchronously). franz-go's default of 4
		// metadata loads gives it about 1 s; 9 give it about 12 s (the
		// loads after the sixth are 5 s apart, MetadataMinAge) before
		// the records fail with UNKNOWN_TOPIC_OR_PARTITION (Java's
		// producer waits up to max.block.ms, 60 s, for the metadata).
		kgo.UnknownTopicRetries(unknownTopicRetries),
	}
	if c.AllowAutoTopicCreation {
		opts = append(opts, kgo.AllowAutoTopicCreation())
	}
	switch c.DeliveryGuarantee {
	case DeliveryAtLeastOnce:
		// The idempotent producer alone never fails a record once it
		// tried to send it, so a lost cluster would block WriteBatch
		// forever. Allowing cancellation lets the Timeout deadline fail
		// it, as Java's delivery.timeout.ms does; Benthos then retries
		// it, which can duplicate it: that is at-least-once.
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.AllowIdempotentProduceCancellation())
	case DeliveryNone:
		acks := kgo.LeaderAck()
		switch c.Acks {
		case AcksAll:
			acks = kgo.AllISRAcks()
		case AcksNone:
			acks = kgo.NoAck()
		}
		opts = append(opts, kgo.RequiredAcks(acks), kgo.DisableIdempotentWrite())
	case DeliveryExactlyOnce:
		// No AllowIdempotentProduceCancellation: franz-go refuses it
		// with a transactional id. A record that is in flight when the
		// Timeout deadline passes is waited for; the transaction is
		// then aborted as a whole if anything failed.
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.TransactionalID(c.TransactionalID()),
			kgo.TransactionTimeout(c.TransactionTimeout))
	}
	return opts
}
