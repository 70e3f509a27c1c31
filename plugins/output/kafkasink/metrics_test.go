package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connectd/connectd/internal/halt"
	"github.com/connectd/connectd/internal/metricdoc"
	"github.com/connectd/connectd/internal/metricdoc/metrictest"
)

// recordingStream runs a stream whose output is the kafka_sink in
// outputYAML and whose metrics go to the returned recordingMetrics. It
// returns the batch producer; the stream stops at the end of the test.
func recordingStream(t *testing.T, outputYAML string, processors ...string) (func(context.Context, service.MessageBatch) error, *metrictest.Recorder) {
	t.Helper()
	return recordingStreamIn(t, service.NewEnvironment(), outputYAML, processors...)
}

// recordingStreamIn is recordingStream in env, with processors (YAML)
// before the output.
func recordingStreamIn(t *testing.T, env *service.Environment, outputYAML string, processors ...string) (func(context.Context, service.MessageBatch) error, *metrictest.Recorder) {
	t.Helper()
	rec := metrictest.New()
	if err := rec.Register(env, "recording"); err != nil {
		t.Fatal(err)
	}
	b := env.NewStreamBuilder()
	produce, err := b.AddBatchProducerFunc()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.SetMetricsYAML("recording: {}"); err != nil {
		t.Fatal(err)
	}
	if err := b.SetLoggerYAML("level: none"); err != nil {
		t.Fatal(err)
	}
	for _, p := range processors {
		if err := b.AddProcessorYAML(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.AddOutputYAML(outputYAML); err != nil {
		t.Fatal(err)
	}
	stream, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- stream.Run(ctx) }()
	t.Cleanup(func() {
		defer cancel()
		if err := stream.StopWithin(10 * time.Second); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Error(err)
		}
	})
	return produce, rec
}

// The registered output, built from YAML by a stream, counts sent and failed
// records per topic and times produces; a failed message is reported back to
// the producer of the batch.
func TestMetricsThroughStream(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(1, "events"))
	produce, rec := recordingStream(t, fmt.Sprintf(`
kafka_sink:
  seed_brokers: [ %q ]
  topic: events
  timestamp_ms: ${! @ts.or("") }
  max_in_flight: 1
`, addr))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	err := produce(ctx, service.MessageBatch{message("ok-1"), message("bad", "ts", "soon"), message("ok-2")})
	if err == nil || !strings.Contains(err.Error(), "field timestamp_ms") {
		t.Fatalf("want the timestamp_ms failure reported to the producer, got %v", err)
	}
	var berr *service.BatchError
	if errors.As(err, &berr) && berr.IndexedErrors() != 1 {
		t.Errorf("batch error marks %d messages, want 1", berr.IndexedErrors())
	}

	for key, want := range map[string]int64{
		metrictest.Key("kafka_sink_records_sent", "topic", "events"):       2,
		metrictest.Key("kafka_sink_records_failed", "topic", "events"):     1,
		metrictest.Key("kafka_sink_produce_latency_ns", "topic", "events"): 1, // observations: one per batch and topic
	} {
		if got := rec.Get(key); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
	}

}

// With exactly_once the registered output counts transactions begun,
// committed and aborted (by cause), times commits, the whole of each
// transaction and the interval between commits, records the size of the
// last committed transaction, and counts records and bytes only once
// committed.
func TestTransactionMetricsThroughStream(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "events"))
	produce, rec := recordingStream(t, fmt.Sprintf(`
kafka_sink:
  seed_brokers: [ %q ]
  topic: events
  delivery_guarantee: exactly_once
  transactional_id_prefix: metrics
`, addr))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	start := time.Now()
	if err := produce(ctx, service.MessageBatch{message("one"), message("two"), message("three")}); err != nil {
		t.Fatal(err)
	}
	// The next transaction's commit is refused.
	c.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		resp := req.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode = kerr.UnknownServerError.Code
		return resp, nil, true
	})
	if err := produce(ctx, service.MessageBatch{message("lost")}); err == nil {
		t.Fatal("a batch whose commit failed was acknowledged")
	}
	if err := produce(ctx, service.MessageBatch{message("four")}); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)

	for key, want := range map[string]int64{
		metrictest.Key(metricRecordsSent, "topic", "events"): 4,
		metrictest.Key(metricBytesSent, "topic", "events"):   int64(len("one") + len("two") + len("three") + len("four")),
		metrictest.Key(metricTxnBegun):                       3,
		metrictest.Key(metricTxnCommitted):                   2,
		metrictest.Key(metricTxnAborted, "cause", "failure"): 1,
		metrictest.Key(metricTxnCommitLatency):               2, // observations
		metrictest.Key(metricTxnDuration):                    3, // every transaction, committed or aborted
		metrictest.Key(metricTxnInterval):                    1, // between the two commits
		metrictest.Key(metricTxnRecords):                     1,
		metrictest.Key(metricTxnFenced):                      0,
	} {
		if got := rec.Get(key); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
	}
	if got := rec.Series(metricTxnAborted); len(got) != 1 {
		t.Errorf("aborts %v, want one cause", got)
	}
	// A transaction lasts at least its commit; the interval spans the
	// aborted transaction and the last one, and ends within the test.
	if d, l := rec.Sum(metrictest.Key(metricTxnDuration)), rec.Sum(metrictest.Key(metricTxnCommitLatency)); d <= l {
		t.Errorf("transactions lasted %v in all, their commits %v: a transaction includes its commit", time.Duration(d), time.Duration(l))
	}
	if i := time.Duration(rec.Sum(metrictest.Key(metricTxnInterval))); i <= 0 || i > elapsed {
		t.Errorf("interval between the commits %v, want within (0, %v]", i, elapsed)
	}
	rec.CheckFamilies(t, "kafka_sink_", metricDocs)
}

// haltGrabber registers, in env, a processor `grab_halt` that passes
// messages on and hands out its stream's halt state: a test stops the run
// through it as a bad record elsewhere would.
func haltGrabber(t *testing.T, env *service.Environment) <-chan *halt.Run {
	t.Helper()
	runs := make(chan *halt.Run, 1)
	err := env.RegisterProcessor("grab_halt", service.NewConfigSpec(),
		func(_ *service.ParsedConfig, mgr *service.Resources) (service.Processor, error) {
			runs <- halt.For(mgr)
			return passThrough{}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

type passThrough struct{}

func (passThrough) Process(_ context.Context, m *service.Message) (service.MessageBatch, error) {
	return service.MessageBatch{m}, nil
}
func (passThrough) Close(context.Context) error { return nil }

// A transaction open when the run stops on an error is aborted with cause
// shutdown, and its duration observed.
func TestTransactionAbortedOnShutdownCounted(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "events"))
	env := service.NewEnvironment()
	runs := haltGrabber(t, env)
	produce, rec := recordingStreamIn(t, env, eosYAMLOutput(addr), "grab_halt: {}")
	run := <-runs
	var produced atomic.Int32
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if req.(*kmsg.ProduceRequest).TransactionID != nil && produced.Add(1) == 1 {
			run.Stop(errors.New("bad record at topic in partition 0 offset 7")) // while this transaction is open
		}
		return nil, nil, false
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := produce(ctx, service.MessageBatch{message("b1"), message("b2")}); !errors.Is(err, ErrRunStopped) {
		t.Fatalf("want the batch failed with ErrRunStopped, got %v", err)
	}
	for key, want := range map[string]int64{
		metrictest.Key(metricTxnBegun):                        1,
		metrictest.Key(metricTxnCommitted):                    0,
		metrictest.Key(metricTxnAborted, "cause", "shutdown"): 1,
		metrictest.Key(metricTxnDuration):                     1,
	} {
		if got := rec.Get(key); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
	}
	if got := rec.Series(metricTxnAborted); len(got) != 1 {
		t.Errorf("aborts %v, want only cause shutdown", got)
	}
}

// A fenced producer's transaction is counted aborted with cause fenced (and
// the fencing in kafka_sink_txn_fenced) although the sink cannot abort it
// itself; the batch, retried on a new producer, commits, and every
// transaction begun is counted committed or aborted.
func TestTransactionFencedCounted(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "events"))
	var injected atomic.Bool
	c.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		et := req.(*kmsg.EndTxnRequest)
		if !et.Commit || !injected.CompareAndSwap(false, true) {
			c.KeepControl()
			return nil, nil, false
		}
		resp := et.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode = kerr.ProducerFenced.Code
		return resp, nil, true
	})
	produce, rec := recordingStream(t, eosYAMLOutput(addr))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := produce(ctx, service.MessageBatch{message("a"), message("b")}); err != nil {
		t.Fatalf("the batch was not written on a new producer: %v", err)
	}
	for key, want := range map[string]int64{
		metrictest.Key(metricTxnCommitted):                  1,
		metrictest.Key(metricTxnAborted, "cause", "fenced"): 1,
		metrictest.Key(metricTxnFenced):                     1,
		metrictest.Key(metricTxnDuration):                   2,
	} {
		if got := rec.Get(key); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
	}
	if b, n := rec.Get(metrictest.Key(metricTxnBegun)), rec.Get(metrictest.Key(metricTxnCommitted))+rec.Total(metricTxnAborted); b != n {
		t.Errorf("%d transactions begun, %d committed or aborted (%v)", b, n, rec.Series(metricTxnAborted))
	}
}

// eosYAMLOutput is an exactly_once kafka_sink writing to topic events.
func eosYAMLOutput(addr string) string {
	return fmt.Sprintf(`
kafka_sink:
  seed_brokers: [ %q ]
  topic: events
  delivery_guarantee: exactly_once
  transactional_id_prefix: metrics
`, addr)
}

// Each abort path's error has one cause; the transaction timeout decides
// between a fencing and the broker's own abort.
func TestAbortCauseOf(t *testing.T) {
	t.Parallel()
	const timeout = time.Minute
	for _, c := range []struct {
		err  error
		open time.Duration
		want abortCause
	}{
		{&ProduceError{Topic: "t", Err: kerr.MessageTooLarge}, 0, abortFailure},
		{fmt.Errorf("%w after 10s: flushing: %w", ErrProduceTimeout, context.DeadlineExceeded), 0, abortFailure},
		{fmt.Errorf("committing: %w", kerr.UnknownServerError), 0, abortFailure},
		{fmt.Errorf("%w: %w", ErrOffsetsNotCommitted, kerr.RebalanceInProgress), 0, abortOffsets},
		{fmt.Errorf("%w: %w", errEarlierFailed, fmt.Errorf("%w: x", ErrOffsetsNotCommitted)), 0, abortRewind},
		{fmt.Errorf("%w: %w", errEarlierFailed, kerr.ProducerFenced), 2 * timeout, abortRewind},
		{fmt.Errorf("%w: %w", ErrRunStopped, errors.New("bad record")), 0, abortShutdown},
		{kerr.ProducerFenced, 0, abortFenced},
		{fmt.Errorf("committing: %w", kerr.InvalidProducerEpoch), 0, abortFenced},
		{fmt.Errorf("%w: %w", ErrOffsetsNotCommitted, kerr.ProducerFenced), 0, abortFenced},
		{kerr.ProducerFenced, timeout, abortTimeout},
		{fmt.Errorf("committing: %w", kerr.InvalidTxnState), 2 * timeout, abortTimeout},
		{fmt.Errorf("committing: %w", kerr.InvalidTxnState), 0, abortFailure},
	} {
		if got := abortCauseOf(c.err, c.open, timeout); got != c.want {
			t.Errorf("cause of %v after %v open = %s, want %s", c.err, c.open, got, c.want)
		}
	}
}

// The spec's Metrics section lists exactly the metrics of the table, with
// their kinds and labels.
func TestMetricsDocsAgreeWithTable(t *testing.T) {
	t.Parallel()
	var desc string
	service.GlobalEnvironment().WalkOutputs(func(name string, v *service.ConfigView) {
		if name == "kafka_sink" {
			desc = v.Description()
		}
	})
	if err := metricdoc.Agree(desc, metricDocs); err != nil {
		t.Error(err)
	}
}

// Counters and the produce timer follow each record's topic when a batch
// interleaves topics: counts and bytes per topic, one latency observation per
// batch and topic.
func TestMetricsPerTopicWithinABatch(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(1, "a", "b"))
	produce, rec := recordingStream(t, fmt.Sprintf(`
kafka_sink:
  seed_brokers: [ %q ]
  topic: ${! @t }
  max_in_flight: 1
`, addr))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	batch := service.MessageBatch{message("1", "t", "a"), message("22", "t", "b"), message("333", "t", "a"),
		message("4444", "t", "a"), message("55555", "t", "b")}
	if err := produce(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int64{
		metrictest.Key("kafka_sink_records_sent", "topic", "a"):       3,
		metrictest.Key("kafka_sink_records_sent", "topic", "b"):       2,
		metrictest.Key("kafka_sink_bytes_sent", "topic", "a"):         1 + 3 + 4,
		metrictest.Key("kafka_sink_bytes_sent", "topic", "b"):         2 + 5,
		metrictest.Key("kafka_sink_produce_latency_ns", "topic", "a"): 1,
		metrictest.Key("kafka_sink_produce_latency_ns", "topic", "b"): 1,
	} {
		if got := rec.Get(key); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
	}
}
