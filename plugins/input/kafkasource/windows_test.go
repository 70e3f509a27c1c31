package kafkasource

import (
	"context"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connectd/connectd/internal/txnoffsets"
)

// prepareWindows commits every partition at its held-back position, never
// backwards, with its read position, and leaves partitions whose start is
// unknown out.
func TestTrackerPrepareWindows(t *testing.T) {
	t.Parallel()
	tr := newOffsetTracker(100)
	tr.addPartition(tpT(0), 10, 10, noStop)
	tr.addPartition(tpT(1), 5, 8, noStop)   // committed past its position
	tr.addPartition(tpT(2), -1, -1, noStop) // group mode, nothing fetched
	tr.addPartition(tpT(3), 20, 20, noStop) // nothing fetched yet
	for _, o := range []int64{10, 11, 12, 13} {
		tr.fetchedOne(position{tp: tpT(0), offset: o})
	}
	tr.acked([]position{{tp: tpT(0), offset: 10}, {tp: tpT(0), offset: 12}})
	pos, readEnd := tr.prepareWindows()
	if want := map[topicPartition]int64{tpT(0): 11, tpT(1): 8, tpT(3): 20}; !maps.Equal(pos, want) {
		t.Fatalf("offsets %v, want %v", pos, want)
	}
	if want := map[topicPartition]int64{tpT(0): 14, tpT(1): 8, tpT(3): 20}; !maps.Equal(readEnd, want) {
		t.Fatalf("read positions %v, want %v", readEnd, want)
	}
	if _, ok := tr.selfCommits(true)[tpT(0)]; ok {
		t.Fatal("the source would commit a partition whose records are in window results under way")
	}
}

// A session restores the window state from the committed offsets'
// metadata: records below the read position are replays, the cutoff is the
// latest of all partitions, the partitions are left to the sink's
// transactions while records are in flight, and PrepareWindows commits
// every partition with the new cutoff and read position.
func TestSourceRestoresWindowState(t *testing.T) {
	t.Parallel()
	c, addr := newFakeCluster(t)
	var selfCommits atomic.Int32
	c.ControlKey(int16(kmsg.OffsetCommit), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		selfCommits.Add(1)
		return nil, nil, false
	})
	produceN(t, addr, "t", 6, 0)
	early := txnoffsets.Cutoff{FireAt: 9999, Key: "b", Start: 0}
	late := txnoffsets.Cutoff{FireAt: 19999, Key: "a", Start: 10000}
	meta0, _ := txnoffsets.EncodeWindowMeta(late, 4)
	meta1, _ := txnoffsets.EncodeWindowMeta(early, 0)
	os := make(kadm.Offsets)
	os.Add(kadm.Offset{Topic: "t", Partition: 0, At: 2, LeaderEpoch: -1, Metadata: meta0})
	os.Add(kadm.Offset{Topic: "t", Partition: 1, At: 0, LeaderEpoch: -1, Metadata: meta1})
	os.Add(kadm.Offset{Topic: "t", Partition: 2, At: 0, LeaderEpoch: -1, Metadata: "not window state"})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := kadm.NewClient(newClient(t, addr)).CommitAllOffsets(ctx, "g", os); err != nil {
		t.Fatal(err)
	}
	before := selfCommits.Load()

	s := newTestSource(t, sourceYAML(addr, "g", "batch_size: 1", "commit_period: 20ms", "fetch_max_wait: 50ms"))
	batches := readRecords(t, s, 4) // offsets 2..5 of t/0
	var src txnoffsets.WindowSource
	for _, b := range batches {
		for i, m := range b.msgs {
			o, _ := txnoffsets.FromContext(m.Context())
			src = o.Source.(txnoffsets.WindowSource)
			r, ok := src.Restored(txnoffsets.TopicPartition{Topic: "t", Partition: 0}, o.Offset)
			if !ok || r.Cutoff != late || r.Replay != (b.pos[i].offset < 4) {
				t.Fatalf("offset %d: Restored = %+v, %v; want cutoff %+v, replay %v", b.pos[i].offset, r, ok, late, b.pos[i].offset < 4)
			}
		}
	}
	// 2 and 3 delivered, 4 and 5 still in windows: a commit of the
	// source's own (of offset 4, without the window state) would lose the
	// state while the records after it are read again after a crash.
	_ = batches[0].ack(ctx, nil)
	_ = batches[1].ack(ctx, nil)
	commitTick(t, s) // the acks are in: a tick now would commit offset 4
	if n := selfCommits.Load() - before; n != 0 {
		t.Fatalf("the source committed offsets %d times while records of restored window state were in flight", n)
	}

	next := txnoffsets.Cutoff{FireAt: 29999, Key: "a", Start: 20000}
	commits, err := src.PrepareWindows(next)
	if err != nil {
		t.Fatal(err)
	}
	if len(commits) != 1 || commits[0].Member != txnoffsets.NoMember {
		t.Fatalf("PrepareWindows = %+v, want one commit as no member", commits)
	}
	wantOffsets := map[txnoffsets.TopicPartition]int64{{Topic: "t", Partition: 0}: 4, {Topic: "t", Partition: 1}: 0, {Topic: "t", Partition: 2}: 0}
	if !maps.Equal(commits[0].Offsets, wantOffsets) {
		t.Fatalf("offsets %v, want %v (held back by the unacknowledged records)", commits[0].Offsets, wantOffsets)
	}
	for tp, readEnd := range map[txnoffsets.TopicPartition]int64{{Topic: "t", Partition: 0}: 6, {Topic: "t", Partition: 1}: 0, {Topic: "t", Partition: 2}: 0} {
		cut, end, ok, err := txnoffsets.ParseWindowMeta(commits[0].Metadata[tp])
		if err != nil || !ok || cut != next || end != readEnd {
			t.Fatalf("%v metadata %q: cutoff %+v read end %d (%v, %v); want %+v and %d", tp, commits[0].Metadata[tp], cut, end, ok, err, next, readEnd)
		}
	}
}

// In group mode the window state comes back with the assignment, and
// PrepareWindows commits as the member that owns the partitions.
func TestSourceGroupRestoresWindowState(t *testing.T) {
	t.Parallel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	produceN(t, addr, "t", 3, 0, 1)
	cut := txnoffsets.Cutoff{FireAt: 9999, Key: "k", Start: 0}
	meta, _ := txnoffsets.EncodeWindowMeta(cut, 2)
	os := make(kadm.Offsets)
	os.Add(kadm.Offset{Topic: "t", Partition: 0, At: 1, LeaderEpoch: -1, Metadata: meta})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := kadm.NewClient(newClient(t, addr)).CommitAllOffsets(ctx, "g", os); err != nil {
		t.Fatal(err)
	}

	s := newTestSource(t, sourceYAML(addr, "g", "assignment: group", "readers: 1", "fetch_max_wait: 50ms"))
	batches := readRecords(t, s, 5) // t/0 from 1, t/1 from the start
	var src txnoffsets.WindowSource
	for _, b := range batches {
		for i, m := range b.msgs {
			o, _ := txnoffsets.FromContext(m.Context())
			src = o.Source.(txnoffsets.WindowSource)
			p := b.pos[i]
			r, ok := src.Restored(txnoffsets.TopicPartition{Topic: p.tp.topic, Partition: p.tp.partition}, p.offset)
			wantReplay := p.tp.partition == 0 && p.offset < 2
			if p.tp.partition == 1 {
				// No window state of its own: in group mode the other
				// partitions' cutoff is another member's, not its.
				if ok {
					t.Fatalf("%v: Restored = %+v, %v; want none", p, r, ok)
				}
				continue
			}
			if !ok || r.Cutoff != cut || r.Replay != wantReplay {
				t.Fatalf("%v: Restored = %+v, %v; want cutoff %+v, replay %v", p, r, ok, cut, wantReplay)
			}
		}
	}
	commits, err := src.PrepareWindows(cut)
	if err != nil {
		t.Fatal(err)
	}
	cl := sessOf(s).clients[0]
	id, gen := cl.GroupMetadata()
	if len(commits) != 1 || commits[0].Member.ID != id || commits[0].Member.Generation != gen || id == "" {
		t.Fatalf("PrepareWindows = %+v, want one commit as member %q generation %d", commits, id, gen)
	}
	want := map[txnoffsets.TopicPartition]int64{{Topic: "t", Partition: 0}: 1, {Topic: "t", Partition: 1}: 0}
	if !maps.Equal(commits[0].Offsets, want) || len(commits[0].Metadata) != 2 {
		t.Fatalf("offsets %v metadata %v, want %v with window state for both", commits[0].Offsets, commits[0].Metadata, want)
	}
	// A member behind the cutoff a partition came with does not move it
	// back: that partition's windows up to it are in the output.
	behind := txnoffsets.Cutoff{FireAt: 4999, Key: "z", Start: 0}
	if commits, err = src.PrepareWindows(behind); err != nil || len(commits) != 1 {
		t.Fatalf("PrepareWindows(%+v) = %+v, %v", behind, commits, err)
	}
	for tp, wantCut := range map[txnoffsets.TopicPartition]txnoffsets.Cutoff{{Topic: "t", Partition: 0}: cut, {Topic: "t", Partition: 1}: behind} {
		got, _, ok, err := txnoffsets.ParseWindowMeta(commits[0].Metadata[tp])
		if err != nil || !ok || got != wantCut {
			t.Errorf("%v: committed cutoff %+v (%v, %v), want %+v", tp, got, ok, err, wantCut)
		}
	}
	for _, b := range batches {
		_ = b.ack(context.Background(), nil)
	}
}

// A partition paused for checkpoint_limit is reported once it stayed paused
// for the warning time, once per pause.
func TestTrackerStalled(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	tr := newOffsetTracker(2)
	tr.now = func() time.Time { return now }
	tr.addPartition(tpT(0), 0, 0, noStop)
	tr.addPartition(tpT(1), 0, 0, noStop)
	tr.fetched([]position{{tpT(0), 0}, {tpT(0), 1}, {tpT(1), 0}})
	now = now.Add(29 * time.Second)
	if got := tr.stalled(30 * time.Second); len(got) != 0 {
		t.Fatalf("stalled after 29s: %v", got)
	}
	now = now.Add(time.Second)
	got := tr.stalled(30 * time.Second)
	if len(got) != 1 || got[0].tp != tpT(0) || got[0].unacked != 2 || got[0].since != 30*time.Second {
		t.Fatalf("stalled = %+v, want t/0 with 2 unacknowledged for 30s", got)
	}
	if got := tr.stalled(30 * time.Second); len(got) != 0 {
		t.Fatalf("reported twice: %v", got)
	}
	// Resumed and paused again: a new pause, reported again when it lasts.
	tr.acked([]position{{tpT(0), 0}})
	tr.fetched([]position{{tpT(0), 2}})
	now = now.Add(30 * time.Second)
	if got := tr.stalled(30 * time.Second); len(got) != 1 {
		t.Fatalf("second pause: stalled = %v", got)
	}
}
