package kafkasource

import (
	"fmt"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Timestamp types, as Kafka's Java client names them.
const (
	timestampTypeCreate    = "CreateTime"
	timestampTypeLogAppend = "LogAppendTime"
	timestampTypeNone      = "NoTimestampType"
)

// metaSet selects the metadata that recordMessage sets (field
// metadata_keys). Like Flink, which reads only the metadata columns a table
// declares, a pipeline that needs few keys should not pay for the rest: each
// value costs an allocation, and a ninth key moves Benthos's metadata map
// from Go's small-map form to a full table, doubling the cost per message.
type metaSet uint16

const (
	metaBitKey metaSet = 1 << iota
	metaBitTopic
	metaBitPartition
	metaBitOffset
	metaBitTimestampMs
	metaBitTimestampUnix
	metaBitTimestampType
	metaBitTombstone
	metaBitLeaderEpoch
	metaBitLag
	metaBitHeaders
	// metaBitEventTime sets kafka_event_time_ms from the record timestamp:
	// not a metadata_keys value, set when a watermark reads the record
	// timestamp (see session.meta).
	metaBitEventTime
)

// metaHeaders names the record headers in metadata_keys.
const metaHeaders = "headers"

// metaKeys lists the metadata_keys values in documentation order.
var metaKeys = []struct {
	name string
	bit  metaSet
}{
	{metaKey, metaBitKey}, {metaTopic, metaBitTopic}, {metaPartition, metaBitPartition},
	{metaOffset, metaBitOffset}, {metaTimestampMs, metaBitTimestampMs}, {metaTimestampUnix, metaBitTimestampUnix},
	{metaTimestampType, metaBitTimestampType}, {metaTombstone, metaBitTombstone}, {metaLeaderEpoch, metaBitLeaderEpoch},
	{metaLag, metaBitLag}, {metaHeaders, metaBitHeaders},
}

// metaAll is every key.
const metaAll = metaBitHeaders<<1 - 1

// metaDefault is the default of metadata_keys: the keys Benthos's own Kafka
// input (kafka_franz) sets, and the headers. Eight keys keep Benthos's
// metadata map in Go's small-map form; kafka_timestamp_type and
// kafka_leader_epoch (Flink's `timestamp-type` and `leader-epoch`) are opt-in.
const metaDefault = metaAll &^ (metaBitTimestampType | metaBitLeaderEpoch)

// metaKeyNames returns the metadata_keys values of set, in documentation
// order.
func metaKeyNames(set metaSet) []string {
	var names []string
	for _, k := range metaKeys {
		if set&k.bit != 0 {
			names = append(names, k.name)
		}
	}
	return names
}

// allMetaKeyNames returns every metadata_keys value.
func allMetaKeyNames() []string { return metaKeyNames(metaAll) }

// parseMetaSet turns metadata_keys into a set, naming an unknown key.
func parseMetaSet(names []string) (metaSet, error) {
	var set metaSet
	for _, n := range names {
		found := false
		for _, k := range metaKeys {
			if k.name == n {
				set |= k.bit
				found = true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("field %s: unknown key %q (want any of %s)", fieldMetadataKeys, n, strings.Join(allMetaKeyNames(), ", "))
		}
	}
	return set, nil
}

// Metadata values boxed once: storing a string in an interface allocates, and
// these are set on every message.
var (
	boxedCreateTime    any = timestampTypeCreate
	boxedLogAppendTime any = timestampTypeLogAppend
	boxedNoTimestamp   any = timestampTypeNone
)

// valueBoxes holds metadata values boxed once for a run of records that
// share them. Storing a value in an interface allocates (Go boxes only
// integers below 256 for free); the records of one batch mostly come in runs
// of one partition, and records produced together share their timestamp (to
// the millisecond, and more so to the second), so a run pays once.
type valueBoxes struct {
	topic          string
	partition      int32
	boxedTopic     any
	boxedPartition any
	millis         int64
	boxedMillis    any
	seconds        int64
	boxedSeconds   any
}

// partitionOf sets the boxed topic and partition to r's.
func (vb *valueBoxes) partitionOf(r *kgo.Record) {
	if vb.boxedTopic == nil || vb.topic != r.Topic || vb.partition != r.Partition {
		vb.topic, vb.partition, vb.boxedTopic, vb.boxedPartition = r.Topic, r.Partition, r.Topic, int(r.Partition)
	}
}

// unixMilli returns ms boxed.
func (vb *valueBoxes) unixMilli(ms int64) any {
	if vb.boxedMillis == nil || vb.millis != ms {
		vb.millis, vb.boxedMillis = ms, ms
	}
	return vb.boxedMillis
}

// unix returns s boxed.
func (vb *valueBoxes) unix(s int64) any {
	if vb.boxedSeconds == nil || vb.seconds != s {
		vb.seconds, vb.boxedSeconds = s, s
	}
	return vb.boxedSeconds
}

// recordMessage turns a record into a message: the content is the record
// value, and the metadata is what set selects of the spec's Metadata
// section. Headers are set first so that a header cannot overwrite a kafka_
// field. boxes caches boxed values between calls.
func recordMessage(r *kgo.Record, lag int64, set metaSet, boxes *valueBoxes) *service.Message {
	msg := service.NewMessage(r.Value)
	if set&metaBitHeaders != 0 {
		for _, h := range r.Headers {
			msg.MetaSetMut(h.Key, string(h.Value))
		}
	}
	if set&metaBitKey != 0 {
		msg.MetaSetMut(metaKey, string(r.Key))
	}
	if set&(metaBitTopic|metaBitPartition) != 0 {
		boxes.partitionOf(r)
		if set&metaBitTopic != 0 {
			msg.MetaSetMut(metaTopic, boxes.boxedTopic)
		}
		if set&metaBitPartition != 0 {
			msg.MetaSetMut(metaPartition, boxes.boxedPartition)
		}
	}
	if set&metaBitOffset != 0 {
		msg.MetaSetMut(metaOffset, r.Offset)
	}
	if set&metaBitTimestampMs != 0 {
		msg.MetaSetMut(metaTimestampMs, boxes.unixMilli(r.Timestamp.UnixMilli()))
	}
	if set&metaBitTimestampUnix != 0 {
		msg.MetaSetMut(metaTimestampUnix, boxes.unix(r.Timestamp.Unix()))
	}
	if set&metaBitTimestampType != 0 {
		msg.MetaSetMut(metaTimestampType, timestampType(r.Attrs))
	}
	if set&metaBitTombstone != 0 {
		msg.MetaSetMut(metaTombstone, r.Value == nil)
	}
	if set&metaBitLeaderEpoch != 0 {
		msg.MetaSetMut(metaLeaderEpoch, int(r.LeaderEpoch))
	}
	if set&metaBitLag != 0 {
		msg.MetaSetMut(metaLag, lag)
	}
	if set&metaBitEventTime != 0 {
		// Set here, on the reader goroutine: the metadata map grows past
		// its small form with it, and that cost is better paid in
		// parallel than at delivery.
		msg.MetaSetMut(metaEventTimeMs, boxes.unixMilli(r.Timestamp.UnixMilli()))
	}
	return msg
}

func timestampType(a kgo.RecordAttrs) any {
	switch a.TimestampType() {
	case 0:
		return boxedCreateTime
	case 1:
		return boxedLogAppendTime
	default:
		return boxedNoTimestamp
	}
}

// recordBytes is the size of a record's key, value and headers.
func recordBytes(r *kgo.Record) int64 {
	n := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return int64(n)
}
