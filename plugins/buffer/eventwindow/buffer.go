package eventwindow

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/halt"
	"github.com/connectd/connectd/internal/txnoffsets"
)

// Errors set on messages that pass through the buffer instead of entering a
// window, and returned by WriteBatch.
var (
	// ErrLate flags a record whose windows had all fired (late: error).
	ErrLate = errors.New("event_window: late record")
	// ErrEventTime flags a record without a usable event time.
	ErrEventTime = errors.New("event_window: no event time")
	// ErrRecord flags a record that cannot be aggregated (a sum over a string,
	// content that is not JSON when rows are kept, a bad key or watermark).
	ErrRecord = errors.New("event_window: record cannot be aggregated")
	// ErrLimit is returned by WriteBatch when max_open_windows or max_rows is
	// reached by open windows alone: the input batch is nacked.
	ErrLimit = errors.New("event_window: limit reached")
	// ErrClosed nacks the input batches still held when the buffer closes.
	ErrClosed = errors.New("event_window: buffer closed with open windows")
	// ErrEnding nacks the input batches held by open windows when the run
	// starts to end, and every batch written after: those records are read
	// again and their windows computed on the next run.
	ErrEnding = errors.New("event_window: the run is ending: open windows are dropped, their records are read again on the next run")
)

// Metadata set on each window result.
const (
	MetaWindowKey   = "window_key"
	MetaWindowStart = "window_start_ms"
	MetaWindowEnd   = "window_end_ms"
	// MetaEventTime (kafka_event_time_ms) on a result is window end - 1, as
	// Flink stamps window results with window.maxTimestamp().
	MetaEventTime = "kafka_event_time_ms"
)

// Fields of the window document.
const (
	docKey   = "key"
	docStart = "window_start_ms"
	docEnd   = "window_end_ms"
	docRows  = "rows"
)

// maxReadBatch caps the results handed out by one ReadBatch.
const maxReadBatch = 1024

// retryDelay is how long a nacked result waits before it is handed out again.
var retryDelay = 250 * time.Millisecond

// item is one message the buffer hands out: a window result or a passthrough
// (late or bad) record, with the input batches it holds.
type item struct {
	msg    *service.Message
	refs   []*batchRef
	window bool // counts against the limits until acked
	rows   int
	// res is the window result's place in the exactly-once order, nil
	// without a txnoffsets.Result token.
	res *pendingResult
	// epoch is the buffer's epoch when the item was queued: an item of an
	// earlier epoch was made from records of a kafka_source session that
	// ended, which its successor reads again (see resetLocked).
	epoch uint64
}

type metrics struct {
	open, watermark                        *service.MetricGauge
	fired, lateDropped, lateErrored, nacks *service.MetricCounter
	badRecords, replaysSkipped             *service.MetricCounter
	replayedWindows                        *service.MetricCounter
	splitKeys                              *service.MetricCounter
}

func newMetrics(m *service.Metrics) metrics {
	return metrics{
		open:        m.NewGauge("event_window_open"),
		watermark:   m.NewGauge("event_window_watermark_ms"),
		fired:       m.NewCounter("event_window_fired"),
		lateDropped: m.NewCounter("event_window_late_dropped"),
		lateErrored: m.NewCounter("event_window_late_errored"),
		nacks:       m.NewCounter("event_window_result_nacked"),
		badRecords:  m.NewCounter("event_window_bad_records"),
		// Records read again after a restart whose windows are in the
		// output already (exactly-once results).
		replaysSkipped: m.NewCounter("event_window_replays_skipped"),
		// Sessions rebuilt from replayed records whose results are in
		// the output already.
		replayedWindows: m.NewCounter("event_window_replayed_sessions_dropped"),
		// Window keys whose records arrive from more than one partition
		// while other processes read some of the partitions: their
		// windows are partial (partitions.go).
		splitKeys: m.NewCounter("event_window_keys_from_several_partitions"),
	}
}

// Buffer is the event_window buffer. WriteBatch and EndOfInput feed windows
// and fire them; ReadBatch hands out fired results; their acks release the
// input batches.
type Buffer struct {
	cfg Config
	log *service.Logger
	met metrics
	// run ends the windows when the stream starts to end (endWindows).
	run       *halt.Run
	closing   chan struct{}
	closeOnce sync.Once
	// now is the processing-time clock of writes (time.Now; tests set it).
	now func() time.Time

	mu struct {
		sync.Mutex
		watermark int64
		seq       uint64
		windows   map[winID]*window      // tumbling, sliding
		sessions  map[string][]*window   // session
		heap      fireHeap               // every open window
		ready     []item                 // fired, not handed out
		live      map[*batchRef]struct{} // input batches not acked yet
		heldWins  int                    // fired windows not acked yet
		heldRows  int                    // rows of open and fired-not-acked windows
		inflight  int                    // handed-out batches not acked, or waiting to be retried
		lastWrite time.Time              // for flush_after_idle
		eoi       bool
		closed    bool
		ending    bool          // the run is ending: windows dropped, writes nacked
		changed   chan struct{} // closed and replaced on every state change
		waiting   int           // writes blocked in waitForSpaceLocked

		// Exactly-once results (exactlyonce.go): the upstream
		// kafka_sources, the restored cutoff, and the results handed out
		// or waiting, in window order, not settled yet.
		sources    map[txnoffsets.WindowSource]struct{}
		lastSource txnoffsets.WindowSource
		results    []*pendingResult
		resultSeq  uint64
		txnSeen    bool // PrepareResults was called: a transactional output
		epoch      uint64
		nacks      acker // input batches dropped by resetLocked, to nack

		// Keys found in several partitions (partitions.go), at most
		// maxSplitKeys; splitWarned once the first was logged.
		splitKeys   map[string]struct{}
		splitWarned bool
		parts       map[part]*part // interned partitions (partitions.go)

		// writers are the watermarks of the writers of a repartition
		// topic, per partition (writers.go).
		writers map[part]*partMarks
	}
}

// New returns a buffer for a validated config.
func New(cfg Config, res *service.Resources) *Buffer {
	b := &Buffer{cfg: cfg, log: res.Logger(), met: newMetrics(res.Metrics()), run: halt.For(res), closing: make(chan struct{}), now: time.Now}
	b.mu.watermark = math.MinInt64
	b.mu.windows = map[winID]*window{}
	b.mu.sessions = map[string][]*window{}
	b.mu.live = map[*batchRef]struct{}{}
	b.mu.sources = map[txnoffsets.WindowSource]struct{}{}
	b.mu.splitKeys = map[string]struct{}{}
	b.mu.parts = map[part]*part{}
	b.mu.writers = map[part]*partMarks{}
	b.mu.changed = make(chan struct{})
	go b.endWindows()
	return b
}

// endWindows drops the open windows when the run starts to end (SIGTERM, or
// a halt): their input batches are nacked at once. Benthos stops a stream
// input first and the input waits for the acknowledgement of every record
// in flight, which open windows would hold until a watermark that never
// comes: the shutdown would wait out shutdown_timeout. Nacked, the records
// are not committed, and the next run reads them again and computes their
// windows (at-least-once results; exactly-once with a transactional sink,
// whose restored cutoff drops replays of committed windows). Fired results
// are still delivered.
func (b *Buffer) endWindows() {
	select {
	case <-b.closing:
		return
	case <-b.run.Ending():
	}
	var nacks acker
	b.mu.Lock()
	if b.mu.closed {
		b.mu.Unlock()
		return
	}
	b.mu.ending = true
	windows := len(b.mu.heap)
	for _, w := range b.mu.heap {
		b.mu.heldRows -= len(w.rows)
		b.dropRefsLocked(w.refs, &nacks)
	}
	b.mu.heap = b.mu.heap[:0]
	clear(b.mu.windows)
	clear(b.mu.sessions)
	b.met.open.Set(0)
	ready, inflight := len(b.mu.ready), b.mu.inflight
	b.notifyLocked()
	b.mu.Unlock()
	b.log.Infof("event_window: the run is ending: dropped %d open windows and nacked their %d input batches (read again and recomputed on the next run); "+
		"waiting for %d fired results and %d batches of results in flight to be delivered", windows, len(nacks), ready, inflight)
	nacks.run(ErrEnding)
}

func (b *Buffer) notifyLocked() {
	close(b.mu.changed)
	b.mu.changed = make(chan struct{})
}

// acker collects AckFuncs to call once the lock is released.
type acker []func(error)

func (a acker) run(err error) {
	for _, fn := range a {
		fn(err)
	}
}

func (b *Buffer) releaseLocked(refs []*batchRef, acks *acker) {
	for _, r := range refs {
		r.pending--
		if r.pending == 0 && !r.done {
			r.done = true
			delete(b.mu.live, r)
			*acks = append(*acks, r.ack)
		}
	}
}

func (b *Buffer) openWindowsLocked() int { return len(b.mu.heap) }

// waitForSpaceLocked blocks while the limits are reached and fired windows
// are waiting for their acks (back-pressure on the input). When open windows
// alone reach a limit, waiting would never end: it returns ErrLimit.
func (b *Buffer) waitForSpaceLocked(ctx context.Context) error {
	for {
		wins := b.openWindowsLocked() + b.mu.heldWins
		if wins < b.cfg.MaxOpenWindows && b.mu.heldRows < b.cfg.MaxRows {
			return nil
		}
		if b.mu.ending {
			return ErrEnding
		}
		if b.mu.heldWins == 0 || b.mu.closed {
			return fmt.Errorf("%w: %d open windows (field %s: %d), %d rows kept (field %s: %d); "+
				"the watermark does not advance far enough to fire them: raise the limit, shorten the windows or check the watermark",
				ErrLimit, b.openWindowsLocked(), FieldMaxOpenWindows, b.cfg.MaxOpenWindows, b.mu.heldRows, FieldMaxRows, b.cfg.MaxRows)
		}
		ch := b.mu.changed
		b.mu.waiting++
		b.mu.Unlock()
		select {
		case <-ch:
			b.mu.Lock()
			b.mu.waiting--
		case <-ctx.Done():
			b.mu.Lock()
			b.mu.waiting--
			return ctx.Err()
		}
	}
}

// WriteBatch assigns each record to its windows, advances the watermark from
// the records' metadata and fires the windows it passes. The batch's AckFunc
// is called when every window and passthrough message holding it is acked.
func (b *Buffer) WriteBatch(ctx context.Context, batch service.MessageBatch, ackFn service.AckFunc) error {
	b.mu.Lock()
	if b.mu.ending {
		b.mu.Unlock()
		return ErrEnding
	}
	if err := b.waitForSpaceLocked(ctx); err != nil {
		b.mu.Unlock()
		return err
	}
	b.mu.lastWrite = b.now()
	ref := &batchRef{pending: 1, ack: func(err error) { _ = ackFn(context.Background(), err) }}
	b.mu.live[ref] = struct{}{}
	var acks acker
	vals := make([]any, len(b.cfg.Aggregates))
	for _, msg := range batch {
		b.addLocked(msg, ref, vals, &acks)
	}
	b.releaseLocked([]*batchRef{ref}, &acks)
	b.met.open.Set(int64(len(b.mu.heap)))
	b.notifyLocked()
	nacks := b.mu.nacks
	b.mu.nacks = nil
	b.mu.Unlock()
	acks.run(nil)
	nacks.run(ErrSourceReconnected)
	return nil
}

// passLocked queues msg as an errored passthrough message holding ref. Its
// origin is hidden: its offset is committed when its input batch is
// acknowledged, not by the transaction that writes it.
func (b *Buffer) passLocked(msg *service.Message, err error, ref *batchRef) {
	msg = msg.WithContext(txnoffsets.WithoutOrigin(msg.Context()))
	msg.SetError(err)
	ref.pending++
	b.mu.ready = append(b.mu.ready, item{msg: msg, refs: []*batchRef{ref}, epoch: b.mu.epoch})
}

func metaInt(msg *service.Message, key string) (int64, bool, error) {
	v, ok := msg.MetaGetMut(key)
	if !ok {
		return 0, false, nil
	}
	switch n := v.(type) {
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			return 0, true, fmt.Errorf("metadata %s: %q is not an integer of milliseconds", key, n)
		}
		return i, true, nil
	case bool, nil:
		return 0, true, fmt.Errorf("metadata %s: %v is not an integer of milliseconds", key, v)
	}
	i, f, isInt, err := number(v)
	if err != nil {
		return 0, true, fmt.Errorf("metadata %s: %w", key, err)
	}
	if !isInt {
		i = int64(f)
	}
	return i, true, nil
}

func (b *Buffer) eventTime(msg *service.Message) (int64, error) {
	if b.cfg.TimestampMapping == nil {
		ts, ok, err := metaInt(msg, b.cfg.EventTimeMeta)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrEventTime, err)
		}
		if !ok {
			return 0, fmt.Errorf("%w: metadata %s is not set: set it upstream or set field %s", ErrEventTime, b.cfg.EventTimeMeta, FieldTimestampMapping)
		}
		return ts, nil
	}
	// BloblangQueryValue leaves `this` undefined: query a message instead.
	res, err := msg.BloblangQuery(b.cfg.TimestampMapping)
	if err != nil {
		return 0, fmt.Errorf("%w: field %s: %w", ErrEventTime, FieldTimestampMapping, err)
	}
	if res == nil {
		return 0, fmt.Errorf("%w: field %s: the mapping deleted the root", ErrEventTime, FieldTimestampMapping)
	}
	v, err := res.AsStructured()
	if err != nil {
		raw, _ := res.AsBytes()
		v = string(raw)
	}
	switch t := v.(type) {
	case time.Time:
		return t.UnixMilli(), nil
	case string:
		ts, err := time.Parse(time.RFC3339Nano, t)
		if err != nil {
			return 0, fmt.Errorf("%w: field %s: %q is neither a timestamp nor milliseconds", ErrEventTime, FieldTimestampMapping, t)
		}
		return ts.UnixMilli(), nil
	}
	i, f, isInt, err := number(v)
	if err != nil {
		return 0, fmt.Errorf("%w: field %s: want a timestamp or an integer of milliseconds: %w", ErrEventTime, FieldTimestampMapping, err)
	}
	if !isInt {
		i = int64(f)
	}
	return i, nil
}

// addLocked handles one record: it joins its windows, or passes through as
// an errored message, or is dropped as late; then the watermark it carries
// is applied. The record is assigned against the watermark from before its
// own, as Flink processes a record before the watermark that follows it.
func (b *Buffer) addLocked(msg *service.Message, ref *batchRef, vals []any, acks *acker) {
	defer b.advanceFromLocked(msg, acks)

	restored, restoredOK := b.originLocked(msg)
	ts, err := b.eventTime(msg)
	if err != nil {
		b.met.badRecords.Incr(1)
		b.passLocked(msg, err, ref)
		return
	}
	key := ""
	if b.cfg.Key != nil {
		if key, err = b.cfg.Key.TryString(msg); err != nil {
			b.met.badRecords.Incr(1)
			b.passLocked(msg, fmt.Errorf("%w: field %s: %w", ErrRecord, FieldKey, err), ref)
			return
		}
	}
	var content any
	if needsContent(b.cfg) {
		if content, err = msg.AsStructured(); err != nil {
			b.met.badRecords.Incr(1)
			b.passLocked(msg, fmt.Errorf("%w: content is not JSON: %w", ErrRecord, err), ref)
			return
		}
	}
	for i, spec := range b.cfg.Aggregates {
		vals[i] = nil
		if spec.Path == nil {
			continue
		}
		v := lookup(content, spec.Path)
		if v != nil && spec.numeric() {
			if _, _, _, err := number(v); err != nil {
				b.met.badRecords.Incr(1)
				b.passLocked(msg, fmt.Errorf("%w: field %s.%s: value at %v: %w", ErrRecord, FieldAggregates, spec.Name, spec.Path, err), ref)
				return
			}
		}
		vals[i] = v
	}
	b.mu.seq++
	r := rec{ts: ts, seq: b.mu.seq, vals: vals, content: content, from: b.partOfLocked(msg), cut: restoredCut{restored.Cutoff, restoredOK}}
	var joined, committed bool
	switch b.cfg.Kind {
	case Tumbling, Sliding:
		joined, committed = b.assignFixedLocked(key, r, ref)
	case Session:
		joined = b.assignSessionLocked(key, r, ref)
	}
	if joined {
		return
	}
	if committed && restored.Replay {
		// Read again after a restart: its windows' results are in the
		// output already, it was counted there.
		b.met.replaysSkipped.Incr(1)
		return
	}
	switch b.cfg.Late {
	case LateError:
		b.met.lateErrored.Incr(1)
		b.passLocked(msg, fmt.Errorf("%w: key %q, event time %d ms, watermark %d ms, allowed lateness %d ms: its windows have fired",
			ErrLate, key, ts, b.mu.watermark, b.cfg.AllowedLateness), ref)
	default:
		b.met.lateDropped.Incr(1)
	}
}

func needsContent(c Config) bool {
	if c.Aggregate != nil {
		return true
	}
	for _, a := range c.Aggregates {
		if a.Path != nil {
			return true
		}
	}
	return false
}

// rec is a record on its way into windows.
type rec struct {
	ts      int64
	seq     uint64
	vals    []any
	content any
	from    *part       // its partition, when other processes read some (partitions.go)
	cut     restoredCut // its partition's restored cutoff (exactlyonce.go)
}

func (b *Buffer) fold(w *window, r rec, ref *batchRef) {
	for i, spec := range b.cfg.Aggregates {
		v := r.vals[i]
		if v == nil && spec.Path != nil && spec.Op != AggFirst && spec.Op != AggLast {
			continue // SQL: COUNT(col), SUM, MIN, MAX skip nulls
		}
		w.accs[i].add(spec.Op, v, r.ts, r.seq)
	}
	b.notePartLocked(w, r.from)
	if b.cfg.Kind == Session && (w.cut == nil && r.cut.ok || w.cut != nil && r.cut.after(*w.cut)) {
		c := r.cut
		w.cut = &c
	}
	if b.cfg.Aggregate != nil {
		w.rows = append(w.rows, row{seq: r.seq, v: r.content})
		b.mu.heldRows++
	}
	// Records of one batch arrive together: list the batch once per window.
	if n := len(w.refs); n == 0 || w.refs[n-1] != ref {
		w.refs = append(w.refs, ref)
		ref.pending++
	}
}

func (b *Buffer) newWindowLocked(key string, start, end int64) *window {
	w := &window{key: key, start: start, end: end, fireAt: fireAt(end, b.cfg.AllowedLateness)}
	if len(b.cfg.Aggregates) > 0 {
		w.accs = make([]acc, len(b.cfg.Aggregates))
	}
	heap.Push(&b.mu.heap, w)
	return w
}

// assignFixedLocked adds r to its tumbling or sliding windows that have not
// fired; it reports whether there was one, and whether one of those that
// had was committed before a restart (at or before the restored cutoff).
func (b *Buffer) assignFixedLocked(key string, r rec, ref *batchRef) (joined, committed bool) {
	size, slide := b.cfg.SizeMS, b.cfg.SlideMS
	if b.cfg.Kind == Tumbling {
		slide = size
	}
	// Flink SlidingEventTimeWindows.assignWindows: from the last start at or
	// before ts, back while the window still holds ts.
	for start := windowStart(r.ts, slide); start > r.ts-size; start -= slide {
		end := start + size
		at := fireAt(end, b.cfg.AllowedLateness)
		if r.cut.committed(at, key, start) {
			committed = true
			continue // in the output before a restart
		}
		if at <= b.mu.watermark {
			continue // fired: late for this window
		}
		id := winID{key, start}
		w := b.mu.windows[id]
		if w == nil {
			w = b.newWindowLocked(key, start, end)
			b.mu.windows[id] = w
		}
		b.fold(w, r, ref)
		joined = true
	}
	return joined, committed
}

// assignSessionLocked puts r in session [ts, ts+gap) and merges every open
// session of its key that it overlaps or touches (Flink TimeWindow.intersects:
// start <= other.end && end >= other.start). A record that touches no open
// session and whose own session would already have fired is late.
func (b *Buffer) assignSessionLocked(key string, r rec, ref *batchRef) bool {
	start, end := r.ts, r.ts+b.cfg.GapMS
	open := b.mu.sessions[key]
	var target *window
	kept := open[:0]
	for _, s := range open {
		if start <= s.end && end >= s.start {
			if target == nil {
				target = s
			} else {
				target.mergeInto(s, b.cfg.Aggregates)
				b.mergePartsLocked(target, s)
				if s.cut != nil && (target.cut == nil || s.cut.after(*target.cut)) {
					target.cut = s.cut
				}
				heap.Remove(&b.mu.heap, s.idx)
			}
			continue
		}
		kept = append(kept, s)
	}
	if target == nil {
		if fireAt(end, b.cfg.AllowedLateness) <= b.mu.watermark {
			return false
		}
		target = b.newWindowLocked(key, start, end)
	} else {
		if start < target.start {
			target.start = start
		}
		if end > target.end {
			target.end = end
		}
		target.fireAt = fireAt(target.end, b.cfg.AllowedLateness)
		heap.Fix(&b.mu.heap, target.idx)
	}
	kept = append(kept, target)
	// Clear the tail so merged-away windows are not kept alive.
	for i := len(kept); i < len(open); i++ {
		open[i] = nil
	}
	b.mu.sessions[key] = kept
	b.fold(target, r, ref)
	return true
}

// advanceFromLocked applies the watermark a record carries. A malformed
// watermark is logged and ignored: the record itself was windowed.
func (b *Buffer) advanceFromLocked(msg *service.Message, acks *acker) {
	wm, ok, err := metaInt(msg, b.cfg.WatermarkMeta)
	if err != nil {
		b.log.Warnf("event_window: ignoring the watermark of a record: %v", err)
		return
	}
	if !ok {
		return
	}
	if b.cfg.WatermarkWriterMeta != "" {
		var hold bool
		if wm, hold = b.writerWatermarkLocked(msg, wm); hold {
			return
		}
	}
	b.advanceLocked(wm, acks)
}

// advanceLocked moves the watermark forward (never back) and fires every
// window whose fire time it reaches.
func (b *Buffer) advanceLocked(wm int64, acks *acker) {
	if wm <= b.mu.watermark {
		return
	}
	b.mu.watermark = wm
	b.met.watermark.Set(wm)
	for len(b.mu.heap) > 0 && b.mu.heap[0].fireAt <= wm {
		b.fireLocked(heap.Pop(&b.mu.heap).(*window), acks)
	}
	b.met.open.Set(int64(len(b.mu.heap)))
}

// fireLocked turns a window into its result and queues it.
func (b *Buffer) fireLocked(w *window, acks *acker) {
	switch b.cfg.Kind {
	case Session:
		ss := b.mu.sessions[w.key]
		for i, s := range ss {
			if s == w {
				ss[i] = ss[len(ss)-1]
				ss[len(ss)-1] = nil
				ss = ss[:len(ss)-1]
				break
			}
		}
		if len(ss) == 0 {
			delete(b.mu.sessions, w.key)
		} else {
			b.mu.sessions[w.key] = ss
		}
	default:
		delete(b.mu.windows, winID{w.key, w.start})
	}
	if b.cfg.Kind == Session && sessionCommitted(w) {
		// Rebuilt from replayed records after a restart: the session's
		// result is in the output already.
		b.met.replayedWindows.Incr(1)
		b.mu.heldRows -= len(w.rows)
		b.releaseLocked(w.refs, acks)
		return
	}
	b.met.fired.Incr(1)

	doc := make(map[string]any, 3+len(b.cfg.Aggregates)+1)
	doc[docKey] = w.key
	doc[docStart] = w.start
	doc[docEnd] = w.end
	for i, spec := range b.cfg.Aggregates {
		doc[spec.Name] = w.accs[i].result(spec.Op)
	}
	msg := service.NewMessage(nil)
	rows := len(w.rows)
	if b.cfg.Aggregate != nil {
		doc[docRows] = w.sortedRows()
		w.rows = nil
		in := service.NewMessage(nil)
		in.SetStructuredMut(doc)
		out, err := in.BloblangQuery(b.cfg.Aggregate)
		switch {
		case err != nil:
			msg.SetStructuredMut(doc)
			msg.SetError(fmt.Errorf("event_window: field %s failed on window %q [%d, %d): %w", FieldAggregate, w.key, w.start, w.end, err))
		case out == nil: // root = deleted(): no result for this window
			b.mu.heldRows -= rows
			b.releaseLocked(w.refs, acks)
			return
		default:
			msg = out
		}
	} else {
		msg.SetStructuredMut(doc)
	}
	msg.MetaSetMut(MetaWindowKey, w.key)
	msg.MetaSetMut(MetaWindowStart, w.start)
	msg.MetaSetMut(MetaWindowEnd, w.end)
	msg.MetaSetMut(MetaEventTime, w.end-1)
	it := item{msg: msg, refs: w.refs, window: true, rows: rows, epoch: b.mu.epoch}
	if b.tokensLocked() {
		b.mu.resultSeq++
		it.res = &pendingResult{seq: b.mu.resultSeq, epoch: b.mu.epoch, cut: txnoffsets.Cutoff{FireAt: w.fireAt, Key: w.key, Start: w.start}}
		b.mu.results = append(b.mu.results, it.res)
		it.msg = msg.WithContext(txnoffsets.WithResult(msg.Context(), txnoffsets.Result{Emitter: b, Seq: it.res.seq}))
	}
	b.mu.heldWins++
	b.mu.ready = append(b.mu.ready, it)
}

// ReadBatch hands out fired results and passthrough records, in firing
// order. It returns service.ErrEndOfBuffer once the input has ended and every
// result has been acked.
func (b *Buffer) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	b.mu.Lock()
	for {
		// Once a transactional output commits results, one batch at a
		// time: results reach its transactions in window order (see
		// PrepareResults).
		if len(b.mu.ready) > 0 && (b.mu.inflight == 0 || !b.mu.txnSeen) {
			n := min(len(b.mu.ready), maxReadBatch)
			items := make([]item, n)
			copy(items, b.mu.ready)
			for _, it := range items {
				if it.res != nil {
					it.res.handed = true
				}
			}
			clear(b.mu.ready[:n])
			b.mu.ready = b.mu.ready[n:]
			if len(b.mu.ready) == 0 {
				b.mu.ready = nil
			}
			b.mu.inflight++
			b.mu.Unlock()
			out := make(service.MessageBatch, n)
			for i, it := range items {
				out[i] = it.msg
			}
			return out, func(_ context.Context, err error) error {
				b.ackItems(items, err)
				return nil
			}, nil
		}
		if b.mu.closed || (b.mu.eoi && len(b.mu.heap) == 0 && b.mu.inflight == 0) {
			b.mu.Unlock()
			return nil, nil, service.ErrEndOfBuffer
		}
		ch := b.mu.changed
		var idle <-chan time.Time
		var timer *time.Timer
		if b.cfg.FlushAfterIdle > 0 && len(b.mu.heap) > 0 {
			timer = time.NewTimer(b.cfg.FlushAfterIdle - time.Since(b.mu.lastWrite))
			idle = timer.C
		}
		b.mu.Unlock()
		select {
		case <-ch:
		case <-idle:
			b.flushIdle()
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return nil, nil, ctx.Err()
		}
		if timer != nil {
			timer.Stop()
		}
		b.mu.Lock()
	}
}

// flushIdle advances the watermark just far enough to fire every open window
// when no record has been written for flush_after_idle. Records that arrive
// later for those windows are late, as for any watermark.
func (b *Buffer) flushIdle() {
	var acks acker
	b.mu.Lock()
	if len(b.mu.heap) > 0 && time.Since(b.mu.lastWrite) >= b.cfg.FlushAfterIdle {
		wm := b.mu.watermark
		for _, w := range b.mu.heap {
			wm = max(wm, w.fireAt)
		}
		b.log.Debugf("event_window: no record for %v: watermark to %d ms to fire %d open windows", b.cfg.FlushAfterIdle, wm, len(b.mu.heap))
		b.advanceLocked(wm, &acks)
		b.notifyLocked()
	}
	b.mu.Unlock()
	acks.run(nil)
}

// ackItems settles a handed-out batch. Acked: the input batches it held are
// released. Nacked: the same messages are handed out again after retryDelay;
// a window result is never dropped and never recomputed, so its inputs stay
// unacked until it is delivered.
func (b *Buffer) ackItems(items []item, err error) {
	if err != nil {
		b.met.nacks.Incr(int64(len(items)))
		b.log.Warnf("event_window: %d results not delivered, retrying in %v: %v", len(items), retryDelay, err)
		b.mu.Lock()
		for _, it := range items {
			if it.res != nil {
				it.res.handed = false // no later result commits before it
			}
		}
		b.mu.Unlock()
		time.AfterFunc(retryDelay, func() {
			var acks acker
			b.mu.Lock()
			b.mu.inflight--
			if b.mu.closed {
				b.mu.Unlock()
				return
			}
			// Results whose transaction committed are in the output,
			// even if another part of their batch failed (an output
			// that splits batches): they are done, not retried.
			// Items of an earlier epoch are dropped: the new kafka_source
			// session reads their records again.
			retry := items[:0:0]
			var nacks acker
			for _, it := range items {
				switch {
				case it.res != nil && it.res.committed:
					b.doneLocked(it, &acks)
				case it.epoch != b.mu.epoch:
					b.dropItemLocked(it, &nacks)
				default:
					retry = append(retry, it)
				}
			}
			b.mu.ready = append(retry, b.mu.ready...)
			b.notifyLocked()
			b.mu.Unlock()
			acks.run(nil)
			nacks.run(ErrSourceReconnected)
		})
		return
	}
	var acks acker
	b.mu.Lock()
	for _, it := range items {
		b.doneLocked(it, &acks)
	}
	b.mu.inflight--
	b.notifyLocked()
	b.mu.Unlock()
	acks.run(nil)
}

// doneLocked settles a delivered item: its limits and its input batches
// are released.
func (b *Buffer) doneLocked(it item, acks *acker) {
	b.forgetLocked(it)
	b.releaseLocked(it.refs, acks)
}

// forgetLocked releases the limits an item holds and drops it from the
// pending results: it was delivered (its transaction committed, or an
// output that is not transactional acknowledged it or filtered it out) or
// is dropped.
func (b *Buffer) forgetLocked(it item) {
	if it.window {
		b.mu.heldWins--
		b.mu.heldRows -= it.rows
	}
	if it.res != nil {
		b.settleLocked(it.res)
	}
}

// EndOfInput fires every open window, in fire-time order. Benthos's input
// layer (AsyncReader) calls it only after every pending ack of the input has
// resolved, which never happens while windows hold acks: a bounded input
// ends its windows with the math.MaxInt64 watermark instead (see the spec).
func (b *Buffer) EndOfInput() {
	var acks acker
	b.mu.Lock()
	if !b.mu.eoi {
		b.mu.eoi = true
		for len(b.mu.heap) > 0 {
			b.fireLocked(heap.Pop(&b.mu.heap).(*window), &acks)
		}
		b.met.open.Set(0)
		b.notifyLocked()
	}
	b.mu.Unlock()
	acks.run(nil)
}

// Close nacks the input batches still held (open windows, undelivered
// results): an input that can replay them will, and the windows are
// recomputed on the next run.
func (b *Buffer) Close(context.Context) error {
	b.closeOnce.Do(func() { close(b.closing) })
	b.mu.Lock()
	b.mu.closed = true
	var nacks acker
	for r := range b.mu.live {
		r.done = true
		nacks = append(nacks, r.ack)
	}
	clear(b.mu.live)
	b.notifyLocked()
	b.mu.Unlock()
	nacks.run(ErrClosed)
	return nil
}
