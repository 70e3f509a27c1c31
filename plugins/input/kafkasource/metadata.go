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
func recordMessage(r *kgo.Record) *service.Message {
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
