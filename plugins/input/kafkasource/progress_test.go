package kafkasource

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/metricdoc/metrictest"
)

// The estimate is unknown until two ticks give a rate, follows the smoothed
// rate, and is zero when nothing is left.
func TestProgressEstimate(t *testing.T) {
	t.Parallel()
	var e progressEstimate
	t0 := time.Unix(1000, 0)
	if _, known := e.update(t0, 10_000); known {
		t.Fatal("an estimate from one tick")
	}
	// 1,000 records a second: 9,000 left is 9s.
	eta, known := e.update(t0.Add(time.Second), 9_000)
	if !known || eta != 9*time.Second {
		t.Fatalf("eta %v (%v), want 9s", eta, known)
	}
	// A tick at 3,000 records a second moves the rate by the smoothing
	// weight: 0.3*3000 + 0.7*1000 = 1600/s; 6,000 left is 3.75s.
	eta, known = e.update(t0.Add(2*time.Second), 6_000)
	if !known || eta != 3750*time.Millisecond {
		t.Fatalf("eta %v (%v), want 3.75s", eta, known)
	}
	// A stalled tick lowers the rate but keeps an estimate.
	eta, known = e.update(t0.Add(3*time.Second), 6_000)
	secs, rate := 6000.0, 0.3*0+0.7*1600
	if want := time.Duration(secs / rate * float64(time.Second)); !known || eta != want {
		t.Fatalf("eta %v (%v), want %v", eta, known, want)
	}
	if eta, known := e.update(t0.Add(4*time.Second), 0); !known || eta != 0 {
		t.Fatalf("nothing left: eta %v (%v), want 0", eta, known)
	}
	// No progress at all: no estimate.
	var stuck progressEstimate
	stuck.update(t0, 50)
	if _, known := stuck.update(t0.Add(time.Second), 50); known {
		t.Fatal("an estimate without progress")
	}
}

func TestBoundedSplits(t *testing.T) {
	t.Parallel()
	tr := newOffsetTracker(100)
	tr.addPartition(tpT(1), 10, -1, 50)
	tr.addPartition(tpT(0), 5, -1, 5)
	tr.addPartition(topicPartition{topic: "u", partition: 0}, 0, -1, noStop)
	tr.fetched([]position{{tp: tpT(1), offset: 10}, {tp: tpT(1), offset: 11}})
	got := tr.boundedSplits()
	if len(got) != 2 || got[0].tp != tpT(0) || got[1].tp != tpT(1) {
		t.Fatalf("splits %+v, want t/0 and t/1 (u/0 has no stop offset)", got)
	}
	if got[0].left() != 0 || !got[0].done {
		t.Errorf("t/0 starts at its stop offset: %+v left %d", got[0], got[0].left())
	}
	if got[1].left() != 38 {
		t.Errorf("t/1 at offset 12 of 50: left %d, want 38", got[1].left())
	}
}

// kafka_source_records_left follows partition_metrics: per split, or with
// topic one series per topic, the sum of its splits; a value that did not
// change is not set again.
func TestRecordsLeftSums(t *testing.T) {
	t.Parallel()
	type set struct {
		tp     topicPartition
		n      int64
		labels []string
		value  int64
		ok     bool
	}
	u0 := topicPartition{topic: "u", partition: 0}
	for _, tt := range []struct {
		byTopic bool
		sets    []set
	}{
		{byTopic: false, sets: []set{
			{tpT(0), 10, []string{"t", "0"}, 10, true},
			{tpT(1), 5, []string{"t", "1"}, 5, true},
			{tpT(0), 10, nil, 0, false},
			{tpT(0), 0, []string{"t", "0"}, 0, true},
		}},
		{byTopic: true, sets: []set{
			{tpT(0), 10, []string{"t"}, 10, true},
			{tpT(1), 5, []string{"t"}, 15, true},
			{u0, 7, []string{"u"}, 7, true},
			{tpT(0), 10, nil, 0, false},
			{tpT(0), 3, []string{"t"}, 8, true},
			{tpT(1), 0, []string{"t"}, 3, true},
			{tpT(0), 0, []string{"t"}, 0, true},
			{tpT(2), 0, []string{"t"}, 0, true},
		}},
	} {
		r := recordsLeft{byTopic: tt.byTopic}
		for i, s := range tt.sets {
			labels, v, ok := r.set(s.tp, s.n)
			if ok != s.ok || v != s.value || !slices.Equal(labels, s.labels) {
				t.Errorf("byTopic %v, set %d (%v to %d): %v %d %v, want %v %d %v", tt.byTopic, i, s.tp, s.n, labels, v, ok,
					s.labels, s.value, s.ok)
			}
		}
	}
}

// A bounded read's kafka_source_records_left carries a partition label with
// partition_metrics: partition and none with topic (at 10,000 partitions,
// 10,000 series that the field is there to avoid), and ends at 0.
func TestRecordsLeftFollowsPartitionMetrics(t *testing.T) {
	t.Parallel()
	for _, mode := range []PartitionMetrics{PartitionMetricsPartition, PartitionMetricsTopic} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			_, addr := newFakeClusterOf(t, 4)
			for p := range int32(4) {
				produceN(t, addr, "t", 3+int(p), p)
			}
			want := []string{metrictest.Key(metricRecordsLeft, "topic", "t")}
			if mode == PartitionMetricsPartition {
				want = nil
				for p := range 4 {
					want = append(want, metrictest.Key(metricRecordsLeft, "topic", "t", "partition", fmt.Sprint(p)))
				}
			}
			rec := recordedStream(t, sourceYAML(addr, "g", "start_from: earliest", "stop_at: latest",
				"partition_metrics: "+string(mode)))
			eventually.True(t, testTimeout, "every record counted and every split at its stop offset", func() bool {
				return rec.Total("kafka_source_records_received") == 18 && slices.Equal(rec.Series(metricRecordsLeft), want) &&
					rec.Total(metricRecordsLeft) == 0
			})
		})
	}
}
