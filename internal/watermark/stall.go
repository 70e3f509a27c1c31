package watermark

import "time"

// Stall is the combined watermark standing still, and the partitions that
// hold it there.
//
// A window downstream fires only once the watermark passes its end, so a
// combined watermark that never moves means windows that never fire. The
// common cause is a partition without records (no data was ever written to
// it, or its producers stopped) while idleness is off: it keeps its old
// watermark (or none at all) and, being the minimum, holds the combined
// watermark there for good. Flink behaves the same and says nothing; its
// cure is `scan.watermark.idle-timeout` (`WatermarkStrategy.withIdleness`),
// here Config.IdleTimeout.
//
// The partitions held to blame (Held) are those that make the stall: every
// non-idle partition at or below the combined watermark, each without a
// record for at least StallWarning, while at least one other non-idle
// partition is ahead of it (so that idleness would let the combined
// watermark move). A partition at the minimum that does receive records
// (its event times lag the others') is not silent: then nothing is
// reported, as idleness would not help. Nor when every partition stands at
// the same watermark, or is idle: the source as a whole has no newer data.
type Stall struct {
	// Watermark is the combined watermark, NoWatermark if there is none.
	Watermark int64
	// For is how long the combined watermark has not advanced.
	For time.Duration
	// Held are the partitions that hold it back, in the order they were
	// added; empty while it has stood still for less than StallWarning,
	// or when silent partitions are not what holds it (see Stall).
	Held []HeldPartition
}

// HeldPartition is one partition that holds the combined watermark back.
type HeldPartition struct {
	Topic     string
	Partition int32
	// Watermark is the partition's own watermark, NoWatermark if it never
	// had a record.
	Watermark int64
	// Silent is how long it has had no record (since it was added, if it
	// never had one), to the precision of the Tick interval.
	Silent time.Duration
}

// stallEpisode is the current stretch of time in which the combined
// watermark has not changed: since when (clock nanos since the tracker's
// base), and whether it was reported.
type stallEpisode struct {
	watermark int64
	since     int64
	warned    bool
}

// CheckStall returns how long the combined watermark has stood still and
// which partitions hold it back (Stall), and warn: true the first time in
// a stall episode that Held is not empty. An episode ends when the combined
// watermark advances; a watermark that stands still for ever is reported
// once. With StallWarning 0 it reports nothing. Call it after Tick, which
// measures the partitions' silence.
func (t *Tracker) CheckStall() (s Stall, warn bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	c := t.combined.Load()
	ep := &t.mu.stall
	if c != ep.watermark {
		*ep = stallEpisode{watermark: c, since: now}
	}
	s = Stall{Watermark: c, For: time.Duration(now - ep.since)}
	limit := int64(t.cfg.StallWarning)
	if limit <= 0 || now-ep.since < limit {
		return s, false
	}
	ahead := false
	for _, p := range *t.parts.Load() {
		st := p.state.Load()
		if st == stateIdle {
			continue
		}
		wm := p.wm.Load()
		if wm > c {
			ahead = true
			continue
		}
		silent := now - p.lastSeen
		if st == stateSeen || p.paused.Load() || silent < limit {
			// At the minimum and not silent: its event times, not
			// its silence, hold the watermark.
			return s, false
		}
		s.Held = append(s.Held, HeldPartition{Topic: p.topic, Partition: p.id, Watermark: wm, Silent: time.Duration(silent)})
	}
	if !ahead || len(s.Held) == 0 {
		s.Held = nil
		return s, false
	}
	warn = !ep.warned
	ep.warned = true
	return s, warn
}
