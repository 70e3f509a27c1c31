package eventwindow

import (
	"container/heap"
	"math"
	"sort"
)

// batchRef tracks one input batch: its AckFunc is called with nil when
// pending drops to zero, that is when every window and passthrough message
// that holds the batch has been delivered. Guarded by buffer.mu.
type batchRef struct {
	ack     func(error)
	pending int
	done    bool
}

// row is a record kept for the `aggregate` mapping.
type row struct {
	seq uint64
	v   any
}

// window is one open window of one key: [start, end) in event-time ms.
type window struct {
	key        string
	start, end int64
	fireAt     int64 // end - 1 + allowed lateness: fires when the watermark reaches it
	accs       []acc
	rows       []row
	merged     bool // rows come from more than one session: sort by seq when firing
	split      bool // records of more than one partition joined it (partitions.go)
	refs       []*batchRef
	idx        int // index in the fire heap
	// from is the partition of its first record (partitions.go), nil
	// when its source reads every partition.
	from *part
	// cut is the latest restored cutoff of a session's records'
	// partitions (exactlyonce.go), nil for other windows or without one:
	// a session rebuilt from replayed records that fires at or before it
	// is in the output already.
	cut *restoredCut
}

// tumblingStart is Flink's TimeWindow.getWindowStartWithOffset with offset 0:
// the start of the window of size that holds ts, also for negative ts.
func windowStart(ts, size int64) int64 {
	m := ts % size
	if m < 0 {
		m += size
	}
	return ts - m
}

// fireAt is the watermark at which window [start, end) fires: Flink's
// EventTimeTrigger fires when window.maxTimestamp() (end - 1) <= watermark,
// and WindowOperator drops the window's state (late records no longer enter
// it) when maxTimestamp + allowedLateness <= watermark. This buffer emits one
// final result per window, at the latter point.
func fireAt(end, lateness int64) int64 {
	if end > math.MaxInt64-lateness {
		return math.MaxInt64
	}
	return end - 1 + lateness
}

// fireHeap orders open windows by fire time, then key, then start, so windows
// that one watermark fires come out in a deterministic order.
type fireHeap []*window

func (h fireHeap) Len() int { return len(h) }
func (h fireHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.fireAt != b.fireAt {
		return a.fireAt < b.fireAt
	}
	if a.key != b.key {
		return a.key < b.key
	}
	return a.start < b.start
}
func (h fireHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *fireHeap) Push(x any) {
	w := x.(*window)
	w.idx = len(*h)
	*h = append(*h, w)
}
func (h *fireHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	w.idx = -1
	return w
}

var _ heap.Interface = (*fireHeap)(nil)

// winID names a tumbling or sliding window.
type winID struct {
	key   string
	start int64
}

// mergeInto folds the state of o into w (session merge).
func (w *window) mergeInto(o *window, specs []AggregateSpec) {
	if o.start < w.start {
		w.start = o.start
	}
	if o.end > w.end {
		w.end = o.end
	}
	for i := range w.accs {
		w.accs[i].merge(specs[i].Op, &o.accs[i])
	}
	if len(o.rows) > 0 {
		w.rows = append(w.rows, o.rows...)
		w.merged = true
	}
	// A batch may now be listed twice; its pending count was raised once per
	// listing, so each listing is released once: no dedupe needed.
	w.refs = append(w.refs, o.refs...)
}

func (w *window) sortedRows() []any {
	if w.merged {
		sort.Slice(w.rows, func(i, j int) bool { return w.rows[i].seq < w.rows[j].seq })
	}
	out := make([]any, len(w.rows))
	for i, r := range w.rows {
		out[i] = r.v
	}
	return out
}
