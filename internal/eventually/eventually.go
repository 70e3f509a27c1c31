// Package eventually waits, in tests, for a condition to hold: it polls the
// condition until a deadline, and if the deadline passes first it fails the
// test saying what it waited for and, where the condition reports it, the
// state it saw last. It is the one way the project's tests wait (STYLE.md: no
// time.Sleep to wait for a condition, poll with a deadline).
//
//	eventually.True(t, 5*time.Second, "both partitions idle", func() bool {
//		return tr.Stats().Idle == 2
//	})
//
//	eventually.NoError(t, time.Minute, "every partition committed", func() error {
//		if got := committed(); len(got) < partitions {
//			return fmt.Errorf("committed %v", got)
//		}
//		return nil
//	})
//
// The condition runs on the test's goroutine, so it may call t.Fatal itself
// for a state that no amount of waiting fixes.
//
// A test that must show that something does NOT happen should wait for a
// later event that implies it (a later record delivered, a metric moved, a
// log line written) and then check. Where the absence over a period is the
// property itself, Never makes that bounded wait explicit.
package eventually

import (
	"errors"
	"testing"
	"time"
)

// Poll intervals: the first poll is at once, the next FirstInterval later,
// and each interval doubles up to MaxInterval. A condition that holds soon
// (an in-process state change) is seen within a millisecond or two of it; a
// slow one (a broker round trip, a process writing a log line) costs at
// most one poll every MaxInterval, not a busy loop, and is seen at most
// MaxInterval late (a test that acts at a point of a stream, such as a
// SIGKILL at a share of the output, does not overshoot it by much).
const (
	FirstInterval = time.Millisecond
	MaxInterval   = 20 * time.Millisecond
)

// True polls cond until it returns true. If timeout passes first, it fails t
// with "timed out after <timeout> waiting for <what>".
func True(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if poll(timeout, func() error {
		if cond() {
			return nil
		}
		return errNotYet
	}) != nil {
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// errNotYet is True's error for a condition that does not hold yet.
var errNotYet = errors.New("not yet")

// NoError polls f until it returns nil. If timeout passes first, it fails t
// with "timed out after <timeout> waiting for <what>; last: <f's last
// error>": f's error says what it saw (a count, a metric, an offset).
func NoError(t testing.TB, timeout time.Duration, what string, f func() error) {
	t.Helper()
	if err := poll(timeout, f); err != nil {
		t.Fatalf("timed out after %v waiting for %s; last: %v", timeout, what, err)
	}
}

// Never polls cond for the whole of d and fails t as soon as it returns
// true, with "<what> within <d> (after <elapsed>)". It is for a property
// that is an absence over a period (a write that must keep waiting, a
// commit that must not happen while a record is in flight); say in a
// comment why no later event can stand for it.
func Never(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	start := time.Now()
	held := false
	_ = poll(d, func() error {
		if cond() {
			held = true
			return nil
		}
		return errNotYet
	})
	if held {
		t.Fatalf("%s within %v (after %v)", what, d.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	}
}

// poll calls f until it returns nil, and once more at the deadline, and
// returns f's last error (nil if it held).
func poll(timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for n := 0; ; n++ {
		err := f()
		if err == nil {
			return nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return err
		}
		time.Sleep(min(interval(n), left))
	}
}

// interval is the wait after the n-th poll (from 0): FirstInterval doubled
// n times, at most MaxInterval.
func interval(n int) time.Duration {
	return min(FirstInterval<<min(n, 16), MaxInterval)
}
