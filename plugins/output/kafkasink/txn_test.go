package kafkasink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/kafkaconn"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// syncBuffer is a log sink safe for the client's and the test's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newLoggedSink builds an unconnected sink whose log goes to the returned
// buffer, and closes it at the end of the test.
func newLoggedSink(t *testing.T, yaml string) (*Sink, *syncBuffer) {
	t.Helper()
	cfg, err := parseConfig(t, yaml)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	logger := service.NewLoggerFromSlog(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	s, err := NewSink(cfg, service.MockResources(service.MockResourcesOptUseLogger(logger)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	})
	return s, logs
}

// connect connects s as Benthos does: a service.ErrBackOff (a lost
// producer's back-off) is waited out before the next attempt; any other
// error fails the test.
func connect(t *testing.T, s *Sink) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for {
		err := s.Connect(ctx)
		var bo *service.ErrBackOff
		if !errors.As(err, &bo) {
			if err != nil {
				t.Fatal(err)
			}
			return
		}
		select {
		case <-time.After(bo.Wait):
		case <-ctx.Done():
			t.Fatalf("still backing off after 15s: %v", err)
		}
	}
}

// eosYAML is an exactly_once sink config for addr with the given extra
// lines.
func eosYAML(addr, extra string) string {
	return fmt.Sprintf(`
seed_brokers: [ %q ]
topic: ${! @topic.or("events") }
delivery_guarantee: exactly_once
transactional_id_prefix: test
timeout: 5s
allow_auto_topic_creation: false
%s
`, addr, extra)
}

// values returns the batch of messages with the given payloads, with topic
// metadata when topic is not empty.
func values(topic string, vs ...string) service.MessageBatch {
	var b service.MessageBatch
	for _, v := range vs {
		if topic == "" {
			b = append(b, message(v))
		} else {
			b = append(b, message(v, "topic", topic))
		}
	}
	return b
}

// readCommitted reads topics from the start as a read_committed consumer
// until it has n records, failing the test if they do not arrive in time,
// and returns their values per topic in offset order (per partition).
func readCommitted(t *testing.T, addr string, n int, topics ...string) map[string][]string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	got := map[string][]string{}
	seen := 0
	for seen < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read_committed: %d of %d records before the deadline: %v", seen, n, got)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetching %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsTransactional() {
				t.Errorf("record %q in %s is not transactional", r.Value, r.Topic)
			}
			got[r.Topic] = append(got[r.Topic], string(r.Value))
			seen++
		})
	}
	return got
}

// A batch is one transaction; every topic it routes to joins it, and a
// read_committed reader sees all of it once committed.
func TestExactlyOnceCommitsAcrossTopics(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(2, "a", "b"))
	var endTxns, commits atomic.Int32
	c.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		endTxns.Add(1)
		if req.(*kmsg.EndTxnRequest).Commit {
			commits.Add(1)
		}
		return nil, nil, false
	})
	s := newConnectedSink(t, eosYAML(addr, ""))
	batch := append(values("a", "a1", "a2", "a3"), values("b", "b1", "b2")...)
	if err := s.WriteBatch(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if n, m := endTxns.Load(), commits.Load(); n != 1 || m != 1 {
		t.Fatalf("EndTxn requests %d, commits %d; want one commit for the batch", n, m)
	}
	got := readCommitted(t, addr, 5, "a", "b")
	for topic, want := range map[string][]string{"a": {"a1", "a2", "a3"}, "b": {"b1", "b2"}} {
		g := slices.Clone(got[topic])
		slices.Sort(g)
		if !slices.Equal(g, want) {
			t.Errorf("topic %s: read_committed sees %v, want %v", topic, g, want)
		}
	}
}

// A produce Kafka refuses (for a reason that may clear) aborts the whole
// transaction: the batch fails as a whole and read_committed readers see
// none of it.
func TestExactlyOnceAbortsOnProduceError(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "events"))
	// The first produce request is answered with UNKNOWN_SERVER_ERROR
	// (not retriable by the client, transient for the run) for every
	// partition in it.
	var refused atomic.Int32
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		pr := req.(*kmsg.ProduceRequest)
		if pr.TransactionID == nil {
			return nil, nil, false
		}
		refused.Add(1)
		resp := pr.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range pr.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.UnknownServerError.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	s := newConnectedSink(t, eosYAML(addr, ""))
	s.recreate = kafkaconn.NewBackoff(time.Millisecond, recreateBackoffMax)
	ctx := context.Background()

	err := s.WriteBatch(ctx, values("", "x1", "x2", "x3"))
	if err == nil {
		t.Fatal("the batch committed although Kafka refused its records")
	}
	var berr *service.BatchError
	if errors.As(err, &berr) {
		t.Fatalf("want the whole batch failed, got a batch error for some messages: %v", err)
	}
	if !errors.Is(err, kerr.UnknownServerError) {
		t.Errorf("error does not carry the cause: %v", err)
	}
	if refused.Load() == 0 {
		t.Fatal("no transactional produce request was refused")
	}
	t.Logf("aborted: %v", err)

	// The sink recovers (reconnecting if it had to) and commits the next
	// batch, which is all read_committed readers see.
	if errors.Is(err, service.ErrNotConnected) {
		connect(t, s)
	}
	if err := s.WriteBatch(ctx, values("", "ok1", "ok2")); err != nil {
		t.Fatal(err)
	}
	if got := readCommitted(t, addr, 2, "events"); !slices.Equal(got["events"], []string{"ok1", "ok2"}) {
		t.Fatalf("read_committed sees %v, want [ok1 ok2]", got["events"])
	}
}

// Any EndTxn error means the transaction did not commit: the batch fails as
// a whole, and its records are never visible to read_committed readers.
func TestExactlyOnceAbortsOnEndTxnError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		answer func(*kmsg.EndTxnRequest) (kmsg.Response, error)
	}{
		{"unknown server error", func(req *kmsg.EndTxnRequest) (kmsg.Response, error) {
			resp := req.ResponseKind().(*kmsg.EndTxnResponse)
			resp.ErrorCode = kerr.UnknownServerError.Code
			return resp, nil
		}},
		{"invalid txn state", func(req *kmsg.EndTxnRequest) (kmsg.Response, error) {
			resp := req.ResponseKind().(*kmsg.EndTxnResponse)
			resp.ErrorCode = kerr.InvalidTxnState.Code
			return resp, nil
		}},
		{"producer fenced", func(req *kmsg.EndTxnRequest) (kmsg.Response, error) {
			resp := req.ResponseKind().(*kmsg.EndTxnResponse)
			resp.ErrorCode = kerr.ProducerFenced.Code
			return resp, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, addr := newCluster(t, kfake.SeedTopics(1, "events"))
			var injected atomic.Bool
			c.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
				et := req.(*kmsg.EndTxnRequest)
				if !et.Commit || !injected.CompareAndSwap(false, true) {
					c.KeepControl()
					return nil, nil, false
				}
				resp, err := tc.answer(et)
				return resp, err, true
			})
			s := newConnectedSink(t, eosYAML(addr, ""))
			s.recreate = kafkaconn.NewBackoff(time.Millisecond, recreateBackoffMax)
			ctx := context.Background()
			err := s.WriteBatch(ctx, values("", "lost1", "lost2"))
			if err == nil {
				t.Fatal("WriteBatch succeeded although the commit failed")
			}
			var berr *service.BatchError
			if errors.As(err, &berr) {
				t.Fatalf("want the whole batch failed, got %v", err)
			}
			t.Logf("commit failed: %v", err)
			if errors.Is(err, service.ErrNotConnected) {
				connect(t, s)
			}
			if err := s.WriteBatch(ctx, values("", "ok")); err != nil {
				t.Fatal(err)
			}
			if got := readCommitted(t, addr, 1, "events"); !slices.Equal(got["events"], []string{"ok"}) {
				t.Fatalf("read_committed sees %v, want [ok]", got["events"])
			}
			if n := endOffsets(t, addr, "events"); n < 3 {
				t.Errorf("the log holds %d offsets; the failed batch never reached the broker, so the test proves nothing", n)
			}
		})
	}
}

// A second writer with the same transactional id fences the first: the
// first's next batch fails loudly (error log naming the id, a counted
// fencing, ErrNotConnected so Benthos reconnects) and is not committed.
func TestExactlyOnceFencing(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(1, "events"))
	ctx := context.Background()
	first, logs := newLoggedSink(t, eosYAML(addr, "transactional_id_suffix: pod-1"))
	first.recreate = kafkaconn.NewBackoff(10*time.Millisecond, recreateBackoffMax)
	connect(t, first)
	if err := first.WriteBatch(ctx, values("", "first-1")); err != nil {
		t.Fatal(err)
	}

	second, _ := newLoggedSink(t, eosYAML(addr, "transactional_id_suffix: pod-1"))
	connect(t, second) // InitProducerID bumps the epoch: first is fenced

	err := first.WriteBatch(ctx, values("", "zombie-1", "zombie-2"))
	if !errors.Is(err, ErrFenced) || !errors.Is(err, service.ErrNotConnected) {
		t.Fatalf("want ErrFenced wrapped in ErrNotConnected, got %v", err)
	}
	if !strings.Contains(err.Error(), `"test-pod-1"`) {
		t.Errorf("error does not name the transactional id: %v", err)
	}
	log := logs.String()
	if !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "FENCED") || !strings.Contains(log, "test-pod-1") {
		t.Errorf("no error-level log naming the transactional id; log:\n%s", log)
	}
	first.mu.Lock()
	cl := first.mu.client
	first.mu.Unlock()
	losses := first.recreate.Failures()
	if losses != 1 || cl != nil {
		t.Errorf("producers lost %d (want 1), client kept %v (want closed)", losses, cl != nil)
	}

	if err := second.WriteBatch(ctx, values("", "second-1")); err != nil {
		t.Fatal(err)
	}
	if got := readCommitted(t, addr, 2, "events"); !slices.Equal(got["events"], []string{"first-1", "second-1"}) {
		t.Fatalf("read_committed sees %v, want [first-1 second-1]: the zombie's batch must not commit", got["events"])
	}

	// Reconnecting (after the back-off) creates a new producer, which in
	// turn fences the second writer: two writers with one id fence each
	// other, each time counted and logged.
	connect(t, first)
	if err := first.WriteBatch(ctx, values("", "first-2")); err != nil {
		t.Fatal(err)
	}
	if err := second.WriteBatch(ctx, values("", "second-2")); !errors.Is(err, ErrFenced) {
		t.Fatalf("want the second writer fenced, got %v", err)
	}
}

// A transaction timeout above the broker's transaction.max.timeout.ms fails
// Connect with both values and the broker setting named.
func TestExactlyOnceTransactionTimeoutRefused(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(1, "events"),
		kfake.BrokerConfigs(map[string]string{"transaction.max.timeout.ms": "5000"}))
	s, _ := newLoggedSink(t, eosYAML(addr, "transaction_timeout: 1m"))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err := s.Connect(ctx)
	if err == nil {
		t.Fatal("Connect succeeded with a transaction timeout above the broker's maximum")
	}
	for _, want := range []string{"field transaction_timeout", "1m0s", "60000 ms", "transaction.max.timeout.ms is 5000 ms (5s)", `"test-0"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q: %v", want, err)
		}
	}
	if !errors.Is(err, kerr.InvalidTransactionTimeout) {
		t.Errorf("error does not wrap INVALID_TRANSACTION_TIMEOUT: %v", err)
	}
	if s.client() != nil {
		t.Error("a client was kept after the failed initialisation")
	}
}

// A message whose partition does not exist never joins the transaction: it
// fails alone, naming the value, and the rest of the batch commits.
func TestExactlyOnceBadPartitionFailsAlone(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(3, "events"))
	s := newConnectedSink(t, eosYAML(addr, "partitioner: manual\npartition: ${! @p }"))
	batch := service.MessageBatch{
		message("p0", "p", "0"),
		message("p7", "p", "7"),
		message("neg", "p", "-1"),
		message("p2", "p", "2"),
	}
	failed := failedIndices(t, s.WriteBatch(context.Background(), batch))
	if len(failed) != 2 || failed[1] == nil || failed[2] == nil {
		t.Fatalf("want messages 1 and 2 failed, got %v", failed)
	}
	var pe *PartitionError
	if !errors.As(failed[1], &pe) || pe.Partition != 7 || pe.NumPartitions != 3 ||
		!strings.Contains(failed[1].Error(), `partition 7 is out of range for topic "events", which has 3 partitions`) {
		t.Errorf("message 1: want a PartitionError naming 7 of 3, got %v", failed[1])
	}
	if !strings.Contains(failed[2].Error(), "field partition") || !strings.Contains(failed[2].Error(), "-1") {
		t.Errorf("message 2: want an error naming field partition and -1, got %v", failed[2])
	}
	got := readCommitted(t, addr, 2, "events")
	g := slices.Clone(got["events"])
	slices.Sort(g)
	if !slices.Equal(g, []string{"p0", "p2"}) {
		t.Fatalf("read_committed sees %v, want [p0 p2]", g)
	}
}

// A refused InitProducerID fails Connect, naming the transactional id and
// what to do; no client is kept.
func TestExactlyOnceInitRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		code int16
		want []string
	}{
		{"not authorized", kerr.TransactionalIDAuthorizationFailed.Code,
			[]string{`transactional producer "test-7"`, `grant WRITE and DESCRIBE on TransactionalId "test-7"`, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"}},
		{"invalid timeout", kerr.InvalidTransactionTimeout.Code,
			[]string{"field transaction_timeout", "2m0s (120000 ms)", "transaction.max.timeout.ms is 900000 ms (15m0s)", "INVALID_TRANSACTION_TIMEOUT"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, addr := newCluster(t, kfake.SeedTopics(1, "events"))
			c.ControlKey(int16(kmsg.InitProducerID), func(req kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				resp := req.(*kmsg.InitProducerIDRequest).ResponseKind().(*kmsg.InitProducerIDResponse)
				resp.ErrorCode = tc.code
				resp.ProducerID, resp.ProducerEpoch = -1, -1
				return resp, nil, true
			})
			s, _ := newLoggedSink(t, eosYAML(addr, "transactional_id_suffix: \"7\"\ntransaction_timeout: 2m"))
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			err := s.Connect(ctx)
			if err == nil {
				t.Fatal("Connect succeeded although InitProducerID was refused")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not contain %q: %v", want, err)
				}
			}
			if s.client() != nil {
				t.Error("a client was kept after the failed initialisation")
			}
		})
	}
}

// The transactional producers are initialised by Connect, before any batch,
// with the configured transactional id and timeout; produce requests carry
// the id and acks=all.
func TestExactlyOnceProducerInitialisedAtConnect(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "events"))
	var (
		mu    sync.Mutex
		inits []*kmsg.InitProducerIDRequest
		acks  []int16
		txIDs []string
	)
	c.ControlKey(int16(kmsg.InitProducerID), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		inits = append(inits, req.(*kmsg.InitProducerIDRequest))
		return nil, nil, false
	})
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		pr := req.(*kmsg.ProduceRequest)
		acks = append(acks, pr.Acks)
		if pr.TransactionID != nil {
			txIDs = append(txIDs, *pr.TransactionID)
		}
		return nil, nil, false
	})
	s := newConnectedSink(t, eosYAML(addr, "transactional_id_suffix: east-1\ntransaction_timeout: 45s"))
	mu.Lock()
	// Both producers of the pool (rounds.go) are initialised, fencing
	// their predecessors.
	var ids []string
	for _, in := range inits {
		if in.TransactionalID != nil && in.TransactionTimeoutMillis == 45000 {
			ids = append(ids, *in.TransactionalID)
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"test-east-1", "test-east-1-1"}) || len(inits) != 2 {
		t.Errorf("want InitProducerID for test-east-1 and test-east-1-1 with 45000 ms at Connect, got %d: %+v", len(inits), inits)
	}
	mu.Unlock()
	if err := s.WriteBatch(context.Background(), values("", "v")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(acks) == 0 || slices.ContainsFunc(acks, func(a int16) bool { return a != -1 }) {
		t.Errorf("produce acks %v, want all -1", acks)
	}
	if len(txIDs) != len(acks) || slices.ContainsFunc(txIDs, func(id string) bool { return id != "test-east-1" }) {
		t.Errorf("produce transactional ids %v, want test-east-1 on every request", txIDs)
	}
}

// A batch none of whose messages can join the transaction fails message by
// message and commits nothing.
func TestExactlyOnceNothingToCommit(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(2, "events"))
	s := newConnectedSink(t, eosYAML(addr, "partitioner: manual\npartition: ${! @p }"))
	ctx := context.Background()
	failed := failedIndices(t, s.WriteBatch(ctx, service.MessageBatch{message("p5", "p", "5"), message("p9", "p", "9")}))
	if len(failed) != 2 {
		t.Fatalf("want both messages failed, got %v", failed)
	}
	// The producer is still usable.
	if err := s.WriteBatch(ctx, service.MessageBatch{message("p1", "p", "1")}); err != nil {
		t.Fatal(err)
	}
	if got := readCommitted(t, addr, 1, "events"); !slices.Equal(got["events"], []string{"p1"}) {
		t.Fatalf("read_committed sees %v, want [p1]", got["events"])
	}
}
