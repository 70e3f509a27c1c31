package watermark_test

import (
	"fmt"
	"sync"
	"time"

	"github.com/connectd/connectd/internal/watermark"
)

// manualClock is a Clock that moves only when told, so the example is
// deterministic.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// A source reading two partitions with 5s of allowed out-of-orderness and a
// 10s idle timeout, aligned with itself with a 1 minute max drift.
func Example() {
	clock := &manualClock{now: time.Unix(0, 0)}
	tracker, err := watermark.NewTracker(watermark.Config{
		MaxOutOfOrderness: 5 * time.Second,
		IdleTimeout:       10 * time.Second,
		Clock:             clock,
	})
	if err != nil {
		panic(err)
	}
	aligner, err := watermark.NewRegistry().Join(watermark.AlignmentConfig{
		Group:    "orders",
		MaxDrift: time.Minute,
	}, tracker)
	if err != nil {
		panic(err)
	}
	p0, _ := tracker.Add("orders", 0)
	p1, _ := tracker.Add("orders", 1)

	// Readers call Observe on every record.
	show := func(p *watermark.Partition, eventTime int64) {
		wm, late := p.Observe(eventTime)
		if wm == watermark.NoWatermark {
			fmt.Printf("partition %d event %d: no watermark yet\n", p.ID(), eventTime)
			return
		}
		fmt.Printf("partition %d event %d: watermark %d late %v\n", p.ID(), eventTime, wm, late)
	}
	show(p0, 100_000)
	show(p1, 90_000) // combined = min(94_999, 84_999)
	show(p1, 80_000) // 10s behind partition 1's max: late
	show(p0, 200_000)

	// Every update_interval: partition 0 is more than 1 minute ahead.
	pause, _ := aligner.Update()
	for _, p := range pause {
		fmt.Printf("pause %s/%d\n", p.Topic(), p.ID())
	}

	// Partition 1 goes quiet; after the idle timeout it no longer holds the
	// combined watermark back, and partition 0 may run again.
	for range 2 {
		clock.advance(10 * time.Second)
		fmt.Println("tick: watermark", tracker.Tick())
	}
	_, resume := aligner.Update()
	for _, p := range resume {
		fmt.Printf("resume %s/%d\n", p.Topic(), p.ID())
	}
	fmt.Printf("%+v\n", tracker.Stats())

	// Output:
	// partition 0 event 100000: no watermark yet
	// partition 1 event 90000: watermark 84999 late false
	// partition 1 event 80000: watermark 84999 late true
	// partition 0 event 200000: watermark 84999 late false
	// pause orders/0
	// tick: watermark 84999
	// tick: watermark 194999
	// resume orders/0
	// {Watermark:194999 Partitions:2 Idle:1 Paused:0}
}
