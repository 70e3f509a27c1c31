package kafkasource

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

var tpA = topicPartition{topic: "a", partition: 0}

func positionsOf(tp topicPartition, offsets ...int64) []position {
	ps := make([]position, len(offsets))
	for i, o := range offsets {
		ps[i] = position{tp: tp, offset: o}
	}
	return ps
}

// trackerStep is one event on partition tpA and the commit position expected
// after it. A nack is an event that changes nothing in the tracker: the
// record stays outstanding until it is delivered again and acked.
type trackerStep struct {
	op      string // fetch | ack | nack
	offsets []int64
	want    int64
	pause   bool // the step pauses tpA
	resume  bool // the step resumes tpA
}

func TestOffsetTracker(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		start int64
		limit int
		steps []trackerStep
	}{
		{
			name: "nothing fetched commits the start", start: 7, limit: 10,
			steps: []trackerStep{{op: "ack", offsets: nil, want: 7}},
		},
		{
			name: "in-order acks advance to last+1", start: 0, limit: 10,
			steps: []trackerStep{
				{op: "fetch", offsets: []int64{0, 1, 2}, want: 0},
				{op: "ack", offsets: []int64{0, 1}, want: 2},
				{op: "ack", offsets: []int64{2}, want: 3},
			},
		},
		{
			name: "out-of-order batches hold at the lowest unacked", start: 10, limit: 100,
			steps: []trackerStep{
				{op: "fetch", offsets: []int64{10, 11, 12}, want: 10}, // batch 1
				{op: "fetch", offsets: []int64{13, 14}, want: 10},     // batch 2
				{op: "fetch", offsets: []int64{15, 16, 17}, want: 10}, // batch 3
				{op: "ack", offsets: []int64{15, 16, 17}, want: 10},   // batch 3 first
				{op: "ack", offsets: []int64{13, 14}, want: 10},       // then batch 2
				{op: "ack", offsets: []int64{10, 11, 12}, want: 18},   // batch 1 releases all
			},
		},
		{
			name: "nack holds the position until redelivered and acked", start: 0, limit: 100,
			steps: []trackerStep{
				{op: "fetch", offsets: []int64{0, 1}, want: 0},
				{op: "fetch", offsets: []int64{2, 3}, want: 0},
				{op: "fetch", offsets: []int64{4, 5}, want: 0},
				{op: "ack", offsets: []int64{0, 1}, want: 2},
				{op: "nack", offsets: []int64{2, 3}, want: 2},
				{op: "ack", offsets: []int64{4, 5}, want: 2},
				{op: "nack", offsets: []int64{2, 3}, want: 2}, // redelivered, failed again
				{op: "ack", offsets: []int64{2, 3}, want: 6},  // redelivered, acked
			},
		},
		{
			name: "nack of the newest batch holds below it", start: 0, limit: 100,
			steps: []trackerStep{
				{op: "fetch", offsets: []int64{0, 1}, want: 0},
				{op: "fetch", offsets: []int64{2, 3}, want: 0},
				{op: "nack", offsets: []int64{2, 3}, want: 0},
				{op: "ack", offsets: []int64{0, 1}, want: 2},
				{op: "ack", offsets: []int64{2, 3}, want: 4},
			},
		},
		{
			name: "gaps (compaction, transaction markers) follow the records", start: 0, limit: 100,
			steps: []trackerStep{
				{op: "fetch", offsets: []int64{0, 5, 9}, want: 0},
				{op: "ack", offsets: []int64{0}, want: 5},
				{op: "ack", offsets: []int64{9}, want: 5},
				{op: "ack", offsets: []int64{5}, want: 10},
				{op: "fetch", offsets: []int64{12}, want: 12},
				{op: "ack", offsets: []int64{12}, want: 13},
			},
		},
		{
			name: "double ack and unknown ack change nothing", start: 0, limit: 100,
			steps: []trackerStep{
				{op: "fetch", offsets: []int64{0, 1, 2}, want: 0},
				{op: "ack", offsets: []int64{1}, want: 0},
				{op: "ack", offsets: []int64{1}, want: 0},
				{op: "ack", offsets: []int64{99}, want: 0},
				{op: "ack", offsets: []int64{0}, want: 2},
			},
		},
		{
			name: "rewound fetch stays sorted and must be acked per copy", start: 0, limit: 100,
			steps: []trackerStep{
				{op: "fetch", offsets: []int64{5, 6}, want: 5},
				{op: "fetch", offsets: []int64{3, 4, 5}, want: 3},
				{op: "ack", offsets: []int64{3, 4, 5}, want: 5},
				{op: "ack", offsets: []int64{6}, want: 5},
				{op: "ack", offsets: []int64{5}, want: 6}, // position follows the last fetch (5+1)
			},
		},
		{
			name: "pause at the limit, resume below it", start: 0, limit: 3,
			steps: []trackerStep{
				{op: "fetch", offsets: []int64{0, 1}, want: 0},
				{op: "fetch", offsets: []int64{2, 3}, want: 0, pause: true},
				{op: "fetch", offsets: []int64{4}, want: 0}, // already paused: no second pause
				{op: "ack", offsets: []int64{2, 3}, want: 0},
				{op: "ack", offsets: []int64{0}, want: 1, resume: true},
				{op: "ack", offsets: []int64{1, 4}, want: 5},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := newOffsetTracker(tt.limit)
			tr.addPartition(tpA, tt.start, -1, noStop)
			for i, s := range tt.steps {
				var pause, resume []topicPartition
				switch s.op {
				case "fetch":
					pause = tr.fetched(positionsOf(tpA, s.offsets...))
				case "ack":
					resume = tr.acked(positionsOf(tpA, s.offsets...))
				case "nack":
				default:
					t.Fatalf("step %d: unknown op %q", i, s.op)
				}
				got, ok := tr.commitPosition(tpA)
				if !ok || got != s.want {
					t.Fatalf("step %d (%s %v): commit position %d, want %d", i, s.op, s.offsets, got, s.want)
				}
				if (len(pause) > 0) != s.pause {
					t.Fatalf("step %d (%s %v): pause %v, want %v", i, s.op, s.offsets, pause, s.pause)
				}
				if (len(resume) > 0) != s.resume {
					t.Fatalf("step %d (%s %v): resume %v, want %v", i, s.op, s.offsets, resume, s.resume)
				}
			}
		})
	}
}

func TestOffsetTrackerPartitionsAreIndependent(t *testing.T) {
	t.Parallel()
	tpB := topicPartition{topic: "a", partition: 1}
	tr := newOffsetTracker(100)
	tr.addPartition(tpA, 0, -1, noStop)
	tr.addPartition(tpB, 50, 50, noStop)
	// One batch spanning both partitions, acked; a second one nacked.
	tr.fetched(append(positionsOf(tpA, 0, 1), positionsOf(tpB, 50, 51)...))
	tr.fetched(append(positionsOf(tpA, 2), positionsOf(tpB, 52)...))
	tr.acked(append(positionsOf(tpA, 0, 1), positionsOf(tpB, 50, 51)...))
	want := map[topicPartition]int64{tpA: 2, tpB: 52}
	if got := tr.uncommitted(); !maps.Equal(got, want) {
		t.Fatalf("uncommitted %v, want %v", got, want)
	}
	tr.markCommitted(tpA, 2)
	tr.markCommitted(tpB, 52)
	if got := tr.uncommitted(); len(got) != 0 {
		t.Fatalf("after commit: uncommitted %v, want none", got)
	}
	tr.acked(positionsOf(tpB, 52))
	if got, want := tr.uncommitted(), map[topicPartition]int64{tpB: 53}; !maps.Equal(got, want) {
		t.Fatalf("uncommitted %v, want %v", got, want)
	}
}

func TestOffsetTrackerUncommittedSkipsCommittedStart(t *testing.T) {
	t.Parallel()
	tr := newOffsetTracker(10)
	tr.addPartition(tpA, 5, 5, noStop)
	if got := tr.uncommitted(); len(got) != 0 {
		t.Fatalf("start at the committed offset: uncommitted %v, want none", got)
	}
	tpB := topicPartition{topic: "b", partition: 0}
	tr.addPartition(tpB, 0, -1, noStop)
	if got, want := tr.uncommitted(), map[topicPartition]int64{tpB: 0}; !maps.Equal(got, want) {
		t.Fatalf("no committed offset: uncommitted %v, want %v", got, want)
	}
}

// TestOffsetTrackerRandomAckOrder checks the contract against a model over
// many random schedules: batches are fetched in order, then acked or nacked
// in random order (nacked ones come back later), and after every event the
// commit position must equal the lowest offset not yet acked (or one past the
// last fetched offset when none is outstanding).
func TestOffsetTrackerRandomAckOrder(t *testing.T) {
	t.Parallel()
	for seed := uint64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		limit := 1 + rng.IntN(40)
		tr := newOffsetTracker(limit)
		tr.addPartition(tpA, 100, -1, noStop)

		next := int64(100)
		outstanding := map[int64]bool{}
		var inFlight [][]int64
		paused := false
		check := func(event string) {
			t.Helper()
			want := next
			for o := range outstanding {
				want = min(want, o)
			}
			got, _ := tr.commitPosition(tpA)
			if got != want {
				t.Fatalf("seed %d after %s: commit position %d, want %d (outstanding %v)", seed, event, got, want, outstanding)
			}
			if u := tr.unacked(tpA); u != len(outstanding) {
				t.Fatalf("seed %d after %s: unacked %d, want %d", seed, event, u, len(outstanding))
			}
		}
		for step := 0; step < 300; step++ {
			if !paused && (len(inFlight) == 0 || rng.IntN(2) == 0) {
				var batch []int64
				for n := 1 + rng.IntN(5); n > 0; n-- {
					next += 1 + int64(rng.IntN(2)) // sometimes a gap
					batch = append(batch, next-1)
					outstanding[next-1] = true
				}
				if len(tr.fetched(positionsOf(tpA, batch...))) > 0 {
					paused = true
				}
				if paused != (len(outstanding) >= limit) {
					t.Fatalf("seed %d: paused %v with %d outstanding, limit %d", seed, paused, len(outstanding), limit)
				}
				inFlight = append(inFlight, batch)
				check("fetch")
				continue
			}
			i := rng.IntN(len(inFlight))
			batch := inFlight[i]
			if rng.IntN(4) == 0 {
				// Nack: the batch stays in flight and will be delivered again.
				check("nack")
				continue
			}
			inFlight = slices.Delete(inFlight, i, i+1)
			for _, o := range batch {
				delete(outstanding, o)
			}
			if len(tr.acked(positionsOf(tpA, batch...))) > 0 {
				paused = false
			}
			if paused != (len(outstanding) >= limit) {
				t.Fatalf("seed %d: paused %v with %d outstanding, limit %d", seed, paused, len(outstanding), limit)
			}
			check("ack")
		}
	}
}

// Acknowledging a batch's positions in runs of a partition (one lookup, one
// walk over the pending records) leaves every partition exactly as
// acknowledging each position on its own does: with batches that interleave
// partitions, hold offsets fetched twice (a client that rewound), skip
// offsets and are acknowledged out of order, or twice.
func TestOffsetTrackerAckedRuns(t *testing.T) {
	t.Parallel()
	tpB := topicPartition{topic: "b", partition: 1}
	rng := rand.New(rand.NewPCG(13, 3))
	for round := range 200 {
		runs, single := newOffsetTracker(1<<20), newOffsetTracker(1<<20)
		for _, tr := range []*offsetTracker{runs, single} {
			tr.addPartition(tpA, 0, -1, noStop)
			tr.addPartition(tpB, 0, -1, noStop)
		}
		next := map[topicPartition]int64{tpA: 0, tpB: 0}
		var batches [][]position
		for range 1 + rng.IntN(8) {
			var b []position
			for range 1 + rng.IntN(4) {
				tp := tpA
				if rng.IntN(2) == 0 {
					tp = tpB
				}
				if rng.IntN(5) == 0 {
					next[tp] -= int64(rng.IntN(4)) // rewound: offsets again
				}
				next[tp] = max(0, next[tp])
				for range 1 + rng.IntN(6) {
					next[tp] += int64(rng.IntN(3)) // gaps: markers, compaction
					b = append(b, position{tp: tp, offset: next[tp]})
					next[tp]++
				}
			}
			for _, tr := range []*offsetTracker{runs, single} {
				tr.fetched(b)
			}
			batches = append(batches, b)
		}
		rng.Shuffle(len(batches), func(i, j int) { batches[i], batches[j] = batches[j], batches[i] })
		if rng.IntN(3) == 0 {
			batches = append(batches, batches[0]) // acknowledged twice
		}
		for i, b := range batches {
			runs.acked(b)
			for _, p := range b {
				single.acked([]position{p})
			}
			for _, tp := range []topicPartition{tpA, tpB} {
				r, s := runs.parts[tp], single.parts[tp]
				if r.commitPosition() != s.commitPosition() || r.unacked != s.unacked ||
					!slices.Equal(r.pending[r.head:], s.pending[s.head:]) {
					t.Fatalf("round %d, after batch %d %v: %v: in runs commit %d unacked %d pending %v, one by one commit %d unacked %d pending %v",
						round, i, b, tp, r.commitPosition(), r.unacked, r.pending[r.head:], s.commitPosition(), s.unacked, s.pending[s.head:])
				}
			}
		}
	}
}
