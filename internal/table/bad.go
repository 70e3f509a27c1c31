package table

import (
	"fmt"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/halt"
	"github.com/connectd/connectd/internal/metricdoc"
)

// Policy is what a component does with a record it cannot decode or encode
// (field on_error).
type Policy string

// Bad-record policies.
const (
	// PolicyFail ends the run (internal/halt), as a Flink job fails: the
	// record is dropped before the output, commits stop, and the binary
	// exits 1 with the error, which names topic, partition and offset (or
	// the message index).
	PolicyFail Policy = "fail"
	// PolicySkip drops the message, counts it and logs at most every
	// SkipLogInterval.
	PolicySkip Policy = "skip"
	// PolicyDeadLetter keeps the message with its original bytes and flags
	// it with the error (msg.SetError), for `catch`, `switch` with
	// `errored()` or `reject_errored` to route.
	PolicyDeadLetter Policy = "dead_letter"
)

// SkipLogInterval is the shortest time between two logs of skipped records.
const SkipLogInterval = 10 * time.Second

// Bad handles bad records by policy: metrics, the rate-limited log, and the
// end of the run under PolicyFail.
type Bad struct {
	policy     Policy
	component  string
	log        *service.Logger
	run        *halt.Run
	failed     *service.MetricCounter
	skipped    *service.MetricCounter
	deadLetter *service.MetricCounter

	mu struct {
		sync.Mutex
		lastLog    time.Time
		suppressed int
	}
}

// BadMetrics are the bad-record counters of a component, for its metrics
// table (internal/metricdoc).
func BadMetrics(component string) []metricdoc.Metric {
	return []metricdoc.Metric{
		{Name: component + "_failed", Kind: metricdoc.Counter, Help: "Records that could not be decoded or encoded and ended the run (on_error: fail)."},
		{Name: component + "_skipped", Kind: metricdoc.Counter, Help: "Records that could not be decoded or encoded and were dropped (on_error: skip, or skipped by the format)."},
		{Name: component + "_dead_letter", Kind: metricdoc.Counter, Help: "Records that could not be decoded or encoded and were passed on flagged with the error (on_error: dead_letter)."},
	}
}

// NewBad returns the bad-record handler of a component, with counters
// `<component>_failed`, `<component>_skipped` and `<component>_dead_letter`.
func NewBad(component string, policy Policy, mgr *service.Resources) *Bad {
	m := mgr.Metrics()
	return &Bad{
		policy: policy, component: component, log: mgr.Logger(), run: halt.For(mgr),
		failed:     m.NewCounter(component + "_failed"),
		skipped:    m.NewCounter(component + "_skipped"),
		deadLetter: m.NewCounter(component + "_dead_letter"),
	}
}

// Handle applies the policy to msg, which could not be processed because of
// cause; at locates it (Locate, LocateIndex, LocateRecord). It returns the
// messages to pass on: msg flagged with the error under PolicyDeadLetter,
// none otherwise. stop is true under PolicyFail: Handle has stopped the run
// and the caller must neither pass on nor acknowledge anything at or after
// msg that it can hold back.
func (b *Bad) Handle(msg *service.Message, at string, cause error) (out service.MessageBatch, stop bool) {
	err := fmt.Errorf("%s%s: %w", b.component, at, cause)
	switch b.policy {
	case PolicySkip:
		b.skipped.Incr(1)
		b.logSkipped(err, time.Now())
		return nil, false
	case PolicyDeadLetter:
		b.deadLetter.Incr(1)
		msg.SetError(err)
		return service.MessageBatch{msg}, false
	}
	b.failed.Incr(1)
	b.stop(fmt.Errorf("%w (%s: %s ends the run; %s or %s keep it going)", err, FieldOnError, PolicyFail, PolicySkip, PolicyDeadLetter))
	return nil, true
}

// stop ends the run with err, logged once: by the caller whose error ends
// it, not by later bad records while the run winds down.
func (b *Bad) stop(err error) {
	b.run.Stop(err)
	if b.run.Err() == err {
		b.log.Errorf("stopping the run: %v", err)
	}
}

// Skipped counts a record that the format itself skipped
// (`ignore-parse-errors`, `allow-comments`).
func (b *Bad) Skipped() { b.skipped.Incr(1) }

func (b *Bad) logSkipped(err error, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.mu.lastLog) < SkipLogInterval {
		b.mu.suppressed++
		return
	}
	if b.mu.suppressed > 0 {
		b.log.Warnf("skipped a bad record (and %d more since the last report): %v", b.mu.suppressed, err)
	} else {
		b.log.Warnf("skipped a bad record: %v", err)
	}
	b.mu.lastLog, b.mu.suppressed = now, 0
}
