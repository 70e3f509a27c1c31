package tryrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/studio/catalog"
)

func newRunner(t *testing.T) *Runner {
	t.Helper()
	r := NewRunner(Options{Binary: connectdBin(t), Dir: repoRoot(t), ScrapeInterval: 200 * time.Millisecond})
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func post(t *testing.T, url string, body any) (int, map[string]any) {
	t.Helper()
	data, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s: status %d, body not JSON: %v", url, resp.StatusCode, err)
	}
	return resp.StatusCode, out
}

// TestQuickstartOnDevBroker runs config/quickstart.yaml as the studio
// does: on the development broker, whatever its seed_brokers say; the
// records it reads back from Kafka are captured with their kafka_*
// metadata; the metrics come from the child; Stop ends the child.
func TestQuickstartOnDevBroker(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	srv := httptest.NewServer(r)
	defer srv.Close()
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "config", "quickstart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	status, started := post(t, srv.URL+"/api/run", StartRequest{YAML: string(src), MaxMessages: 8})
	if status != http.StatusCreated {
		t.Fatalf("start: %d %v", status, started)
	}
	id := started["id"].(string)
	brokers := fmt.Sprint(started["brokers"])
	if started["target"] != TargetDevBroker || strings.Contains(brokers, "19192") || !strings.Contains(brokers, "127.0.0.1:") {
		t.Fatalf("want the development broker on a free loopback port, not the file's 19192: %v", started)
	}
	run, _ := r.Get(id)

	// A page that reloads finds the run alive.
	resp, err := http.Get(srv.URL + "/api/run")
	if err != nil {
		t.Fatal(err)
	}
	var list List
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || list.Active != id || len(list.Runs) != 1 || list.Runs[0].ID != id {
		t.Fatalf("list %+v: %v", list, err)
	}
	resp.Body.Close()

	// One run at a time.
	if status, busy := post(t, srv.URL+"/api/run", StartRequest{YAML: string(src)}); status != http.StatusConflict || busy["id"] != id {
		t.Fatalf("second start: %d %v", status, busy)
	}

	var snap Snapshot
	eventually.NoError(t, 60*time.Second, "a record read back from the development broker is captured with its metadata", func() error {
		resp, err := http.Get(srv.URL + "/api/run/" + id)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		snap = Snapshot{}
		if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
			return err
		}
		if snap.State == StateExited {
			t.Fatalf("the run ended: %+v", snap.Exit)
		}
		for _, m := range snap.Messages {
			if m.Metadata["kafka_topic"] == "quickstart" && m.Metadata["kafka_partition"] != nil &&
				m.Metadata["demo_source"] == "generate" && strings.HasPrefix(m.Content, "quickstart[") {
				return nil
			}
		}
		return fmt.Errorf("messages %+v", snap.Messages)
	})
	eventually.NoError(t, 30*time.Second, "metrics from the child", func() error {
		s := run.Snapshot()
		if s.State != StateRunning || s.Metrics == nil || s.Metrics.RecordsIn == 0 || s.Metrics.RecordsOut == 0 || s.Metrics.KafkaSourceLag == nil {
			return fmt.Errorf("state %s, metrics %+v", s.State, s.Metrics)
		}
		if s.Metrics.Series["kafka_sink_records_sent"] == 0 {
			return fmt.Errorf("series %v", s.Metrics.Series)
		}
		return nil
	})
	if got := len(run.Snapshot().Messages); got > 8 {
		t.Fatalf("captured %d messages, max_messages is 8", got)
	}

	// A live event stream: after the replay, the stop's state changes and
	// the exit arrive, and the stream ends.
	resp, err = http.Get(srv.URL + "/api/run/" + id + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	streamed := make(chan string, 1)
	go func() {
		body, _ := io.ReadAll(resp.Body)
		streamed <- string(body)
	}()

	pid := run.cmd.Process.Pid
	status, stopped := post(t, srv.URL+"/api/run/"+id+"/stop", nil)
	if status != http.StatusOK || stopped["state"] != StateExited {
		t.Fatalf("stop: %d %v", status, stopped)
	}
	exit := stopped["exit"].(map[string]any)
	if exit["stopped_by_user"] != true || exit["code"] != float64(0) {
		t.Fatalf("exit %v: want a graceful stop (SIGTERM, exit 0)", exit)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("child %d still exists after stop: %v", pid, err)
	}
	if l := r.List(); l.Active != "" || l.Runs[0].State != StateExited {
		t.Fatalf("after stop: %+v", l)
	}
	select {
	case body := <-streamed:
		for _, want := range []string{"event: message\n", "event: metrics\n", "event: state\ndata: {\"state\":\"stopping\"}\n",
			"event: state\ndata: {\"state\":\"exited\"}\n", "event: exit\ndata: {\"code\":0,"} {
			if !strings.Contains(body, want) {
				t.Fatalf("event stream lacks %q:\n%s", want, body)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the event stream did not end with the run")
	}
	// The studio can run again.
	if status, again := post(t, srv.URL+"/api/run", StartRequest{YAML: "input:\n  generate: { count: 1, mapping: 'root = 1' }\noutput:\n  drop: {}\n"}); status != http.StatusCreated {
		t.Fatalf("start after stop: %d %v", status, again)
	}
}

func TestRealBrokersNeedConfirmation(t *testing.T) {
	t.Parallel()
	r := NewRunner(Options{Binary: "/nonexistent/connectd-not-run", LookupEnv: func(string) (string, bool) { return "", false }})
	srv := httptest.NewServer(r)
	defer srv.Close()
	src := `input:
  kafka_source:
    seed_brokers: [ "${STUDIO_REAL:10.1.2.3:9092}" ]
    topics: [ a ]
output:
  kafka_sink:
    ddl: CREATE TABLE t (id INT) WITH ('connector' = 'kafka', 'topic' = 'b', 'format' = 'json', 'properties.bootstrap.servers' = 'kafka-2:9092,kafka-3:9092')
`
	status, body := post(t, srv.URL+"/api/run", StartRequest{YAML: src, Target: TargetConfigured})
	if status != http.StatusBadRequest {
		t.Fatalf("status %d %v", status, body)
	}
	if got := fmt.Sprint(body["brokers"]); got != "[10.1.2.3:9092 kafka-2:9092 kafka-3:9092]" {
		t.Fatalf("brokers %s", got)
	}
	if msg := body["error"].(string); !strings.Contains(msg, "10.1.2.3:9092") || !strings.Contains(msg, "confirm_real_brokers") {
		t.Fatalf("error %q", msg)
	}
	if _, ok := r.Get("r1"); ok {
		t.Fatal("a refused run was started")
	}
}

// TestRunEndsByItself: a bounded pipeline's child exits on its own; every
// message is captured and the exit is reported.
func TestRunEndsByItself(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	run, err := r.Start(StartRequest{YAML: `input:
  generate:
    count: 3
    interval: ""
    mapping: |
      root.n = counter()
      meta tag = "t" + counter().string()
output:
  drop: {}
`})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-run.Done():
	case <-time.After(60 * time.Second):
		t.Fatalf("the run did not end: %+v", run.Snapshot())
	}
	s := run.Snapshot()
	if s.State != StateExited || s.Exit == nil || s.Exit.Code != 0 || s.Exit.StoppedByUser {
		t.Fatalf("snapshot %+v exit %+v", s, s.Exit)
	}
	if len(s.Brokers) != 0 || strings.Contains(fmt.Sprint(s.Logs), "development broker") {
		t.Fatalf("a pipeline without Kafka started a development broker: %v %v", s.Brokers, s.Logs)
	}
	if len(s.Messages) != 3 || s.Messages[2].Content != `{"n":3}` || s.Messages[2].Metadata["tag"] != "t3" {
		t.Fatalf("messages %+v", s.Messages)
	}

	// The event stream of an ended run replays it and ends, through a
	// middleware that wraps the ResponseWriter as the studio's does.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.ServeHTTP(wrappedWriter{w}, req)
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/run/" + run.ID + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, block := range strings.Split(strings.TrimSpace(string(body)), "\n\n") {
		name, data, _ := strings.Cut(block, "\n")
		names = append(names, strings.TrimPrefix(name, "event: "))
		if !strings.HasPrefix(data, "data: {") {
			t.Fatalf("event %q: data %q", name, data)
		}
	}
	want := "state message message message"
	if got := strings.Join(names, " "); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "exit") {
		t.Fatalf("events %q, want %q ... exit", got, want)
	}
}

// TestHaltedRunReportsError: a run that a component ends reports the
// exit code and the binary's "the run stopped" line.
func TestHaltedRunReportsError(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	run, err := r.Start(StartRequest{YAML: `input:
  generate: { count: 1, interval: "", mapping: 'root = "not json"' }
pipeline:
  processors:
    - table_decode:
        ddl: CREATE TABLE t (id INT) WITH ('format' = 'json')
output:
  drop: {}
`})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-run.Done():
	case <-time.After(60 * time.Second):
		t.Fatalf("the run did not end: %+v", run.Snapshot())
	}
	e := run.Snapshot().Exit
	if e == nil || e.Code != 1 || !strings.HasPrefix(e.Error, "connectd: the run stopped:") {
		t.Fatalf("exit %+v, logs %+v", e, run.Snapshot().Logs)
	}
}

func TestUnitTests(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	srv := httptest.NewServer(r)
	defer srv.Close()
	src := `pipeline:
  processors:
    - mapping: 'root = content().uppercase()'
output:
  drop: {}
tests:
  - name: uppercases
    target_processors: /pipeline/processors
    input_batch:
      - content: abc
    output_batches:
      - - content_equals: ABC
  - name: wrong expectation
    target_processors: /pipeline/processors
    input_batch:
      - content: abc
    output_batches:
      - - content_equals: abc
`
	data, _ := json.Marshal(TestRequest{YAML: src})
	resp, err := http.Post(srv.URL+"/api/test", "application/json", strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res TestResult
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	if res.Passed || len(res.Tests) != 2 {
		t.Fatalf("result %+v", res)
	}
	ok, bad := res.Tests[0], res.Tests[1]
	if ok.Name != "uppercases" || !ok.Passed || ok.Line != 7 || len(ok.Failures) != 0 {
		t.Fatalf("first test %+v", ok)
	}
	if bad.Name != "wrong expectation" || bad.Passed || bad.Line != 13 || len(bad.Failures) != 1 ||
		!strings.Contains(bad.Failures[0], "ABC") {
		t.Fatalf("second test %+v\noutput:\n%s", bad, res.Output)
	}

	// All passing.
	passing := strings.Replace(src, "content_equals: abc", "content_equals: ABC", 1)
	got, err := r.Test(t.Context(), passing)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Passed || !got.Tests[0].Passed || !got.Tests[1].Passed {
		t.Fatalf("all passing: %+v", got)
	}

	// A lint problem fails the run, as `connectd test` exits 1 on it.
	linted, err := r.Test(t.Context(), strings.Replace(passing, "  drop: {}\n", "  drop: {}\n  nope: 1\n", 1))
	if err != nil {
		t.Fatal(err)
	}
	if linted.Passed || len(linted.Lint) != 1 || !strings.Contains(linted.Lint[0], "(6,1) field nope") {
		t.Fatalf("lint: %+v", linted)
	}

	// No tests.
	none, err := r.Test(t.Context(), "input:\n  stdin: {}\noutput:\n  drop: {}\n")
	if err != nil {
		t.Fatal(err)
	}
	if none.Passed || len(none.Tests) != 0 || !strings.Contains(none.Output, "No tests were found") {
		t.Fatalf("no tests: %+v", none)
	}
}

// TestExamplePlansLint: the config a run hands the child (tap, HTTP,
// metrics, development broker in every table and field) lints clean for
// every example pipeline, so the run checks what `connectd lint` checked.
func TestExamplePlansLint(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "config", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		p, err := makePlan(planInput{
			src: src, env: catalog.Env{Dir: root}, devBroker: "127.0.0.1:5555",
			tapFile: filepath.Join(dir, "tap.jsonl"), maxMessages: 5, metricsAddr: "127.0.0.1:5556", copyDir: dir,
		})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		cfg := filepath.Join(dir, "pipeline.yaml")
		if err := os.WriteFile(cfg, p.config, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(connectdBin(t), "lint", cfg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: the run's config does not lint: %v\n%s\n%s", filepath.Base(f), err, out, p.config)
		}
	}
}

// wrappedWriter is a middleware's ResponseWriter: it hides Flush but
// unwraps to the writer that has it.
type wrappedWriter struct{ w http.ResponseWriter }

func (w wrappedWriter) Header() http.Header         { return w.w.Header() }
func (w wrappedWriter) Write(b []byte) (int, error) { return w.w.Write(b) }
func (w wrappedWriter) WriteHeader(code int)        { w.w.WriteHeader(code) }
func (w wrappedWriter) Unwrap() http.ResponseWriter { return w.w }

func TestOldRunsForgotten(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	var ids []string
	for range keptRuns + 2 {
		run, err := r.Start(StartRequest{YAML: "input:\n  generate: { count: 1, interval: '', mapping: 'root = 1' }\noutput:\n  drop: {}\n"})
		if err != nil {
			t.Fatal(err)
		}
		<-run.Done()
		ids = append(ids, run.ID)
	}
	for i, id := range ids {
		_, ok := r.Get(id)
		if want := i >= 2; ok != want {
			t.Fatalf("run %s (%d of %d): kept %v, want %v", id, i+1, len(ids), ok, want)
		}
	}
}

// TestCloseStopsTheRun: the studio's shutdown stops its run's child.
func TestCloseStopsTheRun(t *testing.T) {
	t.Parallel()
	r := NewRunner(Options{Binary: connectdBin(t), Dir: repoRoot(t)})
	run, err := r.Start(StartRequest{YAML: "input:\n  generate: { interval: 1s, mapping: 'root = 1' }\noutput:\n  drop: {}\n"})
	if err != nil {
		t.Fatal(err)
	}
	eventually.True(t, 30*time.Second, "the run is up", func() bool { return run.Snapshot().State == StateRunning })
	pid := run.cmd.Process.Pid
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-run.Done():
	default:
		t.Fatal("Close returned before the child exited")
	}
	if e := run.Snapshot().Exit; e == nil || !e.StoppedByUser || e.Code != 0 {
		t.Fatalf("exit %+v", e)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("child %d still exists: %v", pid, err)
	}
}
