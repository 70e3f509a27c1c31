package kafkasource

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/connectd/connectd/internal/txnoffsets"
)

// This file is the source's side of the durability handshake
// (txnoffsets.Holder): a sink that handed a batch's records to its producer
// holds them here before it returns, Benthos acknowledges the batch at once
// and the owner frees it, and the offsets of held records are not committed
// until the sink reports them durable. A sink whose transaction aborted asks
// the session to rewind: it ends, and the source reads again from the
// lowest offset not yet durable in a new session (source.Connect), as a
// Flink job restarts from its last checkpoint.

var _ txnoffsets.Holder = (*session)(nil)

// Hold registers the records at origins as written and not yet durable.
func (sess *session) Hold(origins []txnoffsets.Origin) (txnoffsets.HoldID, error) {
	if err := sess.checkStart(); err != nil {
		return 0, err
	}
	low, high := map[topicPartition]int64{}, map[topicPartition]int64{}
	n := map[topicPartition]int64{}
	for _, o := range origins {
		tp := topicPartition{topic: o.Topic, partition: o.Partition}
		if cur, ok := low[tp]; !ok || o.Offset < cur {
			low[tp] = o.Offset
		}
		if cur, ok := high[tp]; !ok || o.Offset > cur {
			high[tp] = o.Offset
		}
		n[tp]++
	}
	for tp, hi := range high {
		if hi-low[tp]+1 != n[tp] {
			// Not every offset between: the span would cover records
			// this hold does not hold (another batch's, on their way
			// elsewhere). Only the lowest is known then.
			delete(high, tp)
		}
	}
	id := sess.holdSeq.Add(1)
	reply := make(chan error, 1)
	err, ok := call(sess, holdReq{id: id, low: low, high: high, reply: reply}, reply)
	if !ok {
		return 0, notOwned(sess.conf.ConsumerGroup, slices.Collect(maps.Keys(low)), errSessionEnded)
	}
	return txnoffsets.HoldID(id), err
}

// holdReq registers hold id: low and high are the lowest and highest held
// offset per partition.
type holdReq struct {
	id        holdID
	low, high map[topicPartition]int64
	reply     chan error
}

func (r holdReq) handle(o *owner) {
	switch {
	case o.stopped || o.stopping:
		r.reply <- notOwned(o.conf.ConsumerGroup, slices.Collect(maps.Keys(r.low)), errSessionEnded)
	case o.rewinding != nil:
		r.reply <- notOwned(o.conf.ConsumerGroup, slices.Collect(maps.Keys(r.low)), errRewinding)
	default:
		if notTracked := o.tracker.hold(r.id, r.low, r.high); len(notTracked) > 0 {
			r.reply <- notOwned(o.conf.ConsumerGroup, notTracked, "revoked or lost by this member")
			return
		}
		r.reply <- nil
	}
}

// errRewinding is the reason of Hold's error while the session rewinds.
const errRewinding = "the input is reading them again from the committed offsets after a transaction aborted"

// Release ends holds whose records are durable.
func (sess *session) Release(ids []txnoffsets.HoldID) {
	sess.send(releaseReq{ids: holdIDs(ids)})
}

func holdIDs(ids []txnoffsets.HoldID) []holdID {
	out := make([]holdID, len(ids))
	for i, id := range ids {
		out[i] = holdID(id)
	}
	return out
}

// releaseReq ends holds.
type releaseReq struct {
	ids []holdID
}

func (r releaseReq) handle(o *owner) {
	o.tracker.release(r.ids, nil)
	o.afterRelease()
}

// afterRelease wakes what waits for held records: the end of a bounded read
// and revocations.
func (o *owner) afterRelease() {
	if o.bounded() {
		o.signalProgress()
	}
	o.checkRevokes()
}

// PrepareHeld returns the offsets a transaction holding ids commits. The
// owner answers once no commit of the source's own is in flight (commit.go).
func (sess *session) PrepareHeld(ids []txnoffsets.HoldID) ([]txnoffsets.Commit, error) {
	reply := make(chan prepared, 1)
	res, ok := call(sess, prepareHeldReq{ids: holdIDs(ids), reply: reply}, reply)
	if !ok {
		return nil, &txnoffsets.NotOwnedError{Group: sess.conf.ConsumerGroup, Reason: errSessionEnded}
	}
	return res.commits, res.err
}

// prepareHeldReq asks for the offsets of a transaction holding ids.
type prepareHeldReq struct {
	ids   []holdID
	reply chan prepared
}

func (r prepareHeldReq) handle(o *owner) {
	if !o.whenCommitIdle(func() { r.handle(o) }) {
		return
	}
	r.reply <- o.prepareHeld(r.ids)
}

func (o *owner) prepareHeld(ids []holdID) prepared {
	if err := o.haltedErr(); err != nil {
		return prepared{err: err}
	}
	if o.stopped || o.rewinding != nil {
		return prepared{err: &txnoffsets.NotOwnedError{Group: o.conf.ConsumerGroup, Reason: errSessionEnded}}
	}
	tps := o.tracker.heldPartitions(ids)
	pos, notTracked := o.tracker.prepareHeld(ids, tps)
	if len(notTracked) > 0 {
		return prepared{err: notOwned(o.conf.ConsumerGroup, notTracked, "revoked or lost by this member")}
	}
	if len(pos) == 0 {
		return prepared{}
	}
	commits, err := o.assign.txnCommits(o, pos, nil)
	return prepared{commits: commits, err: err}
}

// CommittedHeld records offsets committed in a transaction and ends its
// holds.
func (sess *session) CommittedHeld(offsets map[txnoffsets.TopicPartition]int64, ids []txnoffsets.HoldID) {
	sess.send(committedReq{offsets: offsets, release: holdIDs(ids)})
}

// Rewind ends the session: ReadBatch reconnects, and the new session reads
// from the lowest offset of each partition that is neither acknowledged
// nor durable, which is at or after the committed offset. Until then holds
// are refused, so that records read before the rewind are not written again
// ahead of their replay.
func (sess *session) Rewind(cause error) {
	sess.send(rewindReq{cause: cause})
}

// rewindReq ends the session to read again from the lowest offset not yet
// durable.
type rewindReq struct{ cause error }

func (r rewindReq) handle(o *owner) {
	if o.stopped || o.rewinding != nil {
		return
	}
	o.rewinding = r.cause
	pos := o.tracker.positions()
	parts := make([]string, 0, len(pos))
	for _, tp := range sortedPartitions(pos) {
		parts = append(parts, tp.String()+"@"+strconv.FormatInt(pos[tp], 10))
	}
	o.log.Warnf("kafka_source: consumer group %q: reading again from the offsets not yet committed (%v) in a new session, after: %v",
		o.conf.ConsumerGroup, parts, r.cause)
	o.signalProgress()
	signal(o.sess.redeliverReady)
	// A revocation waiting for records in flight waits no longer: they
	// are read again (inFlight).
	o.checkRevokes()
}

// heldPartitions returns the partitions that ids hold, sorted.
func (t *offsetTracker) heldPartitions(ids []holdID) []topicPartition {
	var out []topicPartition
	for tp, po := range t.parts {
		for _, h := range po.held {
			if slices.Contains(ids, h.id) {
				out = append(out, tp)
				break
			}
		}
	}
	sortPartitions(out)
	return out
}

// holdsWait bounds how long a stopping session waits for a sink to make its
// held records durable (see awaitHolds): a little over the default
// commit_interval and its commit.
const holdsWait = 3 * time.Second

// awaitHolds waits, at most holdsWait (and within ctx), until no record of
// the session is held: the records a sink acknowledged early become durable
// (an at_least_once write is acknowledged by Kafka, an exactly_once
// transaction commits at its interval), so that the final commit includes
// them rather than leaving them to be read again by the next run. A session
// that rewinds, or a run that is stopping on an error, does not wait.
func (sess *session) awaitHolds(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, holdsWait)
	defer cancel()
	for {
		reply := make(chan bool, 1)
		held, ok := call(sess, heldReq{reply: reply}, reply)
		if !ok || !held {
			return
		}
		select {
		case <-ctx.Done():
			sess.log.Infof("kafka_source: closing with records a sink has not made durable yet: their offsets are not committed, the next run reads them again")
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// heldReq asks whether any record is held (and the session does not
// rewind).
type heldReq struct{ reply chan bool }

func (r heldReq) handle(o *owner) {
	if o.rewinding != nil || (o.halt != nil && o.halt.Stopped()) {
		// Rewinding: the held records are lost. Halted: nothing is
		// committed any more, so waiting for them gains nothing.
		r.reply <- false
		return
	}
	for _, tp := range o.tracker.partitions() {
		if o.tracker.holds(tp) > 0 {
			r.reply <- true
			return
		}
	}
	r.reply <- false
}
