package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/halt"
)

// newHaltableSink builds an unconnected sink with its own resources (so the
// test reaches the stream's halt state) and a log buffer; it is closed at
// the end of the test.
func newHaltableSink(t *testing.T, yaml string) (*Sink, *halt.Run, *syncBuffer) {
	t.Helper()
	cfg, err := parseConfig(t, yaml)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	logger := service.NewLoggerFromSlog(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	mgr := service.MockResources(service.MockResourcesOptUseLogger(logger))
	s, err := NewSink(cfg, mgr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	})
	return s, halt.For(mgr), logs
}

// refuseProduce answers every produce request (transactional or not) with
// code for each partition in it, and counts them.
func refuseProduce(c *kfake.Cluster, code int16) *atomic.Int32 {
	var n atomic.Int32
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		n.Add(1)
		pr := req.(*kmsg.ProduceRequest)
		resp := pr.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range pr.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	return &n
}

// A transaction timeout above the broker's maximum can never be accepted:
// Connect ends the run (the error names the field), tells Benthos to stop
// connecting (service.ErrEndOfInput, Benthos's "closed"), and a later
// Connect does not try again.
func TestConnectPermanentErrorEndsRun(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "events"),
		kfake.BrokerConfigs(map[string]string{"transaction.max.timeout.ms": "5000"}))
	inits := countRequests(c, kmsg.InitProducerID)
	s, run, logs := newHaltableSink(t, eosYAML(addr, "transaction_timeout: 1m"))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()

	err := s.Connect(ctx)
	if !errors.Is(err, service.ErrEndOfInput) || !errors.Is(err, kerr.InvalidTransactionTimeout) {
		t.Fatalf("want INVALID_TRANSACTION_TIMEOUT marked as the end of the output, got %v", err)
	}
	if !run.Stopped() {
		t.Fatal("a transaction timeout the broker never accepts did not end the run")
	}
	for _, want := range []string{"field transaction_timeout", "transaction.max.timeout.ms is 5000 ms"} {
		if !strings.Contains(run.Err().Error(), want) {
			t.Errorf("run error does not contain %q: %v", want, run.Err())
		}
	}
	if log := logs.String(); !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "the run stops") {
		t.Errorf("no error-level log of the end of the run:\n%s", log)
	}
	tried := inits.Load()
	if err := s.Connect(ctx); !errors.Is(err, service.ErrEndOfInput) {
		t.Fatalf("Connect after the end: want the end of the output, got %v", err)
	}
	if inits.Load() != tried {
		t.Fatal("Connect tried again after the run ended")
	}
}

// An error that may clear (here UNKNOWN_SERVER_ERROR answering
// InitProducerID) does not end the run: Benthos retries Connect with its
// back-off, logging one line per attempt, and the batch is written once the
// broker accepts.
func TestConnectTransientErrorIsRetriedThroughStream(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "events"))
	var refused atomic.Int32
	c.ControlKey(int16(kmsg.InitProducerID), func(req kmsg.Request) (kmsg.Response, error, bool) {
		if refused.Add(1) > 3 {
			return nil, nil, false // the fourth attempt is served: control ends
		}
		c.KeepControl()
		resp := req.(*kmsg.InitProducerIDRequest).ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = kerr.UnknownServerError.Code, -1, -1
		return resp, nil, true
	})

	logs := &syncBuffer{}
	b := service.NewStreamBuilder()
	b.SetLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if err := b.AddOutputYAML(fmt.Sprintf("kafka_sink:\n%s", indent(eosYAML(addr, "")))); err != nil {
		t.Fatal(err)
	}
	send, err := b.AddBatchProducerFunc()
	if err != nil {
		t.Fatal(err)
	}
	stream, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	runDone := make(chan error, 1)
	go func() { runDone <- stream.Run(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = stream.Stop(ctx)
		<-runDone
	})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := send(ctx, values("", "after-retries")); err != nil {
		t.Fatalf("the batch was not written after transient connect errors: %v\n%s", err, logs.String())
	}
	if got := readCommitted(t, addr, 1, "events"); !slices.Equal(got["events"], []string{"after-retries"}) {
		t.Fatalf("read_committed sees %v", got["events"])
	}
	if n := strings.Count(logs.String(), "Failed to connect to kafka_sink"); n != 3 {
		t.Errorf("%d connect failures logged, want one per refused attempt (3):\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "the run stops") {
		t.Errorf("a transient error ended the run:\n%s", logs.String())
	}
}

func indent(yaml string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(yaml), "\n") {
		b.WriteString("  " + line + "\n")
	}
	return b.String()
}

// Once the run stops on an error elsewhere (another component hit a bad
// record under on_error: fail) while a transaction is open, the sink aborts
// it instead of committing, the batch fails as a whole (nacked), nothing of
// it is visible to read_committed readers, and later batches are refused
// without reaching Kafka.
func TestExactlyOnceAbortsWhenRunStops(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "events"))
	s, run, logs := newHaltableSink(t, eosYAML(addr, ""))
	connect(t, s)

	badRecord := errors.New("table_decode: bad record at topic in partition 0 offset 7")
	var produced atomic.Int32
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if req.(*kmsg.ProduceRequest).TransactionID != nil && produced.Add(1) == 1 {
			run.Stop(badRecord) // while this transaction is open
		}
		return nil, nil, false
	})
	var commits, aborts atomic.Int32
	c.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if req.(*kmsg.EndTxnRequest).Commit {
			commits.Add(1)
		} else {
			aborts.Add(1)
		}
		return nil, nil, false
	})

	err := s.WriteBatch(context.Background(), values("", "b1", "b2", "b3"))
	if err == nil {
		t.Fatal("the transaction committed after the run stopped")
	}
	var berr *service.BatchError
	if errors.As(err, &berr) || !errors.Is(err, ErrRunStopped) || !errors.Is(err, badRecord) {
		t.Fatalf("want the whole batch failed with the run's error, got %v", err)
	}
	if commits.Load() != 0 || aborts.Load() != 1 {
		t.Fatalf("EndTxn commits %d, aborts %d; want the open transaction aborted, never committed", commits.Load(), aborts.Load())
	}
	if n := endOffsets(t, addr, "events"); n < 3 {
		t.Fatalf("the log holds %d offsets: the records never reached the broker, so the test proves nothing", n)
	}
	if !strings.Contains(logs.String(), "aborting the open transaction") {
		t.Errorf("no log line saying the open transaction is aborted:\n%s", logs.String())
	}

	before := produced.Load()
	if err := s.WriteBatch(context.Background(), values("", "later")); !errors.Is(err, ErrRunStopped) {
		t.Fatalf("a batch after the run stopped: want ErrRunStopped, got %v", err)
	}
	if produced.Load() != before {
		t.Fatal("a batch after the run stopped reached Kafka")
	}
	// A read_committed reader sees nothing: a marker record proves it read
	// to the end.
	marker, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID("marker"))
	if err != nil {
		t.Fatal(err)
	}
	defer marker.Close()
	ctx := context.Background()
	if err := marker.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := marker.ProduceSync(ctx, &kgo.Record{Topic: "events", Value: []byte("marker")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := marker.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if got := readCommitted(t, addr, 1, "events"); !slices.Equal(got["events"], []string{"marker"}) {
		t.Fatalf("read_committed sees %v, want only [marker]", got["events"])
	}
}

// Produce and transaction errors that cannot clear end the run with an
// error naming what to change; the batch still fails (nacked), so nothing
// is acknowledged.
func TestPermanentWriteErrorsEndRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		yaml   func(addr string) string
		inject func(c *kfake.Cluster)
		batch  func() service.MessageBatch
		want   []string
	}{
		{
			name: "unknown topic with auto-creation off",
			yaml: func(addr string) string {
				return fmt.Sprintf("seed_brokers: [ %q ]\ntopic: nowhere\nallow_auto_topic_creation: false\ntimeout: 5s\n", addr)
			},
			batch: func() service.MessageBatch { return values("", "v") },
			want:  []string{"field topic", `topic "nowhere" does not exist`, "field allow_auto_topic_creation is false", "UNKNOWN_TOPIC_OR_PARTITION"},
		},
		{
			name:   "topic not authorized",
			yaml:   func(addr string) string { return fmt.Sprintf("seed_brokers: [ %q ]\ntopic: events\n", addr) },
			inject: func(c *kfake.Cluster) { refuseProduce(c, kerr.TopicAuthorizationFailed.Code) },
			batch:  func() service.MessageBatch { return values("", "v") },
			want:   []string{`topic "events"`, "TOPIC_AUTHORIZATION_FAILED", "grant the principal WRITE"},
		},
		{
			name:   "exactly_once: a whole broker batch refused",
			yaml:   func(addr string) string { return eosYAML(addr, "") },
			inject: func(c *kfake.Cluster) { refuseProduce(c, kerr.InvalidRecord.Code) },
			batch:  func() service.MessageBatch { return values("", "x1", "x2", "x3") },
			want:   []string{`topic "events" partition 0 refused a batch of 3 records`, "INVALID_RECORD", "field key"},
		},
		{
			name: "exactly_once: consumer group not authorized",
			yaml: func(addr string) string { return eosYAML(addr, "") },
			inject: func(c *kfake.Cluster) {
				c.ControlKey(int16(kmsg.AddOffsetsToTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
					c.KeepControl()
					resp := req.(*kmsg.AddOffsetsToTxnRequest).ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
					resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
					return resp, nil, true
				})
			},
			want: []string{`consumer group "g"`, "GROUP_AUTHORIZATION_FAILED", "grant the principal READ on the consumer group"},
		},
		{
			name: "exactly_once: transactional id no longer authorized",
			yaml: func(addr string) string { return eosYAML(addr, "") },
			inject: func(c *kfake.Cluster) {
				c.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
					c.KeepControl()
					resp := req.(*kmsg.EndTxnRequest).ResponseKind().(*kmsg.EndTxnResponse)
					resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
					return resp, nil, true
				})
			},
			batch: func() service.MessageBatch { return values("", "v") },
			want:  []string{`transactional producer "test-0"`, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", "field transactional_id_prefix"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, addr := newCluster(t, kfake.SeedTopics(1, "events", "in", "out"))
			s, run, _ := newHaltableSink(t, tc.yaml(addr))
			s.clientOpts = []kgo.Opt{kgo.MetadataMinAge(100 * time.Millisecond)}
			connect(t, s)
			if tc.inject != nil {
				tc.inject(c)
			}
			batch := fromSource(newFakeSource(addr), 0, 1)
			if tc.batch != nil {
				batch = tc.batch()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := s.WriteBatch(ctx, batch); err == nil {
				t.Fatal("the batch was acknowledged")
			}
			if !run.Stopped() {
				t.Fatal("the run goes on after an error that cannot clear")
			}
			for _, want := range tc.want {
				if !strings.Contains(run.Err().Error(), want) {
					t.Errorf("run error does not contain %q: %v", want, run.Err())
				}
			}
		})
	}
}

// In a transaction, a record over max_message_bytes (franz-go refuses it
// before sending) fails alone: the rest of the batch commits in a new
// transaction and the run goes on.
func TestExactlyOnceOversizedRecordFailsAlone(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(1, "events"))
	s, run, _ := newHaltableSink(t, eosYAML(addr, "max_message_bytes: 1024"))
	connect(t, s)
	batch := values("", "ok1", strings.Repeat("x", 2048), "ok2")
	failed := failedIndices(t, s.WriteBatch(context.Background(), batch))
	if len(failed) != 1 || !errors.Is(failed[1], kerr.MessageTooLarge) {
		t.Fatalf("want only message 1 failed with MESSAGE_TOO_LARGE, got %v", failed)
	}
	if run.Stopped() {
		t.Fatalf("a bad record ended the run: %v", run.Err())
	}
	if got := readCommitted(t, addr, 2, "events"); !slices.Equal(got["events"], []string{"ok1", "ok2"}) {
		t.Fatalf("read_committed sees %v, want [ok1 ok2]", got["events"])
	}
}

// blackhole listens and accepts connections but never answers: a broker
// that hangs. accepted counts the connections it accepted.
func blackhole(t *testing.T) (addr string, accepted *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = new(atomic.Int32)
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, conn)
			accepted.Add(1)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String(), accepted
}

// When the run ends (SIGTERM) while the sink cannot reach Kafka, the
// attempt in progress is cut short and no new one starts: Benthos's connect
// loop ends at once instead of holding the shutdown. It says so at info
// level, and the end is not an error.
func TestConnectGivesUpWhenRunEnds(t *testing.T) {
	t.Parallel()
	broker, accepted := blackhole(t)
	s, run, logs := newHaltableSink(t, fmt.Sprintf("seed_brokers: [ %q ]\ntopic: events\n", broker))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	connected := make(chan error, 1)
	go func() { connected <- s.Connect(ctx) }()
	// The attempt is in progress once the broker took its connection:
	// Connect waits for an answer that never comes.
	eventually.True(t, 5*time.Second, "Connect to reach the broker", func() bool {
		select {
		case err := <-connected:
			t.Fatalf("Connect to a broker that never answers returned: %v", err)
		default:
		}
		return accepted.Load() > 0
	})
	began := time.Now()
	run.End()
	select {
	case err := <-connected:
		if !errors.Is(err, service.ErrEndOfInput) {
			t.Fatalf("want the end of the output, got %v", err)
		}
		t.Logf("Connect returned %v after the end", time.Since(began))
	case <-time.After(5 * time.Second):
		t.Fatal("Connect still waits for the broker 5s after the run ended")
	}
	if err := s.Connect(ctx); !errors.Is(err, service.ErrEndOfInput) {
		t.Fatalf("Connect after the end: want the end of the output, got %v", err)
	}
	if run.Stopped() {
		t.Fatal("ending the run is not an error")
	}
	eventually.NoError(t, 5*time.Second, "an info log of what the end waits for", func() error {
		if logs := logs.String(); !strings.Contains(logs, "the run is ending while not connected") {
			return fmt.Errorf("logs:\n%s", logs)
		}
		return nil
	})
}

// A batch that cannot reach Kafka once the run is ending is nacked, not
// reported as service.ErrNotConnected: Benthos would try to reconnect,
// which the end refuses, and leave the batch unacknowledged, holding the
// input until the shutdown timed out.
func TestWriteAtEndIsNackedNotReconnected(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "events"))
	s, run, _ := newHaltableSink(t, fmt.Sprintf("seed_brokers: [ %q ]\ntopic: events\ntimeout: 1s\n", addr))
	connect(t, s)
	ctx := context.Background()
	if err := s.WriteBatch(ctx, values("", "first")); err != nil {
		t.Fatal(err)
	}
	c.Close() // while the run goes on, this is ErrNotConnected: TestClusterLossIsNotConnected
	run.End()
	err := s.WriteBatch(ctx, values("", "b"))
	if err == nil || errors.Is(err, service.ErrNotConnected) {
		t.Fatalf("at the end of the run: want a plain error (a nack), got %v", err)
	}
	if !strings.Contains(err.Error(), "the run is ending") || !strings.Contains(err.Error(), "reached kafka") {
		t.Errorf("error does not say why the batch is not written: %v", err)
	}
}
