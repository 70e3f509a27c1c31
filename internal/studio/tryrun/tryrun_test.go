package tryrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/eventually"
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
	if len(s.Messages) != 3 || s.Messages[2].Content != `{"n":3}` || s.Messages[2].Metadata["tag"] != "t3" {
		t.Fatalf("messages %+v", s.Messages)
	}

	// The event stream of an ended run replays it and ends.
	srv := httptest.NewServer(r)
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
}
