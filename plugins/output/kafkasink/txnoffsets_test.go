package kafkasink

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connectd/connectd/internal/commitchunk"
	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/txnoffsets"
)

// fakeSource is a txnoffsets.Source that commits max offset + 1 per
// partition as member, and records what the sink told it.
type fakeSource struct {
	group   string
	cluster txnoffsets.ClusterIdentity
	member  txnoffsets.Member

	// movedAfter, when above 0, makes Prepare calls after that many
	// answer that the partitions moved.
	movedAfter int

	mu        sync.Mutex
	prepared  int
	committed []map[txnoffsets.TopicPartition]int64
}

func (f *fakeSource) GroupID() string                     { return f.group }
func (f *fakeSource) Cluster() txnoffsets.ClusterIdentity { return f.cluster }

func (f *fakeSource) Prepare(origins []txnoffsets.Origin) ([]txnoffsets.Commit, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prepared++
	c := txnoffsets.Commit{Member: f.member, Offsets: map[txnoffsets.TopicPartition]int64{}}
	if f.movedAfter > 0 && f.prepared > f.movedAfter {
		e := &txnoffsets.NotOwnedError{Group: f.group, Reason: "revoked or lost by this member"}
		for _, o := range origins {
			tp := txnoffsets.TopicPartition{Topic: o.Topic, Partition: o.Partition}
			if !slices.Contains(e.Partitions, tp) {
				e.Partitions = append(e.Partitions, tp)
			}
		}
		return nil, e
	}
	for _, o := range origins {
		tp := txnoffsets.TopicPartition{Topic: o.Topic, Partition: o.Partition}
		c.Offsets[tp] = max(c.Offsets[tp], o.Offset+1)
	}
	return []txnoffsets.Commit{c}, nil
}

func (f *fakeSource) Committed(offsets map[txnoffsets.TopicPartition]int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.committed = append(f.committed, maps.Clone(offsets))
}

func (f *fakeSource) commits() []map[txnoffsets.TopicPartition]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.committed)
}

func newFakeSource(addr string) *fakeSource {
	return &fakeSource{group: "g", cluster: txnoffsets.ClusterIdentity{SeedBrokers: []string{addr}}, member: txnoffsets.NoMember}
}

// fromSource returns messages for topic "out" that were read from partition
// 0 of topic "in" at the given offsets.
func fromSource(src txnoffsets.Source, offsets ...int64) service.MessageBatch {
	var b service.MessageBatch
	for _, o := range offsets {
		m := message("v", "topic", "out")
		b = append(b, m.WithContext(txnoffsets.WithOrigin(context.Background(), txnoffsets.Origin{Source: src, Topic: "in", Offset: o})))
	}
	return b
}

// groupOffsets reads the committed offsets of group "g", requiring stable
// offsets (waiting for open transactions).
func groupOffsets(t *testing.T, addr string) map[string]int64 {
	t.Helper()
	return fetchGroupOffsets(t, addr, true)
}

// fetchGroupOffsets reads the committed offsets of group "g"; without
// stable, offsets of open transactions are left out.
func fetchGroupOffsets(t *testing.T, addr string, stable bool) map[string]int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if stable {
		ctx = kadm.RequireStable(ctx)
	}
	resp, err := kadm.NewClient(cl).FetchOffsets(ctx, "g")
	if errors.Is(err, kerr.GroupIDNotFound) {
		return map[string]int64{}
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			out[o.Topic] = o.At
		}
	})
	return out
}

func countRequests(c *kfake.Cluster, key kmsg.Key) *atomic.Int32 {
	var n atomic.Int32
	c.ControlKey(int16(key), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		n.Add(1)
		return nil, nil, false
	})
	return &n
}

// The source offsets of a batch commit with its transaction, and only when
// it commits: an EndTxn that fails leaves the group's offsets untouched and
// the source is not told; the next transaction commits both.
func TestTxnOffsetsCommitOnlyWithTransaction(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "in", "out"))
	adds, commits := countRequests(c, kmsg.AddOffsetsToTxn), countRequests(c, kmsg.TxnOffsetCommit)
	src := newFakeSource(addr)
	s := newConnectedSink(t, eosYAML(addr, ""))
	ctx := context.Background()

	if err := s.WriteBatch(ctx, fromSource(src, 0, 1, 2)); err != nil {
		t.Fatal(err)
	}
	if got := groupOffsets(t, addr); got["in"] != 3 {
		t.Fatalf("committed offsets after the first transaction %v, want in=3", got)
	}
	if adds.Load() != 1 || commits.Load() != 1 {
		t.Fatalf("AddOffsetsToTxn %d, TxnOffsetCommit %d; want one each", adds.Load(), commits.Load())
	}
	if got := src.commits(); len(got) != 1 || got[0][txnoffsets.TopicPartition{Topic: "in"}] != 3 {
		t.Fatalf("source told %v, want one commit of in/0 at 3", got)
	}

	// The commit of the next transaction fails: nothing of it lands.
	var failed atomic.Bool
	c.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		r := req.(*kmsg.EndTxnRequest)
		if !r.Commit || failed.Load() {
			c.KeepControl()
			return nil, nil, false
		}
		failed.Store(true)
		resp := r.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode = kerr.InvalidTxnState.Code
		return resp, nil, true
	})
	s.recreate = kafkaconn.NewBackoff(time.Millisecond, recreateBackoffMax)
	err := s.WriteBatch(ctx, fromSource(src, 3, 4))
	if err == nil {
		t.Fatal("the batch was acknowledged although EndTxn failed")
	}
	// The failed transaction is still open on the broker (its producer
	// was closed; the next one fences it): read without waiting for it.
	if got := fetchGroupOffsets(t, addr, false); got["in"] != 3 {
		t.Fatalf("committed offsets after a failed commit %v, want in=3 still", got)
	}
	if got := src.commits(); len(got) != 1 {
		t.Fatalf("source told of an aborted transaction: %v", got)
	}
	if errors.Is(err, service.ErrNotConnected) {
		connect(t, s)
	}
	if err := s.WriteBatch(ctx, fromSource(src, 3, 4)); err != nil {
		t.Fatal(err)
	}
	if got := groupOffsets(t, addr); got["in"] != 5 {
		t.Fatalf("committed offsets after the retried transaction %v, want in=5", got)
	}
	if got := readCommitted(t, addr, 5, "out"); len(got["out"]) != 5 {
		t.Fatalf("read_committed sees %d records, want 5", len(got["out"]))
	}
}

// A TxnOffsetCommit error does not fail the franz-go client: the sink must
// abort by itself, or the records would commit without their offsets. The
// batch fails as a whole, nothing of it is visible to read_committed
// readers, and the group's offsets do not move.
func TestTxnOffsetsAbortOnTxnOffsetCommitError(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "in", "out"))
	var refused atomic.Int32
	c.ControlKey(int16(kmsg.TxnOffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		r := req.(*kmsg.TxnOffsetCommitRequest)
		refused.Add(1)
		resp := r.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		for _, rt := range r.Topics {
			st := kmsg.NewTxnOffsetCommitResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.UnknownServerError.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	var commitsEnded atomic.Int32
	c.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if req.(*kmsg.EndTxnRequest).Commit {
			commitsEnded.Add(1)
		}
		return nil, nil, false
	})
	src := newFakeSource(addr)
	s := newConnectedSink(t, eosYAML(addr, ""))
	ctx := context.Background()

	err := s.WriteBatch(ctx, fromSource(src, 0, 1, 2))
	if err == nil {
		t.Fatal("the batch was acknowledged although its offsets were refused")
	}
	var berr *service.BatchError
	if errors.As(err, &berr) {
		t.Fatalf("want the whole batch failed, got a batch error: %v", err)
	}
	var oce *OffsetCommitError
	if !errors.As(err, &oce) || !errors.Is(err, kerr.UnknownServerError) || oce.Topic != "in" || oce.Group != "g" {
		t.Fatalf("error does not name the refused partition and cause: %v", err)
	}
	if refused.Load() != 1 || commitsEnded.Load() != 0 {
		t.Fatalf("TxnOffsetCommit %d, EndTxn commits %d; want one refused commit and no EndTxn commit", refused.Load(), commitsEnded.Load())
	}
	if got := src.commits(); len(got) != 0 {
		t.Fatalf("source told of an aborted transaction: %v", got)
	}
	// The next batch (no source) commits; it is all a read_committed
	// reader sees.
	if errors.Is(err, service.ErrNotConnected) {
		connect(t, s)
	}
	if err := s.WriteBatch(ctx, values("out", "after")); err != nil {
		t.Fatal(err)
	}
	if got := readCommitted(t, addr, 1, "out"); !slices.Equal(got["out"], []string{"after"}) {
		t.Fatalf("read_committed sees %v, want only [after]", got["out"])
	}
	if got := groupOffsets(t, addr); len(got) != 0 {
		t.Fatalf("group offsets %v, want none", got)
	}
}

// In group mode the TxnOffsetCommit carries the member id and generation
// the source gives. A coordinator that does not know them refuses; the
// transaction is aborted and retried in place (a generation can change
// while the partition stays), and once the source says the partition moved,
// its messages fail alone (their new owner reads them again) and nothing of
// them is visible to read_committed readers.
func TestTxnOffsetsGroupMemberFenced(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "in", "out"))
	var (
		mu   sync.Mutex
		sent []kmsg.TxnOffsetCommitRequest
	)
	c.ControlKey(int16(kmsg.TxnOffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		sent = append(sent, *req.(*kmsg.TxnOffsetCommitRequest))
		mu.Unlock()
		return nil, nil, false
	})
	// A live member makes the group exist; the sink commits as another.
	member, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("in"))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	eventually.True(t, 10*time.Second, "the member to join group g", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		member.PollFetches(ctx)
		cancel()
		_, gen := member.GroupMetadata()
		return gen > 0
	})
	src := newFakeSource(addr)
	src.member = txnoffsets.Member{ID: "zombie-member", Generation: 7}
	src.movedAfter = 2
	s, logs := newLoggedSink(t, eosYAML(addr, ""))
	connect(t, s)

	err = s.WriteBatch(context.Background(), fromSource(src, 0, 1))
	var berr *service.BatchError
	if !errors.As(err, &berr) {
		t.Fatalf("want every message failed alone, got %v", err)
	}
	var moved *txnoffsets.NotOwnedError
	if !errors.As(err, &moved) {
		t.Fatalf("the failure does not say the partition moved: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 2 {
		t.Fatalf("%d TxnOffsetCommit requests, want 2 (one retry in place before the source said the partition moved)", len(sent))
	}
	for _, r := range sent {
		if r.MemberID != "zombie-member" || r.Generation != 7 || r.Group != "g" {
			t.Fatalf("TxnOffsetCommit as %q generation %d of group %q, want zombie-member generation 7 of g", r.MemberID, r.Generation, r.Group)
		}
	}
	if l := logs.String(); !strings.Contains(l, "consumer group") || !strings.Contains(l, "in") {
		t.Errorf("log does not name the group and topic: %s", l)
	}
	if got := fetchGroupOffsets(t, addr, true); len(got) != 0 {
		t.Fatalf("group offsets %v, want none", got)
	}
	if err := s.WriteBatch(context.Background(), values("out", "after")); err != nil {
		t.Fatal(err)
	}
	if got := readCommitted(t, addr, 1, "out"); !slices.Equal(got["out"], []string{"after"}) {
		t.Fatalf("read_committed sees %v, want only [after]", got["out"])
	}
}

// A transient refusal of the offsets (a rebalance under way) aborts the
// transaction and retries the same batch in place, rather than failing it:
// a failed batch comes back after later ones, out of per-key order.
func TestTxnOffsetsRetriedInPlace(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "in", "out"))
	var calls atomic.Int32
	c.ControlKey(int16(kmsg.TxnOffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if calls.Add(1) > 1 {
			return nil, nil, false
		}
		r := req.(*kmsg.TxnOffsetCommitRequest)
		resp := r.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		for _, rt := range r.Topics {
			st := kmsg.NewTxnOffsetCommitResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.RebalanceInProgress.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	src := newFakeSource(addr)
	s := newConnectedSink(t, eosYAML(addr, ""))
	if err := s.WriteBatch(context.Background(), fromSource(src, 0, 1, 2)); err != nil {
		t.Fatalf("want the batch committed after a retry in place, got %v", err)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d TxnOffsetCommit requests, want 2", n)
	}
	if got := groupOffsets(t, addr); got["in"] != 3 {
		t.Fatalf("committed offsets %v, want in=3", got)
	}
	if got := readCommitted(t, addr, 3, "out"); len(got["out"]) != 3 {
		t.Fatalf("read_committed sees %v, want the 3 records once", got["out"])
	}
}

// A source on another cluster does not pair: no offsets join the
// transaction, the batch commits, and the sink says so once.
func TestTxnOffsetsOtherClusterNotPaired(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "in", "out"))
	commits := countRequests(c, kmsg.TxnOffsetCommit)
	src := newFakeSource("elsewhere:9092")
	src.cluster.ID = "another-cluster"
	s, logs := newLoggedSink(t, eosYAML(addr, ""))
	connect(t, s)
	for range 2 {
		if err := s.WriteBatch(context.Background(), fromSource(src, 0, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if commits.Load() != 0 || len(src.commits()) != 0 {
		t.Fatalf("TxnOffsetCommit %d, source told %v; want no pairing", commits.Load(), src.commits())
	}
	if n := strings.Count(logs.String(), "reads another cluster"); n != 1 {
		t.Fatalf("logged the refused pairing %d times, want once: %s", n, logs.String())
	}
}

// A kafka_source without a consumer group on the sink's cluster is refused:
// its offsets are not committed to group "" (no AddOffsetsToTxn or
// TxnOffsetCommit is sent), the transaction aborts with an error naming
// consumer_group, and nothing of it is visible to read_committed readers.
func TestTxnOffsetsSourceWithoutGroupRefused(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "in", "out"))
	adds, commits := countRequests(c, kmsg.AddOffsetsToTxn), countRequests(c, kmsg.TxnOffsetCommit)
	src := newFakeSource(addr)
	src.group = ""
	s := newConnectedSink(t, eosYAML(addr, ""))
	ctx := context.Background()

	err := s.WriteBatch(ctx, fromSource(src, 0, 1))
	if !errors.Is(err, ErrSourceWithoutGroup) || !strings.Contains(err.Error(), "set consumer_group on the kafka_source") {
		t.Fatalf("WriteBatch error %v, want ErrSourceWithoutGroup naming consumer_group", err)
	}
	if adds.Load() != 0 || commits.Load() != 0 || len(src.commits()) != 0 {
		t.Fatalf("AddOffsetsToTxn %d, TxnOffsetCommit %d, source told %v; want no pairing", adds.Load(), commits.Load(), src.commits())
	}
	if errors.Is(err, service.ErrNotConnected) {
		connect(t, s)
	}
	if err := s.WriteBatch(ctx, service.MessageBatch{message("after", "topic", "out")}); err != nil {
		t.Fatal(err)
	}
	if got := readCommitted(t, addr, 1, "out"); !slices.Equal(got["out"], []string{"after"}) {
		t.Fatalf("read_committed sees %v first, want [after]: the refused transaction was not aborted", got["out"])
	}
}

// A transaction carrying the offsets of many partitions commits them in
// several TxnOffsetCommit requests, each within the chunk budget (the
// coordinator writes a request as one record batch, refused past the
// broker's message.max.bytes: ~8,000 partitions at the real budget), and
// every partition's offset lands with the transaction.
func TestTxnOffsetsManyPartitionsSplit(t *testing.T) {
	t.Parallel()
	const partitions = 40
	c, addr := newCluster(t, kfake.SeedTopics(partitions, "in"), kfake.SeedTopics(1, "out"))
	var (
		mu       sync.Mutex
		requests [][]int32 // the partitions of "in" in each TxnOffsetCommit
	)
	c.ControlKey(int16(kmsg.TxnOffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		var ps []int32
		for _, rt := range req.(*kmsg.TxnOffsetCommitRequest).Topics {
			for _, rp := range rt.Partitions {
				ps = append(ps, rp.Partition)
			}
		}
		mu.Lock()
		requests = append(requests, ps)
		mu.Unlock()
		return nil, nil, false
	})
	src := newFakeSource(addr)
	s := newConnectedSink(t, eosYAML(addr, ""))
	per := commitchunk.RecordBytes(src.group, "in", 0)
	s.offsetChunkBytes = 10 * per

	var b service.MessageBatch
	for p := range int32(partitions) {
		m := message("v", "topic", "out")
		o := txnoffsets.Origin{Source: src, Topic: "in", Partition: p, Offset: int64(p)}
		b = append(b, m.WithContext(txnoffsets.WithOrigin(context.Background(), o)))
	}
	if err := s.WriteBatch(context.Background(), b); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	got := slices.Clone(requests)
	mu.Unlock()
	if len(got) != partitions/10 {
		t.Fatalf("%d TxnOffsetCommit requests %v, want %d of 10 partitions each", len(got), got, partitions/10)
	}
	seen := map[int32]int{}
	for i, ps := range got {
		if len(ps)*per > s.offsetChunkBytes {
			t.Errorf("request %d carries %d partitions, over the budget of 10", i, len(ps))
		}
		for _, p := range ps {
			seen[p]++
		}
	}
	for p := range int32(partitions) {
		if seen[p] != 1 {
			t.Errorf("partition %d in %d requests, want 1", p, seen[p])
		}
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(kadm.RequireStable(context.Background()), 10*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).FetchOffsets(ctx, src.group)
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(partitions) {
		o, ok := resp.Lookup("in", p)
		if !ok || o.Err != nil || o.At != int64(p)+1 {
			t.Errorf("in/%d: committed %+v (found %v), want offset %d", p, o, ok, p+1)
		}
	}
}
