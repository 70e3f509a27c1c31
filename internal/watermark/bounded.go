package watermark

import (
	"math"
	"time"
)

// NoWatermark is the watermark before any event time has been seen: the
// smallest int64, as Flink's Long.MIN_VALUE. Nothing is late against it.
const NoWatermark int64 = math.MinInt64

// BoundedOutOfOrderness is Flink's BoundedOutOfOrdernessWatermarks for one
// partition: the watermark is the largest event time seen minus the bound
// minus 1ms, so a record exactly bound behind the largest is still on time
// and the watermark never decreases. Event times are Unix milliseconds.
//
// It is plain state with no synchronisation: one goroutine owns it.
type BoundedOutOfOrderness struct {
	maxTs int64 // largest event time seen, NoWatermark before the first
	bound int64 // max out-of-orderness, ms
}

// NewBoundedOutOfOrderness returns a generator that has seen nothing; its
// watermark is NoWatermark. bound is truncated to whole milliseconds and
// negative bounds count as 0.
func NewBoundedOutOfOrderness(bound time.Duration) BoundedOutOfOrderness {
	return BoundedOutOfOrderness{maxTs: NoWatermark, bound: max(bound.Milliseconds(), 0)}
}

// Observe feeds one event time and reports whether the watermark advanced.
func (b *BoundedOutOfOrderness) Observe(eventTime int64) bool {
	if eventTime <= b.maxTs {
		return false
	}
	b.maxTs = eventTime
	return true
}

// Watermark is max event time - bound - 1ms, or NoWatermark if that would
// underflow (including before the first event), which is what Flink gets by
// starting maxTimestamp at Long.MIN_VALUE + bound + 1.
func (b *BoundedOutOfOrderness) Watermark() int64 {
	if b.maxTs < math.MinInt64+b.bound+1 {
		return NoWatermark
	}
	return b.maxTs - b.bound - 1
}
