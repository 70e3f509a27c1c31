package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// recordingMetrics is a metrics exporter that keeps counter totals and timer
// observation counts, keyed `name{topic}` (Benthos adds other labels, such as
// the component path, which are ignored).
type recordingMetrics struct {
	mu     sync.Mutex
	values map[string]int64
}

func (m *recordingMetrics) add(name string, keys, values []string, v int64) {
	topic := ""
	if i := slices.Index(keys, metricLabelTopic); i >= 0 {
		topic = values[i]
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.values[name+"{"+topic+"}"] += v
}

func (m *recordingMetrics) get(key string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.values[key]
}

type metricFunc func(int64)

func (f metricFunc) Incr(v int64)   { f(v) }
func (f metricFunc) Timing(v int64) { f(1) }
func (f metricFunc) Set(int64)      {}

func (m *recordingMetrics) NewCounterCtor(name string, keys ...string) service.MetricsExporterCounterCtor {
	return func(values ...string) service.MetricsExporterCounter {
		return metricFunc(func(v int64) { m.add(name, keys, values, v) })
	}
}

func (m *recordingMetrics) NewTimerCtor(name string, keys ...string) service.MetricsExporterTimerCtor {
	return func(values ...string) service.MetricsExporterTimer {
		return metricFunc(func(v int64) { m.add(name, keys, values, v) })
	}
}

// gaugeFunc records the last value set.
type gaugeFunc func(int64)

func (f gaugeFunc) Incr(v int64) {}
func (f gaugeFunc) Decr(v int64) {}
func (f gaugeFunc) Set(v int64)  { f(v) }

func (m *recordingMetrics) NewGaugeCtor(name string, keys ...string) service.MetricsExporterGaugeCtor {
	return func(values ...string) service.MetricsExporterGauge {
		return gaugeFunc(func(v int64) {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.values[name+"{}"] = v
		})
	}
}

func (*recordingMetrics) Close(context.Context) error { return nil }

// recordingStream runs a stream whose output is the kafka_sink in
// outputYAML and whose metrics go to the returned recordingMetrics. It
// returns the batch producer; the stream stops at the end of the test.
func recordingStream(t *testing.T, outputYAML string) (func(context.Context, service.MessageBatch) error, *recordingMetrics) {
	t.Helper()
	rec := &recordingMetrics{values: map[string]int64{}}
	env := service.NewEnvironment()
	if err := env.RegisterMetricsExporter("recording", service.NewConfigSpec(),
		func(*service.ParsedConfig, *service.Logger) (service.MetricsExporter, error) { return rec, nil }); err != nil {
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
		"kafka_sink_records_sent{events}":       2,
		"kafka_sink_records_failed{events}":     1,
		"kafka_sink_produce_latency_ns{events}": 1, // observations: one per batch and topic
	} {
		if got := rec.get(key); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
	}

}

// With exactly_once the registered output counts transactions begun,
// committed and aborted, times commits, records the size of the last
// committed transaction, and counts records and bytes only once committed.
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

	for key, want := range map[string]int64{
		"kafka_sink_records_sent{events}":    3,
		"kafka_sink_bytes_sent{events}":      int64(len("one") + len("two") + len("three")),
		"kafka_sink_txn_begun{}":             2,
		"kafka_sink_txn_committed{}":         1,
		"kafka_sink_txn_aborted{}":           1,
		"kafka_sink_txn_commit_latency_ns{}": 1, // observations
		"kafka_sink_txn_records{}":           3,
		"kafka_sink_txn_fenced{}":            0,
	} {
		if got := rec.get(key); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
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
		"kafka_sink_records_sent{a}":       3,
		"kafka_sink_records_sent{b}":       2,
		"kafka_sink_bytes_sent{a}":         1 + 3 + 4,
		"kafka_sink_bytes_sent{b}":         2 + 5,
		"kafka_sink_produce_latency_ns{a}": 1,
		"kafka_sink_produce_latency_ns{b}": 1,
	} {
		if got := rec.get(key); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
	}
}
