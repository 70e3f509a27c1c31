package watermark

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// ErrAlreadyAligned is returned by Registry.Join for a tracker that already
// has an Aligner.
var ErrAlreadyAligned = errors.New("tracker already in an alignment group")

// Registry holds named alignment groups. Trackers that join the same group
// of one Registry align with each other; a process uses DefaultRegistry so
// that every source naming a group shares it (Flink aligns the sources of
// one job that share scan.watermark.alignment.group).
type Registry struct {
	mu struct {
		sync.Mutex
		groups map[string][]*Aligner
	}
}

var defaultRegistry = NewRegistry()

// DefaultRegistry is the process-wide registry.
func DefaultRegistry() *Registry { return defaultRegistry }

// NewRegistry returns an empty registry (for tests, or to isolate groups).
func NewRegistry() *Registry {
	r := &Registry{}
	r.mu.groups = make(map[string][]*Aligner)
	return r
}

// Aligner is one tracker's membership of an alignment group.
type Aligner struct {
	r        *Registry
	t        *Tracker
	cfg      AlignmentConfig
	maxDrift int64 // ms
}

// Join adds t to the group cfg.Group. A tracker joins at most one group.
func (r *Registry) Join(cfg AlignmentConfig, t *Tracker) (*Aligner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	a := &Aligner{r: r, t: t, cfg: cfg, maxDrift: cfg.MaxDrift.Milliseconds()}

	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.aligner != nil {
		return nil, fmt.Errorf("watermark: alignment group %q: %w", cfg.Group, ErrAlreadyAligned)
	}
	t.mu.aligner = a

	r.mu.Lock()
	r.mu.groups[cfg.Group] = append(r.mu.groups[cfg.Group], a)
	r.mu.Unlock()
	return a, nil
}

// Config is the aligner's configuration with defaults applied.
func (a *Aligner) Config() AlignmentConfig { return a.cfg }

// Leave removes the tracker from its group, so that it no longer holds the
// group back, and returns its paused partitions, now marked resumed (a
// closing source may ignore them).
func (a *Aligner) Leave() (resume []*Partition) {
	a.r.mu.Lock()
	g := a.r.mu.groups[a.cfg.Group]
	if i := slices.Index(g, a); i >= 0 {
		g = slices.Delete(slices.Clone(g), i, i+1)
		if len(g) == 0 {
			delete(a.r.mu.groups, a.cfg.Group)
		} else {
			a.r.mu.groups[a.cfg.Group] = g
		}
	}
	a.r.mu.Unlock()

	a.t.mu.Lock()
	defer a.t.mu.Unlock()
	if a.t.mu.aligner == a {
		a.t.mu.aligner = nil
	}
	now := a.t.now()
	for _, p := range *a.t.parts.Load() {
		if p.paused.Load() {
			p.paused.Store(false)
			p.lastSeen = now
			resume = append(resume, p)
		}
	}
	return resume
}

// GroupWatermark is the group's minimum: the lowest combined watermark of
// the group's trackers that are not idle and have a watermark. ok is false
// when there is none: every tracker in the group is idle (all its
// partitions idle, or it has none) or has no watermark yet.
//
// A tracker without a watermark yet (one of its partitions has had no
// record and is not idle) does not count, as in Flink, where a source
// reader reports nothing to the alignment coordinator before its first
// watermark: an empty partition never pauses the rest of the group, even
// with idleness disabled.
func (a *Aligner) GroupWatermark() (min int64, ok bool) {
	a.r.mu.Lock()
	defer a.r.mu.Unlock()
	min = math.MaxInt64
	for _, m := range a.r.mu.groups[a.cfg.Group] {
		w := m.t.Watermark()
		if w == NoWatermark || !m.t.active() {
			continue
		}
		ok = true
		if w < min {
			min = w
		}
	}
	if !ok {
		return NoWatermark, false
	}
	return min, true
}

// Update is the alignment step; call it every UpdateInterval. It returns
// the partitions of this tracker to pause (watermark more than MaxDrift
// above the group's minimum) and to resume (paused, and now within
// MaxDrift); the caller pauses and resumes fetching them
// (kgo.Client.PauseFetchPartitions / ResumeFetchPartitions). Both are nil
// when nothing changes. A partition with no watermark is never paused; when
// the group has no minimum (see GroupWatermark), every paused partition is
// resumed.
//
// Flink compares each split's watermark with the group minimum plus
// max-drift in the same way (FLIP-182, FLIP-217).
func (a *Aligner) Update() (pause, resume []*Partition) {
	lo, ok := a.GroupWatermark()
	limit := int64(math.MaxInt64)
	if ok && lo <= math.MaxInt64-a.maxDrift {
		limit = lo + a.maxDrift
	}

	a.t.mu.Lock()
	defer a.t.mu.Unlock()
	now := a.t.now()
	for _, p := range *a.t.parts.Load() {
		w := p.wm.Load()
		ahead := w != NoWatermark && w > limit
		switch {
		case ahead && !p.paused.Load():
			p.paused.Store(true)
			pause = append(pause, p)
		case !ahead && p.paused.Load():
			p.paused.Store(false)
			p.lastSeen = now // idleness restarts from the resumption
			resume = append(resume, p)
		}
	}
	return pause, resume
}
