package kafkasink

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkaconn"
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
	// DeliveryExactlyOnce writes in Kafka transactions. Reserved: it is
	// rejected by validate until transactions are implemented.
	DeliveryExactlyOnce DeliveryGuarantee = "exactly_once"
)

// parseDeliveryGuarantee accepts the connectd spelling and Flink's
// (`at-least-once`, `AT_LEAST_ONCE`). Unknown values pass through for
// validate to report.
func parseDeliveryGuarantee(s string) DeliveryGuarantee {
	return DeliveryGuarantee(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_"))
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
	// MaxInFlight is the number of batches written in parallel. Default 64.
	MaxInFlight int
	// Batching is the Benthos batch policy in front of the sink.
	Batching service.BatchPolicy
	// Compression defaults to CompressionNone.
	Compression Compression
	// MaxMessageBytes bounds a record batch (and so a single record), in
	// bytes. Default 1 MiB.
	MaxMessageBytes int
	// Timeout is how long a record may wait for its acknowledgement.
	// Default 10s.
	Timeout time.Duration
	// AllowAutoTopicCreation asks the broker to create missing topics.
	// Default true, as the Java producer.
	AllowAutoTopicCreation bool
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
	// so that a field left at its zero value is not reported twice.
	keep := func(e error) {
		if e != nil {
			errs = append(errs, e)
		}
	}
	c.Conn, connErr = kafkaconn.FromParsed(conf)
	c.Topic, err = conf.FieldInterpolatedString(FieldTopic)
	keep(err)
	if conf.Contains(FieldKey) {
		c.Key, err = conf.FieldInterpolatedString(FieldKey)
		keep(err)
	}
	if conf.Contains(FieldTimestampMs) {
		c.TimestampMs, err = conf.FieldInterpolatedString(FieldTimestampMs)
		keep(err)
	}
	part, err := conf.FieldString(FieldPartitioner)
	keep(err)
	c.Partitioner = Partitioner(part)
	c.Headers, err = conf.FieldMetadataFilter(FieldMetadata)
	keep(err)
	dg, err := conf.FieldString(FieldDeliveryGuarantee)
	keep(err)
	c.DeliveryGuarantee = parseDeliveryGuarantee(dg)
	c.MaxInFlight, err = conf.FieldInt(FieldMaxInFlight)
	keep(err)
	c.Batching, err = conf.FieldBatchPolicy(FieldBatching)
	keep(err)
	comp, err := conf.FieldString(FieldCompression)
	keep(err)
	c.Compression = Compression(comp)
	c.MaxMessageBytes, err = conf.FieldInt(FieldMaxMessageBytes)
	keep(err)
	c.Timeout, err = conf.FieldDuration(FieldTimeout)
	keep(err)
	c.AllowAutoTopicCreation, err = conf.FieldBool(FieldAutoCreateTopics)
	keep(err)
	if len(errs) > 0 {
		return c, errors.Join(append([]error{connErr}, errs...)...)
	}
	return c, errors.Join(connErr, c.validate())
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
	if _, err := c.Partitioner.kgoPartitioner(); err != nil {
		errs = append(errs, err)
	}
	switch c.DeliveryGuarantee {
	case DeliveryAtLeastOnce, DeliveryNone:
	case DeliveryExactlyOnce:
		errs = append(errs, fmt.Errorf("field %s: %s is not yet supported (want %s or %s)",
			FieldDeliveryGuarantee, DeliveryExactlyOnce, DeliveryAtLeastOnce, DeliveryNone))
	default:
		errs = append(errs, fmt.Errorf("field %s: unknown value %q (want %s or %s)",
			FieldDeliveryGuarantee, c.DeliveryGuarantee, DeliveryAtLeastOnce, DeliveryNone))
	}
	if c.MaxInFlight < 1 {
		errs = append(errs, fmt.Errorf("field %s: must be at least 1, got %d", FieldMaxInFlight, c.MaxInFlight))
	}
	if _, ok := c.Compression.codec(); !ok {
		errs = append(errs, fmt.Errorf("field %s: unknown codec %q (want %s, %s, %s, %s or %s)", FieldCompression, c.Compression,
			CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd))
	}
	if c.MaxMessageBytes < minMessageBytes || c.MaxMessageBytes > maxMessageBytes {
		errs = append(errs, fmt.Errorf("field %s: must be between %d and %d bytes, got %d",
			FieldMaxMessageBytes, minMessageBytes, maxMessageBytes, c.MaxMessageBytes))
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("field %s: must be positive, got %v", FieldTimeout, c.Timeout))
	}
	return errors.Join(errs...)
}

// producerOpts turns the sink's fields into client options; the connection
// options come from kafkaconn. Call only on a validated Config.
func (c Config) producerOpts() []kgo.Opt {
	codec, _ := c.Compression.codec()
	part, _ := c.Partitioner.kgoPartitioner()
	opts := []kgo.Opt{
		kgo.RecordPartitioner(part),
		kgo.ProducerBatchCompression(codec),
		kgo.ProducerBatchMaxBytes(int32(c.MaxMessageBytes)),
		// No kgo.RecordDeliveryTimeout: franz-go measures it from the
		// record's timestamp, so a record with an old timestamp_ms
		// would fail at once. The sink bounds each write with a context
		// deadline of Timeout instead (Sink.produce).
		// Benthos batches in front of the sink: a batch's records are
		// produced back to back, so waiting for more only adds latency.
		kgo.ProducerLinger(0),
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
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	}
	return opts
}
