package kafkasource

import (
	"errors"
	"fmt"

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

// restoredWindows is the window state of the committed offsets.
type restoredWindows struct {
	cutoff  txnoffsets.Cutoff
	readEnd map[topicPartition]int64
}

// restoreWindowsLocked reads the window state of tp's committed offset
// metadata, if it holds any. Such a partition is committed by the sink's
// transactions from the start: a commit of the source's own while its
// records are in flight would drop the window state. Called with mu held.
func (sess *session) restoreWindowsLocked(tp topicPartition, meta string) {
	cut, readEnd, ok, err := txnoffsets.ParseWindowMeta(meta)
	if err != nil {
		sess.log.Warnf("kafka_source: consumer group %q topic %q partition %d: %v; replayed records of windows in the output already are counted again",
			sess.conf.ConsumerGroup, tp.topic, tp.partition, err)
		return
	}
	if !ok {
		return
	}
	sess.mu.tracker.markTxn(tp)
	next := &restoredWindows{cutoff: cut, readEnd: map[topicPartition]int64{tp: readEnd}}
	if old := sess.restored.Load(); old != nil {
		if old.cutoff.After(cut) {
			next.cutoff = old.cutoff
		}
		for p, r := range old.readEnd {
			if p != tp {
				next.readEnd[p] = r
			}
		}
	}
	sess.restored.Store(next)
	sess.log.Debugf("kafka_source: topic %s partition %d: window results up to %+v are committed; records below offset %d are replays",
		tp.topic, tp.partition, cut, readEnd)
}

// Restored returns the window state committed with tp's offset; lock-free
// (the event_window buffer asks for every record).
func (sess *session) Restored(tp txnoffsets.TopicPartition, offset int64) (txnoffsets.Restored, bool) {
	st := sess.restored.Load()
	if st == nil {
		return txnoffsets.Restored{}, false
	}
	end, ok := st.readEnd[topicPartition{topic: tp.Topic, partition: tp.Partition}]
	return txnoffsets.Restored{Cutoff: st.cutoff, Replay: ok && offset < end}, true
}

// PrepareWindows returns the commits of every tracked partition with window
// results up to cut. Like Prepare, it holds commitMu, so that no commit of
// the source's own lands between it and the transaction's commit.
func (sess *session) PrepareWindows(cut txnoffsets.Cutoff) ([]txnoffsets.Commit, error) {
	sess.commitMu.Lock()
	defer sess.commitMu.Unlock()
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.mu.stopped {
		return nil, txnoffsets.ErrSourceEnded
	}
	if sess.halted() {
		return nil, fmt.Errorf("kafka_source: not committing window state: the run is ending on an error: %w", sess.run.Err())
	}
	pos, readEnd := sess.mu.tracker.prepareWindows()
	if len(pos) == 0 {
		return nil, nil
	}
	meta := make(map[topicPartition]string, len(pos))
	var errs []error
	for tp := range pos {
		m, err := txnoffsets.EncodeWindowMeta(cut, readEnd[tp])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		meta[tp] = m
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return sess.commitsLocked(pos, meta)
}
