package kafkasink

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/halt"
	"github.com/connectd/connectd/internal/txnoffsets"
)

// fakeHolder is a txnoffsets.Holder: a fakeSource that records holds, what
// ended them, and rewinds.
type fakeHolder struct {
	*fakeSource

	hmu      sync.Mutex
	next     txnoffsets.HoldID
	holds    map[txnoffsets.HoldID][]txnoffsets.Origin
	released []txnoffsets.HoldID
	// committedHeld are the offsets of each CommittedHeld call.
	committedHeld []map[txnoffsets.TopicPartition]int64
	rewinds       []error
	// refuse makes Hold refuse, as a session that rewinds does.
	refuse bool
}

func newFakeHolder(addr string) *fakeHolder {
	return &fakeHolder{fakeSource: newFakeSource(addr), holds: map[txnoffsets.HoldID][]txnoffsets.Origin{}}
}

func (f *fakeHolder) Hold(origins []txnoffsets.Origin) (txnoffsets.HoldID, error) {
	f.hmu.Lock()
	defer f.hmu.Unlock()
	if f.refuse {
		return 0, &txnoffsets.NotOwnedError{Group: f.group, Reason: "rewinding"}
	}
	f.next++
	f.holds[f.next] = slices.Clone(origins)
	return f.next, nil
}

func (f *fakeHolder) Release(ids []txnoffsets.HoldID) {
	f.hmu.Lock()
	defer f.hmu.Unlock()
	f.released = append(f.released, ids...)
}

// PrepareHeld commits max offset + 1 per partition of the holds ids.
func (f *fakeHolder) PrepareHeld(ids []txnoffsets.HoldID) ([]txnoffsets.Commit, error) {
	f.hmu.Lock()
	var origins []txnoffsets.Origin
	for _, id := range ids {
		origins = append(origins, f.holds[id]...)
	}
	f.hmu.Unlock()
	return f.Prepare(origins)
}

func (f *fakeHolder) CommittedHeld(offsets map[txnoffsets.TopicPartition]int64, ids []txnoffsets.HoldID) {
	f.hmu.Lock()
	defer f.hmu.Unlock()
	f.committedHeld = append(f.committedHeld, offsets)
	f.released = append(f.released, ids...)
}

func (f *fakeHolder) Rewind(cause error) {
	f.hmu.Lock()
	defer f.hmu.Unlock()
	f.rewinds = append(f.rewinds, cause)
	f.refuse = true
}

func (f *fakeHolder) state() (holds int, released []txnoffsets.HoldID, rewinds int) {
	f.hmu.Lock()
	defer f.hmu.Unlock()
	return len(f.holds), slices.Clone(f.released), len(f.rewinds)
}

// holdProduce makes the cluster hold produce requests until release is
// closed.
func holdProduce(c *kfake.Cluster, release <-chan struct{}) {
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		c.SleepControl(func() { <-release })
		return nil, nil, false
	})
}

func newSinkWith(t *testing.T, yaml string, mgr *service.Resources) *Sink {
	t.Helper()
	cfg, err := parseConfig(t, yaml)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSink(cfg, mgr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	})
	return s
}

// TestAtLeastOnceFlowsBeforeKafkaAcks checks the at-least-once early return:
// a batch read from a kafka_source is held with its source and WriteBatch
// returns before Kafka acknowledged its records; the hold ends only once
// they are acknowledged.
func TestAtLeastOnceFlowsBeforeKafkaAcks(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "out"))
	s := newSinkWith(t, "seed_brokers: [ "+addr+" ]\ntopic: out\n", service.MockResources())
	h := newFakeHolder(addr)
	release := make(chan struct{})
	holdProduce(c, release)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.WriteBatch(ctx, fromSource(h, 0, 1, 2)); err != nil {
		t.Fatalf("WriteBatch: %v", err)
	}
	if holds, released, _ := h.state(); holds != 1 || len(released) != 0 {
		t.Fatalf("after WriteBatch, before Kafka acknowledged: %d holds, released %v; want 1 hold, none released", holds, released)
	}
	close(release)
	eventually.True(t, 10*time.Second, "the hold to end once Kafka acknowledged the records", func() bool {
		_, released, _ := h.state()
		return len(released) == 1
	})
	if got := consume(t, addr, "out", 3); len(got) != 3 {
		t.Fatalf("read %d records, want 3", len(got))
	}
}

// TestAtLeastOnceFlowFailureStopsRun checks that a record that fails after
// its batch was acknowledged ends the run and leaves its hold in place, so
// that no offset at or past it is committed and the next run reads it again.
func TestAtLeastOnceFlowFailureStopsRun(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "out"))
	mgr := service.MockResources()
	s := newSinkWith(t, "seed_brokers: [ "+addr+" ]\ntopic: out\n", mgr)
	h := newFakeHolder(addr)
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		pr := req.(*kmsg.ProduceRequest)
		resp := pr.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range pr.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.InvalidRecord.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.WriteBatch(ctx, fromSource(h, 7, 8)); err != nil {
		t.Fatalf("WriteBatch: %v", err)
	}
	run := halt.For(mgr)
	eventually.True(t, 10*time.Second, "the run to stop", run.Stopped)
	if _, released, _ := h.state(); len(released) != 0 {
		t.Fatalf("holds released after a failed record: %v", released)
	}
	if err := run.Err(); err == nil || !containsAll(err.Error(), `topic "in" partition 0 offset 7`, "INVALID_RECORD") {
		t.Fatalf("run error = %v, want one naming the record read at in/0 offset 7 and the broker's error", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
