package table

import (
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Each readable metadata key of Flink's Kafka connector has its message
// metadata and its record field; the two agree on a record that kafka_source
// would turn into a message.
func TestReadableMetadata(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"topic": "kafka_topic", "partition": "kafka_partition", "offset": "kafka_offset", "timestamp": "kafka_timestamp_ms",
		"timestamp-type": "kafka_timestamp_type", "leader-epoch": "kafka_leader_epoch", "headers": "",
	}
	if len(readable) != len(want) {
		t.Fatalf("%d readable keys, want %d", len(readable), len(want))
	}
	ts := time.UnixMilli(1700000000123)
	rec := Record{Topic: "x", Partition: 2, Offset: 9, Timestamp: ts, HasTimestamp: true, TimestampType: TimestampTypeLogAppend,
		LeaderEpoch: 4, Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("v")}}}
	msg := service.NewMessage(nil)
	msg.MetaSetMut("kafka_topic", "x")
	msg.MetaSetMut("kafka_partition", int64(2))
	msg.MetaSetMut("kafka_offset", int64(9))
	msg.MetaSetMut("kafka_timestamp_ms", ts.UnixMilli())
	msg.MetaSetMut("kafka_timestamp_type", TimestampTypeLogAppend)
	msg.MetaSetMut("kafka_leader_epoch", int64(4))
	msg.MetaSetMut("h", "v")
	for key, meta := range want {
		if got := MetadataName(key); got != meta {
			t.Errorf("MetadataName(%q) = %q, want %q", key, got, meta)
		}
		fromMsg, err := MessageMetadata(msg, key)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		fromRec := rec.metadataOf(key)
		switch key {
		case "timestamp":
			if !fromMsg.(time.Time).Equal(fromRec.(time.Time)) {
				t.Errorf("%s: message %v, record %v", key, fromMsg, fromRec)
			}
		case "headers":
			m, r := fromMsg.(map[string]any), fromRec.(map[string]any)
			if len(m) != 1 || len(r) != 1 || string(m["h"].([]byte)) != "v" || string(r["h"].([]byte)) != "v" {
				t.Errorf("%s: message %v, record %v", key, fromMsg, fromRec)
			}
		default:
			if fromMsg != fromRec {
				t.Errorf("%s: message %#v, record %#v", key, fromMsg, fromRec)
			}
		}
	}
}

// Metadata that a message does not carry is nil; a kafka_timestamp_ms that
// is not milliseconds is an error naming it; text milliseconds are read.
func TestMessageMetadata(t *testing.T) {
	t.Parallel()
	msg := service.NewMessage(nil)
	if v, err := MessageMetadata(msg, "partition"); v != nil || err != nil {
		t.Fatalf("missing partition: %v, %v", v, err)
	}
	msg.MetaSetMut("kafka_timestamp_ms", "1764677594123")
	if v, err := MessageMetadata(msg, "timestamp"); err != nil || !v.(time.Time).Equal(time.UnixMilli(1764677594123)) {
		t.Fatalf("text milliseconds: %v, %v", v, err)
	}
	msg.MetaSetMut("kafka_timestamp_ms", "soon")
	if _, err := MessageMetadata(msg, "timestamp"); err == nil || err.Error() != `kafka_timestamp_ms "soon" is not milliseconds` {
		t.Fatalf("bad timestamp: %v", err)
	}
	if hs := MessageHeaders(msg); len(hs) != 0 {
		t.Fatalf("kafka_* metadata is not a header: %v", hs)
	}
}

// A message as CEL sees it: the row (an empty one for content that is not
// an object), every metadata field, and kafka_timestamp_ms as a UTC time.
func TestExprInput(t *testing.T) {
	t.Parallel()
	msg := service.NewMessage([]byte(`[1, 2]`))
	if row := RowOf(msg); row == nil || len(row) != 0 {
		t.Fatalf("a list is an empty row, got %#v", row)
	}
	msg = service.NewMessage([]byte(`{"a": 1}`))
	msg.MetaSetMut("kafka_timestamp_ms", int64(1700000000123))
	msg.MetaSetMut("source", "shop")
	if row := RowOf(msg); len(row) != 1 {
		t.Fatalf("row = %#v", row)
	}
	in := ExprInput(msg)
	if in.Meta["source"] != "shop" || in.KafkaTimestamp == nil || !in.KafkaTimestamp.Equal(time.UnixMilli(1700000000123)) ||
		in.KafkaTimestamp.Location() != time.UTC {
		t.Fatalf("input = %+v", in)
	}
	msg.MetaSetMut("kafka_timestamp_ms", "later")
	if in := ExprInput(msg); in.KafkaTimestamp != nil || !strings.Contains(in.Meta["kafka_timestamp_ms"].(string), "later") {
		t.Fatalf("a timestamp that is not milliseconds is no kafka_timestamp: %+v", in)
	}
}
