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
package halt

import (
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

func newRun() *Run { return &Run{done: make(chan struct{})} }

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
	process.stop(err)
}

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

// processState is what the binary does when any stream stops on an error.
type processState struct {
	mu    sync.Mutex
	hook  func(error)
	first error
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

// ProcessErr is the first error any stream of the process stopped on, nil if
// none: cmd/connectd exits non-zero with it.
func ProcessErr() error {
	process.mu.Lock()
	defer process.mu.Unlock()
	return process.first
}
