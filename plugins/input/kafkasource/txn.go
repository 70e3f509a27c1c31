package kafkasource

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/connectd/connectd/internal/txnoffsets"
)

// This file is the source's side of exactly-once (internal/txnoffsets):
// every message carries its origin, a session is the txnoffsets.Source an
// exactly-once kafka_sink on the same cluster commits offsets for, inside its
// transaction, and the session then leaves those partitions alone in its
// own commits while their records are in flight. Prepare and Committed are
// requests to the session's owner, which holds the offsets.

var _ txnoffsets.Source = (*session)(nil)

// origin is the txnoffsets.Source the session's messages name: the session,
// or nil without a consumer group (nothing to commit, so no pairing).
func (sess *session) origin() txnoffsets.Source {
	if sess.conf.ConsumerGroup == "" {
		return nil
	}
	return sess
}

// GroupID is the consumer group the offsets are committed to, "" for none.
// It is configuration, answered without the owner: the event_window buffer
// asks it of sessions that ended.
func (sess *session) GroupID() string { return sess.conf.ConsumerGroup }

// Cluster identifies the cluster the session reads, as learnt at connect
// (before the session was published; it does not change).
func (sess *session) Cluster() txnoffsets.ClusterIdentity {
	return txnoffsets.ClusterIdentity{ID: sess.clusterID, SeedBrokers: sess.conf.Conn.SeedBrokers}
}

// notOwned is Prepare's error for partitions whose records must not commit
// to group here.
func notOwned(group string, tps []topicPartition, reason string) *txnoffsets.NotOwnedError {
	sortPartitions(tps)
	e := &txnoffsets.NotOwnedError{Group: group, Reason: reason}
	for _, tp := range tps {
		e.Partitions = append(e.Partitions, txnoffsets.TopicPartition{Topic: tp.topic, Partition: tp.partition})
	}
	return e
}

// errSessionEnded is the reason of Prepare's error once the session ended.
const errSessionEnded = "the session that read them ended: the input reconnected or closed"

// haltedErr is Prepare's error once the run is stopping on an error: the
// sink's transaction must abort, so that nothing at or after the failing
// record is marked done.
func (o *owner) haltedErr() error {
	if err := o.halt.Err(); err != nil {
		return fmt.Errorf("kafka_source: consumer group %q commits no offsets: the run is stopping: %w", o.conf.ConsumerGroup, err)
	}
	return nil
}

// Prepare returns the offsets an exactly-once sink commits in its
// transaction for origins, grouped by the member that owns each partition
// (in group mode; a single NoMember commit otherwise). The owner answers
// once no commit of the source's own is in flight (commit.go).
func (sess *session) Prepare(origins []txnoffsets.Origin) ([]txnoffsets.Commit, error) {
	if err := sess.checkStart(); err != nil {
		return nil, err
	}
	ps := map[topicPartition][]int64{}
	for _, o := range origins {
		tp := topicPartition{topic: o.Topic, partition: o.Partition}
		ps[tp] = append(ps[tp], o.Offset)
	}
	reply := make(chan prepared, 1)
	res, ok := call(sess, prepareReq{ps: ps, reply: reply}, reply)
	if !ok {
		return nil, notOwned(sess.conf.ConsumerGroup, slices.Collect(maps.Keys(ps)), errSessionEnded)
	}
	return res.commits, res.err
}

// prepared is the answer to prepareReq and prepareWindowsReq.
type prepared struct {
	commits []txnoffsets.Commit
	err     error
}

// prepareReq asks for the offsets of a transaction's records: ps are their
// offsets per partition.
type prepareReq struct {
	ps    map[topicPartition][]int64
	reply chan prepared
}

func (r prepareReq) handle(o *owner) {
	if !o.whenCommitIdle(func() { r.handle(o) }) {
		return
	}
	r.reply <- o.prepare(r.ps)
}

func (o *owner) prepare(ps map[topicPartition][]int64) prepared {
	if o.conf.ConsumerGroup == "" {
		return prepared{}
	}
	if err := o.haltedErr(); err != nil {
		return prepared{err: err}
	}
	if o.stopped {
		return prepared{err: notOwned(o.conf.ConsumerGroup, slices.Collect(maps.Keys(ps)), errSessionEnded)}
	}
	if o.rewinding != nil {
		return prepared{err: notOwned(o.conf.ConsumerGroup, slices.Collect(maps.Keys(ps)), errRewinding)}
	}
	pos, notTracked := o.tracker.prepareTxn(ps)
	if len(notTracked) > 0 {
		return prepared{err: notOwned(o.conf.ConsumerGroup, notTracked, "revoked or lost by this member")}
	}
	if len(pos) == 0 {
		return prepared{}
	}
	commits, err := o.assign.txnCommits(o, pos, nil)
	return prepared{commits: commits, err: err}
}

// Committed records offsets that the sink committed in a transaction: the
// source does not commit them again, and kafka_source_committed_offset
// follows. The sink acknowledges the transaction's records after this
// call, and requests reach the owner in the order they are sent, so the
// owner knows of the commit before it sees the acknowledgements.
func (sess *session) Committed(offsets map[txnoffsets.TopicPartition]int64) {
	sess.send(committedReq{offsets: offsets})
}

// committedReq records offsets that the sink committed in a transaction.
// release are the holds the transaction ended (CommittedHeld), nil if none.
type committedReq struct {
	offsets map[txnoffsets.TopicPartition]int64
	release []holdID
}

func (r committedReq) handle(o *owner) {
	for tp, off := range r.offsets {
		p := topicPartition{topic: tp.Topic, partition: tp.Partition}
		o.tracker.markCommitted(p, off)
		o.metrics.commits.Incr(1, tp.Topic)
		o.metrics.parts.committed(p, off)
	}
	if r.release != nil {
		o.tracker.release(r.release, nil)
		o.afterRelease()
	}
}

// newTxnCommit is an empty commit for member m, with room for metadata when
// withMeta.
func newTxnCommit(m txnoffsets.Member, withMeta bool) *txnoffsets.Commit {
	c := &txnoffsets.Commit{Member: m, Offsets: map[txnoffsets.TopicPartition]int64{}}
	if withMeta {
		c.Metadata = map[txnoffsets.TopicPartition]string{}
	}
	return c
}

// add puts tp's offset (and its metadata, if any) in c.
func addToTxnCommit(c *txnoffsets.Commit, tp topicPartition, off int64, meta map[topicPartition]string) {
	k := txnoffsets.TopicPartition{Topic: tp.topic, Partition: tp.partition}
	c.Offsets[k] = off
	if m, ok := meta[tp]; ok {
		c.Metadata[k] = m
	}
}

// sortedCommits returns the commits of by in reader order.
func sortedCommits(by map[int]*txnoffsets.Commit) []txnoffsets.Commit {
	readers := make([]int, 0, len(by))
	for r := range by {
		readers = append(readers, r)
	}
	sort.Ints(readers)
	out := make([]txnoffsets.Commit, 0, len(by))
	for _, r := range readers {
		out = append(out, *by[r])
	}
	return out
}
