package eventually

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// recorder is the testing.TB the helpers are tested with: Fatalf records the
// failure and ends the goroutine, as testing's does.
type recorder struct {
	testing.TB // nil: the helpers call only Helper and Fatalf
	failure    string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failure = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls f with a recorder on a goroutine of its own and waits for it. It
// returns the recorder's failure ("" if none) and whether f returned (a
// Fatalf ends it before).
func run(f func(t testing.TB)) (failure string, returned bool) {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
		returned = true
	}()
	<-done
	return r.failure, returned
}

// calls counts the calls of a condition and keeps their times.
type calls struct{ at []time.Time }

func (c *calls) add() int {
	c.at = append(c.at, time.Now())
	return len(c.at)
}

func TestTrueReturnsAsSoonAsTheConditionHolds(t *testing.T) {
	t.Parallel()
	var c calls
	began := time.Now()
	failure, returned := run(func(t testing.TB) {
		True(t, time.Minute, "the third call", func() bool { return c.add() == 3 })
	})
	if !returned || failure != "" {
		t.Fatalf("True failed: %q", failure)
	}
	if len(c.at) != 3 {
		t.Fatalf("the condition was called %d times, want 3: True returns once it holds", len(c.at))
	}
	if took := time.Since(began); took > 30*time.Second {
		t.Fatalf("True returned after %v, want at once (the condition held on its third poll)", took)
	}

	c = calls{}
	run(func(t testing.TB) { True(t, time.Minute, "the first call", func() bool { c.add(); return true }) })
	if len(c.at) != 1 {
		t.Fatalf("a condition that holds at once was called %d times, want 1", len(c.at))
	}
}

func TestTrueFailsWithWhatItWaitedFor(t *testing.T) {
	t.Parallel()
	var c calls
	failure, returned := run(func(t testing.TB) {
		True(t, 30*time.Millisecond, "the partitions to go idle", func() bool { c.add(); return false })
	})
	if returned {
		t.Fatal("True returned although the condition never held")
	}
	if want := "timed out after 30ms waiting for the partitions to go idle"; failure != want {
		t.Fatalf("failure %q, want %q", failure, want)
	}
	if last := c.at[len(c.at)-1]; last.Sub(c.at[0]) < 30*time.Millisecond {
		t.Fatalf("the last poll came %v after the first: True gave up before its timeout", last.Sub(c.at[0]))
	}
}

func TestNoErrorFailsWithTheLastState(t *testing.T) {
	t.Parallel()
	var c calls
	failure, returned := run(func(t testing.TB) {
		NoError(t, 30*time.Millisecond, "10 records", func() error {
			return fmt.Errorf("%d records", c.add())
		})
	})
	if returned {
		t.Fatal("NoError returned although the condition never held")
	}
	want := fmt.Sprintf("timed out after 30ms waiting for 10 records; last: %d records", len(c.at))
	if failure != want {
		t.Fatalf("failure %q, want %q (the state of the last poll)", failure, want)
	}

	c = calls{}
	failure, returned = run(func(t testing.TB) {
		NoError(t, time.Minute, "the second call", func() error {
			if c.add() < 2 {
				return errors.New("first call")
			}
			return nil
		})
	})
	if !returned || failure != "" || len(c.at) != 2 {
		t.Fatalf("NoError: returned %v, failure %q, %d calls; want it to return after the second call", returned, failure, len(c.at))
	}
}

// The condition may end the test itself; nothing runs after it.
func TestConditionMayFailTheTest(t *testing.T) {
	t.Parallel()
	var c calls
	failure, returned := run(func(t testing.TB) {
		True(t, time.Minute, "never", func() bool {
			c.add()
			t.Fatalf("a state no waiting fixes")
			return false
		})
	})
	if returned || failure != "a state no waiting fixes" || len(c.at) != 1 {
		t.Fatalf("returned %v, failure %q, %d calls; want the condition's own failure after one call", returned, failure, len(c.at))
	}
}

func TestNeverFailsAsSoonAsItHappens(t *testing.T) {
	t.Parallel()
	var c calls
	began := time.Now()
	failure, returned := run(func(t testing.TB) {
		Never(t, time.Minute, "a commit", func() bool { return c.add() == 4 })
	})
	if returned {
		t.Fatal("Never returned although the condition held")
	}
	if !strings.HasPrefix(failure, "a commit within 1m0s (after ") {
		t.Fatalf("failure %q, want it to name what happened and the period", failure)
	}
	if len(c.at) != 4 {
		t.Fatalf("the condition was called %d times, want 4: Never fails at the first poll that sees it", len(c.at))
	}
	if took := time.Since(began); took > 30*time.Second {
		t.Fatalf("Never failed after %v, want at once", took)
	}
}

func TestNeverWaitsTheWholePeriod(t *testing.T) {
	t.Parallel()
	var c calls
	began := time.Now()
	failure, returned := run(func(t testing.TB) {
		Never(t, 30*time.Millisecond, "a commit", func() bool { c.add(); return false })
	})
	if !returned || failure != "" {
		t.Fatalf("Never failed although the condition never held: %q", failure)
	}
	if last := c.at[len(c.at)-1]; last.Sub(began) < 30*time.Millisecond {
		t.Fatalf("the last poll came %v after the start, want at the end of the 30ms period", last.Sub(began))
	}
}

func TestIntervals(t *testing.T) {
	t.Parallel()
	for n, want := range []time.Duration{1, 2, 4, 8, 16, 20, 20} {
		if got := interval(n); got != want*time.Millisecond {
			t.Errorf("interval(%d) = %v, want %v", n, got, want*time.Millisecond)
		}
	}
	if got := interval(1000); got != MaxInterval {
		t.Errorf("interval(1000) = %v, want %v", got, MaxInterval)
	}
}

// Polls follow the intervals: the first at once, then never sooner than
// the schedule (no busy loop), and the last at the deadline.
func TestPollsFollowTheIntervals(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	var c calls
	began := time.Now()
	run(func(t testing.TB) { True(t, timeout, "never", func() bool { c.add(); return false }) })
	// At most one poll per interval fits in the timeout, plus the first
	// and the one at the deadline.
	most, sum := 1, time.Duration(0)
	for n := 0; sum < timeout; n++ {
		sum += interval(n)
		most++
	}
	if len(c.at) < 2 || len(c.at) > most {
		t.Fatalf("%d polls in %v, want between 2 and %d", len(c.at), timeout, most)
	}
	for i := 1; i < len(c.at)-1; i++ {
		if gap := c.at[i].Sub(c.at[i-1]); gap < interval(i-1) {
			t.Errorf("poll %d came %v after the one before, want at least %v", i, gap, interval(i-1))
		}
	}
	if last := c.at[len(c.at)-1].Sub(began); last < timeout {
		t.Errorf("the last poll came %v after the start, want at the deadline (%v)", last, timeout)
	}
}
