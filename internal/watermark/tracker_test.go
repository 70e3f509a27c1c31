package watermark

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// step is one event in a scenario: a record on a partition, or a Tick after
// advancing the fake clock. Each checks the combined watermark after it.
type step struct {
	// A record: partition index and event time (Unix ms).
	part int
	ts   int64
	late bool // want: late against the combined watermark

	// Or a Tick after advancing the clock by advance.
	tick    bool
	advance time.Duration
	idle    int // want: idle partitions after the tick

	wm int64 // want: combined watermark after the step
}

func rec(part int, ts int64, wantWM int64, wantLate bool) step {
	return step{part: part, ts: ts, wm: wantWM, late: wantLate}
}

func tick(advance time.Duration, wantWM int64, wantIdle int) step {
	return step{tick: true, advance: advance, wm: wantWM, idle: wantIdle}
}

func TestTrackerScenarios(t *testing.T) {
	t.Parallel()
	const s = time.Second
	tests := []struct {
		name       string
		cfg        Config
		partitions int
		steps      []step
	}{
		{
			name:       "out of order within bounds is on time; beyond is late",
			cfg:        Config{MaxOutOfOrderness: 5 * s},
			partitions: 1,
			steps: []step{
				rec(0, 10_000, 4_999, false),
				rec(0, 6_000, 4_999, false), // 4s behind the max: within bounds
				rec(0, 5_000, 4_999, false), // exactly the bound: on time
				rec(0, 4_999, 4_999, true),  // at the watermark: late
				rec(0, 12_000, 6_999, false),
				rec(0, 1_000, 6_999, true),
			},
		},
		{
			name:       "combined is the minimum over partitions",
			partitions: 3,
			steps: []step{
				rec(0, 1_000, NoWatermark, false), // 1 and 2 have no watermark yet
				rec(1, 3_000, NoWatermark, false),
				rec(2, 2_000, 999, false),
				rec(0, 5_000, 1_999, false),
				rec(2, 9_000, 2_999, false),
				rec(1, 2_500, 2_999, true),
			},
		},
		{
			name:       "one partition idle then active again",
			cfg:        Config{IdleTimeout: 2 * s},
			partitions: 2,
			steps: []step{
				rec(0, 1_000, NoWatermark, false),
				rec(1, 1_000, 999, false),
				tick(s, 999, 0), // both seen at +1s
				rec(0, 10_000, 999, false),
				tick(s, 999, 0), // partition 1 silent for 1s: still holds
				rec(0, 11_000, 999, false),
				tick(s, 10_999, 1), // silent for 2s: idle, combined jumps to partition 0
				rec(0, 20_000, 19_999, false),
				tick(10*s, 19_999, 1),
				// Partition 1 returns behind the combined watermark: its
				// record is late, it is active again, and the combined
				// watermark does not go back.
				rec(1, 5_000, 19_999, true),
				tick(s, 19_999, 0),
				rec(0, 30_000, 19_999, false), // partition 1 holds it again
				rec(1, 19_000, 19_999, true),
				rec(1, 25_000, 24_999, false), // and releases it as it catches up
				rec(0, 31_000, 24_999, false),
				rec(1, 40_000, 30_999, false),
			},
		},
		{
			name:       "all idle: combined stays where it was",
			cfg:        Config{IdleTimeout: s},
			partitions: 2,
			steps: []step{
				rec(0, 5_000, NoWatermark, false),
				rec(1, 3_000, 2_999, false),
				tick(s, 2_999, 0),
				tick(s, 2_999, 2),
				tick(time.Hour, 2_999, 2),
				// Partition 0 is back: its own watermark (4_999) is the
				// only one active now, so the combined watermark moves up
				// to it, but the record is late against the old value.
				rec(0, 2_000, 4_999, true),
				rec(0, 6_000, 5_999, false),
				tick(s, 5_999, 1),
			},
		},
		{
			name:       "idleness disabled: a silent partition holds forever",
			partitions: 2,
			steps: []step{
				rec(0, 5_000, NoWatermark, false),
				rec(1, 3_000, 2_999, false),
				tick(time.Hour, 2_999, 0),
				rec(0, 50_000, 2_999, false),
				tick(time.Hour, 2_999, 0),
			},
		},
		{
			name:       "a partition that never gets a record holds until idle",
			cfg:        Config{IdleTimeout: 3 * s},
			partitions: 2,
			steps: []step{
				rec(0, 5_000, NoWatermark, false),
				tick(2*s, NoWatermark, 0),
				tick(s, 4_999, 1), // 3s since assignment
			},
		},
		{
			name:       "idle exactly at the timeout, measured from the last tick that saw a record",
			cfg:        Config{IdleTimeout: 500 * time.Millisecond},
			partitions: 2,
			steps: []step{
				rec(0, 1_000, NoWatermark, false),
				rec(1, 1_000, 999, false),
				tick(200*time.Millisecond, 999, 0),
				rec(0, 2_000, 999, false),
				tick(200*time.Millisecond, 999, 0),
				rec(0, 3_000, 999, false),
				tick(200*time.Millisecond, 999, 0), // 400ms
				rec(0, 4_000, 999, false),
				tick(100*time.Millisecond, 3_999, 1), // 500ms
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			runSteps(t, tt.cfg, tt.partitions, tt.steps)
		})
	}
}

func runSteps(t *testing.T, cfg Config, partitions int, steps []step) {
	t.Helper()
	clk := newFakeClock()
	cfg.Clock = clk
	tr := newTracker(t, cfg)
	ps := make([]*Partition, partitions)
	for i := range ps {
		ps[i] = addPartition(t, tr, "t", int32(i))
	}
	for i, st := range steps {
		if st.tick {
			clk.Advance(st.advance)
			if got := tr.Tick(); got != st.wm {
				t.Fatalf("step %d (tick +%v): combined %d, want %d", i, st.advance, got, st.wm)
			}
			if got := tr.Stats().Idle; got != st.idle {
				t.Fatalf("step %d (tick +%v): %d idle partitions, want %d", i, st.advance, got, st.idle)
			}
		} else {
			wm, late := ps[st.part].Observe(st.ts)
			if wm != st.wm || late != st.late {
				t.Fatalf("step %d (partition %d, event %d): combined %d late %v, want %d late %v",
					i, st.part, st.ts, wm, late, st.wm, st.late)
			}
		}
		if got := tr.Watermark(); got != st.wm {
			t.Fatalf("step %d: Watermark() %d, want %d", i, got, st.wm)
		}
	}
}

func TestPartitionSizeAvoidsFalseSharing(t *testing.T) {
	t.Parallel()
	if got := unsafe.Sizeof(Partition{}); got != 128 {
		t.Fatalf("Partition is %d bytes; adjust its padding to 128", got)
	}
}

func TestAddRejectsDuplicates(t *testing.T) {
	t.Parallel()
	tr := newTracker(t, Config{})
	addPartition(t, tr, "orders", 3)
	_, err := tr.Add("orders", 3)
	if !errors.Is(err, ErrPartitionExists) {
		t.Fatalf("duplicate Add: %v, want ErrPartitionExists", err)
	}
	if _, err := tr.Add("payments", 3); err != nil {
		t.Fatalf("same number, other topic: %v", err)
	}
}

// The partitions of one source may be spread over several readers; a reader
// whose partitions are all revoked (or that never had any) must not hold the
// combined watermark back.
func TestReaderWithNoPartitions(t *testing.T) {
	t.Parallel()

	t.Run("revoking a reader's partitions releases the combined watermark", func(t *testing.T) {
		t.Parallel()
		tr := newTracker(t, Config{})
		readerA := []*Partition{addPartition(t, tr, "t", 0), addPartition(t, tr, "t", 1)}
		readerB := []*Partition{addPartition(t, tr, "t", 2)}
		readerA[0].Observe(50_000)
		readerA[1].Observe(60_000)
		readerB[0].Observe(10_000)
		if got := tr.Watermark(); got != 9_999 {
			t.Fatalf("combined %d, want 9_999 (held by reader B)", got)
		}
		tr.Remove(readerB[0]) // reader B now owns nothing
		if got := tr.Watermark(); got != 49_999 {
			t.Fatalf("after revoking reader B's partition: combined %d, want 49_999", got)
		}
		tr.Remove(readerA[0])
		if got := tr.Watermark(); got != 59_999 {
			t.Fatalf("after revoking partition 0: combined %d, want 59_999", got)
		}
		tr.Remove(readerA[1])
		tr.Remove(readerA[1]) // twice is harmless
		if got := tr.Tick(); got != 59_999 {
			t.Fatalf("no partitions at all: combined %d, want it to stay at 59_999", got)
		}
		if s := tr.Stats(); s != (Stats{Watermark: 59_999}) {
			t.Fatalf("stats %+v", s)
		}
		// A newly assigned partition holds it but never pulls it back.
		p := addPartition(t, tr, "t", 0)
		if wm, late := p.Observe(40_000); wm != 59_999 || !late {
			t.Fatalf("record behind the combined watermark: %d late %v, want 59_999 late", wm, late)
		}
		if wm, _ := p.Observe(70_000); wm != 69_999 {
			t.Fatalf("combined %d, want 69_999", wm)
		}
	})

	t.Run("a source with no partitions does not hold back its alignment group", func(t *testing.T) {
		t.Parallel()
		reg := NewRegistry()
		empty := newTracker(t, Config{})
		busy := newTracker(t, Config{})
		if _, err := reg.Join(AlignmentConfig{Group: "g", MaxDrift: time.Second}, empty); err != nil {
			t.Fatal(err)
		}
		a, err := reg.Join(AlignmentConfig{Group: "g", MaxDrift: time.Second}, busy)
		if err != nil {
			t.Fatal(err)
		}
		p := addPartition(t, busy, "t", 0)
		p.Observe(100_000)
		if lo, ok := a.GroupWatermark(); !ok || lo != 99_999 {
			t.Fatalf("group watermark %d ok %v, want 99_999 true", lo, ok)
		}
		if pause, resume := a.Update(); pause != nil || resume != nil {
			t.Fatalf("pause %v resume %v, want nothing", ids(pause), ids(resume))
		}
	})
}

func TestStats(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	tr := newTracker(t, Config{IdleTimeout: time.Second, Clock: clk})
	p0 := addPartition(t, tr, "a", 0)
	addPartition(t, tr, "b", 7)
	p0.Observe(1_000)
	clk.Advance(time.Second)
	tr.Tick()
	got := tr.AppendPartitionStats(nil)
	want := []PartitionStats{
		{Topic: "a", Partition: 0, Watermark: 999},
		{Topic: "b", Partition: 7, Watermark: NoWatermark, Idle: true},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("partition stats %+v, want %+v", got, want)
	}
	if s := tr.Stats(); s != (Stats{Watermark: 999, Partitions: 2, Idle: 1}) {
		t.Fatalf("stats %+v", s)
	}
}

// Several readers feed their own partitions while a ticker re-evaluates
// idleness. Invariants: the combined watermark never decreases, never
// exceeds any partition's watermark, and once everything is fed and ticked
// it equals the minimum.
func TestConcurrentReaders(t *testing.T) {
	t.Parallel()
	const (
		readers    = 4
		perReader  = 3
		records    = 20_000
		maxOOO     = 50
		outOfOrder = 200 * time.Millisecond
	)
	tr := newTracker(t, Config{MaxOutOfOrderness: outOfOrder})
	var parts [readers][]*Partition
	for r := range readers {
		for i := range perReader {
			parts[r] = append(parts[r], addPartition(t, tr, "t", int32(r*perReader+i)))
		}
	}

	done := make(chan struct{})
	var ticker sync.WaitGroup
	ticker.Add(1)
	go func() {
		defer ticker.Done()
		last := NoWatermark
		for {
			select {
			case <-done:
				return
			default:
			}
			c := tr.Tick()
			if c < last {
				t.Errorf("combined went back from %d to %d", last, c)
				return
			}
			last = c
			for _, ps := range parts {
				for _, p := range ps {
					if w := p.Watermark(); w < c {
						t.Errorf("combined %d above partition %d's watermark %d", c, p.ID(), w)
						return
					}
				}
			}
		}
	}()

	var feeders sync.WaitGroup
	for r := range readers {
		feeders.Add(1)
		go func() {
			defer feeders.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 1))
			last := NoWatermark
			for i := range records {
				p := parts[r][i%perReader]
				ts := int64(i*10+r) - rng.Int64N(maxOOO)
				wm, _ := p.Observe(ts)
				if wm < last {
					t.Errorf("reader %d: combined went back from %d to %d", r, last, wm)
					return
				}
				last = wm
			}
		}()
	}
	feeders.Wait()
	close(done)
	ticker.Wait()

	lo := int64(1 << 62)
	for _, ps := range parts {
		for _, p := range ps {
			lo = min(lo, p.Watermark())
		}
	}
	if got := tr.Tick(); got != lo {
		t.Fatalf("final combined %d, want the minimum %d", got, lo)
	}
}

// Readers, a ticker with idleness, an aligner and partition churn all at
// once: run under -race; the combined watermark must never go back.
func TestConcurrentTickAlignAndChurn(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	tr := newTracker(t, Config{IdleTimeout: 50 * time.Millisecond, Clock: clk})
	other := newTracker(t, Config{Clock: clk})
	reg := NewRegistry()
	a := mustJoin(t, reg, "g", 10*time.Millisecond, tr)
	mustJoin(t, reg, "g", 10*time.Millisecond, other)
	slow := addPartition(t, other, "slow", 0)

	const readers = 3
	parts := make([]*Partition, readers)
	for r := range parts {
		parts[r] = addPartition(t, tr, "t", int32(r))
	}
	done := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(2)
	go func() { // owner goroutine: ticks, alignment, churn
		defer bg.Done()
		last := NoWatermark
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			clk.Advance(10 * time.Millisecond)
			c := tr.Tick()
			if c < last {
				t.Errorf("combined went back from %d to %d", last, c)
				return
			}
			last = c
			a.Update()
			_ = tr.Stats()
			_ = tr.AppendPartitionStats(nil)
			if i%7 == 0 {
				p, err := tr.Add("churn", int32(i))
				if err != nil {
					t.Error(err)
					return
				}
				p.Observe(int64(i))
				tr.Remove(p)
			}
		}
	}()
	go func() { // a slow source in the same group
		defer bg.Done()
		for i := int64(0); ; i++ {
			select {
			case <-done:
				return
			default:
			}
			slow.Observe(i)
			other.Tick()
		}
	}()

	var feeders sync.WaitGroup
	for r := range readers {
		feeders.Add(1)
		go func() {
			defer feeders.Done()
			last := NoWatermark
			for i := range 20_000 {
				if r == 0 && i%1000 < 500 {
					continue // partition 0 goes quiet now and then
				}
				wm, _ := parts[r].Observe(int64(i))
				if wm < last {
					t.Errorf("reader %d: combined went back from %d to %d", r, last, wm)
					return
				}
				last = wm
			}
		}()
	}
	feeders.Wait()
	close(done)
	bg.Wait()
}

// RemoveAll takes several partitions out at once, ignoring those not
// tracked (removed already, or replaced by a new Add of the same
// partition), and the combined watermark advances past them.
func TestRemoveAll(t *testing.T) {
	t.Parallel()
	tr := newTracker(t, Config{})
	ps := make([]*Partition, 5)
	for i := range ps {
		ps[i] = addPartition(t, tr, "t", int32(i))
		ps[i].Observe(int64(10_000 * (i + 1)))
	}
	if got := tr.Watermark(); got != 9_999 {
		t.Fatalf("combined %d, want 9_999", got)
	}
	tr.Remove(ps[4])
	again := addPartition(t, tr, "t", 4) // a new partition 4, not ps[4]
	again.Observe(90_000)
	tr.RemoveAll(ps[0], ps[1], ps[4], ps[1])
	if got := tr.Watermark(); got != 29_999 {
		t.Fatalf("after RemoveAll of partitions 0 and 1: combined %d, want 29_999", got)
	}
	if got := tr.Stats().Partitions; got != 3 {
		t.Fatalf("%d partitions tracked, want 3 (2, 3 and the new 4: removing the old 4 again must not remove the new one)", got)
	}
	if _, err := tr.Add("t", 4); !errors.Is(err, ErrPartitionExists) {
		t.Fatalf("Add of the new partition 4 again: %v, want ErrPartitionExists", err)
	}
	if _, err := tr.Add("t", 0); err != nil {
		t.Fatalf("Add of a removed partition: %v", err)
	}
}

// Adding 10,000 partitions one by one, then removing them in batches (as a
// bounded read's partitions finish), costs memory in proportion to the
// partitions: each Add used to copy the whole list (400 MB for 10,000).
// Not parallel: it reads the process's allocation counter.
func TestManyPartitionsAllocateLinearly(t *testing.T) {
	const n = 10_000
	tr := newTracker(t, Config{})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ps := make([]*Partition, n)
	for i := range ps {
		ps[i] = addPartition(t, tr, fmt.Sprintf("topic-%d", i/100), int32(i%100))
	}
	for i := 0; i < n; i += 100 {
		tr.RemoveAll(ps[i : i+100]...)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 32<<20 {
		t.Fatalf("adding and removing %d partitions allocated %d MiB, want under 32 MiB (linear, not quadratic)", n, got>>20)
	}
	if got := tr.Stats().Partitions; got != 0 {
		t.Fatalf("%d partitions left, want 0", got)
	}
}

// Snapshots that readers iterate lock-free must not see partitions added
// after they were taken, even though Add appends in place.
func TestAddKeepsSnapshots(t *testing.T) {
	t.Parallel()
	tr := newTracker(t, Config{})
	for i := range 3 {
		addPartition(t, tr, "t", int32(i))
	}
	snap := *tr.parts.Load()
	for i := 3; i < 100; i++ {
		addPartition(t, tr, "t", int32(i))
	}
	if len(snap) != 3 || snap[0].ID() != 0 || snap[2].ID() != 2 {
		t.Fatalf("snapshot changed: %v", ids(snap))
	}
	if got := len(*tr.parts.Load()); got != 100 {
		t.Fatalf("%d partitions, want 100", got)
	}
}
