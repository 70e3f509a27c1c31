package kafkasource

import (
	"errors"

	"github.com/connectd/connectd/internal/txnoffsets"
)

// This file is the source's side of exactly-once window results
// (txnoffsets.WindowSource): an exactly-once kafka_sink that commits the
// event_window buffer's results asks the session for the offsets of all its
// partitions, committed with the window cutoff and the read position as
// offset-commit metadata; at the next start the session reads that metadata
// back and tells the buffer which records are replays of windows that are
// in the output already.

var _ txnoffsets.WindowSource = (*session)(nil)

// restoredWindows is the window state of the committed offsets: each
// partition's cutoff and read position, and the latest cutoff of all.
type restoredWindows struct {
	cutoff  txnoffsets.Cutoff
	cutoffs map[topicPartition]txnoffsets.Cutoff
	readEnd map[topicPartition]int64
}

// restoreWindows reads the window state of tp's committed offset metadata,
// if it holds any. Such a partition is committed by the sink's transactions
// from the start: a commit of the source's own while its records are in
// flight would drop the window state. The owner keeps the state and
// publishes each new value (never changed after) for Restored.
func (o *owner) restoreWindows(tp topicPartition, meta string) {
	cut, readEnd, ok, err := txnoffsets.ParseWindowMeta(meta)
	if err != nil {
		o.log.Warnf("kafka_source: consumer group %q topic %q partition %d: %v; replayed records of windows in the output already are counted again",
			o.conf.ConsumerGroup, tp.topic, tp.partition, err)
		return
	}
	if !ok {
		return
	}
	o.tracker.markTxn(tp)
	next := &restoredWindows{cutoff: cut, cutoffs: map[topicPartition]txnoffsets.Cutoff{tp: cut}, readEnd: map[topicPartition]int64{tp: readEnd}}
	if old := o.restored; old != nil {
		if old.cutoff.After(cut) {
			next.cutoff = old.cutoff
		}
		for p, r := range old.readEnd {
			if p != tp {
				next.readEnd[p] = r
				next.cutoffs[p] = old.cutoffs[p]
			}
		}
	}
	o.restored = next
	o.sess.restored.Store(next)
	o.log.Debugf("kafka_source: topic %s partition %d: window results up to %+v are committed; records below offset %d are replays",
		tp.topic, tp.partition, cut, readEnd)
}

// Restored returns the window state committed with tp's offset. The
// event_window buffer asks for every record, so it reads the state the
// owner published (restoredWindows values are never changed) rather than
// asking the owner: a partition's state is published before its records
// are fetched (at connect, or in the assignment callback kgo waits for).
//
// The cutoff is the partition's own. A process that reads every partition
// commits one cutoff to all of them in each transaction, so a partition
// without one (never committed with window state) gets the latest of the
// others. Processes that share the partitions (group, shard) each commit
// their own cutoff to their own partitions, and a partition that moves
// brings the cutoff of its former reader: applied to this reader's other
// partitions it would drop windows never emitted. There a partition without
// a cutoff has none: no window of its keys was emitted.
func (sess *session) Restored(tp txnoffsets.TopicPartition, offset int64) (txnoffsets.Restored, bool) {
	st := sess.restored.Load()
	if st == nil {
		return txnoffsets.Restored{}, false
	}
	p := topicPartition{topic: tp.Topic, partition: tp.Partition}
	cut, ok := st.cutoffs[p]
	if !ok {
		if sess.PartitionsShared() {
			return txnoffsets.Restored{}, false
		}
		cut = st.cutoff
	}
	end, ok := st.readEnd[p]
	return txnoffsets.Restored{Cutoff: cut, Replay: ok && offset < end}, true
}

// PrepareWindows returns the commits of every tracked partition with window
// results up to cut. Like Prepare, the owner answers once no commit of the
// source's own is in flight.
func (sess *session) PrepareWindows(cut txnoffsets.Cutoff) ([]txnoffsets.Commit, error) {
	if err := sess.checkStart(); err != nil {
		return nil, err
	}
	reply := make(chan prepared, 1)
	res, ok := call(sess, prepareWindowsReq{cut: cut, reply: reply}, reply)
	if !ok {
		return nil, txnoffsets.ErrSourceEnded
	}
	return res.commits, res.err
}

// prepareWindowsReq asks for the offsets of a transaction of window results
// up to cut.
type prepareWindowsReq struct {
	cut   txnoffsets.Cutoff
	reply chan prepared
}

func (r prepareWindowsReq) handle(o *owner) {
	if !o.whenCommitIdle(func() { r.handle(o) }) {
		return
	}
	r.reply <- o.prepareWindows(r.cut)
}

func (o *owner) prepareWindows(cut txnoffsets.Cutoff) prepared {
	if o.conf.ConsumerGroup == "" {
		return prepared{}
	}
	if err := o.haltedErr(); err != nil {
		return prepared{err: err}
	}
	if o.stopped {
		return prepared{err: txnoffsets.ErrSourceEnded}
	}
	pos, readEnd := o.tracker.prepareWindows()
	if len(pos) == 0 {
		return prepared{}
	}
	meta := make(map[topicPartition]string, len(pos))
	var errs []error
	for tp := range pos {
		// A partition's cutoff never goes back: one that came from
		// another reader (group, shard) may be ahead of this reader's
		// results, and the windows of its keys up to it are in the
		// output.
		c := cut
		if r := o.restored; r != nil {
			if rc, ok := r.cutoffs[tp]; ok && rc.After(c) {
				c = rc
			}
		}
		m, err := txnoffsets.EncodeWindowMeta(c, readEnd[tp])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		meta[tp] = m
	}
	if len(errs) > 0 {
		return prepared{err: errors.Join(errs...)}
	}
	commits, err := o.assign.txnCommits(o, pos, meta)
	return prepared{commits: commits, err: err}
}

// PartitionsShared reports whether other processes may read some of the
// partitions of the session's topics: `assignment: group`, or a `shard` of
// more than one. The event_window buffer then checks that no window key
// arrives from several partitions, whose windows would be partial in each
// process. It is configuration, answered without the owner.
func (sess *session) PartitionsShared() bool {
	return sess.conf.Assignment == AssignmentGroup || sess.conf.Shard.Count > 1
}
