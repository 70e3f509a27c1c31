package eventwindow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
	_ "github.com/connectd/connectd/plugins/input/kafkasource"
	_ "github.com/connectd/connectd/plugins/output/kafkasink"
)

// windowPipeline is kafka_source -> event_window (windows given by the
// YAML lines) -> exactly-once kafka_sink, counting records per key.
func windowPipeline(t *testing.T, addr, windows string) *service.Stream {
	t.Helper()
	b := service.NewStreamBuilder()
	b.SetThreads(1)
	for _, step := range []struct {
		add  func(string) error
		yaml string
	}{
		{b.AddInputYAML, fmt.Sprintf(`
kafka_source:
  seed_brokers: [ %q ]
  topics: [ t ]
  consumer_group: windows
  batch_size: 1
  commit_period: 20ms
  fetch_max_wait: 50ms
  watermark:
    max_out_of_orderness: 5s
`, addr)},
		{b.SetBufferYAML, `
event_window:
  ` + windows + `
  key: ${! @kafka_key }
  aggregates: { n: count }
`},
		{b.AddOutputYAML, fmt.Sprintf(`
kafka_sink:
  seed_brokers: [ %q ]
  topic: out
  key: ${! @window_key }
  delivery_guarantee: exactly_once
  transactional_id_prefix: windows
`, addr)},
		{b.SetLoggerYAML, "level: none"},
	} {
		if err := step.add(step.yaml); err != nil {
			t.Fatal(err)
		}
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type windowKey struct {
	Key   string
	Start int64
}

// committedWindows reads every committed result of topic out.
func committedWindows(t *testing.T, addr string) (counts map[windowKey]int64, results int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("out"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	counts = map[windowKey]int64{}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			var v struct {
				Key   string `json:"key"`
				Start int64  `json:"window_start_ms"`
				N     int64  `json:"n"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("result %q at offset %d: %v", r.Value, r.Offset, err)
			}
			counts[windowKey{v.Key, v.Start}] = v.N
			results++
		})
		if ctx.Err() != nil {
			return counts, results
		}
	}
}

// waitWindows waits until topic out holds n committed results.
func waitWindows(t *testing.T, addr string, n int) {
	t.Helper()
	eventually.NoError(t, 20*time.Second, fmt.Sprintf("%d committed window results in topic out", n), func() error {
		if counts, got := committedWindows(t, addr); got < n {
			return fmt.Errorf("%d results: %v", got, counts)
		}
		return nil
	})
}

// A pipeline stopped after one window result committed, while another
// window is open, and started again: the committed window's records are
// read again (the open window holds the committed offset back), and are
// dropped rather than counted into a second result for that window. For
// tumbling windows and for sessions.
func TestWindowResultsExactlyOnceAcrossRestart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, windows string
		// first is read before the stop, then more; want is the output.
		first []keyAt
		more  keyAt
		want  map[windowKey]int64
	}{
		{
			name:    "tumbling",
			windows: "type: tumbling\n  size: 10s",
			// a's [0,10s) fires on b@16000 (watermark 10999) while b's
			// [10s,20s) stays open: its records hold the offset at 1.
			first: []keyAt{{"a", 1000}, {"b", 12000}, {"a", 8000}, {"b", 16000}},
			more:  keyAt{"c", 30000}, // fires b's [10s,20s)
			want:  map[windowKey]int64{{"a", 0}: 2, {"b", 10000}: 2},
		},
		{
			name:    "session",
			windows: "type: session\n  gap: 3s",
			// a's [1s,6s) fires on c@12000 (watermark 6999) while b's
			// [5s,10s) stays open and holds the offset at 1: a@3000 is
			// read again after the stop and rebuilds [3s,6s), part of
			// the committed session.
			first: []keyAt{{"a", 1000}, {"b", 5000}, {"a", 3000}, {"b", 7000}, {"c", 12000}},
			more:  keyAt{"d", 30000},
			want:  map[windowKey]int64{{"a", 1000}: 2, {"b", 5000}: 2, {"c", 12000}: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testExactlyOnceAcrossRestart(t, tc.windows, tc.first, tc.more, tc.want)
		})
	}
}

type keyAt struct {
	key string
	ms  int64
}

func testExactlyOnceAcrossRestart(t *testing.T, windows string, first []keyAt, more keyAt, want map[windowKey]int64) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t", "out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	produce := func(recs ...keyAt) {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		for _, r := range recs {
			rec := &kgo.Record{Topic: "t", Key: []byte(r.key), Value: []byte(r.key), Timestamp: time.UnixMilli(r.ms)}
			if err := cl.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	run := func(results int) {
		t.Helper()
		s := windowPipeline(t, addr, windows)
		done := make(chan error, 1)
		go func() { done <- s.Run(context.Background()) }()
		waitWindows(t, addr, results)
		_ = s.StopWithin(2 * time.Second) // a forced stop is as good as a crash here
		<-done
	}

	produce(first...)
	run(1)
	produce(more)
	run(len(want))

	got, n := committedWindows(t, addr)
	if n != len(want) || !maps.Equal(got, want) {
		t.Fatalf("%d committed results %v, want exactly %v", n, got, want)
	}
}
