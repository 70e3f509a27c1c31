package watermark

import (
	"slices"
	"testing"
	"time"
)

// stallStep is one event of a stall scenario: a record on a partition, or
// a Tick after advancing the fake clock, followed by CheckStall.
type stallStep struct {
	part int
	ts   int64

	tick    bool
	advance time.Duration
	// want after the tick: the partitions held to blame and whether
	// CheckStall warns.
	held []int32
	warn bool
}

func srec(part int, ts int64) stallStep { return stallStep{part: part, ts: ts} }

func stick(advance time.Duration, warn bool, held ...int32) stallStep {
	return stallStep{tick: true, advance: advance, held: held, warn: warn}
}

// ticks is n ticks of d with no warning and nothing held.
func ticks(n int, d time.Duration) []stallStep {
	out := make([]stallStep, n)
	for i := range out {
		out[i] = stick(d, false)
	}
	return out
}

func TestCheckStall(t *testing.T) {
	t.Parallel()
	const (
		s    = time.Second
		tick = 200 * time.Millisecond
	)
	tests := []struct {
		name       string
		cfg        Config
		partitions int
		steps      [][]stallStep
	}{
		{
			name:       "a partition that never gets a record: warned once after stall_warning",
			cfg:        Config{StallWarning: 10 * s},
			partitions: 2,
			steps: [][]stallStep{
				{srec(0, 5_000)},
				ticks(49, tick), // 9.8s: not yet
				{
					stick(tick, true, 1),  // 10s: warned, naming partition 1
					stick(tick, false, 1), // still held, not warned again
					srec(0, 9_000),        // partition 0 moves on; the combined watermark does not
					stick(time.Hour, false, 1),
				},
			},
		},
		{
			name:       "a new episode once the watermark advanced",
			cfg:        Config{StallWarning: 10 * s},
			partitions: 2,
			steps: [][]stallStep{
				{srec(0, 5_000), srec(1, 3_000), stick(10*s, false), stick(s, false)},
				{srec(0, 20_000), stick(s, false), stick(9*s, true, 1), stick(s, false, 1)},
				// Partition 1 comes back: the watermark advances, the
				// episode ends; silent again, it is warned again.
				{srec(1, 15_000), stick(s, false), stick(5*s, false), stick(5*s, true, 1), stick(s, false, 1)},
			},
		},
		{
			name:       "a partition with records whose event times lag is not silent",
			cfg:        Config{StallWarning: 10 * s},
			partitions: 2,
			steps: [][]stallStep{
				{srec(0, 50_000), srec(1, 1_000), stick(5*s, false)},
				{srec(1, 1_000), stick(5*s, false), srec(1, 1_000), stick(5*s, false), srec(1, 1_000), stick(5*s, false)},
			},
		},
		{
			name:       "every partition silent at the same watermark: nothing ahead, nothing to blame",
			cfg:        Config{StallWarning: 10 * s},
			partitions: 2,
			steps: [][]stallStep{
				{srec(0, 5_000), srec(1, 5_000), stick(time.Hour, false), stick(time.Hour, false)},
			},
		},
		{
			name:       "no data at all: nothing ahead",
			cfg:        Config{StallWarning: 10 * s},
			partitions: 3,
			steps:      [][]stallStep{{stick(time.Hour, false)}},
		},
		{
			name:       "two silent partitions at the minimum are both named",
			cfg:        Config{StallWarning: 10 * s},
			partitions: 3,
			steps: [][]stallStep{
				{srec(1, 5_000), stick(10*s, true, 0, 2), stick(s, false, 0, 2)},
			},
		},
		{
			name:       "idle_timeout below stall_warning: the partition goes idle, the watermark moves, no warning",
			cfg:        Config{StallWarning: 10 * s, IdleTimeout: 5 * s},
			partitions: 2,
			steps: [][]stallStep{
				{srec(0, 5_000), stick(5*s, false), stick(5*s, false), stick(time.Hour, false)},
			},
		},
		{
			name:       "stall_warning 0 is off",
			partitions: 2,
			steps:      [][]stallStep{{srec(0, 5_000), stick(time.Hour, false), stick(time.Hour, false)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			cfg := tt.cfg
			cfg.Clock = clk
			tr := newTracker(t, cfg)
			ps := make([]*Partition, tt.partitions)
			for i := range ps {
				ps[i] = addPartition(t, tr, "t", int32(i))
			}
			warnings := 0
			var elapsed time.Duration
			for i, st := range slices.Concat(tt.steps...) {
				if !st.tick {
					ps[st.part].Observe(st.ts)
					continue
				}
				clk.Advance(st.advance)
				elapsed += st.advance
				tr.Tick()
				got, warn := tr.CheckStall()
				var held []int32
				for _, h := range got.Held {
					held = append(held, h.Partition)
				}
				if warn != st.warn || !slices.Equal(held, st.held) {
					t.Fatalf("step %d (at +%v): warn %v held %v, want warn %v held %v (stall %+v)", i, elapsed, warn, held, st.warn, st.held, got)
				}
				if warn {
					warnings++
				}
				if got.Watermark != tr.Watermark() {
					t.Fatalf("step %d: stall watermark %d, combined %d", i, got.Watermark, tr.Watermark())
				}
				for _, h := range got.Held {
					if h.Silent < cfg.StallWarning || h.Watermark > got.Watermark || h.Topic != "t" {
						t.Fatalf("step %d: held %+v: want silent at least %v at or below %d", i, h, cfg.StallWarning, got.Watermark)
					}
				}
			}
		})
	}
}

// TestCheckStallReportsHowLong: the stall says how long the watermark stood
// still and each held partition how long it has been silent.
func TestCheckStallReportsHowLong(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	tr := newTracker(t, Config{StallWarning: time.Minute, Clock: clk})
	p0 := addPartition(t, tr, "a", 0)
	clk.Advance(30 * time.Second)
	addPartition(t, tr, "b", 3) // added later: silent since then
	p0.Observe(70_000)
	clk.Advance(90 * time.Second)
	tr.Tick()
	st, warn := tr.CheckStall()
	want := Stall{Watermark: NoWatermark, For: 2 * time.Minute, Held: []HeldPartition{{Topic: "b", Partition: 3, Watermark: NoWatermark, Silent: 90 * time.Second}}}
	if !warn || st.Watermark != want.Watermark || st.For != want.For || !slices.Equal(st.Held, want.Held) {
		t.Fatalf("CheckStall() = %+v, %v; want %+v, true", st, warn, want)
	}
}

func TestPausedPartitionIsNotSilent(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	tr := newTracker(t, Config{StallWarning: time.Second, Clock: clk})
	p0 := addPartition(t, tr, "t", 0)
	p1 := addPartition(t, tr, "t", 1)
	p0.Observe(1_000)
	p1.Observe(1_000)
	p0.Observe(9_000)
	p1.paused.Store(true) // as an Aligner pauses it
	for range 3 {
		clk.Advance(time.Second)
		tr.Tick()
		if st, warn := tr.CheckStall(); warn || len(st.Held) > 0 {
			t.Fatalf("paused partition blamed: %+v", st)
		}
	}
}
