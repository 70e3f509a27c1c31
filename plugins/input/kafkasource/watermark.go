package kafkasource

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/table"
	"github.com/connectd/connectd/internal/watermark"
	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/expr"
)

// Field names of the watermark block.
const (
	fieldWatermark         = "watermark"
	fieldWMEnabled         = "enabled"
	fieldWMColumn          = "column"
	fieldWMExpression      = "expression"
	fieldWMMaxOutOfOrder   = "max_out_of_orderness"
	fieldWMIdleTimeout     = "idle_timeout"
	fieldWMEmitInterval    = "emit_interval"
	fieldWMAlignment       = "alignment"
	fieldWMAlignGroup      = "group"
	fieldWMAlignMaxDrift   = "max_drift"
	fieldWMAlignUpdateIntv = "update_interval"
)

// Metadata keys of event time (set only with a watermark).
const (
	metaEventTimeMs = "kafka_event_time_ms"
	metaWatermarkMs = "kafka_watermark_ms"
	metaLate        = "kafka_late"
)

// WatermarkConfig is the typed watermark block (or what a table's
// `WATERMARK FOR` clause and `scan.watermark.*` options derive).
type WatermarkConfig struct {
	// Enabled turns event time and watermarks on. Default: on when the
	// block is present or the table declares a WATERMARK.
	Enabled bool
	// Column is the table column holding the event time; "" reads the
	// record timestamp (or Expression).
	Column string
	// Expression is a CEL expression giving the event time; "" for none.
	// Expression and Column exclude each other.
	Expression string
	// expr is Expression compiled (nil without one).
	expr *eventTimeExpr
	// hasTable: the source decodes rows, and column or expression read them.
	hasTable bool
	// Tracker holds max out-of-orderness, idle timeout and emit interval.
	Tracker watermark.Config
	// Alignment is nil without alignment.
	Alignment *watermark.AlignmentConfig
}

func watermarkFields() *service.ConfigField {
	return service.NewObjectField(fieldWatermark,
		service.NewBoolField(fieldWMEnabled).
			Description("Turns event time and watermarks on. Default `true` (the block's presence enables them; a table with `WATERMARK FOR` enables them too).").
			Optional(),
		service.NewStringField(fieldWMColumn).
			Description("With a `table`: the column of the decoded row that holds the event time (a TIMESTAMP or TIMESTAMP_LTZ, or integer "+
				"Unix milliseconds). Default: none, the event time is the record timestamp (Flink: the `timestamp` metadata column as "+
				"rowtime). Derived from the table's `WATERMARK FOR col AS ...`. Flink: the rowtime column of `WATERMARK FOR`.").
			Optional(),
		service.NewStringField(fieldWMExpression).
			Description("A CEL expression giving the event time, a timestamp or integer Unix milliseconds, evaluated over the "+
				"decoded row with a `table` (its columns as variables), else over the record value parsed as JSON (`row`), with "+
				"`meta` (the metadata) and `kafka_timestamp` (the record timestamp) as in the `cel` processor. A record whose "+
				"expression fails or gives null carries no event time and does not move the watermark. Default: none. Excludes `column`. "+
				"Flink: a computed rowtime column, `WATERMARK FOR rt AS ...` over `rt AS <expr>`, or a `TimestampAssigner`.").
			Example(`timestamp(row.created_at)`).Example(`int(row.ts_ms)`).
			Optional(),
		service.NewDurationField(fieldWMMaxOutOfOrder).
			Description("How far behind the largest event time seen on a partition a record may be and still not be late (Go duration, "+
				"whole milliseconds). A partition's watermark is its largest event time minus this minus 1ms. Default `0s`. "+
				"Flink: `WATERMARK FOR ts AS ts - INTERVAL 'n' unit`, `WatermarkStrategy.forBoundedOutOfOrderness`.").
			Optional(),
		service.NewDurationField(fieldWMIdleTimeout).
			Description("How long a partition may go without records before it is idle and stops holding the watermark back (Go duration). "+
				"It holds it again once records return. A partition paused by alignment never becomes idle. Default `0s` (off: a silent "+
				"partition holds the watermark forever). Flink: `scan.watermark.idle-timeout`.").
			Optional(),
		service.NewDurationField(fieldWMEmitInterval).
			Description("How often idleness is re-evaluated and the combined watermark recomputed, so that it advances without new records "+
				"(Go duration). Default `200ms`. Flink: `pipeline.auto-watermark-interval`.").
			Optional(),
		service.NewObjectField(fieldWMAlignment,
			service.NewStringField(fieldWMAlignGroup).
				Description("The alignment group: every kafka_source of the process naming the same group aligns with the others. "+
					"Required with `alignment`. Flink: `scan.watermark.alignment.group`.").
				Optional(),
			service.NewDurationField(fieldWMAlignMaxDrift).
				Description("How far a partition's watermark may run ahead of the group's minimum before fetching it pauses (Go duration). "+
					"Default `0s`. Flink: `scan.watermark.alignment.max-drift`.").
				Optional(),
			service.NewDurationField(fieldWMAlignUpdateIntv).
				Description("How often partitions are compared with the group's minimum and paused or resumed (Go duration). "+
					"Default `1s`. Flink: `scan.watermark.alignment.update-interval`.").
				Optional(),
		).
			Description("Watermark alignment: partitions whose watermark is more than `max_drift` ahead of the group's minimum pause "+
				"fetching until the group catches up. Default: none (no alignment). Flink: `scan.watermark.alignment.*`.").
			Optional(),
	).
		Description("Event time and watermarks, as Flink's Kafka source generates them: per-partition bounded out-of-orderness " +
			"watermarks combined as the minimum over non-idle partitions. Each message then carries `kafka_event_time_ms`, " +
			"`kafka_watermark_ms` and, if late, `kafka_late` (see Metadata). Default: none (no event time, no cost). " +
			"Flink: the table's `WATERMARK FOR` clause and `scan.watermark.*` options.").
		Example(map[string]any{fieldWMMaxOutOfOrder: "5s", fieldWMIdleTimeout: "1m"}).
		Optional().
		Advanced()
}

// watermarkFromParsed reads the watermark block; t is the table, nil
// without one.
func watermarkFromParsed(conf *service.ParsedConfig, t *schema.Table) (WatermarkConfig, []error) {
	present := conf.Contains(fieldWatermark)
	var y map[string]any
	if present {
		v, err := conf.FieldAny(fieldWatermark)
		if err != nil {
			return WatermarkConfig{}, []error{err}
		}
		y, _ = v.(map[string]any)
	}
	return deriveWatermark(y, present, t)
}

// deriveWatermark turns the watermark block y (present: written at all)
// and the table t (nil: none) into a WatermarkConfig, reporting every
// problem, each naming its field. Used by the constructor and the lint rule.
func deriveWatermark(y map[string]any, present bool, t *schema.Table) (WatermarkConfig, []error) {
	var (
		c    WatermarkConfig
		errs []error
	)
	// An empty value is unset, as `connectd create` writes an optional
	// field without a default.
	dur := func(path string, v any, ok bool) time.Duration {
		if !ok || v == nil {
			return 0
		}
		s := strings.TrimSpace(fmt.Sprint(v))
		if s == "" {
			return 0
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("field %s: expected a Go duration such as 5s, got %q", path, s))
			return 0
		}
		if d < 0 {
			errs = append(errs, fmt.Errorf("field %s: must not be negative, got %s", path, s))
			return 0
		}
		return d
	}
	path := func(p ...string) string { return fieldWatermark + "." + strings.Join(p, ".") }
	if present {
		c.Enabled = true
		if e, ok := y[fieldWMEnabled].(bool); ok {
			c.Enabled = e
		}
	}
	if v, ok := y[fieldWMColumn]; ok && v != nil {
		c.Column = fmt.Sprint(v)
	}
	if v, ok := y[fieldWMExpression]; ok && v != nil {
		c.Expression = fmt.Sprint(v)
	}
	v, ok := y[fieldWMMaxOutOfOrder]
	c.Tracker.MaxOutOfOrderness = dur(path(fieldWMMaxOutOfOrder), v, ok)
	v, ok = y[fieldWMIdleTimeout]
	c.Tracker.IdleTimeout = dur(path(fieldWMIdleTimeout), v, ok)
	v, ok = y[fieldWMEmitInterval]
	c.Tracker.EmitInterval = dur(path(fieldWMEmitInterval), v, ok)
	if a, isMap := y[fieldWMAlignment].(map[string]any); isMap && !allEmpty(a) {
		ac := &watermark.AlignmentConfig{}
		if g, ok := a[fieldWMAlignGroup]; ok && g != nil {
			ac.Group = strings.TrimSpace(fmt.Sprint(g))
		}
		v, ok := a[fieldWMAlignMaxDrift]
		ac.MaxDrift = dur(path(fieldWMAlignment, fieldWMAlignMaxDrift), v, ok)
		v, ok = a[fieldWMAlignUpdateIntv]
		ac.UpdateInterval = dur(path(fieldWMAlignment, fieldWMAlignUpdateIntv), v, ok)
		c.Alignment = ac
	}
	if t != nil {
		c.hasTable = true
		errs = append(errs, c.applyTableWatermark(t, present)...)
	}
	if c.Alignment != nil && c.Alignment.Group == "" {
		errs = append(errs, fmt.Errorf("field %s: required with %s (or option '%s' of the table)",
			path(fieldWMAlignment, fieldWMAlignGroup), path(fieldWMAlignment), schema.OptWatermarkAlignGroup))
	}
	if c.Expression != "" {
		if c.Column != "" {
			errs = append(errs, fmt.Errorf("field %s: set only one of %s and %s", path(fieldWMExpression), path(fieldWMColumn), path(fieldWMExpression)))
		}
		x, err := compileEventTime(t, c.Expression)
		if err != nil {
			errs = append(errs, fmt.Errorf("field %s: %w", path(fieldWMExpression), err))
		}
		c.expr = x
	}
	if c.Column != "" && c.Expression == "" {
		if t == nil {
			errs = append(errs, fmt.Errorf("field %s: only used with a table (fields %s, %s, %s); without one the event time is the record timestamp",
				path(fieldWMColumn), table.FieldTable, table.FieldCatalog, table.FieldDDL))
		} else if !hasColumn(t, c.Column) {
			errs = append(errs, fmt.Errorf("field %s: table %s has no column %q", path(fieldWMColumn), t.Name, c.Column))
		}
	}
	return c, errs
}

// allEmpty reports whether every value of a block is unset: null or "".
func allEmpty(m map[string]any) bool {
	for _, v := range m {
		if v != nil && fmt.Sprint(v) != "" {
			return false
		}
	}
	return true
}

// applyTableWatermark derives the watermark from the table's WATERMARK FOR
// clause and scan.watermark.* options; a YAML value that contradicts them is
// an error (the table is the single source of truth).
func (c *WatermarkConfig) applyTableWatermark(t *schema.Table, present bool) []error {
	cf := table.NewConflicts(t)
	path := func(p ...string) string { return fieldWatermark + "." + strings.Join(p, ".") }
	if wm := t.Watermark; wm != nil {
		if !present {
			c.Enabled = true
		}
		if c.Column != "" && c.Column != wm.Column {
			cf.Addf(path(fieldWMColumn), "%q contradicts WATERMARK FOR %s; drop %s", c.Column, wm.Column, path(fieldWMColumn))
		}
		if c.Expression != "" {
			cf.Addf(path(fieldWMExpression), "the table's WATERMARK FOR %s gives the event time; drop %s", wm.Column, path(fieldWMExpression))
		}
		c.Column = wm.Column
		if d := c.Tracker.MaxOutOfOrderness; d != 0 && d != wm.Delay {
			cf.Addf(path(fieldWMMaxOutOfOrder), "%s contradicts WATERMARK FOR %s AS %s - INTERVAL %s; drop %s", d, wm.Column, wm.Column, wm.Delay, path(fieldWMMaxOutOfOrder))
		}
		c.Tracker.MaxOutOfOrderness = wm.Delay
	}
	opt := func(name, field string, cur *time.Duration) {
		v, ok := t.Options[name]
		if !ok {
			return
		}
		d, err := schema.ParseFlinkDuration(v)
		if err != nil {
			cf.Addf(field, "option '%s': %v", name, err)
			return
		}
		if *cur != 0 && *cur != d {
			cf.Add(field, cur.String(), name, v)
		}
		*cur = d
	}
	opt(schema.OptWatermarkIdleTimeout, path(fieldWMIdleTimeout), &c.Tracker.IdleTimeout)
	if g, ok := t.Options[schema.OptWatermarkAlignGroup]; ok {
		if c.Alignment == nil {
			c.Alignment = &watermark.AlignmentConfig{}
		}
		if c.Alignment.Group != "" && c.Alignment.Group != g {
			cf.Add(path(fieldWMAlignment, fieldWMAlignGroup), c.Alignment.Group, schema.OptWatermarkAlignGroup, g)
		}
		c.Alignment.Group = g
	}
	for _, o := range []struct {
		name, field string
		get         func(*watermark.AlignmentConfig) *time.Duration
	}{
		{schema.OptWatermarkAlignMaxDrift, path(fieldWMAlignment, fieldWMAlignMaxDrift), func(a *watermark.AlignmentConfig) *time.Duration { return &a.MaxDrift }},
		{schema.OptWatermarkAlignInterval, path(fieldWMAlignment, fieldWMAlignUpdateIntv), func(a *watermark.AlignmentConfig) *time.Duration { return &a.UpdateInterval }},
	} {
		if _, ok := t.Options[o.name]; !ok {
			continue
		}
		if c.Alignment == nil {
			cf.Addf(o.field, "option '%s' needs option '%s'", o.name, schema.OptWatermarkAlignGroup)
			continue
		}
		opt(o.name, o.field, o.get(c.Alignment))
	}
	return cf.Errs()
}

func hasColumn(t *schema.Table, name string) bool {
	for _, col := range t.Columns {
		if col.Name == name {
			return true
		}
	}
	return false
}

// eventTimeOf converts a row's event-time column value to Unix ms.
func eventTimeOf(v any) (int64, bool) {
	switch x := v.(type) {
	case time.Time:
		return x.UnixMilli(), true
	case *time.Time:
		if x == nil {
			return 0, false
		}
		return x.UnixMilli(), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case float64:
		return int64(x), true
	}
	return 0, false
}

// wmStamp is what a record's metadata says about event time: computed once
// when the record is first delivered and kept for redeliveries (a replayed
// record is not observed again, and is not late for having been nacked).
type wmStamp struct {
	eventTime int64
	watermark int64
	late      bool
	none      bool // no event time (the expression failed): nothing set
}

// wmMetrics are the watermark metrics of a source.
type wmMetrics struct {
	watermark    *service.MetricGauge
	watermarkLag *service.MetricGauge
	eventLag     *service.MetricGauge
	idle         *service.MetricGauge
	alignPaused  *service.MetricGauge
	late         *service.MetricCounter
}

func newWMMetrics(m *service.Metrics) wmMetrics {
	return wmMetrics{
		watermark:    m.NewGauge("kafka_source_watermark_ms"),
		watermarkLag: m.NewGauge("kafka_source_watermark_lag_ms"),
		eventLag:     m.NewGauge("kafka_source_event_time_lag_ms"),
		idle:         m.NewGauge("kafka_source_idle_partitions"),
		alignPaused:  m.NewGauge("kafka_source_alignment_paused_partitions"),
		late:         m.NewCounter("kafka_source_late_records", "topic"),
	}
}

// sessionWatermarks is a session's watermark state: the tracker over its
// partitions, its alignment membership and the ticking loop. The partition
// map and the alignment pauses are guarded by the session mutex.
type sessionWatermarks struct {
	conf    WatermarkConfig
	tracker *watermark.Tracker
	aligner *watermark.Aligner
	metrics wmMetrics
	// lastEventTime is the event time of the last record stamped (Unix ms),
	// for the event-time lag gauge.
	lastEventTime atomic.Int64
	// afterDecode: event times come from the table row (column or
	// expression), stamped in tableInput.ReadBatch after decoding.
	afterDecode bool
	// expr, without a table, computes event times from the messages at
	// delivery; nil reads the record timestamp.
	expr *eventTimeExpr
}

func newSessionWatermarks(c WatermarkConfig, m wmMetrics) (*sessionWatermarks, error) {
	t, err := watermark.NewTracker(c.Tracker)
	if err != nil {
		return nil, fmt.Errorf("field %s: %w", fieldWatermark, err)
	}
	w := &sessionWatermarks{conf: c, tracker: t, metrics: m}
	switch {
	case c.hasTable:
		w.afterDecode = c.Column != "" || c.expr != nil
	case c.expr != nil:
		w.expr = c.expr
	}
	w.lastEventTime.Store(watermark.NoWatermark)
	if c.Alignment != nil {
		if w.aligner, err = watermark.DefaultRegistry().Join(*c.Alignment, t); err != nil {
			return nil, fmt.Errorf("field %s.%s: %w", fieldWatermark, fieldWMAlignment, err)
		}
	}
	return w, nil
}

// fromRecord reports whether event times are the record timestamps.
func (w *sessionWatermarks) fromRecord() bool { return w.expr == nil && !w.afterDecode }

// stamp observes a record's event time on p and returns its stamp.
func stamp(p *watermark.Partition, eventTime int64) wmStamp {
	wm, late := p.Observe(eventTime)
	return wmStamp{eventTime: eventTime, watermark: wm, late: late}
}

// setStamp puts s on msg; a message already carrying the end-of-input
// watermark keeps it.
func setStamp(msg *service.Message, s wmStamp) {
	msg.MetaSetMut(metaEventTimeMs, s.eventTime)
	if v, ok := msg.MetaGetMut(metaWatermarkMs); !ok || v != int64(math.MaxInt64) {
		msg.MetaSetMut(metaWatermarkMs, s.watermark)
	}
	if s.late {
		msg.MetaSetMut(metaLate, true)
	}
}

// wmAddLocked starts tracking tp's watermark (on assignment or discovery).
func (sess *session) wmAddLocked(tp topicPartition) {
	w := sess.wm
	if w == nil || sess.mu.wmParts[tp] != nil {
		return
	}
	p, err := w.tracker.Add(tp.topic, tp.partition)
	if err != nil {
		sess.log.Errorf("kafka_source: %v", err)
		return
	}
	sess.mu.wmParts[tp] = p
}

// wmRemoveLocked stops tracking tp's watermark (on revocation, release or
// when it reached its stop offset): it no longer holds the watermark back.
func (sess *session) wmRemoveLocked(tp topicPartition) {
	w := sess.wm
	if w == nil {
		return
	}
	if p := sess.mu.wmParts[tp]; p != nil {
		delete(sess.mu.wmParts, tp)
		w.tracker.Remove(p)
	}
	delete(sess.mu.alignPaused, tp)
}

// watermarkLoop ticks the tracker every emit_interval (idleness, metrics)
// and runs alignment every update_interval.
func (sess *session) watermarkLoop(done <-chan struct{}) {
	w := sess.wm
	emit := time.NewTicker(w.tracker.Config().EmitInterval)
	defer emit.Stop()
	var align <-chan time.Time
	if w.aligner != nil {
		t := time.NewTicker(w.aligner.Config().UpdateInterval)
		defer t.Stop()
		align = t.C
	}
	for {
		select {
		case <-done:
			return
		case <-emit.C:
			wm := w.tracker.Tick()
			st := w.tracker.Stats()
			now := time.Now().UnixMilli()
			if wm != watermark.NoWatermark {
				w.metrics.watermark.Set(wm)
				w.metrics.watermarkLag.Set(now - wm)
			}
			if et := w.lastEventTime.Load(); et != watermark.NoWatermark {
				w.metrics.eventLag.Set(now - et)
			}
			w.metrics.idle.Set(int64(st.Idle))
			w.metrics.alignPaused.Set(int64(st.Paused))
		case <-align:
			sess.align()
		}
	}
}

// align runs one alignment step: it pauses the partitions too far ahead of
// the group and resumes those back within max_drift. A partition paused
// for checkpoint_limit is not resumed here, and one paused here is not
// resumed by acknowledgements (see ack).
func (sess *session) align() {
	pause, resume := sess.wm.aligner.Update()
	if len(pause) == 0 && len(resume) == 0 {
		return
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.mu.stopped {
		return
	}
	var ps, rs []topicPartition
	for _, p := range pause {
		tp := topicPartition{topic: p.Topic(), partition: p.ID()}
		if sess.mu.wmParts[tp] != p {
			continue // removed meanwhile
		}
		sess.mu.alignPaused[tp] = true
		ps = append(ps, tp)
	}
	for _, p := range resume {
		tp := topicPartition{topic: p.Topic(), partition: p.ID()}
		if !sess.mu.alignPaused[tp] {
			continue
		}
		delete(sess.mu.alignPaused, tp)
		if sess.mu.tracker.limitPaused(tp) {
			continue // still paused for checkpoint_limit
		}
		rs = append(rs, tp)
	}
	if len(ps) > 0 {
		sess.log.Debugf("kafka_source: pausing %v for watermark alignment", ps)
		sess.eachClientLocked(ps, func(cl *kgo.Client, m map[string][]int32) { cl.PauseFetchPartitions(m) })
	}
	if len(rs) > 0 {
		sess.log.Debugf("kafka_source: resuming %v after watermark alignment", rs)
		sess.eachClientLocked(rs, (*kgo.Client).ResumeFetchPartitions)
	}
}

// stampDelivery observes the event times of a batch as it is delivered and
// sets its event-time metadata. Observing at delivery, on the ReadBatch
// goroutine, rather than when a reader fetched the batch, keeps the
// watermark a message carries consistent with the order messages leave the
// input: with several readers, a batch fetched later can be delivered
// earlier, and a watermark computed at fetch time would then run ahead of
// records not yet delivered, making them late downstream. In column mode
// tableInput stamps the decoded rows instead (stampRows).
func (sess *session) stampDelivery(b *fetchedBatch, batch service.MessageBatch) {
	w := sess.wm
	sess.mu.Lock()
	if !b.delivered {
		b.delivered = true
		sess.mu.undelivered--
		// The last batch of a bounded read: every split reached its stop
		// offset and no other batch waits to be delivered.
		b.final = sess.bounded() && sess.mu.undelivered == 0 && sess.mu.tracker.allFinished()
	}
	final := b.final
	release := b.release
	b.release = nil
	if w.afterDecode && release != nil {
		sess.mu.wmRelease = append(sess.mu.wmRelease, release)
		release = nil
	}
	sess.mu.Unlock()
	if !w.afterDecode && b.wmParts != nil && len(b.wmParts) == len(batch) {
		if b.stamps == nil {
			b.stamps = make([]wmStamp, len(b.records))
			for i, r := range b.records {
				et := r.Timestamp.UnixMilli()
				if w.expr != nil {
					var ok bool
					if et, ok = w.expr.eval(table.RowOf(batch[i]), batch[i]); !ok {
						b.stamps[i] = wmStamp{none: true}
						continue
					}
				}
				if p := b.wmParts[i]; p != nil {
					b.stamps[i] = stamp(p, et)
				} else {
					b.stamps[i] = wmStamp{eventTime: et, watermark: w.tracker.Watermark()}
				}
				if b.stamps[i].late {
					w.metrics.late.Incr(1, r.Topic)
				}
			}
			if n := len(b.stamps); n > 0 {
				w.lastEventTime.Store(b.stamps[n-1].eventTime)
			}
		}
		// Consecutive records mostly carry the same watermark: box it once
		// per value rather than once per message.
		var (
			wmBox any
			wmVal int64
		)
		for i, msg := range batch {
			st := b.stamps[i]
			if st.none {
				continue
			}
			if wmBox == nil || st.watermark != wmVal {
				wmVal, wmBox = st.watermark, st.watermark
			}
			if w.expr != nil {
				msg.MetaSetMut(metaEventTimeMs, st.eventTime) // else set by buildMessages
			}
			msg.MetaSetMut(metaWatermarkMs, wmBox)
			if st.late {
				msg.MetaSetMut(metaLate, true)
			}
		}
	}
	if release != nil {
		release()
	}
	if final {
		endOfInputWatermark(batch)
	}
}

// stampRows stamps the event times of decoded table rows (column mode), on
// the ReadBatch goroutine, the only one that observes in this mode, then
// releases the partitions that delivered batches finished. ok[i] false
// leaves msgs[i] unstamped.
func (s *source) stampRows(msgs service.MessageBatch, times []int64, ok []bool) {
	s.mu.Lock()
	sess := s.mu.sess
	s.mu.Unlock()
	if sess == nil || sess.wm == nil {
		return
	}
	parts := make([]*watermark.Partition, len(msgs))
	sess.mu.Lock()
	for i, msg := range msgs {
		if !ok[i] {
			continue
		}
		topic, _ := metaValue[string](msg, metaTopic)
		p, _ := metaValue[int](msg, metaPartition)
		parts[i] = sess.mu.wmParts[topicPartition{topic: topic, partition: int32(p)}]
	}
	sess.mu.Unlock()
	for i, msg := range msgs {
		if parts[i] == nil {
			continue
		}
		st := stamp(parts[i], times[i])
		setStamp(msg, st)
		sess.wm.lastEventTime.Store(st.eventTime)
		if st.late {
			sess.wm.metrics.late.Incr(1, parts[i].Topic())
		}
	}
	sess.mu.Lock()
	release := sess.mu.wmRelease
	sess.mu.wmRelease = nil
	sess.mu.Unlock()
	for _, f := range release {
		f()
	}
}

// wmResumeRemovedLocked resumes fetching tp on cl if alignment paused it,
// before tp is revoked: kgo keeps a pause across assignments, and a
// partition assigned back to cl must not stay paused.
func (sess *session) wmResumeRemovedLocked(cl *kgo.Client, tp topicPartition) {
	if sess.wm != nil && sess.mu.alignPaused[tp] {
		cl.ResumeFetchPartitions(partitionMap([]topicPartition{tp}))
	}
}

// eventTimeExpr is a compiled watermark.expression.
type eventTimeExpr struct {
	env *expr.Env
	prg *expr.Program
}

// compileEventTime compiles src in the CEL environment of table t (nil: no
// table), as the cel processor does.
func compileEventTime(t *schema.Table, src string) (*eventTimeExpr, error) {
	env, err := expr.NewEnv(t)
	if err != nil {
		return nil, err
	}
	prg, err := env.Compile(src, nil)
	if err != nil {
		return nil, err
	}
	return &eventTimeExpr{env: env, prg: prg}, nil
}

// eval returns the event time of row (the decoded row, or the JSON value)
// of msg; ok is false when the expression fails or gives no time.
func (x *eventTimeExpr) eval(row map[string]any, msg *service.Message) (int64, bool) {
	act, err := x.env.Activation(row, table.ExprInput(msg))
	if err != nil {
		return 0, false
	}
	v, err := x.prg.Eval(act)
	if err != nil {
		return 0, false
	}
	return eventTimeOf(v)
}

// leaveAlignment takes the session's tracker out of its alignment group.
func (sess *session) leaveAlignment() {
	if sess.wm != nil && sess.wm.aligner != nil {
		sess.wm.aligner.Leave()
	}
}
