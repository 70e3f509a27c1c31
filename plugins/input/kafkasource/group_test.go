package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// drain reads and acknowledges records from s until ctx ends, recording
// each record's value.
func drain(ctx context.Context, t *testing.T, s *source, seen func(string)) {
	for ctx.Err() == nil {
		msgs, ack, err := s.ReadBatch(ctx)
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
				t.Errorf("ReadBatch: %v", err)
			}
			return
		}
		for _, m := range msgs {
			v, _ := m.AsBytes()
			seen(string(v))
		}
		_ = ack(ctx, nil)
	}
}

// TestSourceGroupMode: two sources in group mode, two readers each, share
// the partitions (each exactly once); when one closes, the other takes all
// of them over, and every record is read at least once.
func TestSourceGroupMode(t *testing.T) {
	t.Parallel()
	const partitions = 6
	addr := newTopicsCluster(t, partitions, "t")
	conf := sourceYAML(addr, "g", "assignment: group", "readers: 2", "commit_period: 50ms", "fetch_max_wait: 50ms")
	a := newTestSource(t, conf)
	b := newTestSource(t, conf)
	all := make([]topicPartition, partitions)
	for p := range all {
		all[p] = tpT(int32(p))
	}
	deadline := time.Now().Add(testTimeout)
	for {
		pa, pb := trackedPartitions(a), trackedPartitions(b)
		union := append(slices.Clone(pa), pb...)
		sortPartitions(union)
		if len(pa) > 0 && len(pb) > 0 && slices.Equal(union, all) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("partitions %v and %v, want every partition once across both", pa, pb)
		}
		time.Sleep(20 * time.Millisecond)
	}

	var mu sync.Mutex
	seen := map[string]bool{}
	record := func(v string) { mu.Lock(); seen[v] = true; mu.Unlock() }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctxA, cancelA := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); drain(ctxA, t, a, record) }()
	go func() { defer wg.Done(); drain(ctx, t, b, record) }()
	defer wg.Wait()
	defer cancel()

	produceN(t, addr, "t", 20, 0, 1, 2, 3, 4, 5)
	waitSeen := func(n int) {
		t.Helper()
		deadline := time.Now().Add(testTimeout)
		for {
			mu.Lock()
			got := len(seen)
			mu.Unlock()
			if got == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("read %d distinct records, want %d", got, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitSeen(partitions * 20)
	// Both sources commit what they acknowledged, each as the member that
	// owns the partition.
	want := map[topicPartition]int64{}
	for _, tp := range all {
		want[tp] = 20
	}
	waitCommitted(t, addr, "g", want)

	cancelA()
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(testTimeout)
	for !slices.Equal(trackedPartitions(b), all) {
		if time.Now().After(deadline) {
			t.Fatalf("after one source left, the other reads %v, want %v", trackedPartitions(b), all)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var recs []*kgo.Record
	for p := range int32(partitions) {
		recs = append(recs, &kgo.Record{Topic: "t", Partition: p, Value: fmt.Appendf(nil, "late-%d", p)})
	}
	produce(t, addr, recs...)
	waitSeen(partitions*20 + partitions)
	// Every record is acknowledged: the group's offsets reach the end.
	for _, tp := range all {
		want[tp] = 21
	}
	waitCommitted(t, addr, "g", want)
}
