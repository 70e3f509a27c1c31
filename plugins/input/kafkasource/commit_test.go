package kafkasource

import (
	"context"
	"errors"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/halt"
	"github.com/connectd/connectd/internal/txnoffsets"
)

// countCommits counts the OffsetCommit requests c receives.
func countCommits(c *kfake.Cluster) *atomic.Int32 {
	var n atomic.Int32
	c.ControlKey(int16(kmsg.OffsetCommit), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		n.Add(1)
		return nil, nil, false
	})
	return &n
}

// newSourceIn builds and connects the input of yaml with mgr as its
// resources; edit changes the parsed config first.
func newSourceIn(t *testing.T, yaml string, mgr *service.Resources, edit func(*Config)) *source {
	t.Helper()
	pc, err := testSpec().ParseYAML(yaml, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := configFromParsed(pc)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&c)
	}
	s := newSource(c, mgr)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := s.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// commitIdle waits until s has no commit in flight.
func commitIdle(t *testing.T, s *source) {
	t.Helper()
	eventually.True(t, testTimeout, "no commit in flight", func() (idle bool) {
		onOwner(s, func(o *owner) { idle = !o.commits.inFlight && len(o.commits.queue) == 0 })
		return idle
	})
}

// commitTick runs one tick of s's commit loop (what commit_period's ticker
// runs) on the owner, after every request sent to it before (acks
// included), once no commit is in flight (a tick then does nothing), and
// waits until the commit it started, if any, is over. A test that checks
// the source commits nothing checks after a tick that saw its state,
// instead of sleeping through ticks that may not come.
func commitTick(t *testing.T, s *source) {
	t.Helper()
	eventually.True(t, testTimeout, "a commit-loop tick with no commit in flight", func() (ticked bool) {
		onOwner(s, func(o *owner) {
			if !o.commits.inFlight && len(o.commits.queue) == 0 {
				o.periodicCommit()
				ticked = true
			}
		})
		return ticked
	})
	commitIdle(t, s)
}

// TestSourceHaltCommitsNothing: once the run stops on an error
// (internal/halt), the source commits no offset, not periodically, not at
// Close, and an exactly-once sink's Prepare and PrepareWindows fail, so that
// its transaction aborts.
func TestSourceHaltCommitsNothing(t *testing.T) {
	t.Parallel()
	c, addr := newFakeCluster(t)
	commits := countCommits(c)
	produceN(t, addr, "t", 4, 0)
	mgr := service.MockResources()
	s := newSourceIn(t, sourceYAML(addr, "g", "start_from: earliest", "commit_period: 20ms", "batch_size: 1", "fetch_max_wait: 50ms"), mgr, nil)
	batches := readRecords(t, s, 4)
	if err := batches[0].ack(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	waitCommitted(t, addr, "g", map[topicPartition]int64{tpT(0): 1, tpT(1): 0, tpT(2): 0})

	stop := errors.New("bad record at topic t partition 0 offset 1")
	halt.For(mgr).Stop(stop)
	commitIdle(t, s) // one started before the stop may land
	before := commits.Load()
	var origins []txnoffsets.Origin
	for _, b := range batches[1:] {
		o, _ := txnoffsets.FromContext(b.msgs[0].Context())
		origins = append(origins, o)
		if err := b.ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	src := origins[0].Source.(txnoffsets.WindowSource)
	if _, err := src.Prepare(origins); !errors.Is(err, stop) {
		t.Fatalf("Prepare after the halt: %v, want an error wrapping %q", err, stop)
	}
	if _, err := src.PrepareWindows(txnoffsets.Cutoff{}); !errors.Is(err, stop) {
		t.Fatalf("PrepareWindows after the halt: %v, want an error wrapping %q", err, stop)
	}
	commitTick(t, s) // the acks are in: a tick now would commit them
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := commits.Load() - before; n != 0 {
		t.Fatalf("the source sent %d OffsetCommits after the run stopped on an error", n)
	}
	if got, want := committedOffsets(t, addr, "g"), map[topicPartition]int64{tpT(0): 1, tpT(1): 0, tpT(2): 0}; !maps.Equal(got, want) {
		t.Fatalf("committed %v, want %v (what was committed before the halt)", got, want)
	}
}

// TestSourceHaltBoundedEndCommitsNothing: a bounded read that ends after the
// run stopped on an error ends without its final commit.
func TestSourceHaltBoundedEndCommitsNothing(t *testing.T) {
	t.Parallel()
	c, addr := newFakeCluster(t)
	commits := countCommits(c)
	produceN(t, addr, "t", 3, 0, 1, 2)
	mgr := service.MockResources()
	s := newSourceIn(t, sourceYAML(addr, "g", "start_from: earliest", "stop_at: latest", "commit_period: 1h"), mgr, nil)
	halt.For(mgr).Stop(errors.New("stopping"))
	if got := readToEnd(t, s); len(got) != 9 {
		t.Fatalf("read %d records, want 9", len(got))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := commits.Load(); n != 0 {
		t.Fatalf("the source sent %d OffsetCommits after the run stopped on an error", n)
	}
}

// TestSourceWithoutGroupCommitsNothing: without a consumer group a bounded
// read ends, nothing is committed (no OffsetCommit, no group), and the
// messages carry no origin, so an exactly-once sink does not pair with it.
func TestSourceWithoutGroupCommitsNothing(t *testing.T) {
	t.Parallel()
	c, addr := newFakeCluster(t)
	commits := countCommits(c)
	produceN(t, addr, "t", 3, 0, 1, 2)
	s := newSourceIn(t, sourceYAML(addr, "g", "start_from: earliest", "stop_at: latest", "commit_period: 20ms"),
		service.MockResources(), func(c *Config) { c.ConsumerGroup = "" })
	var n int
	deadline := time.Now().Add(testTimeout)
	for {
		b, err := readOne(t, s, time.Until(deadline))
		if errors.Is(err, service.ErrEndOfInput) {
			break
		}
		if err != nil {
			t.Fatalf("after %d records: %v", n, err)
		}
		for _, m := range b.msgs {
			if o, ok := txnoffsets.FromContext(m.Context()); ok {
				t.Fatalf("message of %v carries origin %+v without a consumer group", b.pos, o)
			}
		}
		n += len(b.msgs)
		if err := b.ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	if n != 9 {
		t.Fatalf("read %d records, want 9", n)
	}
	if g := sessOf(s).GroupID(); g != "" {
		t.Fatalf("GroupID = %q, want none", g)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := commits.Load(); n != 0 {
		t.Fatalf("the source sent %d OffsetCommits without a consumer group", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	groups, err := kadm.NewClient(newClient(t, addr)).ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 0 {
		t.Fatalf("groups %v exist, want none", groups.Groups())
	}
}
