package kafkasink

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Partitioner names how records are spread over a topic's partitions. Flink
// option: `sink.partitioner`.
//
// Every partitioner is handed the topic's current partition count by the
// client, which refreshes topic metadata every metadata_max_age (and at once
// when a partition moves), so partitions added to a topic are used without a
// restart.
type Partitioner string

const (
	// PartitionerDefault is Flink's `default` partitioner, which defers to
	// the Java client: a keyed record goes to
	// Utils.toPositive(Utils.murmur2(key)) % numPartitions; a record with a
	// null key sticks to a random partition until its batch is sent, then
	// moves on (KIP-480). An empty key is a key (it hashes), but the sink
	// turns an empty interpolated key into a null key.
	PartitionerDefault Partitioner = "default"
	// PartitionerFixed is Flink's FlinkFixedPartitioner: every record of
	// this writer goes to partition WriterIndex % numPartitions, whatever
	// its key.
	PartitionerFixed Partitioner = "fixed"
	// PartitionerRoundRobin sends consecutive records of a topic to
	// consecutive partitions (0, 1, ..., n-1, 0, ...), whatever their key.
	// Unlike Flink's `round-robin` (the Java client's
	// RoundRobinPartitioner, which sticks to a partition per batch in some
	// versions), it moves on at every record.
	PartitionerRoundRobin Partitioner = "round_robin"
	// PartitionerManual takes each record's partition from the
	// interpolated `partition` field. A partition the topic does not have
	// fails that message only.
	PartitionerManual Partitioner = "manual"
	// PartitionerExpression evaluates the CEL partition_expression over
	// the record's key, value, metadata, topic and the topic's partition
	// count. A result the topic does not have fails that message only.
	PartitionerExpression Partitioner = "expression"
)

var partitioners = []Partitioner{PartitionerDefault, PartitionerFixed, PartitionerRoundRobin, PartitionerManual, PartitionerExpression}

// parsePartitioner accepts the connectd spelling and Flink's (`round-robin`).
// Unknown values pass through for validate to report.
func parsePartitioner(s string) Partitioner {
	return Partitioner(normalizeName(s))
}

func partitionerList() string {
	names := make([]string, len(partitioners))
	for i, p := range partitioners {
		names[i] = string(p)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// validatePartitioner collects the problems of the partitioner fields.
func (c Config) validatePartitioner() []error {
	var errs []error
	// An empty expression is reported once, as missing, below.
	if c.Partitioner != PartitionerExpression || c.PartitionExpression != "" {
		if _, err := c.kgoPartitioner(); err != nil {
			errs = append(errs, err)
		}
	}
	switch {
	case c.Partitioner == PartitionerManual && c.Partition == nil:
		errs = append(errs, fmt.Errorf("field %s: required with %s %s", FieldPartition, FieldPartitioner, PartitionerManual))
	case c.Partitioner != PartitionerManual && c.Partition != nil:
		errs = append(errs, fmt.Errorf("field %s: only used with %s %s, but %s is %s",
			FieldPartition, FieldPartitioner, PartitionerManual, FieldPartitioner, c.Partitioner))
	}
	switch {
	case c.Partitioner == PartitionerExpression && c.PartitionExpression == "":
		errs = append(errs, fmt.Errorf("field %s: required with %s %s", FieldPartitionExpression, FieldPartitioner, PartitionerExpression))
	case c.Partitioner != PartitionerExpression && c.PartitionExpression != "":
		errs = append(errs, fmt.Errorf("field %s: only used with %s %s, but %s is %s",
			FieldPartitionExpression, FieldPartitioner, PartitionerExpression, FieldPartitioner, c.Partitioner))
	}
	if c.WriterIndex < 0 {
		errs = append(errs, fmt.Errorf("field %s: must not be negative, got %d", FieldWriterIndex, c.WriterIndex))
	}
	return errs
}

// kgoPartitioner returns the franz-go partitioner of the config. The value
// holds no state (franz-go keeps per-topic state in what ForTopic returns, per
// client), so clients can share it. A partition_expression is compiled here;
// the sink calls this once, at construction.
func (c Config) kgoPartitioner() (kgo.Partitioner, error) {
	switch c.Partitioner {
	case PartitionerDefault:
		// A nil hasher is kgo.KafkaHasher(murmur2): murmur2 with the Java
		// seed, the sign bit masked (Utils.toPositive), modulo n. Pinned
		// against kafka-clients by TestDefaultPartitionerMatchesJava.
		return kgo.StickyKeyPartitioner(nil), nil
	case PartitionerFixed:
		return fixedPartitioner(c.WriterIndex), nil
	case PartitionerRoundRobin:
		// franz-go's is per topic and moves on at every record.
		return kgo.RoundRobinPartitioner(), nil
	case PartitionerManual:
		return manualPartitioner(), nil
	case PartitionerExpression:
		e, err := compilePartitionExpression(c.PartitionExpression)
		if err != nil {
			return nil, err
		}
		return expressionPartitioner(e), nil
	}
	return nil, fmt.Errorf("field %s: unknown partitioner %q (want %s)%s", FieldPartitioner, c.Partitioner, partitionerList(), partitionerHint(string(c.Partitioner)))
}

// fixedPartitioner is Flink's FlinkFixedPartitioner:
// partitions[parallelInstanceId % partitions.length].
func fixedPartitioner(writerIndex int) kgo.Partitioner {
	return kgo.BasicConsistentPartitioner(func(string) func(*kgo.Record, int) int {
		return func(_ *kgo.Record, n int) int { return writerIndex % n }
	})
}

// PartitionError is a message whose partition could not be chosen: the
// partition computed by Field does not exist in its topic, or (Err set) the
// partition_expression failed for it. The message fails alone; with
// exactly_once it is left out of the transaction (it never reached Kafka) and
// the others commit.
type PartitionError struct {
	Field         string // FieldPartition or FieldPartitionExpression
	Topic         string
	Partition     int64
	NumPartitions int
	Err           error
}

func (e *PartitionError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("field %s: topic %q: %v", e.Field, e.Topic, e.Err)
	}
	return fmt.Sprintf("field %s: partition %d is out of range for topic %q, which has %d partitions (want 0 to %d)",
		e.Field, e.Partition, e.Topic, e.NumPartitions, e.NumPartitions-1)
}

func (e *PartitionError) Unwrap() error { return e.Err }

// partitionCheck carries a partition error from the partitioner, which can
// only return a partition number, to the record's promise. The client fails a
// record whose partition is out of range with an untyped error; the sink
// reports the PartitionError instead. It also carries the message metadata to
// a partition_expression.
type partitionCheck struct {
	err  atomic.Pointer[PartitionError]
	meta map[string]string // read-only once the record is produced
}

type partitionCheckKey struct{}

// withPartitionCheck returns ctx carrying pc (a new one if nil), to become a
// record's Context (the client also cancels the record when ctx is done).
func withPartitionCheck(ctx context.Context, pc *partitionCheck) (context.Context, *partitionCheck) {
	if pc == nil {
		pc = new(partitionCheck)
	}
	return context.WithValue(ctx, partitionCheckKey{}, pc), pc
}

// partitionCheckOf returns r's partitionCheck, or nil.
func partitionCheckOf(r *kgo.Record) *partitionCheck {
	if r.Context == nil {
		return nil
	}
	pc, _ := r.Context.Value(partitionCheckKey{}).(*partitionCheck)
	return pc
}

// partitionErrorOf returns the partition error recorded for r, or nil.
func partitionErrorOf(r *kgo.Record) *PartitionError {
	if pc := partitionCheckOf(r); pc != nil {
		return pc.err.Load()
	}
	return nil
}

// manualPartitioner keeps the partition the record builder set from the
// `partition` field, and records a PartitionError for one the topic does not
// have (the client then fails the record).
func manualPartitioner() kgo.Partitioner {
	return kgo.BasicConsistentPartitioner(func(topic string) func(*kgo.Record, int) int {
		return func(r *kgo.Record, n int) int {
			p := int(r.Partition)
			if p < n {
				return p
			}
			if pc := partitionCheckOf(r); pc != nil {
				pc.err.Store(&PartitionError{Field: FieldPartition, Topic: topic, Partition: int64(p), NumPartitions: n})
			}
			return -1 // out of range: the client fails the record
		}
	})
}

// parsePartition reads the `partition` field's value for one message.
func parsePartition(s string) (int32, error) {
	p, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("want a partition number: %w", err)
	}
	if p < 0 {
		return 0, fmt.Errorf("partition must not be negative, got %d", p)
	}
	return int32(p), nil
}
