package kafkasource

import (
	"context"
	"sort"
	"strconv"

	"github.com/connectd/connectd/internal/txnoffsets"
)

// This file is the source's side of exactly-once (internal/txnoffsets):
// every message carries its origin, a session is the txnoffsets.Source an
// exactly-once kafka_sink on the same cluster commits offsets for, inside its
// transaction, and the session then leaves those partitions alone in its
// own commits while their records are in flight.

var _ txnoffsets.Source = (*session)(nil)

// notOwned is Prepare's error for partitions whose records must not commit
// here.
func (sess *session) notOwned(tps []topicPartition, reason string) *txnoffsets.NotOwnedError {
	sortPartitions(tps)
	e := &txnoffsets.NotOwnedError{Group: sess.conf.ConsumerGroup, Reason: reason}
	for _, tp := range tps {
		e.Partitions = append(e.Partitions, txnoffsets.TopicPartition{Topic: tp.topic, Partition: tp.partition})
	}
	return e
}

// GroupID is the consumer group the offsets are committed to.
func (sess *session) GroupID() string { return sess.conf.ConsumerGroup }

// Cluster identifies the cluster the session reads.
func (sess *session) Cluster() txnoffsets.ClusterIdentity {
	return txnoffsets.ClusterIdentity{ID: sess.clusterID, SeedBrokers: sess.conf.Conn.SeedBrokers}
}

// Prepare returns the offsets an exactly-once sink commits in its
// transaction for origins, grouped by the member that owns each partition
// (in group mode; a single NoMember commit otherwise). It holds commitMu, so
// that a commit of the source's own that started before is on the broker
// before the sink's transaction commits, and none that starts after touches
// these partitions while their records are in flight (selfCommits).
func (sess *session) Prepare(origins []txnoffsets.Origin) ([]txnoffsets.Commit, error) {
	ps := map[topicPartition][]int64{}
	for _, o := range origins {
		tp := topicPartition{topic: o.Topic, partition: o.Partition}
		ps[tp] = append(ps[tp], o.Offset)
	}
	sess.commitMu.Lock()
	defer sess.commitMu.Unlock()
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.mu.stopped || sess.halted() {
		all := make([]topicPartition, 0, len(ps))
		for tp := range ps {
			all = append(all, tp)
		}
		reason := "the session that read them ended: the input reconnected or closed"
		if sess.halted() {
			reason = "the run is ending on an error: " + sess.run.Err().Error()
		}
		return nil, sess.notOwned(all, reason)
	}
	pos, notTracked := sess.mu.tracker.prepareTxn(ps)
	if len(notTracked) > 0 {
		return nil, sess.notOwned(notTracked, "revoked or lost by this member")
	}
	if len(pos) == 0 {
		return nil, nil
	}
	return sess.commitsLocked(pos, nil)
}

// commitsLocked groups the offsets pos (with their metadata, if any) into
// commits per group member: one NoMember commit outside group mode, else
// one per reader that owns a partition. Called with mu held.
func (sess *session) commitsLocked(pos map[topicPartition]int64, meta map[topicPartition]string) ([]txnoffsets.Commit, error) {
	newCommit := func(m txnoffsets.Member) *txnoffsets.Commit {
		c := &txnoffsets.Commit{Member: m, Offsets: map[txnoffsets.TopicPartition]int64{}}
		if meta != nil {
			c.Metadata = map[txnoffsets.TopicPartition]string{}
		}
		return c
	}
	add := func(c *txnoffsets.Commit, tp topicPartition, o int64) {
		k := txnoffsets.TopicPartition{Topic: tp.topic, Partition: tp.partition}
		c.Offsets[k] = o
		if m, ok := meta[tp]; ok {
			c.Metadata[k] = m
		}
	}
	if sess.conf.Assignment != AssignmentGroup {
		c := newCommit(txnoffsets.NoMember)
		for tp, o := range pos {
			add(c, tp, o)
		}
		return []txnoffsets.Commit{*c}, nil
	}
	by := map[int]*txnoffsets.Commit{}
	for tp, o := range pos {
		r, ok := sess.owner[tp]
		if !ok {
			return nil, sess.notOwned([]topicPartition{tp}, "no reader owns it")
		}
		c := by[r]
		if c == nil {
			id, gen := sess.clients[r].GroupMetadata()
			c = newCommit(txnoffsets.Member{ID: id, Generation: gen})
			by[r] = c
		}
		add(c, tp, o)
	}
	readers := make([]int, 0, len(by))
	for r := range by {
		readers = append(readers, r)
	}
	sort.Ints(readers)
	out := make([]txnoffsets.Commit, 0, len(by))
	for _, r := range readers {
		out = append(out, *by[r])
	}
	return out, nil
}

// Committed records offsets that the sink committed in a transaction: the
// source does not commit them again, and kafka_source_committed_offset
// follows.
func (sess *session) Committed(offsets map[txnoffsets.TopicPartition]int64) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	for tp, o := range offsets {
		sess.mu.tracker.markCommitted(topicPartition{topic: tp.Topic, partition: tp.Partition}, o)
		sess.metrics.commits.Incr(1, tp.Topic)
		sess.metrics.committed.Set(o, tp.Topic, strconv.Itoa(int(tp.Partition)))
	}
}

// learnCluster records the cluster id, for txnoffsets.SameCluster; an error
// leaves it unknown (the seed brokers are compared instead).
func (sess *session) learnCluster(ctx context.Context) {
	if sess.adm == nil {
		return
	}
	if m, err := sess.adm.BrokerMetadata(ctx); err == nil {
		sess.clusterID = m.Cluster
	}
}
