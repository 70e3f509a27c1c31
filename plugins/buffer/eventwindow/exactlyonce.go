package eventwindow

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/txnoffsets"
)

// This file makes window results exactly-once with an exactly_once
// kafka_sink (internal/txnoffsets, "windows.go" there): results carry a
// txnoffsets.Result token; the sink's transaction commits, with them, every
// upstream kafka_source partition's held-back offset and the cutoff (the
// last window in the output); after a crash the source restores the cutoff
// and this buffer drops replayed records of windows at or before it instead
// of emitting those windows again.
//
// Tumbling and sliding windows are known by their key and start, so a
// replayed record of a window at or before the cutoff is dropped as it
// arrives. A session is known only once it fires: the replay rebuilds the
// sessions from the records read again (every record of a session that was
// open at the commit is among them, since its records held the offsets
// back), and a session that fires at or before the cutoff (by fire time and
// key: two sessions of one key never end together) is a part of one in the
// output already, and is dropped instead of emitted.

var _ txnoffsets.Emitter = (*Buffer)(nil)

// ErrResultOrder is returned by PrepareResults when an earlier result is not
// in the output yet: the transaction aborts and the results are retried in
// order.
var ErrResultOrder = errors.New("event_window: an earlier window result is not delivered yet")

// ErrSourceReconnected nacks the input batches, and refuses the results, of
// a kafka_source session that ended: the session that replaces it reads
// their records again, and the windows are recomputed from those.
var ErrSourceReconnected = errors.New("event_window: the kafka_source reconnected; its windows are recomputed from the records it reads again")

// pendingResult is a window result handed out for a transaction and not
// settled (committed, or acknowledged by an output that is not
// transactional). Guarded by mu.
type pendingResult struct {
	seq       uint64
	epoch     uint64 // the buffer epoch it was fired in
	cut       txnoffsets.Cutoff
	handed    bool // handed out by ReadBatch (not waiting in ready)
	committed bool // its transaction committed
	settled   bool // committed, or delivered by an output that is not transactional
}

// tokens reports whether window results carry txnoffsets.Result tokens:
// records come from a kafka_source. Called with mu held.
func (b *Buffer) tokensLocked() bool {
	return len(b.mu.sources) > 0
}

// originLocked registers the kafka_source of msg and returns the window
// state restored for its record. Called with mu held.
func (b *Buffer) originLocked(msg *service.Message) (txnoffsets.Restored, bool) {
	o, ok := txnoffsets.FromContext(msg.Context())
	if !ok {
		return txnoffsets.Restored{}, false
	}
	ws, ok := o.Source.(txnoffsets.WindowSource)
	if !ok {
		return txnoffsets.Restored{}, false
	}
	if ws != b.mu.lastSource {
		if _, known := b.mu.sources[ws]; !known {
			for old := range b.mu.sources {
				if old.GroupID() == ws.GroupID() {
					b.resetLocked(old)
				}
			}
			b.mu.sources[ws] = struct{}{}
		}
		b.mu.lastSource = ws
	}
	return ws.Restored(txnoffsets.TopicPartition{Topic: o.Topic, Partition: o.Partition}, o.Offset)
}

// restoredCut is the cutoff restored for a record's partition: the windows
// of its keys up to it are in the output. Each record is checked against
// its own partition's: in a process that reads every partition they are
// all the same, and of processes that share the partitions (group mode,
// behind a repartition topic) each committed its own.
type restoredCut struct {
	cut txnoffsets.Cutoff
	ok  bool
}

// after reports whether c is a later cutoff than d.
func (c restoredCut) after(d restoredCut) bool {
	return c.ok && (!d.ok || c.cut.After(d.cut))
}

// committed reports whether window (fireAt, key, start) is at or before the
// cutoff: its result is in the output already.
func (c restoredCut) committed(fireAt int64, key string, start int64) bool {
	return c.ok && txnoffsets.CompareWindow(fireAt, key, start, c.cut) <= 0
}

// sessionCommitted reports whether session w is at or before the cutoff of
// its records' partitions by fire time and key alone (its start may differ
// from that of the session in the output, of which it is a part).
func sessionCommitted(w *window) bool {
	return w.cut != nil && w.cut.committed(w.fireAt, w.key, math.MinInt64)
}

// PrepareResults returns the offsets and window state to commit with the
// results seqs: every upstream kafka_source's partitions, at their held-back
// offsets, with the cutoff of the last result. Results are handed out one
// batch at a time, in window order, so every earlier result is settled or
// in the batch being written; one waiting to be handed out again (its batch
// was refused) is an error. (Until the first call, batches may be in flight
// together: a transactional output writes them in order, and one that fails
// marks its results before the next is prepared.)
func (b *Buffer) PrepareResults(seqs []uint64) ([]txnoffsets.SourceCommit, error) {
	if len(seqs) == 0 {
		return nil, nil
	}
	last := slices.Max(seqs)
	b.mu.Lock()
	b.mu.txnSeen = true
	var cut txnoffsets.Cutoff
	found := false
	for _, r := range b.mu.results {
		if r.seq > last {
			break
		}
		if r.settled {
			continue
		}
		if r.epoch != b.mu.epoch && slices.Contains(seqs, r.seq) {
			b.mu.Unlock()
			return nil, fmt.Errorf("%w: result %d", ErrSourceReconnected, r.seq)
		}
		if !r.handed {
			b.mu.Unlock()
			return nil, fmt.Errorf("%w: result %d waits to be handed out again, before result %d", ErrResultOrder, r.seq, last)
		}
		if r.seq == last {
			cut, found = r.cut, true
		}
	}
	if !found {
		b.mu.Unlock()
		return nil, fmt.Errorf("%w: result %d is not a pending window result of this buffer", ErrResultOrder, last)
	}
	sources := make([]txnoffsets.WindowSource, 0, len(b.mu.sources))
	for s := range b.mu.sources {
		sources = append(sources, s)
	}
	b.mu.Unlock()

	var out []txnoffsets.SourceCommit
	for _, s := range sources {
		commits, err := s.PrepareWindows(cut)
		switch {
		case errors.Is(err, txnoffsets.ErrSourceEnded):
			// Its successor reads these results' records again; the
			// first of them resets the buffer (resetLocked), which then
			// drops these results when they are refused.
			return nil, fmt.Errorf("%w: consumer group %q: %w", ErrSourceReconnected, s.GroupID(), err)
		case err != nil:
			return nil, fmt.Errorf("event_window: consumer group %q: %w", s.GroupID(), err)
		case len(commits) > 0:
			out = append(out, txnoffsets.SourceCommit{Source: s, Commits: commits})
		}
	}
	return out, nil
}

// ResultsCommitted settles the results seqs: their transaction committed.
func (b *Buffer) ResultsCommitted(seqs []uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range seqs {
		i, ok := slices.BinarySearchFunc(b.mu.results, s, func(r *pendingResult, s uint64) int { return cmp.Compare(r.seq, s) })
		if ok {
			r := b.mu.results[i]
			r.committed = true
			b.settleLocked(r)
		}
	}
}

// resetLocked starts a new epoch when a kafka_source session (old) was
// replaced by a new one of the same consumer group, which resumes at the
// held-back offsets: the records of every open window, unsent result and
// errored record are read again, so all of these are dropped and their input
// batches nacked, and the watermark starts again; results in flight are
// refused by PrepareResults and dropped when nacked. Windows whose results
// are committed are known by the cutoff the new session restores. Called
// with mu held.
func (b *Buffer) resetLocked(old txnoffsets.WindowSource) {
	b.log.Warnf("event_window: the kafka_source of consumer group %q reconnected: dropping %d open windows and %d unsent results, which are recomputed from the records it reads again",
		old.GroupID(), len(b.mu.heap), len(b.mu.ready))
	delete(b.mu.sources, old)
	b.mu.epoch++
	for _, w := range b.mu.heap {
		b.mu.heldRows -= len(w.rows)
		b.dropRefsLocked(w.refs, &b.mu.nacks)
	}
	b.mu.heap = b.mu.heap[:0]
	clear(b.mu.windows)
	clear(b.mu.sessions)
	for _, it := range b.mu.ready {
		b.dropItemLocked(it, &b.mu.nacks)
	}
	b.mu.ready = nil
	b.mu.watermark = math.MinInt64
	clear(b.mu.writers)
	b.met.open.Set(0)
}

// dropItemLocked discards an item that was not delivered: its limits are
// released, its input batches nacked (through nacks).
func (b *Buffer) dropItemLocked(it item, nacks *acker) {
	b.forgetLocked(it)
	b.dropRefsLocked(it.refs, nacks)
}

// dropRefsLocked nacks the input batches of refs (once each).
func (b *Buffer) dropRefsLocked(refs []*batchRef, nacks *acker) {
	for _, r := range refs {
		if !r.done {
			r.done = true
			delete(b.mu.live, r)
			*nacks = append(*nacks, r.ack)
		}
	}
}

// settleLocked marks r settled and drops the settled results from the
// front of the pending ones (results settle in order, but for those of a
// batch whose acknowledgement comes after a later batch's commit).
func (b *Buffer) settleLocked(r *pendingResult) {
	r.settled = true
	rs := b.mu.results
	for len(rs) > 0 && rs[0].settled {
		rs[0] = nil
		rs = rs[1:]
	}
	b.mu.results = rs
}
