package watermark

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestBoundedOutOfOrderness(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		bound  time.Duration
		events []int64
		want   []int64 // watermark after each event
	}{
		{
			name:   "no bound: max - 1ms",
			events: []int64{1000, 2000},
			want:   []int64{999, 1999},
		},
		{
			name:   "out of order within bound never lowers it",
			bound:  5 * time.Second,
			events: []int64{10_000, 7_000, 12_000, 6_000, 12_000},
			want:   []int64{4_999, 4_999, 6_999, 6_999, 6_999},
		},
		{
			name:   "sub-millisecond bound truncates",
			bound:  1500 * time.Microsecond,
			events: []int64{100},
			want:   []int64{98},
		},
		{
			name:   "underflow saturates at NoWatermark",
			bound:  time.Second,
			events: []int64{math.MinInt64 + 1000, math.MinInt64 + 1001, math.MinInt64 + 1002},
			want:   []int64{NoWatermark, NoWatermark, math.MinInt64 + 1},
		},
		{
			name:   "negative event times are event times",
			events: []int64{-5},
			want:   []int64{-6},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := NewBoundedOutOfOrderness(tt.bound)
			if got := g.Watermark(); got != NoWatermark {
				t.Fatalf("before any event: watermark %d, want NoWatermark", got)
			}
			for i, ev := range tt.events {
				g.Observe(ev)
				if got := g.Watermark(); got != tt.want[i] {
					t.Errorf("after event %d (%d): watermark %d, want %d", i, ev, got, tt.want[i])
				}
			}
		})
	}
}

func TestConfigValidateCollectsEveryProblem(t *testing.T) {
	t.Parallel()
	err := Config{MaxOutOfOrderness: -1, IdleTimeout: -1, EmitInterval: -1}.Validate()
	if err == nil {
		t.Fatal("want error")
	}
	for _, field := range []string{"max_out_of_orderness", "idle_timeout", "emit_interval"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error %q does not name %s", err, field)
		}
	}
	if _, err := NewTracker(Config{IdleTimeout: -time.Second}); err == nil {
		t.Error("NewTracker accepted a negative idle_timeout")
	}

	err = AlignmentConfig{MaxDrift: -1, UpdateInterval: -1}.Validate()
	for _, field := range []string{"alignment.group", "alignment.max_drift", "alignment.update_interval"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("error %v does not name %s", err, field)
		}
	}

	tr := newTracker(t, Config{})
	if got := tr.Config().EmitInterval; got != DefaultEmitInterval {
		t.Errorf("default emit interval %v", got)
	}
}
