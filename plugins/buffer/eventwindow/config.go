package eventwindow

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/bloblang"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// Kind is the window assigner: tumbling, sliding or session.
type Kind uint8

const (
	// Tumbling windows: fixed size, no overlap (Flink TumblingEventTimeWindows).
	Tumbling Kind = iota + 1
	// Sliding windows: fixed size, a new one every slide (Flink SlidingEventTimeWindows).
	Sliding
	// Session windows: per key, closed after a gap without records (Flink EventTimeSessionWindows).
	Session
)

func (k Kind) String() string {
	switch k {
	case Tumbling:
		return "tumbling"
	case Sliding:
		return "sliding"
	case Session:
		return "session"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

func parseKind(s string) (Kind, error) {
	switch s {
	case "tumbling":
		return Tumbling, nil
	case "sliding":
		return Sliding, nil
	case "session":
		return Session, nil
	}
	return 0, fmt.Errorf("field %s: %q is not one of tumbling, sliding, session", FieldType, s)
}

// LatePolicy says what happens to a record whose windows have all fired.
type LatePolicy uint8

const (
	// LateDrop acknowledges the record and counts it (Flink's default).
	LateDrop LatePolicy = iota + 1
	// LateError passes the record on, flagged with ErrLate (Flink's side output
	// for late data, sideOutputLateData).
	LateError
)

func parseLate(s string) (LatePolicy, error) {
	switch s {
	case "drop":
		return LateDrop, nil
	case "error":
		return LateError, nil
	}
	return 0, fmt.Errorf("field %s: %q is not one of drop, error", FieldLate, s)
}

// Config is the typed configuration of an event_window buffer. Durations are
// kept in milliseconds, the unit of event time and watermarks.
type Config struct {
	Kind            Kind
	SizeMS          int64 // tumbling, sliding
	SlideMS         int64 // sliding
	GapMS           int64 // session
	AllowedLateness int64 // ms, >= 0

	// Key, when set, gives each record's grouping key; nil means one global key.
	Key *service.InterpolatedString

	// EventTimeMeta and WatermarkMeta are metadata keys read as int64 ms.
	EventTimeMeta string
	WatermarkMeta string
	// WatermarkWriterMeta, when set, names the metadata holding the writer
	// of a record's watermark (writers.go): the watermark is then the
	// minimum over the writers seen within WatermarkWriterIdle.
	WatermarkWriterMeta string
	WatermarkWriterIdle time.Duration
	WatermarkWriters    int
	// TimestampMapping, when set, replaces EventTimeMeta.
	TimestampMapping *bloblang.Executor

	Aggregates []AggregateSpec
	// Aggregate, when set, maps the window document (with its rows) to the result.
	Aggregate *bloblang.Executor

	Late LatePolicy

	// FlushAfterIdle, when positive, fires every open window once no record
	// has been written for that long (processing time).
	FlushAfterIdle time.Duration

	MaxOpenWindows int // open windows plus fired windows whose result is not acked yet
	MaxRows        int // rows kept for Aggregate, same scope
}

// rawConfig is the config as strings, shared by the constructor and the lint
// rule so both run the same validate.
type rawConfig struct {
	Type            string
	Size            string
	Slide           string
	Gap             string
	AllowedLateness string
	Late            string
	Aggregates      map[string]string
	HasAggregate    bool
	MaxOpenWindows  int
	MaxRows         int
	FlushAfterIdle  string
	WriterMeta      string
	WriterIdle      string
	Writers         int
}

// validate checks every field and their combinations, and returns all problems
// at once. It fills the duration, kind and aggregate fields of c.
func (r rawConfig) validate(c *Config) error {
	var errs []error
	var err error
	if c.Kind, err = parseKind(r.Type); err != nil {
		errs = append(errs, err)
	}
	dur := func(field, s string, required bool) int64 {
		if s == "" {
			if required {
				errs = append(errs, fmt.Errorf("field %s: required for %s windows", field, r.Type))
			}
			return 0
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("field %s: %w", field, err))
			return 0
		}
		if d < 0 || (d > 0 && d < time.Millisecond) || d%time.Millisecond != 0 {
			errs = append(errs, fmt.Errorf("field %s: %q must be zero or a positive whole number of milliseconds", field, s))
			return 0
		}
		if required && d == 0 {
			errs = append(errs, fmt.Errorf("field %s: must be positive", field))
		}
		return d.Milliseconds()
	}
	unused := func(field, s string) {
		if s != "" {
			errs = append(errs, fmt.Errorf("field %s: not used by %s windows: remove it", field, r.Type))
		}
	}
	switch c.Kind {
	case Tumbling:
		c.SizeMS = dur(FieldSize, r.Size, true)
		unused(FieldSlide, r.Slide)
		unused(FieldGap, r.Gap)
	case Sliding:
		c.SizeMS = dur(FieldSize, r.Size, true)
		c.SlideMS = dur(FieldSlide, r.Slide, true)
		unused(FieldGap, r.Gap)
		if c.SlideMS > 0 && c.SizeMS > 0 && c.SlideMS > c.SizeMS {
			errs = append(errs, fmt.Errorf("field %s: %s is longer than size %s: records between windows would be lost", FieldSlide, r.Slide, r.Size))
		}
	case Session:
		c.GapMS = dur(FieldGap, r.Gap, true)
		unused(FieldSize, r.Size)
		unused(FieldSlide, r.Slide)
	}
	c.AllowedLateness = dur(FieldAllowedLateness, r.AllowedLateness, false)
	if c.Late, err = parseLate(r.Late); err != nil {
		errs = append(errs, err)
	}
	names := make([]string, 0, len(r.Aggregates))
	for name := range r.Aggregates {
		names = append(names, name)
	}
	sort.Strings(names)
	c.Aggregates = c.Aggregates[:0]
	for _, name := range names {
		spec, err := parseAggregate(name, r.Aggregates[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("field %s.%s: %w", FieldAggregates, name, err))
			continue
		}
		if reservedField(name) {
			errs = append(errs, fmt.Errorf("field %s.%s: the name is reserved for the window document", FieldAggregates, name))
			continue
		}
		c.Aggregates = append(c.Aggregates, spec)
	}
	if len(r.Aggregates) == 0 && !r.HasAggregate {
		errs = append(errs, fmt.Errorf("field %s: set %s (built-in count, sum, min, max, first, last), %s (a Bloblang mapping over the rows) or both", FieldAggregates, FieldAggregates, FieldAggregate))
	}
	if r.MaxOpenWindows <= 0 {
		errs = append(errs, fmt.Errorf("field %s: must be positive, got %d", FieldMaxOpenWindows, r.MaxOpenWindows))
	}
	if r.MaxRows <= 0 {
		errs = append(errs, fmt.Errorf("field %s: must be positive, got %d", FieldMaxRows, r.MaxRows))
	}
	c.MaxOpenWindows, c.MaxRows = r.MaxOpenWindows, r.MaxRows
	if r.FlushAfterIdle != "" {
		d, err := time.ParseDuration(r.FlushAfterIdle)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("field %s: %w", FieldFlushAfterIdle, err))
		case d < 0:
			errs = append(errs, fmt.Errorf("field %s: %q must not be negative", FieldFlushAfterIdle, r.FlushAfterIdle))
		default:
			c.FlushAfterIdle = d
		}
	}
	c.WatermarkWriterMeta = r.WriterMeta
	if c.WatermarkWriters = r.Writers; r.Writers < 1 {
		errs = append(errs, fmt.Errorf("field %s: must be at least 1, got %d", FieldWatermarkWriters, r.Writers))
	}
	if d, err := time.ParseDuration(r.WriterIdle); err != nil {
		errs = append(errs, fmt.Errorf("field %s: %w", FieldWatermarkWriterIdle, err))
	} else if d <= 0 {
		errs = append(errs, fmt.Errorf("field %s: %q must be positive", FieldWatermarkWriterIdle, r.WriterIdle))
	} else {
		c.WatermarkWriterIdle = d
	}
	return errors.Join(errs...)
}

func reservedField(name string) bool {
	switch name {
	case docKey, docStart, docEnd, docRows:
		return true
	}
	return strings.TrimSpace(name) == ""
}
