package tryrun

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Message is a captured output message.
type Message struct {
	Index    int            `json:"index"`
	Content  string         `json:"content"`
	Metadata map[string]any `json:"metadata"`
}

// LogLine is a line the child wrote.
type LogLine struct {
	Stream string `json:"stream"`
	Line   string `json:"line"`
}

// Exit is how the child ended.
type Exit struct {
	Code int `json:"code"`
	// Error is a halted run's "connectd: the run stopped: ..." line, or
	// for another non-zero exit the child's last line on stderr.
	Error         string `json:"error,omitempty"`
	StoppedByUser bool   `json:"stopped_by_user"`
}

// Snapshot is GET /api/run/{id}.
type Snapshot struct {
	ID         string    `json:"id"`
	State      string    `json:"state"`
	Target     string    `json:"target"`
	Brokers    []string  `json:"brokers"`
	MetricsURL string    `json:"metrics_url"`
	StartedAt  time.Time `json:"started_at"`
	Messages   []Message `json:"messages"`
	Metrics    *Metrics  `json:"metrics,omitempty"`
	Logs       []LogLine `json:"logs"`
	Exit       *Exit     `json:"exit,omitempty"`
}

// haltPrefix starts the line the binary prints when a component ended the
// run (cmd/connectd, internal/halt).
const haltPrefix = "connectd: the run stopped:"

// Event is one server-sent event of a run: Name is message, metrics, log,
// state or exit.
type Event struct {
	Name string
	Data any
}

// Run is one run of a pipeline in a child process.
type Run struct {
	ID         string
	Target     string
	Brokers    []string
	MetricsURL string
	StartedAt  time.Time

	dir         string
	tapFile     string
	maxMessages int
	cmd         *exec.Cmd
	done        chan struct{}

	mu struct {
		sync.Mutex
		state      string
		messages   []Message
		tapOffset  int64
		logs       []LogLine
		haltLine   string
		lastStderr string
		metrics    *Metrics
		exit       *Exit
		stopped    bool
		subs       map[chan Event]struct{}
	}
}

func newRun(id, target string, brokers []string, metricsURL, dir, tapFile string, maxMessages int) *Run {
	run := &Run{
		ID: id, Target: target, Brokers: brokers, MetricsURL: metricsURL, StartedAt: time.Now().UTC(),
		dir: dir, tapFile: tapFile, maxMessages: maxMessages, done: make(chan struct{}),
	}
	run.mu.state = StateStarting
	run.mu.messages = []Message{}
	run.mu.logs = []LogLine{}
	run.mu.subs = map[chan Event]struct{}{}
	return run
}

// Done is closed when the child has exited.
func (run *Run) Done() <-chan struct{} { return run.done }

// Snapshot returns the run's state now.
func (run *Run) Snapshot() Snapshot {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.snapshotLocked()
}

func (run *Run) snapshotLocked() Snapshot {
	s := Snapshot{
		ID: run.ID, State: run.mu.state, Target: run.Target, Brokers: run.Brokers,
		MetricsURL: run.MetricsURL, StartedAt: run.StartedAt,
		Messages: append([]Message(nil), run.mu.messages...),
		Logs:     append([]LogLine(nil), run.mu.logs...),
		Metrics:  run.mu.metrics,
	}
	if s.Messages == nil {
		s.Messages = []Message{}
	}
	if s.Logs == nil {
		s.Logs = []LogLine{}
	}
	if e := run.mu.exit; e != nil {
		cp := *e
		s.Exit = &cp
	}
	return s
}

// Subscribe returns the events so far (messages, logs, state, exit) and a
// channel of the ones to come, closed after the exit event or by cancel.
// A subscriber that falls 1,024 events behind loses the oldest.
func (run *Run) Subscribe() (past []Event, events <-chan Event, cancel func()) {
	run.mu.Lock()
	defer run.mu.Unlock()
	s := run.snapshotLocked()
	past = append(past, Event{Name: "state", Data: map[string]string{"state": s.State}})
	for _, m := range s.Messages {
		past = append(past, Event{Name: "message", Data: m})
	}
	for _, l := range s.Logs {
		past = append(past, Event{Name: "log", Data: l})
	}
	if s.Metrics != nil {
		past = append(past, Event{Name: "metrics", Data: s.Metrics})
	}
	ch := make(chan Event, 1024)
	if s.Exit != nil {
		past = append(past, Event{Name: "exit", Data: s.Exit})
		close(ch)
		return past, ch, func() {}
	}
	run.mu.subs[ch] = struct{}{}
	return past, ch, func() {
		run.mu.Lock()
		defer run.mu.Unlock()
		if _, ok := run.mu.subs[ch]; ok {
			delete(run.mu.subs, ch)
			close(ch)
		}
	}
}

func (run *Run) publishLocked(e Event) {
	for ch := range run.mu.subs {
		select {
		case ch <- e:
		default:
			// Slow reader: drop its oldest event to make room.
			select {
			case <-ch:
			default:
			}
			select {
			case ch <- e:
			default:
			}
		}
	}
}

func (run *Run) setStateLocked(state string) {
	if run.mu.state == state {
		return
	}
	run.mu.state = state
	run.publishLocked(Event{Name: "state", Data: map[string]string{"state": state}})
}

func (run *Run) addLog(l LogLine) {
	run.mu.Lock()
	defer run.mu.Unlock()
	switch {
	case strings.HasPrefix(l.Line, haltPrefix):
		run.mu.haltLine = l.Line
	case l.Stream == "stderr" && strings.TrimSpace(l.Line) != "":
		run.mu.lastStderr = l.Line
	}
	run.mu.logs = append(run.mu.logs, l)
	if over := len(run.mu.logs) - maxLogLines; over > 0 {
		run.mu.logs = append(run.mu.logs[:0:0], run.mu.logs[over:]...)
	}
	run.publishLocked(Event{Name: "log", Data: l})
}

func (run *Run) setMetrics(m *Metrics) {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.mu.metrics = m
	if run.mu.state == StateStarting {
		run.setStateLocked(StateRunning)
	}
	run.publishLocked(Event{Name: "metrics", Data: m})
}

// captureOnce reads the complete lines the tap appended since the last
// read.
func (run *Run) captureOnce() {
	run.mu.Lock()
	defer run.mu.Unlock()
	if len(run.mu.messages) >= run.maxMessages {
		return
	}
	f, err := os.Open(run.tapFile)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(run.mu.tapOffset, io.SeekStart); err != nil {
		return
	}
	data, err := io.ReadAll(io.LimitReader(f, 16<<20))
	if err != nil {
		return
	}
	for len(run.mu.messages) < run.maxMessages {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return // a line still being written
		}
		line := data[:nl]
		data = data[nl+1:]
		run.mu.tapOffset += int64(nl + 1)
		var m Message
		if err := json.Unmarshal(line, &m); err != nil {
			continue
		}
		m.Index = len(run.mu.messages)
		if m.Metadata == nil {
			m.Metadata = map[string]any{}
		}
		run.mu.messages = append(run.mu.messages, m)
		run.publishLocked(Event{Name: "message", Data: m})
	}
}

// exited records the child's end and closes the subscribers.
func (run *Run) exited(err error) {
	run.mu.Lock()
	defer run.mu.Unlock()
	e := &Exit{Code: exitCode(err), Error: run.mu.haltLine, StoppedByUser: run.mu.stopped}
	if e.Error == "" && e.Code > 0 {
		e.Error = run.mu.lastStderr
	}
	run.mu.exit = e
	run.setStateLocked(StateExited)
	run.publishLocked(Event{Name: "exit", Data: run.mu.exit})
	for ch := range run.mu.subs {
		delete(run.mu.subs, ch)
		close(ch)
	}
	close(run.done)
}

// stop sends SIGTERM (Benthos's graceful shutdown), then SIGKILL to the
// child's process group after timeout, and waits for the exit.
func (run *Run) stop(timeout time.Duration) {
	run.mu.Lock()
	select {
	case <-run.done:
		run.mu.Unlock()
		return
	default:
	}
	run.mu.stopped = true
	run.setStateLocked(StateStopping)
	run.mu.Unlock()
	pid := run.cmd.Process.Pid
	_ = syscall.Kill(pid, syscall.SIGTERM)
	select {
	case <-run.done:
		return
	case <-time.After(timeout):
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-run.done
}
