package watermark

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func mustJoin(t *testing.T, r *Registry, group string, drift time.Duration, tr *Tracker) *Aligner {
	t.Helper()
	a, err := r.Join(AlignmentConfig{Group: group, MaxDrift: drift}, tr)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func wantUpdate(t *testing.T, a *Aligner, wantPause, wantResume []int32) {
	t.Helper()
	pause, resume := a.Update()
	if !slices.Equal(ids(pause), wantPause) || !slices.Equal(ids(resume), wantResume) {
		t.Fatalf("Update: pause %v resume %v, want pause %v resume %v", ids(pause), ids(resume), wantPause, wantResume)
	}
	for _, p := range pause {
		if !p.Paused() {
			t.Fatalf("partition %d returned to pause but not marked paused", p.ID())
		}
	}
	for _, p := range resume {
		if p.Paused() {
			t.Fatalf("partition %d returned to resume but still marked paused", p.ID())
		}
	}
}

func TestAlignmentPausesFastPartitionAndResumesIt(t *testing.T) {
	t.Parallel()
	// Each case feeds (partition, event time) pairs, then runs one Update
	// on the first tracker and checks what it pauses and resumes.
	type feed struct {
		tracker, part int
		ts            int64
	}
	type round struct {
		feed       []feed
		pause      []int32
		resume     []int32
		groupWM    int64
		pausedSeen int // Stats().Paused of tracker 0 after the round
	}
	tests := []struct {
		name   string
		layout []int // partitions per tracker; all trackers join one group
		rounds []round
	}{
		{
			name:   "one source: fast partition paused beyond max drift, resumed when the slow one catches up",
			layout: []int{2},
			rounds: []round{
				{feed: []feed{{0, 0, 10_000}, {0, 1, 11_000}}, groupWM: 9_999},                   // exactly max drift ahead: runs
				{feed: []feed{{0, 1, 11_001}}, pause: []int32{1}, groupWM: 9_999, pausedSeen: 1}, // 1ms more: paused
				{groupWM: 9_999, pausedSeen: 1},                                                  // no change, no news
				{feed: []feed{{0, 0, 10_000}}, groupWM: 9_999, pausedSeen: 1},                    // slow one stays
				{feed: []feed{{0, 0, 10_001}}, resume: []int32{1}, groupWM: 10_000},              // caught up within drift
			},
		},
		{
			name:   "two sources in a group: the slow source holds the fast one",
			layout: []int{2, 1},
			rounds: []round{
				{feed: []feed{{0, 0, 50_000}, {0, 1, 50_500}, {1, 0, 40_000}}, pause: []int32{0, 1}, groupWM: 39_999, pausedSeen: 2},
				{feed: []feed{{1, 0, 49_400}}, resume: []int32{0}, groupWM: 49_399, pausedSeen: 1},
				{feed: []feed{{1, 0, 60_000}}, resume: []int32{1}, groupWM: 49_999},
			},
		},
		{
			name:   "a source without a watermark yet does not count: an empty partition never stalls the group",
			layout: []int{1, 2},
			rounds: []round{
				// Source 1's partition 1 has no record: source 1 has no
				// watermark and is not in the minimum.
				{feed: []feed{{0, 0, 50_000}, {1, 0, 1_000}}, groupWM: 49_999},
				// Once it has one, source 1 holds the group.
				{feed: []feed{{1, 1, 2_000}}, pause: []int32{0}, groupWM: 999, pausedSeen: 1},
				{feed: []feed{{1, 0, 60_000}, {1, 1, 60_000}}, resume: []int32{0}, groupWM: 49_999},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := NewRegistry()
			var trackers []*Tracker
			var parts [][]*Partition
			var aligners []*Aligner
			for _, n := range tt.layout {
				tr := newTracker(t, Config{})
				trackers = append(trackers, tr)
				aligners = append(aligners, mustJoin(t, reg, "g", time.Second, tr))
				var ps []*Partition
				for j := range n {
					ps = append(ps, addPartition(t, tr, "t", int32(j)))
				}
				parts = append(parts, ps)
			}
			for i, r := range tt.rounds {
				for _, f := range r.feed {
					parts[f.tracker][f.part].Observe(f.ts)
				}
				if got, _ := aligners[0].GroupWatermark(); got != r.groupWM {
					t.Fatalf("round %d: group watermark %d, want %d", i, got, r.groupWM)
				}
				wantUpdate(t, aligners[0], r.pause, r.resume)
				if got := trackers[0].Stats().Paused; got != r.pausedSeen {
					t.Fatalf("round %d: %d paused, want %d", i, got, r.pausedSeen)
				}
			}
		})
	}
}

func TestAlignmentAndIdleness(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	tr := newTracker(t, Config{IdleTimeout: 2 * time.Second, Clock: clk})
	reg := NewRegistry()
	a := mustJoin(t, reg, "g", time.Second, tr)
	slow, fast := addPartition(t, tr, "t", 0), addPartition(t, tr, "t", 1)

	slow.Observe(10_000)
	fast.Observe(20_000)
	wantUpdate(t, a, []int32{1}, nil)

	// The paused partition gets no records, but it is not idle: it is
	// silent because we paused it. The slow one keeps going for a while.
	for range 5 {
		clk.Advance(time.Second)
		slow.Observe(10_500)
		tr.Tick()
		wantUpdate(t, a, nil, nil)
	}
	if s := tr.Stats(); s.Idle != 0 || s.Paused != 1 {
		t.Fatalf("stats %+v, want no idle partition and one paused", s)
	}

	// The slow partition stops: once idle it no longer holds the group and
	// the fast one is resumed.
	clk.Advance(time.Second)
	tr.Tick()
	clk.Advance(time.Second)
	if got := tr.Tick(); got != 19_999 {
		t.Fatalf("combined %d after the slow partition went idle, want 19_999", got)
	}
	wantUpdate(t, a, nil, []int32{1})

	// The resumed partition's idle timeout counts from its resumption.
	clk.Advance(time.Second)
	tr.Tick()
	if fast.Idle() {
		t.Fatal("resumed partition idle 1s after resumption")
	}
	clk.Advance(time.Second)
	tr.Tick()
	if !fast.Idle() || !slow.Idle() {
		t.Fatal("want both partitions idle")
	}

	// All idle: nothing is held, nothing paused, the group has no minimum.
	if _, ok := a.GroupWatermark(); ok {
		t.Fatal("group watermark reported while every member is idle")
	}
	wantUpdate(t, a, nil, nil)
}

func TestAlignmentAllIdleResumesEverything(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	reg := NewRegistry()
	fastTr := newTracker(t, Config{IdleTimeout: time.Second, Clock: clk})
	slowTr := newTracker(t, Config{IdleTimeout: time.Second, Clock: clk})
	a := mustJoin(t, reg, "g", 0, fastTr)
	mustJoin(t, reg, "g", 0, slowTr)
	fast := addPartition(t, fastTr, "t", 0)
	slow := addPartition(t, slowTr, "t", 0)
	fast.Observe(2_000)
	slow.Observe(1_000)
	wantUpdate(t, a, []int32{0}, nil)

	slowTr.Tick()
	fastTr.Tick()
	clk.Advance(time.Second)
	slowTr.Tick() // slow source idle: its member no longer counts
	fastTr.Tick() // fast is paused: never idle
	if !slow.Idle() || fast.Idle() {
		t.Fatalf("slow idle %v fast idle %v", slow.Idle(), fast.Idle())
	}
	wantUpdate(t, a, nil, []int32{0})
}

func TestJoinAndLeave(t *testing.T) {
	t.Parallel()
	reg := NewRegistry()
	fastTr, slowTr := newTracker(t, Config{}), newTracker(t, Config{})
	a := mustJoin(t, reg, "g", time.Second, fastTr)
	slowAligner := mustJoin(t, reg, "g", time.Second, slowTr)
	if _, err := reg.Join(AlignmentConfig{Group: "other", MaxDrift: time.Second}, fastTr); !errors.Is(err, ErrAlreadyAligned) {
		t.Fatalf("second Join: %v, want ErrAlreadyAligned", err)
	}
	if _, err := reg.Join(AlignmentConfig{}, newTracker(t, Config{})); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Join without a group: %v, want ErrInvalidConfig", err)
	}
	if got := a.Config().UpdateInterval; got != DefaultUpdateInterval {
		t.Fatalf("default update interval %v", got)
	}

	fast := addPartition(t, fastTr, "t", 0)
	slow := addPartition(t, slowTr, "t", 0)
	fast.Observe(9_000)
	slow.Observe(1_000)
	wantUpdate(t, a, []int32{0}, nil)

	// The slow source closes: it stops holding the group back.
	if resume := slowAligner.Leave(); resume != nil {
		t.Fatalf("slow source had nothing paused, Leave returned %v", ids(resume))
	}
	wantUpdate(t, a, nil, []int32{0})

	// A source leaving with paused partitions gets them back as resumed.
	slowAligner = mustJoin(t, reg, "g", time.Second, slowTr)
	slow2 := addPartition(t, slowTr, "t", 1)
	slow2.Observe(100)
	wantUpdate(t, a, []int32{0}, nil)
	if resume := a.Leave(); !slices.Equal(ids(resume), []int32{0}) || fast.Paused() {
		t.Fatalf("Leave returned %v, paused %v", ids(resume), fast.Paused())
	}
	if pause, resume := slowAligner.Update(); pause != nil || resume != nil {
		t.Fatalf("slow source alone: pause %v resume %v", ids(pause), ids(resume))
	}
}

func TestDefaultRegistryIsShared(t *testing.T) {
	t.Parallel()
	a, b := DefaultRegistry(), DefaultRegistry()
	if a != b || a == nil {
		t.Fatal("DefaultRegistry is not one process-wide registry")
	}
}
