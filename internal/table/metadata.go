package table

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/schema/format"
)

// Message metadata set by kafka_source (the names of Benthos's own Kafka
// inputs) that carries Flink's readable metadata of a record.
const (
	MetaTopic         = "kafka_topic"
	MetaPartition     = "kafka_partition"
	MetaOffset        = "kafka_offset"
	MetaTimestamp     = "kafka_timestamp_ms"
	MetaTimestampType = "kafka_timestamp_type"
	MetaLeaderEpoch   = "kafka_leader_epoch"
	// MetaTombstone is true on a record with a null value; kafka_sink
	// writes a delete for an upsert-kafka table when it is true.
	MetaTombstone = "kafka_tombstone_message"
)

// metaPrefix starts every kafka_* metadata name; any other metadata field
// is a record header.
const metaPrefix = "kafka_"

// readable maps each readable metadata key of Flink's Kafka connector
// (`METADATA FROM 'key'`) to where connectd finds it: the message metadata
// that kafka_source sets, and the field of a record. Headers have no single
// metadata name: they are every metadata field outside kafka_*.
//
// The record getters take the record by value: a pointer passed to a
// function value escapes, which would cost each decoded record an
// allocation.
var readable = map[string]struct {
	meta   string
	record func(r Record) any
}{
	"topic":     {MetaTopic, func(r Record) any { return r.Topic }},
	"partition": {MetaPartition, func(r Record) any { return int64(r.Partition) }},
	"offset":    {MetaOffset, func(r Record) any { return r.Offset }},
	"timestamp": {MetaTimestamp, func(r Record) any {
		if !r.HasTimestamp {
			return nil
		}
		return r.Timestamp
	}},
	"timestamp-type": {MetaTimestampType, func(r Record) any { return r.TimestampType }},
	"leader-epoch": {MetaLeaderEpoch, func(r Record) any {
		if r.LeaderEpoch < 0 {
			return nil
		}
		return int64(r.LeaderEpoch)
	}},
	"headers": {"", func(r Record) any { return headersValue(r.Headers) }},
}

// MetadataName returns the message metadata that carries Flink's readable
// metadata key (kafka_topic for `topic`); "" for `headers`, which are every
// metadata field outside kafka_*, and for a key Flink does not define.
func MetadataName(key string) string { return readable[key].meta }

// metadataOf returns Flink's readable metadata key of r; nil for an unknown
// key.
func (r *Record) metadataOf(key string) any {
	if m, ok := readable[key]; ok {
		return m.record(*r)
	}
	return nil
}

// metadataReader returns the getter of Flink's readable metadata key, one
// that gives nil for an unknown key.
func metadataReader(key string) func(Record) any {
	if m, ok := readable[key]; ok {
		return m.record
	}
	return func(Record) any { return nil }
}

// MessageMetadata returns Flink's readable metadata key of msg from its
// kafka_* metadata, nil when msg does not carry it: `timestamp` as a time
// (kafka_timestamp_ms is milliseconds, as a number or text), `headers` as a
// map of bytes, the others as set.
func MessageMetadata(msg *service.Message, key string) (any, error) {
	if key == "headers" {
		return headersValue(MessageHeaders(msg)), nil
	}
	v, ok := msg.MetaGetMut(MetadataName(key))
	if !ok {
		return nil, nil
	}
	if key == "timestamp" {
		ts, err := ParseTimestamp(v)
		if err != nil {
			return nil, fmt.Errorf("%s %q is not milliseconds", MetaTimestamp, fmt.Sprint(v))
		}
		return ts, nil
	}
	return v, nil
}

// MessageHeaders returns the record headers that a message carries: every
// metadata field outside kafka_* and row_kind (MetaRowKind), in no
// particular order.
func MessageHeaders(msg *service.Message) []kgo.RecordHeader {
	var hs []kgo.RecordHeader
	_ = msg.MetaWalkMut(func(k string, v any) error {
		if !strings.HasPrefix(k, metaPrefix) && k != MetaRowKind {
			hs = append(hs, kgo.RecordHeader{Key: k, Value: []byte(fmt.Sprint(v))})
		}
		return nil
	})
	return hs
}

// headersValue is the value of a `headers` column: a map of bytes (the last
// of repeated keys wins).
func headersValue(hs []kgo.RecordHeader) map[string]any {
	m := make(map[string]any, len(hs))
	for _, h := range hs {
		m[h.Key] = h.Value
	}
	return m
}

// FormatRecordOf returns what a format.RecordCodec uses of a message: its
// kafka_topic metadata.
func FormatRecordOf(msg *service.Message) format.Record {
	var rec format.Record
	if v, ok := msg.MetaGetMut(MetaTopic); ok {
		rec.Topic = fmt.Sprint(v)
	}
	return rec
}

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

// LocateIndex is Locate, or " (message index i)" for a message without
// kafka_* metadata: index counts the messages a component received before
// it.
func LocateIndex(msg *service.Message, index int64) string {
	if at := Locate(msg); at != "" {
		return at
	}
	return fmt.Sprintf(" (message index %d)", index)
}

// LocateRecord returns " (topic t, partition p, offset o)" for a record.
func LocateRecord(r *kgo.Record) string {
	return fmt.Sprintf(" (topic %s, partition %d, offset %d)", r.Topic, r.Partition, r.Offset)
}

func orDash(v any, ok bool) any {
	if !ok {
		return "-"
	}
	return v
}
