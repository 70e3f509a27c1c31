package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/kafkaconn"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkatest"
)

// A record written by kafka_sink to a real Apache Kafka broker reads back in
// kcat (librdkafka, a client this project did not write) with its key,
// headers, timestamp and Java-client partition.
func TestIntegrationKcatReadsRecord(t *testing.T) {
	t.Parallel()
	broker := kafkatest.Broker(t)
	kcat := kafkatest.Kcat(t)
	topic := kafkatest.NewTopic(t, broker, "kafkasink", 3)

	s := newConnectedSink(t, fmt.Sprintf(`
seed_brokers: [ %q ]
topic: %s
key: ${! @key }
timestamp_ms: ${! @ts }
metadata:
  include_prefixes: [ "h_" ]
`, broker, topic))
	batch := service.MessageBatch{
		message(`{"hello":"kafka"}`, "key", "key", "ts", "1700000000123", "h_trace", "abc", "h_source", "connectd", "other", "dropped"),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.WriteBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}

	out, err := exec.CommandContext(ctx, kcat, "-C", "-b", broker, "-t", topic, "-o", "beginning", "-c", "1", "-e", "-q",
		"-X", "isolation.level=read_committed", "-f", "%k|%h|%T|%p|%s\n").Output()
	if err != nil {
		var stderr string
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("kcat: %v: %s", err, stderr)
	}
	// Headers are sorted by key; partition 1 is the Java client's
	// murmur2 choice for "key" over 3 partitions (javaPartitions).
	want := `key|h_source=connectd,h_trace=abc|1700000000123|1|{"hello":"kafka"}`
	if got := strings.TrimSpace(string(out)); got != want {
		t.Fatalf("kcat read\n  %s\nwant\n  %s", got, want)
	}
}

// kcatCommitted reads topic with kcat (librdkafka) as a read_committed
// consumer from the beginning to the end and returns the values.
func kcatCommitted(t *testing.T, kcat, broker, topic string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, kcat, "-C", "-b", broker, "-t", topic, "-o", "beginning", "-e", "-q",
		"-X", "isolation.level=read_committed", "-f", "%s\n").Output()
	if err != nil {
		var stderr string
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("kcat: %v: %s", err, stderr)
	}
	return strings.Fields(string(out))
}

// On a real Apache Kafka broker, exactly_once batches commit and kcat reading
// read_committed sees them. A record the broker refuses for what it holds
// (over the topic's max.message.bytes) aborts its transaction; its message
// then fails alone and the rest of the batch commits in a new transaction:
// kcat sees the rest once, and never the refused record, although the
// aborted attempt is in the log.
func TestIntegrationExactlyOnceKcat(t *testing.T) {
	t.Parallel()
	broker := kafkatest.Broker(t)
	kcat := kafkatest.Kcat(t)
	topic := kafkatest.NewTopic(t, broker, "kafkasink-eos", 3)
	small := newSmallTopic(t, broker)

	s := newConnectedSink(t, fmt.Sprintf(`
seed_brokers: [ %q ]
topic: ${! @topic.or(%q) }
key: ${! content() }
delivery_guarantee: exactly_once
transactional_id_prefix: %s
allow_auto_topic_creation: false
`, broker, topic, topic))
	s.recreate = kafkaconn.NewBackoff(time.Millisecond, recreateBackoffMax)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	if err := s.WriteBatch(ctx, values("", "c1", "c2", "c3", "c4")); err != nil {
		t.Fatal(err)
	}
	mixed := append(values("", "a1", "a2"), message(strings.Repeat("x", 4096), "topic", small))
	failed := failedIndices(t, s.WriteBatch(ctx, mixed))
	if len(failed) != 1 || !errors.Is(failed[2], kerr.MessageTooLarge) {
		t.Fatalf("want only message 2 failed with MESSAGE_TOO_LARGE, got %v", failed)
	}
	if s.run.Stopped() {
		t.Fatalf("a record refused alone ended the run: %v", s.run.Err())
	}
	if err := s.WriteBatch(ctx, values("", "c5", "c6")); err != nil {
		t.Fatal(err)
	}

	got := kcatCommitted(t, kcat, broker, topic)
	slices.Sort(got)
	if want := []string{"a1", "a2", "c1", "c2", "c3", "c4", "c5", "c6"}; !slices.Equal(got, want) {
		t.Fatalf("kcat read_committed sees %v, want %v", got, want)
	}
	if n := endOffsets(t, broker, topic); n < 11 {
		t.Errorf("the log holds %d offsets, want the aborted attempt and markers too (>= 11)", n)
	}
}

// A transaction timeout above the broker's transaction.max.timeout.ms (15
// minutes by default) fails at connect, naming both values.
func TestIntegrationTransactionTimeoutRefused(t *testing.T) {
	t.Parallel()
	broker := kafkatest.Broker(t)
	cfg, err := parseConfig(t, fmt.Sprintf(`
seed_brokers: [ %q ]
topic: events
delivery_guarantee: exactly_once
transactional_id_prefix: connectd-timeout-test
transaction_timeout: 16m
`, broker))
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSink(cfg, service.MockResources())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = s.Connect(ctx)
	if err == nil {
		t.Fatal("Connect accepted a 16m transaction timeout")
	}
	for _, want := range []string{"16m0s", "960000 ms", "transaction.max.timeout.ms is 900000 ms (15m0s)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q: %v", want, err)
		}
	}
}

// newSmallTopic creates a one-partition topic accepting record batches of at
// most 1 KiB, deleted at the end of the test.
func newSmallTopic(t *testing.T, broker string) string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	name := fmt.Sprintf("kafkasink-small-%d", time.Now().UnixNano())
	limit := "1024"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"max.message.bytes": &limit}, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
		if err != nil {
			return
		}
		defer cl.Close()
		_, _ = kadm.NewClient(cl).DeleteTopics(context.Background(), name)
	})
	return name
}

// On a real broker, a second writer with the same transactional id fences the
// first; the first's batch is not committed and kcat never sees it.
func TestIntegrationExactlyOnceFencing(t *testing.T) {
	t.Parallel()
	broker := kafkatest.Broker(t)
	kcat := kafkatest.Kcat(t)
	topic := kafkatest.NewTopic(t, broker, "kafkasink-fence", 1)
	yaml := fmt.Sprintf(`
seed_brokers: [ %q ]
topic: %s
delivery_guarantee: exactly_once
transactional_id_prefix: %s
transactional_id_suffix: same
`, broker, topic, topic)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	first := newConnectedSink(t, yaml)
	if err := first.WriteBatch(ctx, values("", "first-1")); err != nil {
		t.Fatal(err)
	}
	second := newConnectedSink(t, yaml)
	err := first.WriteBatch(ctx, values("", "zombie"))
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("want the first writer fenced, got %v", err)
	}
	if err := second.WriteBatch(ctx, values("", "second-1")); err != nil {
		t.Fatal(err)
	}
	if got := kcatCommitted(t, kcat, broker, topic); !slices.Equal(got, []string{"first-1", "second-1"}) {
		t.Fatalf("kcat read_committed sees %v, want [first-1 second-1]", got)
	}
}

// On the real broker's SASL listener, a password the broker never accepted
// ends the run at the first connect, naming the fields (never the
// password), and ends Benthos's connect loop (no back-off to wait out).
func TestIntegrationWrongPasswordEndsRun(t *testing.T) {
	t.Parallel()
	addr, user, password := kafkatest.SASL(t)
	s, run, _ := newHaltableSink(t, fmt.Sprintf(`
seed_brokers: [ %q ]
topic: events
sasl:
  mechanism: SCRAM-SHA-256
  username: %s
  password: not-%s
`, addr, user, password))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := s.Connect(ctx)
	var bo *service.ErrBackOff
	if !errors.Is(err, service.ErrEndOfInput) || errors.As(err, &bo) {
		t.Fatalf("want the end of the output without a back-off, got %T: %v", err, err)
	}
	if !run.Stopped() {
		t.Fatal("credentials the broker never accepted did not end the run")
	}
	msg := run.Err().Error()
	for _, want := range []string{"SCRAM-SHA-256", `"` + user + `"`, "sasl.username", "sasl.password", "SASL_AUTHENTICATION_FAILED"} {
		if !strings.Contains(msg, want) {
			t.Errorf("run error does not name %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "not-"+password) {
		t.Errorf("run error leaks the password: %s", msg)
	}
}
