package kafkasource

import (
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Timestamp types, as Kafka's Java client names them.
const (
	timestampTypeCreate    = "CreateTime"
	timestampTypeLogAppend = "LogAppendTime"
	timestampTypeNone      = "NoTimestampType"
)

// recordMessage turns a record into a message: the content is the record
// value, and the metadata is listed in the spec's Metadata section. Headers
// are set first so that a header cannot overwrite a kafka_ field.
func recordMessage(r *kgo.Record, lag int64) *service.Message {
	msg := service.NewMessage(r.Value)
	for _, h := range r.Headers {
		msg.MetaSetMut(h.Key, string(h.Value))
	}
	msg.MetaSetMut(metaKey, string(r.Key))
	msg.MetaSetMut(metaTopic, r.Topic)
	msg.MetaSetMut(metaPartition, int(r.Partition))
	msg.MetaSetMut(metaOffset, r.Offset)
	msg.MetaSetMut(metaTimestampMs, r.Timestamp.UnixMilli())
	msg.MetaSetMut(metaTimestampUnix, r.Timestamp.Unix())
	msg.MetaSetMut(metaTimestampType, timestampType(r.Attrs))
	msg.MetaSetMut(metaTombstone, r.Value == nil)
	msg.MetaSetMut(metaLeaderEpoch, int(r.LeaderEpoch))
	msg.MetaSetMut(metaLag, lag)
	return msg
}

func timestampType(a kgo.RecordAttrs) string {
	switch a.TimestampType() {
	case 0:
		return timestampTypeCreate
	case 1:
		return timestampTypeLogAppend
	default:
		return timestampTypeNone
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
