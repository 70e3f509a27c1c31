package e2e

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkatest"
)

// DESIGN.md contract 9, with the built binary: errors that cannot clear
// without a config change end the run (exit != 0) with a message naming the
// field; transient ones retry with back-off and a log line per attempt.

// runConfigToExit runs `connectd run` on config and returns its output, exit code
// and how long it ran; it fails the test if the run outlives limit.
func runConfigToExit(t *testing.T, limit time.Duration, config string) (string, int, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, connectdBin(t), "run", config)
	cmd.Dir = repoRoot(t)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	began := time.Now()
	err := cmd.Run()
	took := time.Since(began)
	if ctx.Err() != nil {
		t.Fatalf("the run still went on after %v:\n%s", limit, logs.String())
	}
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return logs.String(), code, took
}

// A transaction_timeout above the broker's transaction.max.timeout.ms (15
// minutes on the test broker, Kafka's default) is never accepted: the run
// ends within 10s with exit code 1 and an error naming the field.
func TestRunEndsOnTransactionTimeoutAboveBrokerMax(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	topic := kafkatest.NewTopic(t, brokers, "run-end-txn-timeout", 1)
	config := writeFile(t, "txn_timeout.yaml", fmt.Sprintf(`
http: { enabled: false }
input:
  generate:
    mapping: 'root = "never written"'
    interval: 100ms
output:
  kafka_sink:
    seed_brokers: [ %q ]
    topic: %s
    delivery_guarantee: exactly_once
    transactional_id_prefix: %s
    transaction_timeout: 16m
`, brokers, topic, topic))
	logs, code, took := runConfigToExit(t, 30*time.Second, config)
	t.Logf("exit %d after %v", code, took.Round(time.Millisecond))
	if code == 0 {
		t.Fatalf("exit code 0 for a transaction timeout the broker refuses:\n%s", logs)
	}
	if took > 10*time.Second {
		t.Errorf("the run took %v to end, want at most 10s", took)
	}
	for _, want := range []string{"connectd: the run stopped:", "field transaction_timeout", "16m0s", "transaction.max.timeout.ms is 900000 ms"} {
		if !strings.Contains(logs, want) {
			t.Errorf("output does not contain %q:\n%s", want, logs)
		}
	}
}

// A topic that does not exist, with auto-creation off, never appears: the
// run ends with exit code 1 naming the topic and the field, and the topic
// is not created. (The input is a kafka_source, which redelivers the nacked
// record until the run has stopped.)
func TestRunEndsOnUnknownTopic(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	in := kafkatest.NewTopic(t, brokers, "run-end-unknown-in", 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: in, Value: []byte(`{"n":1}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	missing := in + "-missing"
	config := writeFile(t, "unknown_topic.yaml", fmt.Sprintf(`
http: { enabled: false }
input:
  kafka_source:
    seed_brokers: [ %q ]
    topics: [ %s ]
    consumer_group: %s
    start_from: earliest
output:
  kafka_sink:
    seed_brokers: [ %q ]
    topic: %s
    allow_auto_topic_creation: false
`, brokers, in, in, brokers, missing))
	logs, code, took := runConfigToExit(t, time.Minute, config)
	t.Logf("exit %d after %v", code, took.Round(time.Millisecond))
	if code == 0 {
		t.Fatalf("exit code 0 for a topic that does not exist:\n%s", logs)
	}
	for _, want := range []string{"connectd: the run stopped:", "field topic", fmt.Sprintf("topic %q does not exist", missing), "field allow_auto_topic_creation is false"} {
		if !strings.Contains(logs, want) {
			t.Errorf("output does not contain %q:\n%s", want, logs)
		}
	}
	topics, err := kadm.NewClient(cl).ListTopics(ctx, missing)
	if err != nil {
		t.Fatal(err)
	}
	if topics.Has(missing) {
		t.Errorf("topic %s was created", missing)
	}
}

// A broker that is not there yet is a transient fault: the sink retries,
// Benthos logs one line per failed attempt, and once the broker answers the
// records are written and the run goes on until SIGTERM (exit 0).
func TestTransientOutageIsRetried(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	config := writeFile(t, "outage.yaml", fmt.Sprintf(`
http: { enabled: false }
input:
  generate:
    mapping: 'root = "record-%%d".format(counter())'
    count: 3
    interval: ""
output:
  kafka_sink:
    seed_brokers: [ %q ]
    topic: events
`, addr))
	p := startConnectd(t, config)
	attempts := func() int { return strings.Count(p.logs.String(), "Failed to connect to kafka_sink") }
	eventually.True(t, 30*time.Second, "two failed connection attempts", func() bool { return attempts() >= 2 })

	// The broker comes up on the address the sink retries.
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.SeedTopics(1, "events"))
	if err != nil {
		t.Fatalf("starting kfake on %s: %v", addr, err)
	}
	defer cluster.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("events"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for len(got) < 3 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %v within 30s of the broker coming up; logs:\n%s", got, p.logs.String())
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	p.stop()
	logs := p.logs.String()
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0:\n%s", code, logs)
	}
	// The two lines a run ended on an error prints: the component's, and the
	// binary's as it exits (not the shutdown's "then the run stops").
	if strings.Contains(logs, "connectd: the run stopped:") || strings.Contains(logs, "does not clear by retrying") {
		t.Errorf("a transient outage ended the run:\n%s", logs)
	}
	t.Logf("%d failed connection attempts logged before the broker came up; records %v", attempts(), got)
}
