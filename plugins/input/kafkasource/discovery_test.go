package kafkasource

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
)

// trackedPartitions returns the partitions the source's session reads.
func trackedPartitions(s *source) []topicPartition {
	var tps []topicPartition
	onOwner(s, func(o *owner) { tps = o.tracker.partitions() })
	return tps
}

// waitTracked waits until the source reads exactly want.
func waitTracked(t *testing.T, s *source, want []topicPartition) {
	t.Helper()
	eventually.NoError(t, testTimeout, fmt.Sprintf("the source to read %v", want), func() error {
		if got := trackedPartitions(s); !slices.Equal(got, want) {
			return fmt.Errorf("reading %v", got)
		}
		return nil
	})
}

// TestSourceDiscovery: with topic_pattern and discovery, new partitions of a
// topic read and new matching topics are picked up and read from offset 0,
// even with start_from: latest; excluded topics are not; deleted topics are
// released.
func TestSourceDiscovery(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	produceN(t, addr, "t", 2, 0, 1, 2)
	s := newTestSource(t, fmt.Sprintf(`
seed_brokers: [ %q ]
topic_pattern: "t|new-.*"
topic_exclude: "new-ignored"
consumer_group: g
start_from: latest
discovery_interval: 20ms
`, addr))
	adm := kadm.NewClient(newClient(t, addr))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := adm.CreatePartitions(ctx, 2, "t"); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"new-a", "new-ignored", "other"} {
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	newA := topicPartition{topic: "new-a", partition: 0}
	want := []topicPartition{newA, tpT(0), tpT(1), tpT(2), tpT(3), tpT(4)}
	waitTracked(t, s, want)
	// Written before or after discovery, all of it is read, from offset 0.
	produce(t, addr,
		&kgo.Record{Topic: "t", Partition: 3, Value: []byte("a")},
		&kgo.Record{Topic: "t", Partition: 4, Value: []byte("b")},
		&kgo.Record{Topic: "t", Partition: 4, Value: []byte("c")},
		&kgo.Record{Topic: "new-a", Partition: 0, Value: []byte("d")},
		&kgo.Record{Topic: "new-ignored", Partition: 0, Value: []byte("e")},
		&kgo.Record{Topic: "other", Partition: 0, Value: []byte("f")},
	)
	got := map[topicPartition][]int64{}
	for _, b := range readRecords(t, s, 4) {
		for _, p := range b.pos {
			got[p.tp] = append(got[p.tp], p.offset)
		}
		if err := b.ack(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	wantRead := map[topicPartition][]int64{tpT(3): {0}, tpT(4): {0, 1}, newA: {0}}
	if fmt.Sprint(got) != fmt.Sprint(wantRead) {
		t.Fatalf("read %v, want %v", got, wantRead)
	}

	if _, err := adm.DeleteTopics(ctx, "new-a"); err != nil {
		t.Fatal(err)
	}
	waitTracked(t, s, want[1:])
}
