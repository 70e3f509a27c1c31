package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/table"
)

// partitionUnassigned marks a record that has not been partitioned yet. The
// client overwrites it when it picks a partition, so a failed record still
// carrying it failed before reaching a partition.
const partitionUnassigned = -1

// recordBuilder turns messages into records. It only reads its fields, so it
// is safe for concurrent use by parallel WriteBatch calls.
type recordBuilder struct {
	topic       *service.InterpolatedString
	key         *service.InterpolatedString // nil: null key
	timestampMs *service.InterpolatedString // nil: produce time
	headers     *service.MetadataFilter     // nil: no headers (also for an empty filter)
	partition   *service.InterpolatedString // nil: the partitioner chooses
	// partitionMeta: the partitioner reads the message metadata (a
	// partition_expression), carried in the record's partitionCheck.
	partitionMeta bool
	// table encodes the message's row into value, key, timestamp and
	// headers (table.go); nil without a table.
	table *table.Codec
}

func newRecordBuilder(c Config) recordBuilder {
	headers := c.Headers
	if headers != nil && headers.IsEmpty() {
		headers = nil // decided once, not per message
	}
	return recordBuilder{
		topic:         c.Topic,
		key:           c.Key,
		timestampMs:   c.TimestampMs,
		headers:       headers,
		partition:     c.Partition,
		partitionMeta: c.Partitioner == PartitionerExpression,
		table:         c.Table,
	}
}

// batchRecords builds the records of one batch. Its interpolation executors
// hold the batch once, so that batch functions (batch_index(), batch_size())
// work without copying the batch for every message and expression (Benthos's
// MessageBatch.TryInterpolatedString does that copy on each call: quadratic
// in the batch size, a second per 10,000-record batch).
type batchRecords struct {
	b                                  recordBuilder
	batch                              service.MessageBatch
	topic, key, timestampMs, partition *service.MessageBatchInterpolationExecutor
}

// forBatch prepares to build the records of batch.
func (b recordBuilder) forBatch(batch service.MessageBatch) batchRecords {
	br := batchRecords{b: b, batch: batch, topic: batch.InterpolationExecutor(b.topic)}
	if b.key != nil {
		br.key = batch.InterpolationExecutor(b.key)
	}
	if b.timestampMs != nil {
		br.timestampMs = batch.InterpolationExecutor(b.timestampMs)
	}
	if b.partition != nil {
		br.partition = batch.InterpolationExecutor(b.partition)
	}
	return br
}

// build returns the record for message i of the batch. On error the record
// is nil, or carries the topic if that was already computed (for metric
// labels).
func (br batchRecords) build(i int) (*kgo.Record, error) {
	b, msg := br.b, br.batch[i]
	topic, err := br.topic.TryString(i)
	if err != nil {
		return nil, fmt.Errorf("field %s: %w", FieldTopic, err)
	}
	if topic == "" {
		return nil, fmt.Errorf("field %s: evaluated to an empty topic name", FieldTopic)
	}
	r := &kgo.Record{Topic: topic, Partition: partitionUnassigned}

	if r.Value, err = msg.AsBytes(); err != nil {
		return r, fmt.Errorf("reading message payload for topic %q: %w", topic, err)
	}
	if b.key != nil {
		key, err := br.key.TryBytes(i)
		if err != nil {
			return r, fmt.Errorf("field %s: %w", FieldKey, err)
		}
		if len(key) > 0 {
			r.Key = key
		}
	}
	if b.timestampMs != nil {
		s, err := br.timestampMs.TryString(i)
		if err != nil {
			return r, fmt.Errorf("field %s: %w", FieldTimestampMs, err)
		}
		if s = strings.TrimSpace(s); s != "" {
			ms, err := parseTimestampMs(s)
			if err != nil {
				return r, fmt.Errorf("field %s: %w", FieldTimestampMs, err)
			}
			r.Timestamp = time.UnixMilli(ms)
		}
	}
	if b.partition != nil {
		s, err := br.partition.TryString(i)
		if err != nil {
			return r, fmt.Errorf("field %s: %w", FieldPartition, err)
		}
		if r.Partition, err = parsePartition(s); err != nil {
			r.Partition = partitionUnassigned
			return r, fmt.Errorf("field %s: topic %q: %w", FieldPartition, topic, err)
		}
	}
	if b.partitionMeta {
		meta := map[string]string{}
		_ = msg.MetaWalk(func(k, v string) error {
			meta[k] = v
			return nil
		})
		r.Context, _ = withPartitionCheck(context.Background(), &partitionCheck{meta: meta})
	}
	if b.headers != nil {
		_ = b.headers.Walk(msg, func(k, v string) error {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
			return nil
		})
		// Metadata has no order; sort so that equal messages give equal
		// records.
		slices.SortFunc(r.Headers, func(a, b kgo.RecordHeader) int { return strings.Compare(a.Key, b.Key) })
	}
	if b.table != nil {
		return r, fillFromTable(b.table, msg, r)
	}
	return r, nil
}

var errNegativeTimestamp = errors.New("timestamp must not be negative")

// parseTimestampMs reads milliseconds since the epoch. Kafka rejects negative
// timestamps (other than the -1 "none" marker, which a sink never sends).
func parseTimestampMs(s string) (int64, error) {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("want integer milliseconds since the Unix epoch: %w", err)
	}
	if ms < 0 {
		return 0, fmt.Errorf("%w, got %d", errNegativeTimestamp, ms)
	}
	return ms, nil
}

// recordBytes is the size of r's key, value and headers, as counted by the
// bytes-sent metric (the wire adds framing and compresses).
func recordBytes(r *kgo.Record) int64 {
	n := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return int64(n)
}
