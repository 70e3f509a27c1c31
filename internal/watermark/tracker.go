package watermark

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Partition states. A record stores stateSeen (cheap: one load, and a store
// only when the state was something else); Tick turns stateSeen back into
// stateActive and, after IdleTimeout of stateActive, into stateIdle. A record
// on an idle partition overwrites stateIdle with stateSeen, even if it races
// with Tick's compare-and-swap: the record wins.
const (
	stateActive uint32 = iota // non-idle, no record since the last Tick
	stateSeen                 // non-idle, a record since the last Tick
	stateIdle                 // idle: ignored by the combined minimum
)

// Partition is one partition's watermark state inside a Tracker. Observe
// must be called by one goroutine at a time (the partition's reader); every
// other method and every Tracker method may be called from any goroutine.
type Partition struct {
	// Written by the reader, read by everyone.
	wm    atomic.Int64
	state atomic.Uint32

	id int32 // immutable, here for packing

	// Owned by the reader.
	gen BoundedOutOfOrderness

	// Immutable.
	t     *Tracker
	topic string

	// Written under t.mu; paused is also read lock-free for metrics.
	lastSeen int64 // clock nanos of the last Tick that saw activity
	paused   atomic.Bool

	// Pad to 128 bytes, a size class whose objects never share a cache
	// line pair, so readers of different partitions do not false-share.
	_ [55]byte
}

// Topic is the partition's topic.
func (p *Partition) Topic() string { return p.topic }

// ID is the partition number.
func (p *Partition) ID() int32 { return p.id }

// Watermark is this partition's own watermark (NoWatermark before its first
// record): largest event time - max out-of-orderness - 1ms.
func (p *Partition) Watermark() int64 { return p.wm.Load() }

// Idle reports whether the partition is idle.
func (p *Partition) Idle() bool { return p.state.Load() == stateIdle }

// Paused reports whether the partition's Aligner has asked for it to be
// paused and not yet resumed.
func (p *Partition) Paused() bool { return p.paused.Load() }

// Observe records a record's event time (Unix ms) on this partition. It
// returns the combined watermark to attach to the record, and late: whether
// the event time is at or below the combined watermark as it stood when the
// record arrived (never late while the combined watermark is NoWatermark).
// A record on an idle partition makes it active again. Calling Observe
// after Remove is harmless: the partition no longer counts.
//
// Cost: two atomic loads, no allocation, no lock; when the record advances
// the partition's watermark, one atomic store, and when that also moves the
// partition past the combined watermark, a scan of the tracker's partitions.
func (p *Partition) Observe(eventTime int64) (watermark int64, late bool) {
	c := p.t.combined.Load()
	late = c != NoWatermark && eventTime <= c
	wasIdle := false
	if st := p.state.Load(); st != stateSeen {
		p.state.Store(stateSeen)
		wasIdle = st == stateIdle
	}
	if p.gen.Observe(eventTime) {
		old := p.wm.Load()
		if w := p.gen.Watermark(); w > old {
			p.wm.Store(w)
			// The combined minimum can rise only if this partition may have
			// held it (old <= c) and no longer does (w > c).
			if old <= c && w > c {
				return p.t.recompute(), late
			}
		}
	}
	if wasIdle {
		// Rejoining the minimum can raise it too: when every partition was
		// idle, the combined watermark stayed below this one's.
		c = p.t.recompute()
	}
	return c, late
}

// Stats are a Tracker's metrics at one moment.
type Stats struct {
	Watermark  int64 // combined watermark, NoWatermark before there is one
	Partitions int   // partitions tracked
	Idle       int   // idle partitions
	Paused     int   // partitions paused by alignment
}

// PartitionStats is one partition's metrics.
type PartitionStats struct {
	Topic     string
	Partition int32
	Watermark int64
	Idle      bool
	Paused    bool
}

// Tracker combines the watermarks of one source's partitions: the combined
// watermark is the minimum over non-idle partitions and never decreases.
// Hot-path calls (Partition.Observe, Watermark, Late) take no lock;
// Add, Remove, Tick and Aligner.Update serialise on a mutex.
type Tracker struct {
	combined atomic.Int64
	_        [56]byte // keep the hot, read-mostly combined on its own line

	parts atomic.Pointer[[]*Partition] // copy-on-write under mu

	cfg   Config
	clock Clock
	base  time.Time // clock reading at creation; lastSeen counts from it

	// mu serialises the owner-side operations (Add, Remove, Tick, Update,
	// Join, Leave): it guards writes to parts and to each partition's
	// lastSeen and paused.
	mu struct {
		sync.Mutex
		// index finds a partition by topic and number, so that Add
		// does not scan every partition (10,000 Adds were quadratic).
		index   map[partitionKey]*Partition
		aligner *Aligner
		// stall is CheckStall's episode (stall.go).
		stall stallEpisode
	}
}

// NewTracker returns a tracker with no partitions and no watermark.
func NewTracker(cfg Config) (*Tracker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	t := &Tracker{cfg: cfg, clock: cfg.Clock, base: cfg.Clock.Now()}
	t.combined.Store(NoWatermark)
	t.parts.Store(new([]*Partition))
	t.mu.index = map[partitionKey]*Partition{}
	t.mu.stall = stallEpisode{watermark: NoWatermark}
	return t, nil
}

// Config is the tracker's configuration with defaults applied.
func (t *Tracker) Config() Config { return t.cfg }

// Add starts tracking a partition (on assignment). The partition starts
// active with no watermark, so it holds the combined watermark where it is
// until its first record or until it has been silent for IdleTimeout. It
// never pulls the combined watermark back: if its first records are behind
// it, they are late.
func (t *Tracker) Add(topic string, partition int32) (*Partition, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := partitionKey{topic: topic, partition: partition}
	if t.mu.index[key] != nil {
		return nil, fmt.Errorf("watermark: topic %q partition %d: %w", topic, partition, ErrPartitionExists)
	}
	old := *t.parts.Load()
	p := &Partition{
		t:        t,
		topic:    topic,
		id:       partition,
		gen:      NewBoundedOutOfOrderness(t.cfg.MaxOutOfOrderness),
		lastSeen: t.now(),
	}
	p.wm.Store(NoWatermark)
	p.state.Store(stateActive)
	// Appending in place is safe for readers of the old slice: they see
	// only its first len(old) elements, which do not change; a slice
	// that has no room left is copied. Adds are amortised O(1).
	parts := append(old, p)
	t.parts.Store(&parts)
	t.mu.index[key] = p
	return p, nil
}

// partitionKey names a partition in a Tracker's index.
type partitionKey struct {
	topic     string
	partition int32
}

// Remove stops tracking a partition (on revocation). If it was holding the
// combined watermark back, the combined watermark advances. The caller stops
// calling p.Observe first; a paused partition need not be resumed.
func (t *Tracker) Remove(p *Partition) { t.RemoveAll(p) }

// RemoveAll stops tracking the partitions ps, as Remove does, with one copy
// of the partition list and one recompute of the combined watermark for all
// of them (10,000 Removes one by one were quadratic). Partitions not
// tracked are ignored.
func (t *Tracker) RemoveAll(ps ...*Partition) {
	t.mu.Lock()
	gone := make(map[*Partition]bool, len(ps))
	for _, p := range ps {
		key := partitionKey{topic: p.topic, partition: p.id}
		if t.mu.index[key] == p {
			gone[p] = true
			delete(t.mu.index, key)
		}
	}
	if len(gone) == 0 {
		t.mu.Unlock()
		return
	}
	old := *t.parts.Load()
	parts := make([]*Partition, 0, len(old)-len(gone))
	for _, p := range old {
		if !gone[p] {
			parts = append(parts, p)
		}
	}
	t.parts.Store(&parts)
	for p := range gone {
		p.paused.Store(false)
	}
	t.mu.Unlock()
	t.recompute()
}

// Watermark is the combined watermark (Unix ms), NoWatermark before there is
// one. It never decreases.
func (t *Tracker) Watermark() int64 { return t.combined.Load() }

// Late reports whether eventTime (Unix ms) is at or below the combined
// watermark: Flink drops or side-outputs such records in event-time windows.
func (t *Tracker) Late(eventTime int64) bool {
	c := t.combined.Load()
	return c != NoWatermark && eventTime <= c
}

// Tick re-evaluates idleness and returns the combined watermark. Call it
// every EmitInterval, and emit the result downstream (a source with no
// records still advances its watermark when a partition goes idle).
//
// A partition becomes idle on the first Tick at least IdleTimeout after the
// last Tick that saw a record on it (Flink's IdlenessTimer does the same
// with its activity counter). Paused partitions never become idle: they are
// silent because alignment paused them, and their IdleTimeout restarts
// when they are resumed.
func (t *Tracker) Tick() int64 {
	t.mu.Lock()
	now := t.now()
	for _, p := range *t.parts.Load() {
		if p.state.CompareAndSwap(stateSeen, stateActive) || p.paused.Load() {
			p.lastSeen = now
			continue
		}
		if t.cfg.IdleTimeout > 0 && now-p.lastSeen >= int64(t.cfg.IdleTimeout) {
			p.state.CompareAndSwap(stateActive, stateIdle)
		}
	}
	t.mu.Unlock()
	return t.recompute()
}

// Stats returns the tracker's metrics.
func (t *Tracker) Stats() Stats {
	s := Stats{Watermark: t.combined.Load()}
	for _, p := range *t.parts.Load() {
		s.Partitions++
		if p.Idle() {
			s.Idle++
		}
		if p.Paused() {
			s.Paused++
		}
	}
	return s
}

// AppendPartitionStats appends every partition's metrics to dst, in the
// order partitions were added.
func (t *Tracker) AppendPartitionStats(dst []PartitionStats) []PartitionStats {
	for _, p := range *t.parts.Load() {
		dst = append(dst, PartitionStats{
			Topic:     p.topic,
			Partition: p.id,
			Watermark: p.Watermark(),
			Idle:      p.Idle(),
			Paused:    p.Paused(),
		})
	}
	return dst
}

// active reports whether any partition is non-idle: a tracker with no
// partitions, or only idle ones, does not hold back its alignment group.
func (t *Tracker) active() bool {
	for _, p := range *t.parts.Load() {
		if p.state.Load() != stateIdle {
			return true
		}
	}
	return false
}

// recompute raises the combined watermark to the minimum over non-idle
// partitions if that is higher, and returns the combined watermark. With no
// non-idle partition it stays where it is. Safe from any goroutine. Every
// value it reads is at most the partition's current watermark, so the
// result never exceeds the true minimum; when readers race (one scans while
// another publishes), it can lag it until the next recompute, at the latest
// the next Tick.
func (t *Tracker) recompute() int64 {
	lo, any := int64(math.MaxInt64), false
	for _, p := range *t.parts.Load() {
		if p.state.Load() == stateIdle {
			continue
		}
		any = true
		lo = min(lo, p.wm.Load())
	}
	for {
		c := t.combined.Load()
		if !any || lo <= c {
			return c
		}
		if t.combined.CompareAndSwap(c, lo) {
			return lo
		}
	}
}

// now is nanoseconds since the tracker was created, on the monotonic clock
// when the Clock provides one.
func (t *Tracker) now() int64 {
	return int64(t.clock.Now().Sub(t.base))
}
