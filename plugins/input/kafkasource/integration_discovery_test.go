package kafkasource

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkatest"
)

// TestIntegrationDiscoveryNewPartitions: on a real broker, partitions added
// to a topic while the input runs are picked up and read from offset 0,
// although the input started at latest.
func TestIntegrationDiscoveryNewPartitions(t *testing.T) {
	t.Parallel()
	broker := kafkatest.Broker(t)
	topic := kafkatest.NewTopic(t, broker, "kafkasource-discovery", 2)
	s := newTestSource(t, fmt.Sprintf(`
seed_brokers: [ %q ]
topics: [ %q ]
consumer_group: %q
start_from: latest
discovery_interval: 100ms
`, broker, topic, topic+"-group"))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := newClient(t, broker)
	if _, err := kadm.NewClient(cl).CreatePartitions(ctx, 2, topic); err != nil {
		t.Fatal(err)
	}
	want := []topicPartition{{topic, 0}, {topic, 1}, {topic, 2}, {topic, 3}}
	waitTracked(t, s, want)
	var recs []*kgo.Record
	for p := int32(2); p < 4; p++ {
		for i := range 3 {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%d-%d", p, i)})
		}
	}
	if err := newClient(t, broker).ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	next := map[topicPartition]int64{}
	for _, b := range readRecords(t, s, len(recs)) {
		for _, p := range b.pos {
			if p.offset != next[p.tp] {
				t.Fatalf("%s: offset %d, want %d (new partitions are read from 0)", p.tp, p.offset, next[p.tp])
			}
			next[p.tp]++
		}
	}
	if len(next) != 2 || next[want[2]] != 3 || next[want[3]] != 3 {
		t.Fatalf("read %v, want 3 records from each new partition", next)
	}
}
