package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/metricdoc/metrictest"
	"github.com/connectd/connectd/internal/txnoffsets"
	"github.com/connectd/connectd/plugins/output/kafkasink"
)

// prepareTxn computes the offset a transaction may commit: the lowest
// offset still unacknowledged if the transaction's records were acked, so
// that an earlier record in flight holds it back.
func TestTrackerPrepareTxn(t *testing.T) {
	t.Parallel()
	tp := tpT(0)
	for _, tc := range []struct {
		name    string
		fetched []int64
		acked   []int64
		txn     []int64
		commit  int64 // -1: nothing to commit
		// committed is what an earlier transaction committed (0: none)
		// before its records' acknowledgements arrived.
		committed int64
	}{
		{"whole batch", []int64{10, 11, 12}, nil, []int64{10, 11, 12}, 13, 0},
		{"earlier record in flight", []int64{10, 11, 12}, nil, []int64{11, 12}, -1, 0},
		{"earlier acked", []int64{10, 11, 12}, []int64{10}, []int64{11}, 12, 0},
		{"later in flight", []int64{10, 11, 12, 13}, nil, []int64{12, 10, 11}, 13, 0},
		{"gap of a nacked record", []int64{10, 11, 12}, nil, []int64{10, 12}, 11, 0},
		// The previous transaction (10, 11) committed 12, its acks are
		// still on their way: the next one commits past it.
		{"previous transaction's acks pending", []int64{10, 11, 12, 13}, nil, []int64{12, 13}, 14, 12},
		// Never below what was committed, whatever is in flight.
		{"nothing past the committed offset", []int64{10, 11, 12, 13}, nil, []int64{13}, -1, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newOffsetTracker(100)
			tr.addPartition(tp, 10, 10, noStop)
			for _, o := range tc.fetched {
				tr.fetchedOne(position{tp: tp, offset: o})
			}
			for _, o := range tc.acked {
				tr.acked([]position{{tp: tp, offset: o}})
			}
			if tc.committed > 0 {
				tr.markCommitted(tp, tc.committed)
			}
			got, notTracked := tr.prepareTxn(map[topicPartition][]int64{tp: tc.txn})
			if len(notTracked) > 0 {
				t.Fatal(notTracked)
			}
			o, ok := got[tp]
			if tc.commit < 0 && ok || tc.commit >= 0 && o != tc.commit {
				t.Fatalf("prepareTxn = %v, want %d", got, tc.commit)
			}
			// While the transaction's records are unacknowledged the
			// source does not commit the partition itself.
			if _, ok := tr.selfCommits(true)[tp]; ok {
				t.Fatal("the source would commit a partition whose records are in a transaction")
			}
		})
	}
	tr := newOffsetTracker(100)
	if _, notTracked := tr.prepareTxn(map[topicPartition][]int64{tp: {1}}); len(notTracked) != 1 {
		t.Fatal("prepareTxn accepted an untracked (revoked) partition")
	}
}

// Every message carries its origin; the sink's Prepare and Committed
// replace the source's own commits: after the records are acknowledged,
// the commit loop sends no OffsetCommit for offsets the transaction
// committed, and kafka_source_committed_offset follows the transaction.
func TestSourceLeavesTxnOffsetsToSink(t *testing.T) {
	t.Parallel()
	c, addr := newFakeCluster(t)
	var commits atomic.Int32
	// Count the commits of t/0 (partitions 1 and 2 have no records and
	// are committed by the source at any time).
	c.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, rt := range req.(*kmsg.OffsetCommitRequest).Topics {
			for _, rp := range rt.Partitions {
				if rp.Partition == 0 {
					commits.Add(1)
				}
			}
		}
		return nil, nil, false
	})
	produceN(t, addr, "t", 5, 0)
	s := newTestSource(t, sourceYAML(addr, "g", "commit_period: 20ms", "fetch_max_wait: 50ms"))
	batches := readRecords(t, s, 5)

	var origins []txnoffsets.Origin
	var src txnoffsets.Source
	for _, b := range batches {
		for i, m := range b.msgs {
			o, ok := txnoffsets.FromContext(m.Context())
			if !ok {
				t.Fatalf("message %d has no origin", i)
			}
			if o.Topic != b.pos[i].tp.topic || o.Partition != b.pos[i].tp.partition || o.Offset != b.pos[i].offset {
				t.Fatalf("origin %+v, want %v", o, b.pos[i])
			}
			if src != nil && o.Source != src {
				t.Fatal("messages of one session name different sources")
			}
			src = o.Source
			origins = append(origins, o)
		}
	}
	if src.GroupID() != "g" || !txnoffsets.SameCluster(src.Cluster(), txnoffsets.ClusterIdentity{SeedBrokers: []string{addr}}) {
		t.Fatalf("source group %q cluster %+v", src.GroupID(), src.Cluster())
	}
	pc, err := src.Prepare(origins)
	if err != nil {
		t.Fatal(err)
	}
	want := map[txnoffsets.TopicPartition]int64{{Topic: "t", Partition: 0}: 5}
	if len(pc) != 1 || pc[0].Member != txnoffsets.NoMember || !maps.Equal(pc[0].Offsets, want) {
		t.Fatalf("Prepare = %+v, want %v as no member", pc, want)
	}
	// Commit-loop ticks while the "transaction" is open: nothing to do
	// (a commit before Prepare, of the start offset, is allowed).
	commitIdle(t, s) // that commit is on the broker, counted
	during := commits.Load()
	commitTick(t, s)
	if n := commits.Load(); n != during {
		t.Fatalf("the source sent %d OffsetCommits while the records were in a transaction", n-during)
	}
	src.Committed(want) // as the sink does after EndTxn
	for _, b := range batches {
		_ = b.ack(context.Background(), nil)
	}
	commitTick(t, s) // the acks are in: a tick now would commit t/0
	if n := commits.Load(); n != during {
		t.Fatalf("the source sent %d OffsetCommits for offsets the transaction committed", n-during)
	}
	if got := committedOffsets(t, addr, "g"); got[tpT(0)] > 0 {
		t.Fatalf("the source committed %v itself", got)
	}
}

// In group mode Prepare names the live member id and generation of the
// reader that owns the partition.
func TestSourceGroupPrepareNamesMember(t *testing.T) {
	t.Parallel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	produceN(t, addr, "t", 3, 0, 1)
	s := newTestSource(t, sourceYAML(addr, "g", "assignment: group", "readers: 1", "fetch_max_wait: 50ms"))
	batches := readRecords(t, s, 6)
	var origins []txnoffsets.Origin
	for _, b := range batches {
		for _, m := range b.msgs {
			o, _ := txnoffsets.FromContext(m.Context())
			origins = append(origins, o)
		}
	}
	pc, err := origins[0].Source.Prepare(origins)
	if err != nil {
		t.Fatal(err)
	}
	cl := sessOf(s).clients[0]
	id, gen := cl.GroupMetadata()
	if id == "" || gen < 1 {
		t.Fatalf("reader is not a group member: %q %d", id, gen)
	}
	if len(pc) != 1 || pc[0].Member.ID != id || pc[0].Member.Generation != gen || len(pc[0].Offsets) != 2 {
		t.Fatalf("Prepare = %+v, want both partitions as member %q generation %d", pc, id, gen)
	}
	for _, b := range batches {
		_ = b.ack(context.Background(), nil)
	}
}

// kafka_source -> kafka_sink exactly_once on one kfake cluster, pairing by
// themselves: a batch that reaches the sink before an earlier batch of the
// same partition commits its records but not past the earlier one (the
// offset is carried over); when the earlier batch commits, the offset moves
// past both. The source never commits these offsets itself.
func TestSourceSinkPairCarryOver(t *testing.T) {
	t.Parallel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t", "out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	var selfCommits atomic.Int32
	c.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, rt := range req.(*kmsg.OffsetCommitRequest).Topics {
			for _, rp := range rt.Partitions {
				if rp.Offset > 0 {
					selfCommits.Add(1)
				}
			}
		}
		return nil, nil, false
	})
	produceN(t, addr, "t", 4, 0)
	s := newTestSource(t, sourceYAML(addr, "g", "batch_size: 2", "commit_period: 20ms", "fetch_max_wait: 50ms"))
	batches := readRecords(t, s, 4)
	if len(batches) != 2 {
		t.Fatalf("%d batches, want 2 of 2 records", len(batches))
	}

	pc, err := kafkasink.Spec().ParseYAML(fmt.Sprintf(`
seed_brokers: [ %q ]
topic: out
delivery_guarantee: exactly_once
transactional_id_prefix: carry
`, addr), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := kafkasink.ConfigFromParsed(pc)
	if err != nil {
		t.Fatal(err)
	}
	sink, err := kafkasink.NewSink(cfg, service.MockResources())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	t.Cleanup(func() { _ = sink.Close(context.Background()) })
	if err := sink.Connect(ctx); err != nil {
		t.Fatal(err)
	}

	// The later batch first: committed, but the offset stays before the
	// earlier batch, still in flight.
	if err := sink.WriteBatch(ctx, batches[1].msgs); err != nil {
		t.Fatal(err)
	}
	_ = batches[1].ack(ctx, nil)
	if got := committedOffsets(t, addr, "g"); got[tpT(0)] > 0 {
		t.Fatalf("committed %v past the batch still in flight", got)
	}
	if err := sink.WriteBatch(ctx, batches[0].msgs); err != nil {
		t.Fatal(err)
	}
	_ = batches[0].ack(ctx, nil)
	// The records flow into a transaction that commits at the sink's
	// commit_interval.
	eventually.NoError(t, testTimeout, "t/0 committed at 4 by both transactions", func() error {
		if got := committedOffsets(t, addr, "g"); got[tpT(0)] != 4 {
			return fmt.Errorf("committed %v", got)
		}
		return nil
	})
	commitTick(t, s) // the acks are in: a tick now would commit t/0 itself
	if n := selfCommits.Load(); n != 0 {
		t.Fatalf("the source committed %d offsets itself", n)
	}
}

// Committed offsets are read with require-stable semantics: while a
// transaction that commits offsets of the group is open, fetchCommitted
// waits, and returns the transaction's offsets once it committed.
func TestFetchCommittedWaitsForOpenTransaction(t *testing.T) {
	t.Parallel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t", "out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	// The partition has a committed offset: Kafka (and kfake) report
	// UNSTABLE_OFFSET_COMMIT, when fetching all of a group's offsets, only
	// for partitions that have one (see fetchCommitted).
	commitOffsets(t, addr, "g", map[topicPartition]int64{tpT(0): 1})
	txn := newClient(t, addr, kgo.TransactionalID("open-txn"))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Topic: "out", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pid, epoch, err := txn.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = "open-txn", pid, epoch, "g"
	if resp, err := add.RequestWith(ctx, txn); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("AddOffsetsToTxn: %v %v", err, resp)
	}
	commit := kmsg.NewPtrTxnOffsetCommitRequest()
	commit.TransactionalID, commit.ProducerID, commit.ProducerEpoch, commit.Group = "open-txn", pid, epoch, "g"
	commit.Generation = -1
	topics, err := kadm.NewClient(txn).ListTopics(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic, rt.TopicID = "t", topics["t"].ID // v6 (KIP-1319) names topics by id
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch = 0, 5, -1
	rt.Partitions = append(rt.Partitions, rp)
	commit.Topics = append(commit.Topics, rt)
	if resp, err := commit.RequestWith(ctx, txn); err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("TxnOffsetCommit: %v %+v", err, resp)
	}

	// Count fetchCommitted's OffsetFetch requests: a second one shows
	// that it was answered UNSTABLE_OFFSET_COMMIT and asks again.
	var fetches atomic.Int32
	c.ControlKey(int16(kmsg.OffsetFetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		fetches.Add(1)
		return nil, nil, false
	})
	type result struct {
		at  int64
		err error
	}
	done := make(chan result, 1)
	go func() {
		offsets, err := fetchCommitted(ctx, kadm.NewClient(newClient(t, addr)), "g")
		at := int64(-1)
		if o, ok := offsets.Lookup("t", 0); ok {
			at = o.At
		}
		done <- result{at, err}
	}()
	eventually.True(t, testTimeout, "fetchCommitted to ask again while the transaction is open", func() bool {
		select {
		case r := <-done:
			t.Fatalf("fetchCommitted returned (%d, %v) while the transaction was open", r.at, r.err)
		default:
		}
		return fetches.Load() >= 2
	})
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.at != 5 {
		t.Fatalf("fetchCommitted = (%d, %v), want the transaction's offset 5", r.at, r.err)
	}
}

// kafka_source_unacked_records counts the records of partitions that an
// exactly-once sink commits: an event_window holds its records
// unacknowledged until their window fires, the source does not commit
// those partitions itself, and the gauge used to change only with the
// source's own commits, so it read 0 while the records piled up towards
// checkpoint_limit.
func TestUnackedRecordsFollowTransactions(t *testing.T) {
	t.Parallel()
	addr := newTopicsCluster(t, 1, "t", "out")
	// Ten records of a first hour, whose window fires (so the sink's
	// transaction commits the partition), and forty of a later one, whose
	// window stays open.
	var krs []*kgo.Record
	for i := range 50 {
		ts := baseTime.Add(time.Duration(i) * time.Second)
		if i >= 10 {
			ts = ts.Add(2 * time.Hour)
		}
		krs = append(krs, &kgo.Record{Topic: "t", Partition: 0, Key: []byte("k"), Value: []byte(`{}`), Timestamp: ts})
	}
	produce(t, addr, krs...)
	rec := recordedPipeline(t, fmt.Sprintf(`
input:
  kafka_source:
    seed_brokers: [ %q ]
    topics: [ t ]
    consumer_group: g-unacked
    start_from: earliest
    commit_period: 10ms
    watermark: { max_out_of_orderness: 1s }
buffer:
  event_window:
    type: tumbling
    size: 1h
    key: ${! @kafka_key }
    aggregates: { n: count }
output:
  kafka_sink:
    seed_brokers: [ %q ]
    topic: out
    delivery_guarantee: exactly_once
    transactional_id_prefix: unacked
    commit_interval: 100ms
`, addr, addr))
	// The later window holds its records: they are not acknowledged.
	key := metrictest.Key(metricUnacked, "topic", "t", "partition", "0")
	eventually.NoError(t, testTimeout, "the open window's 40 records unacknowledged", func() error {
		if got := rec.Get(key); got < 40 {
			return fmt.Errorf("%s = %d", key, got)
		}
		return nil
	})
}

// A committed offset that moves after the session read it, before an
// exactly-once sink of the process fenced its predecessors (a killed
// predecessor's last transaction whose commit reached the broker late), is
// caught the first time the sink holds the session's records: the hold is
// refused, the session rewinds, and the next one starts from the moved
// offset. Without the check the session wrote the predecessor's records
// again.
func TestSourceReadsOffsetsAgainAfterFence(t *testing.T) {
	// Not parallel: txnoffsets.Fenced is process-wide.
	addr := newTopicsCluster(t, 1, "t")
	produceN(t, addr, "t", 10, 0)
	s := newTestSource(t, sourceYAML(addr, "g-fence", "start_from: committed", "fetch_max_wait: 50ms"))
	sess := s.cur.Load()
	var origins []txnoffsets.Origin
	for _, b := range readRecords(t, s, 10) {
		for _, p := range b.pos {
			origins = append(origins, txnoffsets.Origin{Source: sess, Topic: p.tp.topic, Partition: p.tp.partition, Offset: p.offset})
		}
	}
	// The predecessor's transaction commits offset 6 late, then the
	// sink's producers are initialised.
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	offs := kadm.Offsets{}
	offs.AddOffset("t", 0, 6, -1)
	if err := kadm.NewClient(newClient(t, addr)).CommitAllOffsets(ctx, "g-fence", offs); err != nil {
		t.Fatal(err)
	}
	txnoffsets.Fenced()
	var notOwned *txnoffsets.NotOwnedError
	if _, err := sess.Hold(origins); !errors.As(err, &notOwned) {
		t.Fatalf("Hold after the offsets moved = %v, want a NotOwnedError", err)
	}
	// The session ends; the next one starts where the transaction left.
	for {
		b, err := readOne(t, s, testTimeout)
		if errors.Is(err, service.ErrNotConnected) {
			if err := s.Connect(ctx); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.pos[0].offset != 6 {
			t.Fatalf("the new session starts at offset %d, want 6", b.pos[0].offset)
		}
		break
	}
}
