package halt

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// resetProcess clears the process-wide state that Stop sets, so each test
// sees its own first error. The tests of this package are not parallel.
func resetProcess(t *testing.T) {
	reset := func() {
		process.mu.Lock()
		defer process.mu.Unlock()
		process.hook, process.first, process.ending = nil, nil, nil
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

func TestEndIsNotStop(t *testing.T) {
	resetProcess(t)
	r := newRun()
	if r.IsEnding() {
		t.Fatal("a new run is ending")
	}
	r.End()
	r.End()
	if !r.IsEnding() {
		t.Fatal("Ending not closed after End")
	}
	if r.Stopped() {
		t.Fatal("End blocked commits: only Stop does")
	}
	select {
	case <-r.Done():
		t.Fatal("Done closed by End")
	default:
	}
	if ProcessErr() != nil {
		t.Fatalf("End set a process error: %v", ProcessErr())
	}
}

func TestStopEnds(t *testing.T) {
	resetProcess(t)
	r := newRun()
	r.Stop(errors.New("bad record"))
	select {
	case <-r.Ending():
	default:
		t.Fatal("Ending not closed after Stop")
	}
}

func TestWithEndingCancelsOnEnd(t *testing.T) {
	resetProcess(t)
	r := newRun()
	ctx, cancel := r.WithEnding(context.Background())
	defer cancel()
	if ctx.Err() != nil {
		t.Fatal("cancelled before the end")
	}
	r.End()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("not cancelled after End")
	}
	if !IsEndingCause(ctx) {
		t.Fatalf("cause = %v, want the run's end", context.Cause(ctx))
	}

	// A plain cancel is not the run's end.
	ctx2, cancel2 := newRun().WithEnding(context.Background())
	cancel2()
	if IsEndingCause(ctx2) {
		t.Fatal("a cancelled context reads as the run's end")
	}
}

// A signal given to EndOnSignals ends runs created after it, whether they
// asked for Ending before or after the signal.
func TestEndOnSignals(t *testing.T) {
	resetProcess(t)
	EndOnSignals(syscall.SIGUSR1)
	before := newRun()
	watching := before.Ending()
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-watching:
	case <-time.After(5 * time.Second):
		t.Fatal("Ending not closed after the signal")
	}
	if after := newRun(); !after.IsEnding() {
		t.Fatal("a run created after the signal is not ending")
	}
	if before.Stopped() {
		t.Fatal("a signal blocked commits")
	}
}
