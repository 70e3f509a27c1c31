package kafkasource

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// This file is the progress of a bounded read (stop_at): how far each split
// is from its stop offset, and an estimate of the time left. The owner
// updates it on the bounded read's ticker (every two fetch waits, with the
// quiet check), so the state is the owner's and is not locked.
//
// Records left are counted in offsets, between a split's fetch position and
// its stop offset: an upper bound on the records still to read, exact on a
// topic without transactions or compaction. The time left divides them by
// the smoothed fetch rate of the last ticks.

// progressLogInterval is how often a bounded read logs its progress; a split
// that reaches its stop offset is logged at the next tick.
const progressLogInterval = 10 * time.Second

// progressSplitLines is the most unfinished splits logged one line each at
// info level; with more, their lines are at debug level and the summary
// stands for them.
const progressSplitLines = 16

// progressMetrics are the bounded read's gauges.
type progressMetrics struct {
	// left: offsets from the fetch position to the stop offset, per split
	// (0 once it reached it); with partition_metrics: topic, their sum
	// per topic.
	left    *service.MetricGauge
	byTopic bool
	// seconds: estimated seconds until every split reaches its stop
	// offset; -1 while unknown (no rate yet).
	seconds *service.MetricGauge
}

func newProgressMetrics(m *service.Metrics, mode PartitionMetrics) progressMetrics {
	if mode == PartitionMetricsTopic {
		return progressMetrics{
			left:    m.NewGauge(metricRecordsLeft, labelTopic),
			byTopic: true,
			seconds: m.NewGauge("kafka_source_seconds_left"),
		}
	}
	return progressMetrics{
		left:    m.NewGauge(metricRecordsLeft, labelTopic, labelPartition),
		seconds: m.NewGauge("kafka_source_seconds_left"),
	}
}

// recordsLeft is the last records left of each split and, with
// partition_metrics: topic, their sum per topic: kafka_source_records_left
// is set only when its value changed, and per topic it is the sum, so that
// 10,000 splits are not 10,000 series set at every tick.
type recordsLeft struct {
	byTopic bool
	split   map[topicPartition]int64
	topic   map[string]int64
}

// set records split tp's records left and returns the series to set, its
// labels and value; false if that value did not change.
func (r *recordsLeft) set(tp topicPartition, n int64) ([]string, int64, bool) {
	if r.split == nil {
		r.split, r.topic = map[topicPartition]int64{}, map[string]int64{}
	}
	last, ok := r.split[tp]
	if ok && last == n {
		return nil, 0, false
	}
	r.split[tp] = n
	if !r.byTopic {
		return []string{tp.topic, partitionLabel(tp.partition)}, n, true
	}
	r.topic[tp.topic] += n - last
	return []string{tp.topic}, r.topic[tp.topic], true
}

// setLeft sets kafka_source_records_left for split tp.
func (o *owner) setLeft(tp topicPartition, n int64) {
	p := &o.progress
	p.left.byTopic = o.metrics.progress.byTopic
	if labels, v, ok := p.left.set(tp, n); ok {
		o.metrics.progress.left.Set(v, labels...)
	}
}

// progressState is the owner's view of a bounded read's progress.
type progressState struct {
	est progressEstimate
	// loggedAt is when the progress was last logged, zero before the
	// first tick.
	loggedAt time.Time
	// finished are the splits whose end was logged.
	finished map[topicPartition]bool
	// left is what kafka_source_records_left was set to.
	left recordsLeft
}

// progressEstimate smooths the fetch rate of a bounded read from the
// records left at each tick.
type progressEstimate struct {
	at   time.Time
	left int64
	rate float64 // records per second; 0 while unknown
}

// progressSmoothing is the weight of the newest tick's rate.
const progressSmoothing = 0.3

// update takes the records left at now and returns the estimated time until
// none are left, and false while no rate is known.
func (e *progressEstimate) update(now time.Time, left int64) (time.Duration, bool) {
	if !e.at.IsZero() {
		if dt := now.Sub(e.at).Seconds(); dt > 0 {
			r := float64(max(e.left-left, 0)) / dt
			if e.rate == 0 {
				e.rate = r
			} else {
				e.rate = progressSmoothing*r + (1-progressSmoothing)*e.rate
			}
		}
	}
	e.at, e.left = now, left
	switch {
	case left == 0:
		return 0, true
	case e.rate <= 0:
		return 0, false
	}
	secs := float64(left) / e.rate
	if secs > float64(math.MaxInt64/int64(time.Second)) {
		return 0, false
	}
	return time.Duration(secs * float64(time.Second)), true
}

// splitProgress is one split of a bounded read at a tick.
type splitProgress struct {
	tp         topicPartition
	next, stop int64
	done       bool
}

func (s splitProgress) left() int64 {
	if s.done || s.next >= s.stop {
		return 0
	}
	return s.stop - s.next
}

// boundedSplits returns the splits of the tracker that have a stop offset,
// sorted.
func (t *offsetTracker) boundedSplits() []splitProgress {
	var out []splitProgress
	for tp, po := range t.parts {
		if po.stop != noStop {
			out = append(out, splitProgress{tp: tp, next: po.next, stop: po.stop, done: po.done})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].tp.topic != out[j].tp.topic {
			return out[i].tp.topic < out[j].tp.topic
		}
		return out[i].tp.partition < out[j].tp.partition
	})
	return out
}

// progressFinished logs the splits that just reached their stop offset and
// sets their records left to 0.
func (o *owner) progressFinished(done []topicPartition) {
	p := &o.progress
	if p.finished == nil {
		p.finished = map[topicPartition]bool{}
	}
	// Every split of a bounded read has a stop offset: the tracker's
	// counts answer without a scan of every split at each poll.
	n := len(o.tracker.parts)
	finished := n - o.tracker.undone
	logf := o.splitLog(n)
	for _, tp := range done {
		if p.finished[tp] {
			continue
		}
		p.finished[tp] = true
		o.setLeft(tp, 0)
		stop := int64(noStop)
		if po := o.tracker.parts[tp]; po != nil {
			stop = po.stop
		}
		logf("kafka_source: topic %s partition %d reached its stop offset %d (%d of %d splits done)",
			tp.topic, tp.partition, stop, finished, n)
	}
}

// progressTick updates the bounded read's gauges and, every
// progressLogInterval from the first tick on, logs a summary and a line per
// unfinished split.
func (o *owner) progressTick(now time.Time) {
	p := &o.progress
	if p.loggedAt.IsZero() {
		p.loggedAt = now.Add(-progressLogInterval) // log at the first tick
	}
	splits := o.tracker.boundedSplits()
	var left int64
	var open []splitProgress
	for _, s := range splits {
		n := s.left()
		left += n
		o.setLeft(s.tp, n)
		if n > 0 {
			open = append(open, s)
		}
	}
	eta, known := p.est.update(now, left)
	if known {
		o.metrics.progress.seconds.Set(int64(math.Ceil(eta.Seconds())))
	} else {
		o.metrics.progress.seconds.Set(-1)
	}
	if len(open) == 0 || now.Sub(p.loggedAt) < progressLogInterval {
		return
	}
	p.loggedAt = now
	timeLeft := "time left unknown yet"
	if known {
		timeLeft = fmt.Sprintf("about %s left at %.0f records/s", eta.Round(time.Second), p.est.rate)
	}
	o.log.Infof("kafka_source: bounded read (stop_at: %s): %d of %d splits done, %d records left, %s",
		o.conf.StopAt, len(splits)-len(open), len(splits), left, timeLeft)
	logf := o.splitLog(len(open))
	for _, s := range open {
		logf("kafka_source: topic %s partition %d at offset %d, stop offset %d: %d records left",
			s.tp.topic, s.tp.partition, s.next, s.stop, s.left())
	}
}

// splitLog is the log function for per-split progress lines among n:
// info for a few, debug for many.
func (o *owner) splitLog(n int) func(string, ...any) {
	if n <= progressSplitLines {
		return o.log.Infof
	}
	return o.log.Debugf
}
