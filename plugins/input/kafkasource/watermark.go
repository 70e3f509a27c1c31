package kafkasource

import (
	"fmt"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

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
	fieldWMStallWarning    = "stall_warning"
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
	// Tracker holds max out-of-orderness, idle timeout and emit interval.
	Tracker watermark.Config
	// Alignment is nil without alignment.
	Alignment *watermark.AlignmentConfig
}

func watermarkFields() *service.ConfigField {
	return service.NewObjectField(fieldWatermark,
		service.NewBoolField(fieldWMEnabled).
			Description("Turns event time and watermarks on. Default `true` (the block's presence enables them; a table with `WATERMARK FOR` enables them too). Flink option: none; in Flink SQL a `WATERMARK FOR` clause, in the DataStream API a `WatermarkStrategy`.").
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
		service.NewDurationField(fieldWMStallWarning).
			Description("How long the source's watermark may stand still, held back by partitions that have had no record for as long "+
				"while other partitions are ahead, before a warning names those partitions and suggests `idle_timeout` (Go duration). "+
				"Logged once per stall: again only after the watermark advanced. The `kafka_source_watermark_held_partitions` gauge "+
				"counts the partitions to blame meanwhile. A partition at the minimum that does receive records (its event times lag) "+
				"is not blamed. `0s` turns the warning and the gauge off. Default `1m`. Flink has no such option (it says nothing); "+
				"its cure for a silent partition is idleness, `scan.watermark.idle-timeout` / `WatermarkStrategy.withIdleness`.").
			Optional().
			Advanced(),
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
	c.Tracker.StallWarning = watermark.DefaultStallWarning
	if v, ok := y[fieldWMStallWarning]; ok && v != nil && strings.TrimSpace(fmt.Sprint(v)) != "" {
		// Unlike the fields above, 0 (off) differs from unset.
		c.Tracker.StallWarning = dur(path(fieldWMStallWarning), v, ok)
	}
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
	if wm := t.Watermark; wm != nil && wm.Source {
		// SOURCE_WATERMARK(): the source's own watermark, from the record
		// timestamps or this block's column / expression and
		// max_out_of_orderness; the table adds nothing to derive.
		if !present {
			c.Enabled = true
		}
	} else if wm != nil {
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
