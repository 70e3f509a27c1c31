package watermark

import (
	"errors"
	"fmt"
	"time"
)

// Defaults, each the default of the Flink option it mirrors.
const (
	// DefaultEmitInterval is the default Config.EmitInterval, Flink's
	// pipeline.auto-watermark-interval.
	DefaultEmitInterval = 200 * time.Millisecond
	// DefaultUpdateInterval is the default AlignmentConfig.UpdateInterval,
	// Flink's scan.watermark.alignment.update-interval.
	DefaultUpdateInterval = time.Second
	// DefaultStallWarning is the stall_warning of kafka_source when the
	// field is not set (Config.StallWarning's zero value is off). Flink has
	// no such option.
	DefaultStallWarning = time.Minute
)

// ErrInvalidConfig is wrapped by every problem Config.Validate and
// AlignmentConfig.Validate report.
var ErrInvalidConfig = errors.New("invalid watermark config")

// ErrPartitionExists is wrapped by the error Tracker.Add returns for a
// topic/partition the tracker already holds.
var ErrPartitionExists = errors.New("partition already tracked")

// Clock is the source of processing time: idleness is measured with it.
// Tests inject a fake; nil means the system clock.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Config configures a Tracker. The zero value is valid: no out-of-orderness,
// idleness detection off, ticks every DefaultEmitInterval.
type Config struct {
	// MaxOutOfOrderness is how far behind the largest event time seen on a
	// partition a later record may be and still not be late. Truncated to
	// whole milliseconds. Default 0. Flink: WatermarkStrategy
	// .forBoundedOutOfOrderness, or WATERMARK FOR ts AS ts - INTERVAL '...'.
	// YAML: watermark.max_out_of_orderness.
	MaxOutOfOrderness time.Duration

	// IdleTimeout is how long a partition may go without records before it
	// is idle and stops holding back the combined watermark. Detected on
	// Tick, so a partition becomes idle between IdleTimeout and
	// IdleTimeout+EmitInterval after its last record. 0 (default) disables
	// idleness detection: a silent partition holds the combined watermark
	// forever, as in Flink. Flink: scan.watermark.idle-timeout.
	// YAML: watermark.idle_timeout.
	IdleTimeout time.Duration

	// EmitInterval is how often the caller is expected to call Tick; the
	// tracker starts no timer itself. Default DefaultEmitInterval (200ms).
	// Flink: pipeline.auto-watermark-interval. YAML: watermark.emit_interval.
	EmitInterval time.Duration

	// StallWarning is how long the combined watermark may stand still,
	// held back by partitions without records for as long, before
	// CheckStall reports the stall (see Stall). 0 (the zero value) turns
	// it off; kafka_source defaults to DefaultStallWarning. Flink has no
	// such option. YAML: watermark.stall_warning.
	StallWarning time.Duration

	// Clock measures idleness. Default: the system clock.
	Clock Clock
}

// Validate reports every problem in c at once, each wrapping
// ErrInvalidConfig.
func (c Config) Validate() error {
	var errs []error
	if c.MaxOutOfOrderness < 0 {
		errs = append(errs, fmt.Errorf("%w: max_out_of_orderness %v is negative", ErrInvalidConfig, c.MaxOutOfOrderness))
	}
	if c.IdleTimeout < 0 {
		errs = append(errs, fmt.Errorf("%w: idle_timeout %v is negative (0 disables idleness)", ErrInvalidConfig, c.IdleTimeout))
	}
	if c.EmitInterval < 0 {
		errs = append(errs, fmt.Errorf("%w: emit_interval %v is negative", ErrInvalidConfig, c.EmitInterval))
	}
	if c.StallWarning < 0 {
		errs = append(errs, fmt.Errorf("%w: stall_warning %v is negative (0 turns it off)", ErrInvalidConfig, c.StallWarning))
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.EmitInterval == 0 {
		c.EmitInterval = DefaultEmitInterval
	}
	if c.Clock == nil {
		c.Clock = systemClock{}
	}
	return c
}

// AlignmentConfig configures watermark alignment of a Tracker with every
// other tracker in the process that names the same group.
type AlignmentConfig struct {
	// Group names the alignment group; trackers with the same name in one
	// Registry align with each other. Required.
	// Flink: scan.watermark.alignment.group. YAML: watermark.alignment.group.
	Group string

	// MaxDrift is how far a partition's watermark may run ahead of the
	// group's minimum watermark before the partition is paused. Truncated to
	// whole milliseconds; 0 pauses anything ahead of the minimum.
	// Flink: scan.watermark.alignment.max-drift.
	// YAML: watermark.alignment.max_drift.
	MaxDrift time.Duration

	// UpdateInterval is how often the caller is expected to call
	// Aligner.Update. Default DefaultUpdateInterval (1s).
	// Flink: scan.watermark.alignment.update-interval.
	// YAML: watermark.alignment.update_interval.
	UpdateInterval time.Duration
}

// Validate reports every problem in c at once, each wrapping
// ErrInvalidConfig.
func (c AlignmentConfig) Validate() error {
	var errs []error
	if c.Group == "" {
		errs = append(errs, fmt.Errorf("%w: alignment.group is empty", ErrInvalidConfig))
	}
	if c.MaxDrift < 0 {
		errs = append(errs, fmt.Errorf("%w: alignment.max_drift %v is negative", ErrInvalidConfig, c.MaxDrift))
	}
	if c.UpdateInterval < 0 {
		errs = append(errs, fmt.Errorf("%w: alignment.update_interval %v is negative", ErrInvalidConfig, c.UpdateInterval))
	}
	return errors.Join(errs...)
}

func (c AlignmentConfig) withDefaults() AlignmentConfig {
	if c.UpdateInterval == 0 {
		c.UpdateInterval = DefaultUpdateInterval
	}
	return c
}
