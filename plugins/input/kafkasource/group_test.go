package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/txnoffsets"
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
	eventually.NoError(t, testTimeout, "every partition read once across both sources", func() error {
		pa, pb := trackedPartitions(a), trackedPartitions(b)
		union := append(slices.Clone(pa), pb...)
		sortPartitions(union)
		if len(pa) == 0 || len(pb) == 0 || !slices.Equal(union, all) {
			return fmt.Errorf("partitions %v and %v", pa, pb)
		}
		return nil
	})

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
		eventually.NoError(t, testTimeout, fmt.Sprintf("%d distinct records read", n), func() error {
			mu.Lock()
			got := len(seen)
			mu.Unlock()
			if got != n {
				return fmt.Errorf("read %d distinct records", got)
			}
			return nil
		})
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
	waitTracked(t, b, all) // the source that stayed takes every partition over
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

// TestGroupRebalanceWaitsForPolledRecords: a group member's poll blocks the
// group's rebalances until the owner tracks its records. While a reader
// holds a poll, another member that joins gets none of its partitions; the
// member leaves again and every record is delivered exactly once. Without
// the block, the partitions of the held poll went to the other member and
// came back, and the held records were taken for the new assignment's and
// delivered twice.
func TestGroupRebalanceWaitsForPolledRecords(t *testing.T) {
	t.Parallel()
	addr := newTopicsCluster(t, 2, "t")
	produceN(t, addr, "t", 20, 0, 1)
	s, err := buildSource(t, sourceYAML(addr, "g-held", "assignment: group", "commit_period: 50ms", "fetch_max_wait: 50ms"))
	if err != nil {
		t.Fatal(err)
	}
	polled, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.afterPoll = func(kgo.Fetches) {
		once.Do(func() {
			close(polled)
			<-release
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := s.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })

	var mu sync.Mutex
	delivered := map[string]int{}
	dctx, dcancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		drain(dctx, t, s, func(v string) { mu.Lock(); delivered[v]++; mu.Unlock() })
	}()
	defer wg.Wait()
	defer dcancel()

	select {
	case <-polled:
	case <-ctx.Done():
		t.Fatal("no poll returned records")
	}
	other, assigned := otherMember(t, addr, "g-held")
	// The other member joins (it needs no poll for that) and asks for its
	// share, which the held poll keeps from it: a second would be enough
	// for the rebalance without the block.
	time.Sleep(3 * time.Second)
	stolen := assigned()
	if len(stolen) > 0 {
		// Let the partitions come back, so that the held records meet
		// their partition's new assignment.
		other.Close()
		waitTracked(t, s, []topicPartition{tpT(0), tpT(1)})
		close(release)
		t.Errorf("the group gave %v to another member while a reader held a poll of them", stolen)
	} else {
		close(release)
		other.Close()
	}
	eventually.NoError(t, testTimeout, "every record delivered", func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(delivered) != 40 {
			return fmt.Errorf("%d distinct records delivered", len(delivered))
		}
		return nil
	})
	time.Sleep(500 * time.Millisecond) // a record delivered twice arrives by now
	mu.Lock()
	defer mu.Unlock()
	for v, n := range delivered {
		if n != 1 {
			t.Errorf("record %s delivered %d times", v, n)
		}
	}
}

// TestGroupReassignAfterExpiredRevoke: a revocation that gave up waiting for
// its records in flight (revokeWait) released the partition; when the group
// gives it back to the same process, the session ends and a new one reads
// it, so that the old records' late acknowledgements count for nothing.
// Without that, they acknowledged the new assignment's records of the same
// offsets before those were delivered, and the group's committed offset
// passed records nobody had acknowledged.
func TestGroupReassignAfterExpiredRevoke(t *testing.T) {
	// Not parallel: it shortens revokeWait for the package.
	defer func(d time.Duration) { revokeWait = d }(revokeWait)
	revokeWait = time.Second
	addr := newTopicsCluster(t, 2, "t")
	produceN(t, addr, "t", 10, 0, 1)
	s := newTestSource(t, sourceYAML(addr, "g-exp", "assignment: group", "commit_period: 50ms", "fetch_max_wait: 50ms"))
	// The records of both partitions, delivered and held unacknowledged.
	stale := readRecords(t, s, 20)

	other, assigned := otherMember(t, addr, "g-exp")
	// The revocation of one partition waits revokeWait for the held
	// records, then releases it to the other member.
	eventually.NoError(t, testTimeout, "a partition moved to the other member", func() error {
		if len(assigned()) == 0 {
			return errors.New("the other member has no partition")
		}
		return nil
	})
	moved := assigned()[0]
	other.Close() // the partition comes back

	// Read until the moved partition's records are delivered again,
	// reconnecting when the session ends; keep them unacknowledged.
	var again []readBatch
	deadline := time.Now().Add(testTimeout)
	for n := 0; n < 10; {
		if time.Now().After(deadline) {
			t.Fatalf("%s read again: %d of 10 records", moved, n)
		}
		b, err := readOne(t, s, time.Until(deadline))
		if errors.Is(err, service.ErrNotConnected) {
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			err = s.Connect(ctx)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		again = append(again, b)
		for _, p := range b.pos {
			if p.tp == moved {
				n++
			}
		}
	}
	// The old records are acknowledged only now.
	for _, b := range stale {
		_ = b.ack(context.Background(), nil)
	}
	time.Sleep(500 * time.Millisecond) // ten commit periods
	if off, ok := committedOffsets(t, addr, "g-exp")[moved]; ok && off > 0 {
		t.Errorf("committed offset %d for %s, whose records of this assignment are all unacknowledged", off, moved)
	}
	for _, b := range again {
		_ = b.ack(context.Background(), nil)
	}
}

// TestGroupRevokeWhileRewindingDoesNotWait: once a session rewinds (a sink's
// transaction aborted), the records a sink holds will never be durable and
// are read again by the next session, so a revocation does not wait for
// them: another member gets its partition at once, not after revokeWait
// (45 s). Before, the member sat out the whole wait while the group stood
// still.
func TestGroupRevokeWhileRewindingDoesNotWait(t *testing.T) {
	t.Parallel()
	addr := newTopicsCluster(t, 2, "t")
	produceN(t, addr, "t", 10, 0, 1)
	s := newTestSource(t, sourceYAML(addr, "g-rew", "assignment: group", "commit_period: 50ms", "fetch_max_wait: 50ms"))
	sess := s.cur.Load()
	// A sink holds every record, Benthos acknowledges them, and the
	// sink's transaction aborts.
	var origins []txnoffsets.Origin
	for _, b := range readRecords(t, s, 20) {
		for _, p := range b.pos {
			origins = append(origins, txnoffsets.Origin{Source: sess, Topic: p.tp.topic, Partition: p.tp.partition, Offset: p.offset})
		}
		defer func() { _ = b.ack(context.Background(), nil) }()
	}
	if _, err := sess.Hold(origins); err != nil {
		t.Fatal(err)
	}
	sess.Rewind(errors.New("the test's transaction aborted"))

	_, assigned := otherMember(t, addr, "g-rew")
	eventually.NoError(t, revokeWait/3, "a partition moved to the other member", func() error {
		if len(assigned()) == 0 {
			return errors.New("the other member has no partition")
		}
		return nil
	})
}

// otherMember joins group as a plain kgo consumer of t (cooperative-sticky,
// as the source's members) that never polls; assigned returns the
// partitions it was given so far. It leaves at the end of the test, or at
// Close.
func otherMember(t *testing.T, addr, group string) (cl *kgo.Client, assigned func() []topicPartition) {
	t.Helper()
	var (
		mu  sync.Mutex
		got []topicPartition
	)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics("t"),
		kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			mu.Lock()
			defer mu.Unlock()
			for topic, ps := range m {
				for _, p := range ps {
					got = append(got, topicPartition{topic: topic, partition: p})
				}
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl, func() []topicPartition {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}
