package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkatest"
)

// TestIntegrationKcatRecord: a record written by kcat (librdkafka, a client
// this project did not write) comes out of kafka_source with its key,
// headers, partition, offset, timestamp and topic, and acking it commits
// offset 1 to the group on a real broker.
func TestIntegrationKcatRecord(t *testing.T) {
	t.Parallel()
	broker := kafkatest.Broker(t)
	kcat := kafkatest.Kcat(t)
	topic := kafkatest.NewTopic(t, broker, "kafkasource-kcat", 2)
	group := topic + "-group"

	before := time.Now().Add(-time.Second).UnixMilli()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, "-P", "-b", broker, "-t", topic, "-k", "mykey", "-H", "h1=v1", "-H", "h2=v2", "-p", "0")
	cmd.Stdin = strings.NewReader("hello from kcat\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kcat: %v: %s", err, out)
	}
	after := time.Now().Add(time.Second).UnixMilli()

	s := newTestSource(t, fmt.Sprintf(`
seed_brokers: [ %q ]
topics: [ %q ]
consumer_group: %q
start_from: earliest
commit_period: 100ms
metadata_keys: [ kafka_key, kafka_topic, kafka_partition, kafka_offset, kafka_timestamp_ms, kafka_timestamp_unix, kafka_timestamp_type, kafka_tombstone_message, kafka_leader_epoch, kafka_lag, headers ]
`, broker, topic, group))
	b := readRecords(t, s, 1)[0]
	if len(b.msgs) != 1 {
		t.Fatalf("read %d messages, want 1", len(b.msgs))
	}
	m := b.msgs[0]
	if v, _ := m.AsBytes(); string(v) != "hello from kcat" {
		t.Errorf("content %q, want %q", v, "hello from kcat")
	}
	for key, want := range map[string]any{
		metaKey:           "mykey",
		"h1":              "v1",
		"h2":              "v2",
		metaTopic:         topic,
		metaPartition:     0,
		metaOffset:        int64(0),
		metaTombstone:     false,
		metaTimestampType: "CreateTime",
	} {
		if got, ok := m.MetaGetMut(key); !ok || got != want {
			t.Errorf("%s = %#v (set %v), want %#v", key, got, ok, want)
		}
	}
	ms, _ := m.MetaGetMut(metaTimestampMs)
	if ts, ok := ms.(int64); !ok || ts < before || ts > after {
		t.Errorf("%s = %#v, want an int64 within [%d, %d]", metaTimestampMs, ms, before, after)
	}
	if unix, _ := m.MetaGetMut(metaTimestampUnix); unix != ms.(int64)/1000 {
		t.Errorf("%s = %#v, want %d", metaTimestampUnix, unix, ms.(int64)/1000)
	}
	if epoch, _ := m.MetaGetMut(metaLeaderEpoch); epoch.(int) < 0 {
		t.Errorf("%s = %v, want a leader epoch >= 0 from a real broker", metaLeaderEpoch, epoch)
	}

	if err := b.ack(ctx, nil); err != nil {
		t.Fatal(err)
	}
	waitCommitted(t, broker, group, map[topicPartition]int64{
		{topic: topic, partition: 0}: 1,
		{topic: topic, partition: 1}: 0,
	})
}

// TestIntegrationLogAppendTime: on a topic with
// message.timestamp.type=LogAppendTime the broker's time and type come out.
func TestIntegrationLogAppendTime(t *testing.T) {
	t.Parallel()
	broker := kafkatest.Broker(t)
	topic := kafkatest.NewTopic(t, broker, "kafkasource-lat", 1)

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	adm := kadm.NewClient(newClient(t, broker))
	v := "LogAppendTime"
	resps, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "message.timestamp.type", Value: &v}}, topic)
	if err == nil {
		_, err = resps.On(topic, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	eventually.NoError(t, testTimeout, fmt.Sprintf("topic %s to have message.timestamp.type %s", topic, v), func() error {
		rcs, err := adm.DescribeTopicConfigs(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		rc, err := rcs.On(topic, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slicesContainConfig(rc.Configs, "message.timestamp.type", v) {
			return errors.New("the broker describes the topic without it")
		}
		return nil
	})

	old := time.UnixMilli(1_000_000_000_000)
	before := time.Now().Add(-time.Second).UnixMilli()
	produce(t, broker, &kgo.Record{Topic: topic, Partition: 0, Value: []byte("x"), Timestamp: old})

	s := newTestSource(t, fmt.Sprintf("seed_brokers: [ %q ]\ntopics: [ %q ]\nconsumer_group: %q\nstart_from: earliest\n"+
		"metadata_keys: [ kafka_topic, kafka_partition, kafka_offset, kafka_timestamp_ms, kafka_timestamp_type ]\n", broker, topic, topic))
	m := readRecords(t, s, 1)[0].msgs[0]
	if got, _ := m.MetaGetMut(metaTimestampType); got != "LogAppendTime" {
		t.Errorf("%s = %#v, want LogAppendTime", metaTimestampType, got)
	}
	if ms, _ := m.MetaGetMut(metaTimestampMs); ms.(int64) < before {
		t.Errorf("%s = %d, want the broker's append time (>= %d), not the producer's %d", metaTimestampMs, ms, before, old.UnixMilli())
	}
}

func slicesContainConfig(cs []kadm.Config, name, value string) bool {
	for _, c := range cs {
		if c.Key == name && c.Value != nil && *c.Value == value {
			return true
		}
	}
	return false
}
