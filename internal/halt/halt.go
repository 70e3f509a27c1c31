// Package halt ends a run that must not go on: a malformed record under
// `on_error: fail`, or a configuration the broker will never accept (a
// transaction timeout above its maximum, a topic that does not exist with
// auto-creation off). As a Flink job fails, the run ends with a non-zero exit
// code and the error that caused it.
//
// The end is graceful. A component calls Stop with the error; from then on
// every component of the same stream refuses to commit anything (kafka_source
// commits no offset, an exactly-once kafka_sink aborts instead of
// committing), so nothing at or after the failing record is marked done. The
// process hook that cmd/connectd installs then asks Benthos for its usual
// shutdown (SIGTERM), in which outputs close and abort their open
// transactions, and the binary exits with code 1 and the error.
//
// The state is per stream: components reach it through their
// service.Resources, so parallel tests with their own streams do not see each
// other's failures.
//
// A run also ends without an error: the process is asked to stop (SIGINT,
// SIGTERM; see EndOnSignals). Benthos then stops the stream layer by layer,
// and a layer waits for what it holds: an input for the acknowledgements of
// its records in flight, an output for its connection. Something that can
// never arrive (a broker that does not answer, a window that holds its
// records until a watermark that will not come) would hold the shutdown
// until three quarters of `shutdown_timeout`. Ending tells components at
// once, so that they give such waits up, log what they still wait for, and
// let the shutdown go on.
package halt

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Run is the halt state of one stream, shared by its components.
type Run struct {
	mu struct {
		sync.Mutex
		err error
	}
	done chan struct{}

	// ending is closed by End, by Stop, and when the process ends.
	ending    chan struct{}
	endOnce   sync.Once
	watchOnce sync.Once
}

type resourceKey struct{}

// For returns the halt state of the stream that mgr belongs to. mgr may be
// nil (a component built outside a stream, in a unit test): the state is
// then the component's own.
func For(mgr *service.Resources) *Run {
	if mgr == nil {
		return newRun()
	}
	v, _ := mgr.GetOrSetGeneric(resourceKey{}, newRun())
	return v.(*Run)
}

func newRun() *Run { return &Run{done: make(chan struct{}), ending: make(chan struct{})} }

// Stop records err as the reason the run ends and starts the end. Only the
// first error counts; later calls do nothing. err must not be nil.
func (r *Run) Stop(err error) {
	if err == nil {
		panic("halt: Stop(nil)")
	}
	r.mu.Lock()
	if r.mu.err != nil {
		r.mu.Unlock()
		return
	}
	r.mu.err = err
	close(r.done)
	r.mu.Unlock()
	r.End()
	process.stop(err)
}

// End starts the end of the run without an error: what the process's
// end (a signal, see EndOnSignals) does to every run. Commits stay allowed:
// work in flight may finish. Calling it again does nothing.
func (r *Run) End() { r.endOnce.Do(func() { close(r.ending) }) }

// Ending is closed when the run starts to end, with an error (Stop) or
// without (End, or the end of the process). A component that waits for
// something that may never come gives the wait up when it closes, and logs
// (info) what it still waits for.
func (r *Run) Ending() <-chan struct{} {
	r.watchOnce.Do(func() {
		if end := process.endingChan(); end != nil {
			go func() {
				select {
				case <-end:
					r.End()
				case <-r.ending:
				}
			}()
		}
	})
	return r.ending
}

// IsEnding reports whether Ending is closed.
func (r *Run) IsEnding() bool {
	select {
	case <-r.Ending():
		return true
	default:
	}
	// The process may have ended an instant before Ending's watch saw it.
	if end := process.endingChan(); end != nil {
		select {
		case <-end:
			return true
		default:
		}
	}
	return false
}

// WithEnding returns a copy of ctx that is also cancelled when the run
// starts to end, for calls that must not hold the shutdown (connecting to a
// broker that does not answer). The caller must call the CancelFunc.
func (r *Run) WithEnding(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := make(chan struct{})
	go func() {
		select {
		case <-r.Ending():
			cancel(errRunEnding)
		case <-stop:
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		close(stop)
		cancel(context.Canceled)
	}
}

// errRunEnding is the cause of a context from WithEnding cancelled because
// the run is ending.
var errRunEnding = errors.New("the run is ending")

// IsEndingCause reports whether ctx was cancelled because its run is ending
// (see WithEnding).
func IsEndingCause(ctx context.Context) bool { return context.Cause(ctx) == errRunEnding }

// Stopped reports whether the run is ending on an error. A component checks
// it before anything that would mark records done: committing offsets or a
// transaction.
func (r *Run) Stopped() bool { return r.Err() != nil }

// Err is the error the run stops on, nil if it does not.
func (r *Run) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.err
}

// Done is closed when the run starts to stop on an error.
func (r *Run) Done() <-chan struct{} { return r.done }

// processState is what the binary does when any stream stops on an error,
// and whether the process was asked to end.
type processState struct {
	mu    sync.Mutex
	hook  func(error)
	first error
	// ending is closed on the first signal of EndOnSignals; nil until
	// EndOnSignals is called (tests, embedded streams: runs end only by
	// End and Stop).
	ending chan struct{}
}

var process processState

func (p *processState) stopHook(err error) func(error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first != nil {
		return nil
	}
	p.first = err
	return p.hook
}

func (p *processState) stop(err error) {
	if hook := p.stopHook(err); hook != nil {
		hook(err)
	}
}

// SetProcessHook sets what the process does on the first Stop of any stream:
// cmd/connectd asks Benthos to shut down. Without a hook (tests, embedded
// streams) Stop only records the error and blocks commits.
func SetProcessHook(hook func(error)) {
	process.mu.Lock()
	defer process.mu.Unlock()
	process.hook = hook
}

func (p *processState) endingChan() chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ending
}

// EndOnSignals ends every run of the process (see Run.End) when one of sigs
// arrives: cmd/connectd passes SIGINT and SIGTERM, the signals on which
// Benthos shuts down (it still does: os/signal delivers a signal to every
// channel registered for it). Call it once, before any stream starts; runs
// created before it do not hear the signals.
func EndOnSignals(sigs ...os.Signal) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	end := make(chan struct{})
	process.mu.Lock()
	process.ending = end
	process.mu.Unlock()
	go func() {
		<-ch
		close(end)
	}()
}

// ProcessErr is the first error any stream of the process stopped on, nil if
// none: cmd/connectd exits non-zero with it.
func ProcessErr() error {
	process.mu.Lock()
	defer process.mu.Unlock()
	return process.first
}
