package kafkasource

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// topicPartition names a partition (a split, in Flink's terms).
type topicPartition struct {
	topic     string
	partition int32
}

func (tp topicPartition) String() string {
	return fmt.Sprintf("%s/%d", tp.topic, tp.partition)
}

// position is one record's place in its partition.
type position struct {
	tp     topicPartition
	offset int64
}

// offsetTracker is the checkpoint state of every partition: which fetched
// records are not yet acknowledged, what may be committed, and which
// partitions must pause fetching. It does no I/O and is not safe for
// concurrent use; the source guards it with its session mutex.
//
// The contract it keeps: the commit position of a partition is the lowest
// offset that was fetched and not acknowledged, or, when nothing is
// outstanding, one past the last fetched record (Kafka's "next offset to
// read"). A nacked record is simply not acknowledged: it stays outstanding
// and holds the commit position until it is delivered again and acknowledged.
//
// A record can also be held (txnoffsets.Holder): acknowledged already, since a
// sink handed it to its producer, but not durable yet. The commit position is
// then the lowest of the lowest unacknowledged offset and the lowest held
// offset, whatever the order of acknowledgements and durability reports.
type offsetTracker struct {
	limit int
	now   func() time.Time
	parts map[topicPartition]*partitionOffsets
	// finished lists partitions that reached their stop offset since the
	// last takeFinished.
	finished []topicPartition
	// undone counts the partitions of parts not done, busy those with
	// records unacknowledged or held: allFinished and drained, asked for
	// every batch of a bounded read, answer from them without a scan of
	// every partition.
	undone, busy int
	// unackedSum is the sum of every partition's unacked: pollMax
	// answers from it without a scan.
	unackedSum int
}

// partitionOffsets is the checkpoint state of one partition.
type partitionOffsets struct {
	// pending[head:] are fetched records in offset order; acked ones are
	// dropped once they reach the head.
	pending []pendingOffset
	head    int
	// unacked counts entries of pending[head:] not yet acknowledged.
	unacked int
	// next is the fetch position: one past the last fetched record, or the
	// start offset before anything was fetched.
	next int64
	// committed is the last offset committed to the group, -1 if none.
	committed int64
	// paused is true while fetching is paused because unacked reached limit,
	// since pausedAt; stallWarned once stalled reported it.
	paused      bool
	pausedAt    time.Time
	stallWarned bool
	// stop is the exclusive stop offset, noStop for none.
	stop int64
	// done is true once next reached stop: nothing more is fetched.
	done bool
	// txn is true once an exactly-once sink committed (or is committing)
	// this partition's offsets in its transactions: the source commits it
	// itself only while none of its records is in flight (see
	// selfCommits).
	txn bool
	// held are the holds on this partition in the order they were made,
	// each with its lowest offset (see hold).
	held []heldOffset
}

// heldOffset is one hold on a partition: its lowest and highest offset.
type heldOffset struct {
	id     holdID
	offset int64
	// high is the hold's highest offset; below offset when unknown.
	high int64
}

// holdID names a hold (txnoffsets.HoldID).
type holdID = uint64

type pendingOffset struct {
	offset int64
	acked  bool
}

func newOffsetTracker(limit int) *offsetTracker {
	if limit < 1 {
		limit = 1
	}
	return &offsetTracker{limit: limit, now: time.Now, parts: map[topicPartition]*partitionOffsets{}}
}

// addPartition starts tracking tp, to be read from start up to the
// exclusive stop (noStop for none); committed is the group's committed
// offset for it, or -1 if none. It returns true when the partition is
// finished already (start at or past stop): nothing is to be fetched.
func (t *offsetTracker) addPartition(tp topicPartition, start, committed, stop int64) (finished bool) {
	t.removePartition(tp)
	po := &partitionOffsets{next: start, committed: committed, stop: stop}
	po.done = stop != noStop && start >= stop
	t.parts[tp] = po
	if !po.done {
		t.undone++
	}
	return po.done
}

// next returns the fetch position of tp: one past the last entry fetched,
// or the start offset.
func (t *offsetTracker) next(tp topicPartition) (int64, bool) {
	if po := t.parts[tp]; po != nil {
		return po.next, true
	}
	return 0, false
}

// unfinished returns the fetch position of every partition that has a stop
// offset and has not reached it.
func (t *offsetTracker) unfinished() map[topicPartition]int64 {
	out := map[topicPartition]int64{}
	for tp, po := range t.parts {
		if po.stop != noStop && !po.done {
			out[tp] = po.next
		}
	}
	return out
}

// limitPaused reports whether tp is paused for checkpoint_limit.
func (t *offsetTracker) limitPaused(tp topicPartition) bool {
	po := t.parts[tp]
	return po != nil && po.paused
}

// allFinished reports whether every partition reached its stop offset (a
// bounded read has fetched everything). False with no partitions.
func (t *offsetTracker) allFinished() bool {
	return len(t.parts) > 0 && t.undone == 0
}

// done reports whether tp reached its stop offset.
func (t *offsetTracker) done(tp topicPartition) bool {
	po := t.parts[tp]
	return po != nil && po.done
}

// has reports whether tp is tracked.
func (t *offsetTracker) has(tp topicPartition) bool {
	return t.parts[tp] != nil
}

// partitions returns the tracked partitions, sorted.
func (t *offsetTracker) partitions() []topicPartition {
	return sortedPartitions(t.parts)
}

// pollMax is the most records a reader may take from its client in one
// poll without any partition passing the checkpoint limit: the limit less
// the most unacknowledged records of any partition. No partition has more
// than all of them together, so while their sum leaves half the limit that
// answers without a scan. At least batchSize, which a poll may pass the
// limit by (as a poll of one batch always could).
func (t *offsetTracker) pollMax(batchSize int) int {
	room := t.limit - t.unackedSum
	if room < t.limit/2 {
		most := 0
		for _, po := range t.parts {
			most = max(most, po.unacked)
		}
		room = t.limit - most
	}
	return max(batchSize, room)
}

// removePartition stops tracking tp: acknowledgements of its records are
// ignored and its offset is no longer committed.
func (t *offsetTracker) removePartition(tp topicPartition) {
	po := t.parts[tp]
	if po == nil {
		return
	}
	if !po.done {
		t.undone--
	}
	if po.busy() {
		t.busy--
	}
	t.unackedSum -= po.unacked
	delete(t.parts, tp)
}

// busy reports whether some of the partition's records are unacknowledged
// or held.
func (po *partitionOffsets) busy() bool { return po.unacked > 0 || len(po.held) > 0 }

// noteBusy updates the busy count after a change to po, which was busy
// before it if was.
func (t *offsetTracker) noteBusy(po *partitionOffsets, was bool) {
	switch now := po.busy(); {
	case now && !was:
		t.busy++
	case was && !now:
		t.busy--
	}
}

// wanted reports whether a fetched record of tp at offset is to be
// delivered: false for untracked partitions and at or past the stop offset.
func (t *offsetTracker) wanted(tp topicPartition, offset int64) bool {
	po := t.parts[tp]
	return po != nil && po.wanted(offset)
}

// partition returns tp's state, nil if tp is not tracked: a caller with a
// run of records of one partition looks it up once (see skippedIn,
// fetchedIn).
func (t *offsetTracker) partition(tp topicPartition) *partitionOffsets {
	return t.parts[tp]
}

// wanted reports whether the record at offset is before the stop offset.
func (po *partitionOffsets) wanted(offset int64) bool {
	return po.stop == noStop || offset < po.stop
}

// skipped records that the entry of tp at offset was fetched and is not
// delivered: a transaction marker, or a record at or past the stop offset.
// The fetch position moves past it (never past the stop offset), so that
// the commit position and the end of a bounded read see it.
func (t *offsetTracker) skipped(tp topicPartition, offset int64) {
	if po := t.parts[tp]; po != nil {
		t.skippedIn(tp, po, offset)
	}
}

// skippedIn is skipped for tp's state po.
func (t *offsetTracker) skippedIn(tp topicPartition, po *partitionOffsets, offset int64) {
	next := offset + 1
	if po.stop != noStop && next > po.stop {
		next = po.stop
	}
	if next > po.next {
		po.next = next
	}
	t.checkDone(tp, po)
}

func (t *offsetTracker) checkDone(tp topicPartition, po *partitionOffsets) {
	if !po.done && po.stop != noStop && po.next >= po.stop {
		po.done = true
		t.undone--
		t.finished = append(t.finished, tp)
	}
}

// takeFinished returns the partitions that reached their stop offset since
// the last call.
func (t *offsetTracker) takeFinished() []topicPartition {
	f := t.finished
	t.finished = nil
	return f
}

// drained reports whether every partition reached its stop offset and
// every fetched record was acknowledged; committed additionally requires
// that each commit position was committed. With no stop offsets it is
// always false.
func (t *offsetTracker) drained() (drained, committed bool) {
	if t.undone > 0 || t.busy > 0 {
		return false, false
	}
	committed = true
	for _, po := range t.parts {
		if po.commitPosition() != po.committed {
			committed = false
		}
	}
	return true, committed
}

// fetched records that the records at ps were fetched; ps is in fetch order.
// It returns the partitions that have just reached the limit and must pause.
// Positions of untracked partitions are ignored.
func (t *offsetTracker) fetched(ps []position) (pause []topicPartition) {
	for _, p := range ps {
		if t.fetchedOne(p) {
			pause = append(pause, p.tp)
		}
	}
	return pause
}

// fetchedOne records that the record at p was fetched. It returns true when
// p's partition has just reached the limit and must pause.
func (t *offsetTracker) fetchedOne(p position) (pause bool) {
	po := t.parts[p.tp]
	return po != nil && t.fetchedIn(p.tp, po, p.offset)
}

// fetchedIn is fetchedOne for tp's state po.
func (t *offsetTracker) fetchedIn(tp topicPartition, po *partitionOffsets, offset int64) (pause bool) {
	was := po.busy()
	po.add(offset)
	t.unackedSum++
	t.noteBusy(po, was)
	t.checkDone(tp, po)
	if !po.paused && po.unacked >= t.limit {
		po.paused, po.pausedAt, po.stallWarned = true, t.now(), false
		return true
	}
	return false
}

// acked records that the records at ps were acknowledged. It returns the
// partitions that were paused and are now below the limit. Acknowledging a
// record twice, or one that was never fetched, changes nothing.
//
// ps mostly comes in runs of one partition (a batch holds each partition's
// records together): a run costs one lookup of its partition, and its
// offsets are found in one pass over the partition's pending records.
func (t *offsetTracker) acked(ps []position) (resume []topicPartition) {
	for len(ps) > 0 {
		tp := ps[0].tp
		n := 1
		for n < len(ps) && ps[n].tp == tp {
			n++
		}
		run := ps[:n]
		ps = ps[n:]
		po := t.parts[tp]
		if po == nil {
			continue
		}
		was, before := po.busy(), po.unacked
		po.ackRun(run)
		t.unackedSum -= before - po.unacked
		t.noteBusy(po, was)
		if po.paused && po.unacked < t.limit {
			po.paused = false
			if !po.done {
				// A finished partition stays paused (stopFetching).
				resume = append(resume, tp)
			}
		}
	}
	return resume
}

// stall is a partition paused for checkpoint_limit for a long time.
type stall struct {
	tp      topicPartition
	since   time.Duration
	unacked int
}

// stalled returns the partitions paused for checkpoint_limit for at least
// after, each once per pause: not enough was acknowledged in that time, so
// what holds their records (an event_window buffer until its windows fire)
// may be waiting for records that the pause keeps from it.
func (t *offsetTracker) stalled(after time.Duration) []stall {
	var out []stall
	now := t.now()
	for _, tp := range sortedPartitions(t.parts) {
		po := t.parts[tp]
		if po.paused && !po.stallWarned && now.Sub(po.pausedAt) >= after {
			po.stallWarned = true
			out = append(out, stall{tp: tp, since: now.Sub(po.pausedAt), unacked: po.unacked})
		}
	}
	return out
}

// commitPosition returns the offset that may be committed for tp: the
// lowest unacknowledged offset, else the fetch position. ok is false for an
// untracked partition.
func (t *offsetTracker) commitPosition(tp topicPartition) (offset int64, ok bool) {
	po := t.parts[tp]
	if po == nil {
		return 0, false
	}
	return po.commitPosition(), true
}

// positions returns the position of every partition to resume from: its
// commit position, or, for a partition whose offsets an exactly-once sink
// committed further (records committed in a transaction and not yet
// acknowledged), that offset, so that a reconnect does not read them again.
func (t *offsetTracker) positions() map[topicPartition]int64 {
	out := make(map[topicPartition]int64, len(t.parts))
	for tp, po := range t.parts {
		out[tp] = po.commitPosition()
		if po.txn && po.committed > out[tp] {
			out[tp] = po.committed
		}
	}
	return out
}

// uncommitted returns the commit position of every partition whose position
// differs from what was last committed.
func (t *offsetTracker) uncommitted() map[topicPartition]int64 {
	out := map[topicPartition]int64{}
	for tp, po := range t.parts {
		if pos := po.commitPosition(); pos != po.committed {
			out[tp] = pos
		}
	}
	return out
}

// selfCommits returns the positions the source commits itself: those that
// moved since the last commit, or all with refresh. A partition whose
// offsets an exactly-once sink commits in its transactions (txn) is left
// out while any of its records is unacknowledged or held: such a record may be in
// a transaction that commits a later offset, which this commit, landing
// after it, would move back. With nothing in flight its position can only
// have moved past the sink's commit by records that never reached the sink
// (filtered out, transaction markers), and committing it is safe.
func (t *offsetTracker) selfCommits(refresh bool) map[topicPartition]int64 {
	out := map[topicPartition]int64{}
	for tp, po := range t.parts {
		if po.txn && (po.unacked > 0 || len(po.held) > 0) {
			continue
		}
		if pos := po.commitPosition(); refresh || pos != po.committed {
			out[tp] = pos
		}
	}
	return out
}

// prepareTxn returns, for each partition of ps, the commit position it would
// have if the records at ps were acknowledged, when that differs from what
// is committed, and marks the partitions txn. Partitions that are not
// tracked (revoked, or never read by this session) are returned in
// notTracked, sorted, and nothing else is done then. Offsets of each
// partition may be in any order.
func (t *offsetTracker) prepareTxn(ps map[topicPartition][]int64) (pos map[topicPartition]int64, notTracked []topicPartition) {
	for tp := range ps {
		if t.parts[tp] == nil {
			notTracked = append(notTracked, tp)
		}
	}
	if len(notTracked) > 0 {
		sortPartitions(notTracked)
		return nil, notTracked
	}
	out := make(map[topicPartition]int64, len(ps))
	for tp, offsets := range ps {
		po := t.parts[tp]
		po.txn = true
		slices.Sort(offsets)
		pos := po.next
		j := 0
		for _, p := range po.pending[po.head:] {
			// Records below the committed offset are done even if their
			// acknowledgement has not arrived yet: Benthos acknowledges
			// a batch after WriteBatch returns, so the next transaction
			// can be prepared before the previous one's records are
			// acked. Counting them as in flight would commit an offset
			// below the one the previous transaction committed, and a
			// crash would then replay that transaction (duplicates).
			if p.acked || p.offset < po.committed {
				continue
			}
			for j < len(offsets) && offsets[j] < p.offset {
				j++
			}
			if j < len(offsets) && offsets[j] == p.offset {
				j++
				continue
			}
			pos = p.offset
			break
		}
		// Never move a committed offset backwards.
		if pos >= 0 && pos > po.committed {
			out[tp] = pos
		}
	}
	return out, nil
}

// markTxn marks tp as committed by an exactly-once sink's transactions.
func (t *offsetTracker) markTxn(tp topicPartition) {
	if po := t.parts[tp]; po != nil {
		po.txn = true
	}
}

// prepareWindows returns, for every tracked partition whose position is
// known, the offset a transaction of window results commits (the commit
// position, never below what is committed) and the fetch position, and
// marks the partitions txn. Unlike prepareTxn, no record counts as done:
// the records of the windows in the transaction stay unacknowledged until
// it commits, and the committed window state makes their replays skip.
func (t *offsetTracker) prepareWindows() (pos, readEnd map[topicPartition]int64) {
	pos = make(map[topicPartition]int64, len(t.parts))
	readEnd = make(map[topicPartition]int64, len(t.parts))
	for tp, po := range t.parts {
		o := max(po.commitPosition(), po.committed)
		if o < 0 {
			continue // group mode: nothing fetched yet, start unknown
		}
		po.txn = true
		pos[tp], readEnd[tp] = o, max(po.next, o)
	}
	return pos, readEnd
}

// markCommitted records that offset was committed for tp.
func (t *offsetTracker) markCommitted(tp topicPartition, offset int64) {
	if po := t.parts[tp]; po != nil {
		po.committed = offset
	}
}

// unacked returns the number of fetched, unacknowledged records of tp.
func (t *offsetTracker) unacked(tp topicPartition) int {
	if po := t.parts[tp]; po != nil {
		return po.unacked
	}
	return 0
}

// holds returns the number of holds on tp.
func (t *offsetTracker) holds(tp topicPartition) int {
	if po := t.parts[tp]; po != nil {
		return len(po.held)
	}
	return 0
}

// hold registers hold id on the records from offset low on, per partition:
// until it is released, no commit position of those partitions is at or past
// low. Partitions that are not tracked are returned in notTracked, sorted,
// and nothing is held then. high is the highest held offset of each
// partition (nil or a missing partition: unknown), so that a transaction's
// commit can count its own held records as done before their
// acknowledgement arrives (prepareHeld).
func (t *offsetTracker) hold(id holdID, low, high map[topicPartition]int64) (notTracked []topicPartition) {
	for tp := range low {
		if t.parts[tp] == nil {
			notTracked = append(notTracked, tp)
		}
	}
	if len(notTracked) > 0 {
		sortPartitions(notTracked)
		return notTracked
	}
	for tp, off := range low {
		po := t.parts[tp]
		was := po.busy()
		hi, ok := high[tp]
		if !ok {
			hi = off - 1
		}
		po.held = append(po.held, heldOffset{id: id, offset: off, high: hi})
		t.noteBusy(po, was)
	}
	return nil
}

// release ends the holds ids on the partitions of tps (nil: every tracked
// partition). Releasing a hold twice, or one that was never made, changes
// nothing.
func (t *offsetTracker) release(ids []holdID, tps []topicPartition) {
	if tps == nil {
		for _, po := range t.parts {
			was := po.busy()
			po.release(ids)
			t.noteBusy(po, was)
		}
		return
	}
	for _, tp := range tps {
		if po := t.parts[tp]; po != nil {
			was := po.busy()
			po.release(ids)
			t.noteBusy(po, was)
		}
	}
}

// prepareHeld returns, for each partition of tps, the commit position it
// would have once the holds ids end, when that is past what is committed,
// and marks the partitions txn. Partitions that are not tracked are returned
// in notTracked, sorted, and nothing else is done then.
func (t *offsetTracker) prepareHeld(ids []holdID, tps []topicPartition) (pos map[topicPartition]int64, notTracked []topicPartition) {
	for _, tp := range tps {
		if t.parts[tp] == nil {
			notTracked = append(notTracked, tp)
		}
	}
	if len(notTracked) > 0 {
		sortPartitions(notTracked)
		return nil, notTracked
	}
	pos = make(map[topicPartition]int64, len(tps))
	for _, tp := range tps {
		po := t.parts[tp]
		po.txn = true
		p := po.ackPositionBeyond(ids)
		for _, h := range po.held {
			if h.offset < p && !slices.Contains(ids, h.id) {
				p = h.offset
			}
		}
		if p >= 0 && p > po.committed {
			pos[tp] = p
		}
	}
	return pos, nil
}

// ackPosition is the lowest unacknowledged offset, else the fetch position.
func (po *partitionOffsets) ackPosition() int64 {
	if po.head < len(po.pending) {
		return po.pending[po.head].offset
	}
	return po.next
}

// ackPositionBeyond is ackPosition, counting the records that the holds ids
// cover as acknowledged: they are in the transaction being prepared, and
// Benthos acknowledges a batch only after the sink's WriteBatch returned, on
// a goroutine of its own, so the acknowledgement of the round's last batch
// may reach the owner after the round's PrepareHeld. Counted as in flight,
// they kept the transaction's offset below its own records, and a crash
// after its commit wrote them again.
func (po *partitionOffsets) ackPositionBeyond(ids []holdID) int64 {
	for _, e := range po.pending[po.head:] {
		// Records below the committed offset are durable already (an
		// earlier round committed them; their acknowledgement may still
		// be on its way), as in prepareTxn.
		if e.acked || e.offset < po.committed || po.heldBy(ids, e.offset) {
			continue
		}
		return e.offset
	}
	return po.next
}

// heldBy reports whether one of the holds ids covers offset.
func (po *partitionOffsets) heldBy(ids []holdID, offset int64) bool {
	for _, h := range po.held {
		if h.offset <= offset && offset <= h.high && slices.Contains(ids, h.id) {
			return true
		}
	}
	return false
}

// commitPosition is the lowest offset neither acknowledged nor durable: the
// lowest unacknowledged or held offset, else the fetch position.
func (po *partitionOffsets) commitPosition() int64 {
	p := po.ackPosition()
	for _, h := range po.held {
		p = min(p, h.offset)
	}
	return p
}

func (po *partitionOffsets) release(ids []holdID) {
	po.held = slices.DeleteFunc(po.held, func(h heldOffset) bool { return slices.Contains(ids, h.id) })
}

func (po *partitionOffsets) add(offset int64) {
	live := po.pending[po.head:]
	if n := len(live); n == 0 || live[n-1].offset < offset {
		po.pending = append(po.pending, pendingOffset{offset: offset})
	} else {
		// Out of order: the client rewound (an out-of-range reset to an
		// earlier offset, or a truncated log). Keep the slice sorted; an
		// offset seen twice must be acknowledged twice.
		i := po.head + sort.Search(n, func(i int) bool { return live[i].offset > offset })
		po.pending = append(po.pending, pendingOffset{})
		copy(po.pending[i+1:], po.pending[i:])
		po.pending[i] = pendingOffset{offset: offset}
	}
	po.unacked++
	po.next = offset + 1
}

// ackRun acknowledges the records of run, positions of this partition.
// Where run's offsets follow each other in pending (as fetched), each is
// found where the one before ended, not by a search of its own.
func (po *partitionOffsets) ackRun(run []position) {
	live := po.pending[po.head:]
	i := 0
	for _, p := range run {
		offset := p.offset
		if i >= len(live) || live[i].offset != offset {
			i = sort.Search(len(live), func(i int) bool { return live[i].offset >= offset })
		}
		for ; i < len(live) && live[i].offset == offset; i++ {
			if !live[i].acked {
				live[i].acked = true
				po.unacked--
				i++
				break
			}
		}
	}
	for po.head < len(po.pending) && po.pending[po.head].acked {
		po.head++
	}
	switch {
	case po.head == len(po.pending):
		po.pending, po.head = po.pending[:0], 0
	case po.head >= 1024 && po.head*2 >= len(po.pending):
		n := copy(po.pending, po.pending[po.head:])
		po.pending, po.head = po.pending[:n], 0
	}
}
