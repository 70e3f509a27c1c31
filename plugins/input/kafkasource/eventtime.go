package kafkasource

import (
	"fmt"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/table"
	"github.com/connectd/connectd/internal/watermark"
)

// This file is event time and watermarks at run time (watermark.go reads
// their configuration). The watermark partitions and the alignment pauses
// are the owner's: it observes each record's event time as the record is
// handed out (nextReq), so that the watermark a message carries follows the
// order messages leave the input; with several readers a batch fetched
// later can be handed out earlier, and a watermark computed at fetch time
// would run ahead of records not yet handed out, making them late
// downstream. When the event time comes from the message (a column of the
// table row, or the watermark expression) the reader computes it as it
// builds the batch (fetchedBatch.prepare), and ReadBatch hands it to the
// owner with the batch (nextReq).

// wmStamp is what a record's metadata says about event time: computed once
// when the record is first delivered and kept for redeliveries (a replayed
// record is not observed again, and is not late for having been nacked).
type wmStamp struct {
	eventTime int64
	watermark int64
	late      bool
	none      bool // no event time (none from the message): nothing set
}

// wmMetrics are the watermark metrics of a source.
type wmMetrics struct {
	watermark    *service.MetricGauge
	watermarkLag *service.MetricGauge
	eventLag     *service.MetricGauge
	idle         *service.MetricGauge
	alignPaused  *service.MetricGauge
	held         *service.MetricGauge
	late         *service.MetricCounter
}

func newWMMetrics(m *service.Metrics) wmMetrics {
	return wmMetrics{
		watermark:    m.NewGauge("kafka_source_watermark_ms"),
		watermarkLag: m.NewGauge("kafka_source_watermark_lag_ms"),
		eventLag:     m.NewGauge("kafka_source_event_time_lag_ms"),
		idle:         m.NewGauge("kafka_source_idle_partitions"),
		alignPaused:  m.NewGauge("kafka_source_alignment_paused_partitions"),
		held:         m.NewGauge("kafka_source_watermark_held_partitions"),
		late:         m.NewCounter("kafka_source_late_records", "topic"),
	}
}

// sessionWatermarks is a session's watermark setup: the tracker over its
// partitions and its alignment membership. It does not change once made;
// the owner alone drives the tracker (internal/watermark's Tracker may be
// read from any goroutine).
type sessionWatermarks struct {
	conf    WatermarkConfig
	tracker *watermark.Tracker
	aligner *watermark.Aligner
	metrics wmMetrics
	// column is the table column holding the event time, expr the
	// expression computing it; with neither, the event time is the record
	// timestamp.
	column string
	expr   *eventTimeExpr
}

func newSessionWatermarks(c WatermarkConfig, m wmMetrics) (*sessionWatermarks, error) {
	t, err := watermark.NewTracker(c.Tracker)
	if err != nil {
		return nil, fmt.Errorf("field %s: %w", fieldWatermark, err)
	}
	w := &sessionWatermarks{conf: c, tracker: t, metrics: m, expr: c.expr}
	if c.expr == nil {
		w.column = c.Column
	}
	if c.Alignment != nil {
		if w.aligner, err = watermark.DefaultRegistry().Join(*c.Alignment, t); err != nil {
			return nil, fmt.Errorf("field %s.%s: %w", fieldWatermark, fieldWMAlignment, err)
		}
	}
	return w, nil
}

// fromRecord reports whether event times are the record timestamps.
func (w *sessionWatermarks) fromRecord() bool { return w.expr == nil && w.column == "" }

// eventTimes returns the event times of a batch's messages, from the
// watermark column of their rows or the watermark expression: ok[i] is
// false where msgs[i] has none (nil: no message; flagged with an error: a
// record that did not decode; a null, failing or non-time value). Called
// by the readers, side by side: it changes nothing of w.
func (w *sessionWatermarks) eventTimes(msgs service.MessageBatch) (times []int64, ok []bool) {
	times, ok = make([]int64, len(msgs)), make([]bool, len(msgs))
	for i, msg := range msgs {
		if msg == nil || msg.GetError() != nil {
			continue
		}
		if w.expr != nil {
			times[i], ok[i] = w.expr.eval(table.RowOf(msg), msg)
		} else {
			times[i], ok[i] = eventTimeOf(table.RowOf(msg)[w.column])
		}
	}
	return times, ok
}

// watermarkState is the owner's watermark state.
type watermarkState struct {
	*sessionWatermarks
	// parts are the watermark partitions of the partitions being read.
	parts map[topicPartition]*watermark.Partition
	// alignPaused are the partitions paused by watermark alignment; the
	// offset tracker knows those paused by checkpoint_limit. A partition
	// is resumed only when neither holds it.
	alignPaused map[topicPartition]bool
	// lastEventTime is the event time of the last record stamped (Unix
	// ms), for the event-time lag gauge.
	lastEventTime int64
	// partStats is watermarkTick's buffer for the partitions' watermarks.
	partStats []watermark.PartitionStats
}

func newWatermarkState(w *sessionWatermarks) *watermarkState {
	return &watermarkState{
		sessionWatermarks: w,
		parts:             map[topicPartition]*watermark.Partition{},
		alignPaused:       map[topicPartition]bool{},
		lastEventTime:     watermark.NoWatermark,
	}
}

// batchMarks is the owner's watermark state of one batch.
type batchMarks struct {
	// parts[i] is the watermark partition of records[i] when it was
	// fetched (nil if untracked).
	parts []*watermark.Partition
	// stamps are computed by the first delivery and reused by
	// redeliveries.
	stamps []wmStamp
	// release are the partitions this batch finished (stop offset
	// reached): they stop holding the watermark back once its records are
	// observed.
	release []topicPartition
	// final marks the batch that ends a bounded read (its messages carry
	// the end-of-input watermark).
	final bool
}

// stamp observes a record's event time on p and returns its stamp.
func stamp(p *watermark.Partition, eventTime int64) wmStamp {
	wm, late := p.Observe(eventTime)
	return wmStamp{eventTime: eventTime, watermark: wm, late: late}
}

// setStamps puts the stamps of a delivered batch on its messages (nil for
// a record that gives none); with eventTime, the event time too (else
// buildMessages set it).
func setStamps(batch service.MessageBatch, stamps []wmStamp, eventTime bool) {
	// Consecutive records mostly carry the same watermark: box it once per
	// value rather than once per message.
	var (
		wmBox any
		wmVal int64
	)
	for i, msg := range batch {
		st := stamps[i]
		if st.none || msg == nil {
			continue
		}
		if wmBox == nil || st.watermark != wmVal {
			wmVal, wmBox = st.watermark, st.watermark
		}
		if eventTime {
			msg.MetaSetMut(metaEventTimeMs, st.eventTime)
		}
		msg.MetaSetMut(metaWatermarkMs, wmBox)
		if st.late {
			msg.MetaSetMut(metaLate, true)
		}
	}
}

// wmAdd starts tracking tp's watermark (on assignment or discovery).
func (o *owner) wmAdd(tp topicPartition) {
	w := o.wm
	if w == nil || w.parts[tp] != nil {
		return
	}
	p, err := w.tracker.Add(tp.topic, tp.partition)
	if err != nil {
		o.log.Errorf("kafka_source: %v", err)
		return
	}
	w.parts[tp] = p
}

// wmRemoveAll stops tracking the watermarks of tps (on revocation, release
// or when they reached their stop offset): they no longer hold the
// watermark back. The tracker copies its partition list once for all of
// them.
func (o *owner) wmRemoveAll(tps []topicPartition) {
	w := o.wm
	if w == nil || len(tps) == 0 {
		return
	}
	ps := make([]*watermark.Partition, 0, len(tps))
	for _, tp := range tps {
		if p := w.parts[tp]; p != nil {
			delete(w.parts, tp)
			ps = append(ps, p)
		}
		delete(w.alignPaused, tp)
	}
	w.tracker.RemoveAll(ps...)
}

// wmResumeRemoved resumes fetching tp on cl if alignment paused it, before
// tp is revoked: kgo keeps a pause across assignments, and a partition
// assigned back to cl must not stay paused.
func (o *owner) wmResumeRemoved(cl *kgo.Client, tp topicPartition) {
	if o.wm != nil && o.wm.alignPaused[tp] {
		cl.ResumeFetchPartitions(partitionMap([]topicPartition{tp}))
	}
}

// watermarkTick runs when the session starts and every emit_interval: it
// ticks the tracker (idleness, the combined watermark), sets the gauges,
// and warns once per stall of the watermark held back by silent partitions
// (stall_warning).
//
// The watermark gauges are set from the first tick, also while there is no
// watermark: a gauge that is never set is not exported at all, and the
// watermark of a source whose partition never gets a record is never set.
// Until there is one, kafka_source_watermark_ms (and a partition's
// kafka_source_partition_watermark_ms) is math.MinInt64, Flink's
// Long.MIN_VALUE, as the kafka_watermark_ms metadata; the lag is then
// counted from the Unix epoch (now in Unix ms), so that a lag alert fires.
func (o *owner) watermarkTick() {
	w := o.wm
	wm := w.tracker.Tick()
	st := w.tracker.Stats()
	now := time.Now().UnixMilli()
	w.metrics.watermark.Set(wm)
	w.metrics.watermarkLag.Set(now - max(wm, 0))
	w.partStats = w.tracker.AppendPartitionStats(w.partStats[:0])
	o.metrics.parts.watermarks(w.partStats)
	if et := w.lastEventTime; et != watermark.NoWatermark {
		w.metrics.eventLag.Set(now - et)
	}
	w.metrics.idle.Set(int64(st.Idle))
	w.metrics.alignPaused.Set(int64(st.Paused))
	stall, warn := w.tracker.CheckStall()
	w.metrics.held.Set(int64(len(stall.Held)))
	if warn {
		o.log.Warnf("kafka_source: %s", stallWarning(stall, w.tracker.Config()))
	}
}

// stallMaxNamed bounds the partitions a stall warning names.
const stallMaxNamed = 10

// stallWarning is the warning for a watermark held back by silent
// partitions: which, since when, and what to do.
func stallWarning(s watermark.Stall, c watermark.Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the watermark has not advanced for %v (it is %s): ", s.For.Round(time.Second), formatWatermark(s.Watermark))
	b.WriteString("held back by ")
	for i, h := range s.Held {
		if i == stallMaxNamed {
			fmt.Fprintf(&b, ", and %d more partitions", len(s.Held)-stallMaxNamed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "topic %s partition %d (no record for %v, watermark %s)", h.Topic, h.Partition, h.Silent.Round(time.Second), formatWatermark(h.Watermark))
	}
	b.WriteString(", while other partitions are ahead; event-time windows downstream (event_window) fire only once it passes their end. ")
	if c.IdleTimeout > 0 {
		fmt.Fprintf(&b, "They stop holding it back once silent for %s.%s (%v)", fieldWatermark, fieldWMIdleTimeout, c.IdleTimeout)
	} else {
		fmt.Fprintf(&b, "If these partitions have no data, set %s.%s (Flink: scan.watermark.idle-timeout), so that a partition "+
			"without records for that long stops holding the watermark back", fieldWatermark, fieldWMIdleTimeout)
	}
	fmt.Fprintf(&b, " (this warning: %s.%s, %v)", fieldWatermark, fieldWMStallWarning, c.StallWarning)
	return b.String()
}

// formatWatermark is a watermark for a log line: Unix ms with its UTC time,
// or "none yet".
func formatWatermark(ms int64) string {
	if ms == watermark.NoWatermark {
		return "none yet"
	}
	return fmt.Sprintf("%d, %s", ms, time.UnixMilli(ms).UTC().Format(time.RFC3339Nano))
}

// align runs one alignment step every update_interval: it pauses the
// partitions too far ahead of the group and resumes those back within
// max_drift. A partition paused for checkpoint_limit is not resumed here,
// and one paused here is not resumed by acknowledgements (see ackReq).
func (o *owner) align() {
	w := o.wm
	pause, resume := w.aligner.Update()
	if len(pause) == 0 && len(resume) == 0 || o.stopped {
		return
	}
	var ps, rs []topicPartition
	for _, p := range pause {
		tp := topicPartition{topic: p.Topic(), partition: p.ID()}
		if w.parts[tp] != p {
			continue // removed meanwhile
		}
		w.alignPaused[tp] = true
		ps = append(ps, tp)
	}
	for _, p := range resume {
		tp := topicPartition{topic: p.Topic(), partition: p.ID()}
		if !w.alignPaused[tp] {
			continue
		}
		delete(w.alignPaused, tp)
		if o.tracker.limitPaused(tp) || o.tracker.done(tp) {
			continue // still paused for checkpoint_limit, or finished (stopFetching)
		}
		rs = append(rs, tp)
	}
	if len(ps) > 0 {
		o.log.Debugf("kafka_source: pausing %v for watermark alignment", ps)
		o.eachClient(ps, func(cl *kgo.Client, m map[string][]int32) { cl.PauseFetchPartitions(m) })
	}
	if len(rs) > 0 {
		o.log.Debugf("kafka_source: resuming %v after watermark alignment", rs)
		o.eachClient(rs, (*kgo.Client).ResumeFetchPartitions)
	}
}

// stampDelivery observes the event times of a batch as it is handed out
// and returns its stamps and whether it ends a bounded read. The event
// times are the record timestamps, or times (ok[i] false: none) that the
// reader computed from the batch's messages (watermark column or
// expression). The partitions the batch finished are released after.
func (o *owner) stampDelivery(b *fetchedBatch, m *batchMarks, times []int64, ok []bool) ([]wmStamp, bool) {
	w := o.wm
	release := m.release
	m.release = nil
	if m.stamps == nil && len(m.parts) == len(b.records) {
		m.stamps = make([]wmStamp, len(b.records))
		fromRecord := w.fromRecord()
		for i, r := range b.records {
			et := r.Timestamp.UnixMilli()
			if !fromRecord {
				if i >= len(ok) || !ok[i] {
					m.stamps[i] = wmStamp{none: true}
					continue
				}
				et = times[i]
			}
			if p := m.parts[i]; p != nil {
				m.stamps[i] = stamp(p, et)
			} else {
				m.stamps[i] = wmStamp{eventTime: et, watermark: w.tracker.Watermark()}
			}
			if m.stamps[i].late {
				w.metrics.late.Incr(1, r.Topic)
			}
			w.lastEventTime = et
		}
	}
	o.wmRemoveAll(release)
	return m.stamps, m.final
}

// leaveAlignment takes the session's tracker out of its alignment group.
func (o *owner) leaveAlignment() {
	if o.wm != nil && o.wm.aligner != nil {
		o.wm.aligner.Leave()
	}
}
