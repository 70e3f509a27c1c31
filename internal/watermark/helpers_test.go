package watermark

import (
	"sync"
	"testing"
	"time"
)

// fakeClock is a Clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newTracker(t testing.TB, cfg Config) *Tracker {
	t.Helper()
	tr, err := NewTracker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func addPartition(t testing.TB, tr *Tracker, topic string, id int32) *Partition {
	t.Helper()
	p, err := tr.Add(topic, id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ids(ps []*Partition) []int32 {
	var out []int32
	for _, p := range ps {
		out = append(out, p.ID())
	}
	return out
}
