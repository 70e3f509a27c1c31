package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkatest"
)

// Shutdown (issue 11): an idle pipeline stops within 2s of SIGTERM; a
// pipeline with an open transaction aborts it or finishes it within
// shutdown_timeout, nothing partial visible to read_committed readers and
// nothing lost; every component logs what it waits for.

// idleStopLimit is the target for an idle pipeline. Measured on the shared
// test broker: 10-25ms for kafka_source -> kafka_sink, 20ms for the windowed
// pipeline, under 1s for a sink whose broker does not answer.
const idleStopLimit = 2 * time.Second

// sigterm sends SIGTERM to p and returns how long it took to exit and its
// exit code; it fails the test if it takes more than limit.
func sigterm(t *testing.T, p *eosProcess, limit time.Duration) (time.Duration, int) {
	t.Helper()
	done := make(chan struct{})
	began := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit + 30*time.Second):
		p.kill()
		t.Fatalf("still running %v after SIGTERM:\n%s", limit+30*time.Second, p.logs.String())
	}
	took := time.Since(began)
	if took > limit {
		t.Errorf("stopped %v after SIGTERM, want at most %v:\n%s", took.Round(time.Millisecond), limit, p.logs.String())
	}
	return took, p.cmd.ProcessState.ExitCode()
}

// produceValues writes values to partition 0 of topic, with the given
// timestamps if any.
func produceValues(t *testing.T, brokers, topic string, ts []time.Time, values ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, v := range values {
		r := &kgo.Record{Topic: topic, Value: []byte(v)}
		if ts != nil {
			r.Timestamp = ts[i]
		}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("producing to %s: %v", topic, err)
		}
	}
}

// committedValues reads topic as a read_committed franz-go consumer up to a
// marker record written now, and kcat (librdkafka, read_committed) to the
// end; it fails the test unless both see the same values, and returns them
// (markers, of this call and earlier ones, left out).
func committedValues(t *testing.T, brokers, topic string) []string {
	t.Helper()
	marker := fmt.Sprintf("marker-%d", time.Now().UnixNano())
	produceValues(t, brokers, topic, nil, marker)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var fromFranz []string
	for done := false; !done; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read_committed: no marker in %s within a minute (read %v)", topic, fromFranz)
		}
		fs.EachRecord(func(r *kgo.Record) {
			switch v := string(r.Value); {
			case v == marker:
				done = true
			case !done && !strings.HasPrefix(v, "marker-"):
				fromFranz = append(fromFranz, v)
			}
		})
	}
	var fromKcat []string
	for _, v := range kcatAll(t, kafkatest.Kcat(t), brokers, topic) {
		if !strings.HasPrefix(string(v), "marker-") {
			fromKcat = append(fromKcat, string(v))
		}
	}
	a, b := slices.Sorted(slices.Values(fromFranz)), slices.Sorted(slices.Values(fromKcat))
	if !slices.Equal(a, b) {
		t.Fatalf("read_committed readers disagree on %s: franz-go %v, kcat %v", topic, a, b)
	}
	return fromFranz
}

// waitMetric polls the Prometheus endpoint at port until the metric line
// matching pattern has a value of at least want.
func waitMetric(t *testing.T, port int, pattern string, want int, p *eosProcess) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + pattern + ` ([0-9.e+]+)$`)
	eventually.NoError(t, 60*time.Second, fmt.Sprintf("metric %s to reach %d", pattern, want), func() error {
		body, err := scrape(port)
		if err != nil {
			return stateWithLogs(err.Error(), p.logs)
		}
		if m := re.FindStringSubmatch(body); m != nil {
			if v, err := strconv.ParseFloat(m[1], 64); err == nil && v >= float64(want) {
				return nil
			}
		}
		return stateWithLogs("body:\n"+body, p.logs)
	})
}

// groupOffset returns the committed offset of partition 0 of topic for
// group, -1 if there is none.
func groupOffset(t *testing.T, brokers, group, topic string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).FetchOffsets(kadm.RequireStable(ctx), group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := resp.Lookup(topic, 0); ok && o.Err == nil {
		return o.At
	}
	return -1
}

// An idle kafka_source -> kafka_sink pipeline (its records copied, nothing
// in flight) exits 0 within 2s of SIGTERM, at_least_once and exactly_once.
// (With nothing to wait for the process may exit before the components'
// log lines about the end: they are not checked here.)
func TestShutdownIdlePipelineIsQuick(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	for _, guarantee := range []string{"at_least_once", "exactly_once"} {
		t.Run(guarantee, func(t *testing.T) {
			t.Parallel()
			in := kafkatest.NewTopic(t, brokers, "shutdown-idle-in", 1)
			out := kafkatest.NewTopic(t, brokers, "shutdown-idle-out", 1)
			produceValues(t, brokers, in, nil, "a", "b", "c")
			txnPrefix := ""
			if guarantee == "exactly_once" {
				txnPrefix = "transactional_id_prefix: " + out
			}
			config := writeFile(t, "idle.yaml", fmt.Sprintf(`
http: { enabled: false }
input:
  kafka_source:
    seed_brokers: [ %[1]q ]
    topics: [ %[2]s ]
    consumer_group: %[2]s
    start_from: earliest
pipeline:
  threads: 1
output:
  kafka_sink:
    seed_brokers: [ %[1]q ]
    topic: %[3]s
    delivery_guarantee: %[4]s
    %[5]s
`, brokers, in, out, guarantee, txnPrefix))
			p := startConnectd(t, config)
			tally := newOutputTally()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go tally.run(ctx, t, brokers, out)
			waitTotal(t, tally, 3, time.Minute, p)
			took, code := sigterm(t, p, idleStopLimit)
			t.Logf("%s: idle pipeline stopped %v after SIGTERM (exit %d)", guarantee, took.Round(time.Millisecond), code)
			if code != 0 {
				t.Errorf("exit code %d, want 0:\n%s", code, p.logs.String())
			}
		})
	}
}

// A sink whose broker does not answer gives up connecting at SIGTERM: the
// pipeline exits 0 within 2s (it took 15s, three quarters of
// shutdown_timeout) and says why.
func TestShutdownUnreachableSinkIsQuick(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	in := kafkatest.NewTopic(t, brokers, "shutdown-unreachable-in", 1)
	config := writeFile(t, "unreachable.yaml", fmt.Sprintf(`
http: { enabled: false }
input:
  kafka_source:
    seed_brokers: [ %[1]q ]
    topics: [ %[2]s ]
    consumer_group: %[2]s
    start_from: earliest
output:
  kafka_sink:
    seed_brokers: [ "127.0.0.1:%[3]d" ]
    topic: nowhere
`, brokers, in, freePort(t)))
	p := startConnectd(t, config)
	eventually.True(t, 30*time.Second, "a failed connection attempt", func() bool {
		return strings.Contains(p.logs.String(), "Failed to connect to kafka_sink")
	})
	took, code := sigterm(t, p, idleStopLimit)
	t.Logf("sink at an unreachable broker stopped %v after SIGTERM (exit %d)", took.Round(time.Millisecond), code)
	if code != 0 {
		t.Errorf("exit code %d, want 0:\n%s", code, p.logs.String())
	}
	if !strings.Contains(p.logs.String(), "the run is ending while not connected to kafka") {
		t.Errorf("the sink did not say what it gave up:\n%s", p.logs.String())
	}
}

// A windowed pipeline whose records sit in open windows exits 0 within 2s
// of SIGTERM (it took 15s: the input waited for those records until
// three quarters of shutdown_timeout), commits none of them, and the next
// run counts them all in their window, once.
func TestShutdownWindowedIsQuickAndLosesNothing(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	in := kafkatest.NewTopic(t, brokers, "shutdown-window-in", 1)
	out := kafkatest.NewTopic(t, brokers, "shutdown-window-out", 1)
	port := freePort(t)
	config := writeFile(t, "window.yaml", fmt.Sprintf(`
http: { address: "127.0.0.1:%[4]d" }
input:
  kafka_source:
    seed_brokers: [ %[1]q ]
    topics: [ %[2]s ]
    consumer_group: %[2]s
    start_from: earliest
    watermark:
      max_out_of_orderness: 0s
buffer:
  event_window:
    type: tumbling
    size: 1m
    key: ${! json("user") }
    aggregates:
      orders: count
pipeline:
  threads: 1
output:
  kafka_sink:
    seed_brokers: [ %[1]q ]
    topic: %[3]s
    key: ${! @window_key }
    delivery_guarantee: exactly_once
    transactional_id_prefix: %[3]s
`, brokers, in, out, port))
	t0 := time.Now().Add(-time.Hour).Truncate(time.Minute)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	produceValues(t, brokers, in, []time.Time{at(time.Second), at(2 * time.Second), at(3 * time.Second)},
		`{"user":"ann"}`, `{"user":"ann"}`, `{"user":"ann"}`)

	first := startConnectd(t, config)
	waitMetric(t, port, `event_window_open\{[^}]*\}`, 1, first)
	took, code := sigterm(t, first, idleStopLimit)
	t.Logf("windowed pipeline with an open window stopped %v after SIGTERM (exit %d)", took.Round(time.Millisecond), code)
	if code != 0 {
		t.Errorf("exit code %d, want 0:\n%s", code, first.logs.String())
	}
	if !strings.Contains(first.logs.String(), "event_window: the run is ending: dropped 1 open windows") {
		t.Errorf("the buffer did not say what it dropped:\n%s", first.logs.String())
	}
	if o := groupOffset(t, brokers, in, in); o > 0 {
		t.Fatalf("offset %d committed for records of a window that never fired", o)
	}

	// The next run reads them again; a record two minutes later moves the
	// watermark past their minute, which fires with all three.
	produceValues(t, brokers, in, []time.Time{at(2 * time.Minute)}, `{"user":"bob"}`)
	second := startConnectd(t, config)
	tally := newOutputTally()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tally.run(ctx, t, brokers, out)
	waitTotal(t, tally, 1, time.Minute, second)
	second.stop()
	var results []map[string]any
	for _, v := range committedValues(t, brokers, out) {
		var r map[string]any
		if err := json.Unmarshal([]byte(v), &r); err != nil {
			t.Fatalf("output %q: %v", v, err)
		}
		results = append(results, r)
	}
	if len(results) != 1 || results[0]["key"] != "ann" || results[0]["orders"] != float64(3) {
		t.Fatalf("window results %v, want one for ann with orders 3", results)
	}
}

// An exactly_once sink whose batching policy holds records (a long period:
// Flink's open transaction between checkpoints) stops within
// shutdown_timeout of SIGTERM and says what it waits for; nothing of the
// batch is visible to read_committed readers (franz-go and kcat), and the
// next run writes every record once.
func TestShutdownOpenTransaction(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	in := kafkatest.NewTopic(t, brokers, "shutdown-txn-in", 1)
	out := kafkatest.NewTopic(t, brokers, "shutdown-txn-out", 1)
	port := freePort(t)
	const shutdownTimeout = 4 * time.Second
	config := writeFile(t, "open_txn.yaml", fmt.Sprintf(`
shutdown_timeout: %[5]s
http: { address: "127.0.0.1:%[4]d" }
input:
  kafka_source:
    seed_brokers: [ %[1]q ]
    topics: [ %[2]s ]
    consumer_group: %[2]s
    start_from: earliest
pipeline:
  threads: 1
output:
  kafka_sink:
    seed_brokers: [ %[1]q ]
    topic: %[3]s
    delivery_guarantee: exactly_once
    transactional_id_prefix: %[3]s
    transaction_timeout: 14m
    batching:
      count: 1000000
      period: ${CONNECTD_TEST_PERIOD}
`, brokers, in, out, port, shutdownTimeout))
	var want []string
	for i := range 20 {
		want = append(want, fmt.Sprintf(`{"n":%d}`, i))
	}
	produceValues(t, brokers, in, nil, want...)

	first := startConnectd(t, config, "CONNECTD_TEST_PERIOD=10m")
	waitMetric(t, port, `input_received\{label="",path="root\.input"\}`, len(want), first)
	// Both transactional producers ready (a loaded broker can take a
	// while): a SIGTERM before that stops a sink that never connected.
	waitLog(t, first, "Output type kafka_sink is now active")
	took, code := sigterm(t, first, shutdownTimeout)
	t.Logf("exactly_once sink holding %d records stopped %v after SIGTERM (exit %d)", len(want), took.Round(time.Millisecond), code)
	if !strings.Contains(first.logs.String(), "kafka_sink: the run is ending: no batch in the sink; the input waits for the messages its batching policy") {
		t.Errorf("the sink did not say what the shutdown waits for:\n%s", first.logs.String())
	}
	if got := committedValues(t, brokers, out); len(got) != 0 && len(got) != len(want) {
		t.Fatalf("read_committed sees %d of the %d records: a partial batch", len(got), len(want))
	}

	second := startConnectd(t, config, "CONNECTD_TEST_PERIOD=100ms")
	tally := newOutputTally()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tally.run(ctx, t, brokers, out)
	waitTotal(t, tally, len(want), time.Minute, second)
	second.stop()
	got := committedValues(t, brokers, out)
	slices.Sort(got)
	sorted := slices.Sorted(slices.Values(want))
	if !slices.Equal(got, sorted) {
		t.Fatalf("after the restart read_committed sees %v, want each of %v once", got, sorted)
	}
}
