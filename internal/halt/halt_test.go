package halt

import (
	"errors"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// resetProcess clears the process-wide state that Stop sets, so each test
// sees its own first error. The tests of this package are not parallel.
func resetProcess(t *testing.T) {
	reset := func() {
		process.mu.Lock()
		defer process.mu.Unlock()
		process.hook, process.first = nil, nil
	}
	reset()
	t.Cleanup(reset)
}

func TestStopFirstErrorWins(t *testing.T) {
	resetProcess(t)
	r := newRun()
	if r.Stopped() || r.Err() != nil {
		t.Fatal("a new run is stopped")
	}
	select {
	case <-r.Done():
		t.Fatal("Done closed before Stop")
	default:
	}
	first, second := errors.New("first"), errors.New("second")
	r.Stop(first)
	r.Stop(second)
	if !r.Stopped() || !errors.Is(r.Err(), first) {
		t.Fatalf("Err = %v, want %v", r.Err(), first)
	}
	select {
	case <-r.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
}

func TestForSharesStateWithinResources(t *testing.T) {
	mgr := service.MockResources()
	a, b := For(mgr), For(mgr)
	if a != b {
		t.Fatal("two components of one stream got different halt states")
	}
	if For(service.MockResources()) == a {
		t.Fatal("two streams share a halt state")
	}
	if own1, own2 := For(nil), For(nil); own1 == own2 {
		t.Fatal("components without resources share a halt state")
	}
}

func TestProcessHookRunsOnceWithTheFirstError(t *testing.T) {
	resetProcess(t)
	var got []error
	SetProcessHook(func(err error) { got = append(got, err) })
	first := errors.New("bad record at topic t partition 0 offset 7")
	For(nil).Stop(first)
	For(nil).Stop(errors.New("later"))
	if len(got) != 1 || got[0] != first {
		t.Fatalf("hook calls = %v, want one with %v", got, first)
	}
	if ProcessErr() != first {
		t.Fatalf("ProcessErr = %v, want %v", ProcessErr(), first)
	}
}
