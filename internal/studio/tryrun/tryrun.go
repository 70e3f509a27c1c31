// Package tryrun is the studio's "try it": it runs the editor's pipeline as
// a child process of the studio's own binary (`connectd run`), on the
// embedded development broker unless the user confirms the configured
// brokers, and shows the first output messages with their metadata, live
// metrics scraped from the child's /metrics, and its logs; and it runs the
// file's `connectd test` unit tests and returns their results.
//
// A child process, not a goroutine: a pipeline that crashes, halts
// (internal/halt) or exits cannot take the studio with it, and the run is
// the same code and flags as `connectd run`. The JSON is
// internal/studio/API.md's /api/run and /api/test.
package tryrun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/internal/studio/catalog"
)

// Targets of a run.
const (
	TargetDevBroker  = "dev_broker"
	TargetConfigured = "configured"
)

// States of a run.
const (
	StateStarting = "starting"
	StateRunning  = "running"
	StateStopping = "stopping"
	StateExited   = "exited"
)

// Limits and defaults.
const (
	DefaultMaxMessages = 100
	MaxMessages        = 10000
	maxLogLines        = 1000
	defaultStopTimeout = 10 * time.Second
	defaultScrape      = time.Second
)

// Options configure a Runner.
type Options struct {
	// Binary is the connectd binary the children run; default
	// os.Executable() (the studio's own).
	Binary string
	// Dir is the children's working directory, against which relative
	// paths in a pipeline resolve ("" is the studio's).
	Dir string
	// StopTimeout is how long Stop waits after SIGTERM before SIGKILL;
	// default 10s.
	StopTimeout time.Duration
	// ScrapeInterval is how often the child's /metrics is read; default 1s.
	ScrapeInterval time.Duration
	// LookupEnv expands ${VAR:default} when naming the configured
	// brokers, as the child will; default os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Runner runs one pipeline at a time for a studio.
type Runner struct {
	opts Options
	mux  *http.ServeMux

	mu struct {
		sync.Mutex
		seq  int
		runs map[string]*Run
		// order is the ids of runs, oldest first: ended runs beyond
		// keptRuns are forgotten.
		order []string
		// active is the run whose child has not exited, nil if none.
		active *Run
	}
}

// NewRunner returns a Runner; it is an http.Handler for the paths of
// internal/studio/API.md.
func NewRunner(opts Options) *Runner {
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = defaultStopTimeout
	}
	if opts.ScrapeInterval <= 0 {
		opts.ScrapeInterval = defaultScrape
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	r := &Runner{opts: opts}
	r.mu.runs = map[string]*Run{}
	r.mux = r.routes()
	return r
}

func (r *Runner) binary() (string, error) {
	if r.opts.Binary != "" {
		// Absolute: the child runs in Dir.
		return filepath.Abs(r.opts.Binary)
	}
	return os.Executable()
}

// StartRequest is the body of POST /api/run.
type StartRequest struct {
	YAML               string `json:"yaml"`
	Target             string `json:"target,omitempty"`
	ConfirmRealBrokers bool   `json:"confirm_real_brokers,omitempty"`
	MaxMessages        int    `json:"max_messages,omitempty"`
}

// RealBrokersError refuses a run against configured brokers that the
// request did not confirm.
type RealBrokersError struct {
	Brokers []string
}

func (e *RealBrokersError) Error() string {
	if len(e.Brokers) == 0 {
		return "this pipeline names no Kafka brokers to run against; confirm with confirm_real_brokers to run it as configured"
	}
	return fmt.Sprintf("this pipeline would run against real brokers %s; confirm with confirm_real_brokers", strings.Join(e.Brokers, ", "))
}

// BusyError refuses a run while another one is alive.
type BusyError struct {
	ID string
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("run %s is still running: stop it first", e.ID)
}

// RequestError is a request that cannot be run as it is.
type RequestError struct {
	Err error
}

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

// Start starts the pipeline of req. It returns a *RealBrokersError, a
// *BusyError or a *RequestError for requests it refuses.
func (r *Runner) Start(req StartRequest) (*Run, error) {
	switch req.Target {
	case "":
		req.Target = TargetDevBroker
	case TargetDevBroker, TargetConfigured:
	default:
		return nil, &RequestError{fmt.Errorf("target %q: want %s or %s", req.Target, TargetDevBroker, TargetConfigured)}
	}
	switch {
	case req.MaxMessages == 0:
		req.MaxMessages = DefaultMaxMessages
	case req.MaxMessages < 0 || req.MaxMessages > MaxMessages:
		return nil, &RequestError{fmt.Errorf("max_messages %d: want 1 to %d", req.MaxMessages, MaxMessages)}
	}
	bin, err := r.binary()
	if err != nil {
		return nil, fmt.Errorf("finding the connectd binary: %w", err)
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if a := r.mu.active; a != nil {
		return nil, &BusyError{ID: a.ID}
	}
	dir, err := os.MkdirTemp("", "connectd-studio-run-")
	if err != nil {
		return nil, err
	}
	run, err := r.startLocked(bin, dir, req)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return run, nil
}

func (r *Runner) startLocked(bin, dir string, req StartRequest) (*Run, error) {
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	in := planInput{
		src:         []byte(req.YAML),
		env:         catalog.Env{Dir: r.opts.Dir, LookupEnv: r.opts.LookupEnv},
		tapFile:     filepath.Join(dir, "messages.jsonl"),
		maxMessages: req.MaxMessages,
		metricsAddr: metricsAddr,
		copyDir:     dir,
	}
	if req.Target == TargetDevBroker {
		if in.devBroker, err = freeAddr(); err != nil {
			return nil, err
		}
	}
	p, err := makePlan(in)
	if err != nil {
		return nil, &RequestError{err}
	}
	brokers := p.brokers
	if req.Target == TargetConfigured && !req.ConfirmRealBrokers {
		return nil, &RealBrokersError{Brokers: brokers}
	}
	switch {
	case req.Target == TargetDevBroker && p.kafka:
		brokers = []string{in.devBroker}
	case req.Target == TargetDevBroker:
		// Nothing to connect to Kafka: no development broker.
		in.devBroker, brokers = "", []string{}
	}
	cfg := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(cfg, p.config, 0o600); err != nil {
		return nil, err
	}
	args := []string{"run"}
	if in.devBroker != "" {
		args = append(args, "--dev-broker", in.devBroker)
		for _, t := range p.topics {
			args = append(args, "--dev-broker-topics", t)
		}
	}
	args = append(args, cfg)

	r.mu.seq++
	run := newRun(fmt.Sprintf("r%d", r.mu.seq), req.Target, brokers, "http://"+metricsAddr+"/metrics", dir, in.tapFile, req.MaxMessages)
	cmd := exec.Command(bin, args...)
	cmd.Dir = r.opts.Dir
	cmd.SysProcAttr = procAttr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	run.cmd = cmd
	r.mu.runs[run.ID] = run
	r.mu.order = append(r.mu.order, run.ID)
	r.mu.active = run
	r.forgetLocked()

	var logs sync.WaitGroup
	logs.Add(2)
	go func() { defer logs.Done(); run.readLogs("stdout", stdout) }()
	go func() { defer logs.Done(); run.readLogs("stderr", stderr) }()
	ctx, cancel := context.WithCancel(context.Background())
	var watchers sync.WaitGroup
	watchers.Add(2)
	go func() { defer watchers.Done(); run.scrape(ctx, r.opts.ScrapeInterval) }()
	go func() { defer watchers.Done(); run.capture(ctx) }()
	go func() {
		logs.Wait() // the pipes close when the child exits
		err := cmd.Wait()
		cancel()
		watchers.Wait()
		run.captureOnce() // what the child wrote last
		_ = os.RemoveAll(dir)
		// Free the studio for the next run before anyone waiting on
		// Done (a Stop) hears of the exit.
		r.mu.Lock()
		if r.mu.active == run {
			r.mu.active = nil
		}
		r.mu.Unlock()
		run.exited(err)
	}()
	return run, nil
}

// keptRuns is how many runs (the active one included) stay readable.
const keptRuns = 8

// forgetLocked drops the oldest runs beyond keptRuns; only ended runs can
// be old, as one run at a time is alive.
func (r *Runner) forgetLocked() {
	for len(r.mu.order) > keptRuns {
		delete(r.mu.runs, r.mu.order[0])
		r.mu.order = r.mu.order[1:]
	}
}

// Get returns the run with the given id.
func (r *Runner) Get(id string) (*Run, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	run, ok := r.mu.runs[id]
	return run, ok
}

// Stop stops the run: SIGTERM, then SIGKILL after StopTimeout, and waits
// for the child to exit.
func (r *Runner) Stop(run *Run) {
	run.stop(r.opts.StopTimeout)
}

// Close stops the active run, if any: for the studio's shutdown.
func (r *Runner) Close() error {
	r.mu.Lock()
	a := r.mu.active
	r.mu.Unlock()
	if a != nil {
		a.stop(r.opts.StopTimeout)
	}
	return nil
}

// freeAddr returns a loopback address with a port free right now. The
// child binds it a moment later: another process could take the port in
// between, and the run then fails at start with the address in its log.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free loopback port: %w", err)
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// readLogs keeps the lines of one of the child's streams.
func (run *Run) readLogs(stream string, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		run.addLog(LogLine{Stream: stream, Line: sc.Text()})
	}
	// A line over 1 MiB ends the scan: drain the rest so the child never
	// blocks on a full pipe.
	_, _ = io.Copy(io.Discard, r)
}

// scrape reads the child's /metrics every interval until ctx ends; the
// run is running from the first answer.
func (run *Run) scrape(ctx context.Context, interval time.Duration) {
	client := &http.Client{Timeout: interval + time.Second}
	t := time.NewTicker(interval)
	defer t.Stop()
	var prev *Metrics
	poll := func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, run.MetricsURL, nil)
		if err != nil {
			return
		}
		resp, err := client.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return
		}
		samples, err := parseText(resp.Body)
		if err != nil {
			return
		}
		m := summarise(samples, time.Now(), prev)
		prev = m
		run.setMetrics(m)
	}
	// Poll quickly until the child answers, then every interval.
	fast := time.NewTicker(100 * time.Millisecond)
	defer fast.Stop()
	for prev == nil {
		select {
		case <-ctx.Done():
			return
		case <-fast.C:
			poll()
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			poll()
		}
	}
}

// capture reads the tap file every 100ms until ctx ends.
func (run *Run) capture(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			run.captureOnce()
		}
	}
}

// exitCode is the child's exit code, -1 when a signal ended it.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
