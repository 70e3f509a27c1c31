package kafkasink_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/metricdoc/metrictest"
	_ "github.com/connectd/connectd/plugins/input/kafkasource"
	_ "github.com/connectd/connectd/plugins/output/kafkasink"
)

// TestRoundsOlderFailureAbortsNewer runs kafka_source -> exactly-once
// kafka_sink on kfake with transactions by interval, with the source's
// partitions assigned by its enumerator and, in
// TestRoundsOlderFailureAbortsNewerGroup, by the consumer group (the rewind
// then seeks the group's own assignment). The first transaction's
// offset commit is held while the next transaction fills on the other
// producer, then refused: the older transaction aborts, the newer one is
// aborted with it, and the source reads again from the committed offsets. A
// read_committed reader sees every input record exactly once, in per-key
// order.
func TestRoundsOlderFailureAbortsNewer(t *testing.T) {
	t.Parallel()
	roundsOlderFailureAbortsNewer(t, "enumerator")
}

func TestRoundsOlderFailureAbortsNewerGroup(t *testing.T) {
	t.Parallel()
	roundsOlderFailureAbortsNewer(t, "group")
}

func roundsOlderFailureAbortsNewer(t *testing.T, assignment string) {
	const (
		n             = 6000
		keys          = 16
		outPartitions = 4
	)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(outPartitions, "in", "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]

	var (
		mu      sync.Mutex
		failed  bool
		aborted = map[string]int{} // transactional id -> EndTxn aborts
		// producedOther: the other producer had records in an open
		// transaction when the first one's offsets were refused.
		producedOther bool
		otherProduced = make(chan struct{}) // closed when producedOther is set
		failing       string
		held          = make(chan struct{}) // closed when failed is set
		// open: transactional ids with records produced since their
		// last EndTxn.
		open = map[string]bool{}
	)
	// otherOpen sets producedOther if a transaction other than the failing
	// one has records. Called with mu held, once failed.
	otherOpen := func() {
		for id, o := range open {
			if o && id != failing && !producedOther {
				producedOther = true
				close(otherProduced)
			}
		}
	}
	c.ControlKey(int16(kmsg.TxnOffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		if failed {
			mu.Unlock()
			return nil, nil, false
		}
		failed = true
		close(held)
		r := req.(*kmsg.TxnOffsetCommitRequest)
		failing = r.TransactionalID
		otherOpen()
		mu.Unlock()
		// Let the next transaction fill meanwhile (if it does not within
		// 5s, the test fails below: nothing overlapped).
		c.SleepControl(func() {
			select {
			case <-otherProduced:
			case <-time.After(5 * time.Second):
			}
		})
		resp := r.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		for _, rt := range r.Topics {
			st := kmsg.NewTxnOffsetCommitResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.RebalanceInProgress.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.ProduceRequest)
		mu.Lock()
		if r.TransactionID != nil {
			open[*r.TransactionID] = true
			if failed && aborted[failing] == 0 {
				otherOpen()
			}
		}
		mu.Unlock()
		return nil, nil, false
	})
	c.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.EndTxnRequest)
		mu.Lock()
		open[r.TransactionalID] = false
		if !r.Commit {
			aborted[r.TransactionalID]++
		}
		mu.Unlock()
		return nil, nil, false
	})

	// Input: per key, values 0, 1, 2, ... in order.
	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("in"))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Key: []byte("k" + strconv.Itoa(i%keys)), Value: []byte(strconv.Itoa(i / keys))})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	env := service.NewEnvironment()
	rec := metrictest.New()
	if err := rec.Register(env, "recording"); err != nil {
		t.Fatal(err)
	}
	b := env.NewStreamBuilder()
	b.SetThreads(1)
	for _, step := range []struct {
		add  func(string) error
		yaml string
	}{
		{b.AddInputYAML, fmt.Sprintf(`
kafka_source:
  seed_brokers: [ %q ]
  topics: [ in ]
  consumer_group: rounds
  assignment: %s
  batch_size: 50
  commit_period: 20ms
  fetch_max_wait: 50ms
`, addr, assignment)},
		{b.AddOutputYAML, fmt.Sprintf(`
kafka_sink:
  seed_brokers: [ %q ]
  topic: out
  key: ${! @kafka_key }
  delivery_guarantee: exactly_once
  transactional_id_prefix: rounds
  commit_interval: 100ms
`, addr)},
		{b.SetLoggerYAML, "level: none"},
		{b.SetMetricsYAML, "recording: {}"},
	} {
		if err := step.add(step.yaml); err != nil {
			t.Fatal(err)
		}
	}
	stream, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- stream.Run(ctx) }()
	var stopOnce sync.Once
	stop := func() {
		stopOnce.Do(func() {
			sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer scancel()
			_ = stream.Stop(sctx)
			<-runErr
		})
	}
	defer stop()

	// The input arrives over a second or so, so that transactions follow
	// each other while records flow; with a group, once the group is
	// stable (its join can take longer than that). Its second half only
	// once the first transaction's offset commit is held, so that the next
	// transaction has records to fill with meanwhile, however late that
	// commit comes.
	if assignment == "group" {
		eventually.True(t, 30*time.Second, "consumer group rounds to be stable", func() bool { return groupStable(ctx, addr, "rounds") })
	}
	produced := make(chan error, 1)
	go func() {
		for len(recs) > 0 {
			if len(recs) == n/2 {
				select {
				case <-held:
				case <-ctx.Done():
					produced <- fmt.Errorf("no transaction committed offsets with half the input written: %w", ctx.Err())
					return
				}
			}
			k := min(100, len(recs))
			if err := prod.ProduceSync(ctx, recs[:k]...).FirstErr(); err != nil {
				produced <- err
				return
			}
			recs = recs[k:]
			time.Sleep(10 * time.Millisecond)
		}
		produced <- nil
	}()
	defer func() {
		if err := <-produced; err != nil {
			t.Errorf("producing the input: %v", err)
		}
	}()

	// Read committed until every input is there; then stop the pipeline,
	// write a marker after all it wrote in each partition of out, and read
	// on up to the markers: a duplicate committed at any time is seen.
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("out"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const marker = "end"
	seen := map[string]int{}
	last := map[string]int{}
	got := 0
	markers := map[int32]bool{}
	marked := false
	for got < n || len(markers) < outPartitions {
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records and the markers of partitions %v before the deadline", got, n, markers)
		}
		if got >= n && !marked {
			stop()
			writeMarkers(ctx, t, addr, "out", outPartitions, marker)
			marked = true
		}
		pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		fs := cl.PollFetches(pctx)
		pcancel()
		fs.EachRecord(func(r *kgo.Record) {
			if r.Key == nil && string(r.Value) == marker {
				markers[r.Partition] = true
				return
			}
			k := string(r.Key)
			v, _ := strconv.Atoi(string(r.Value))
			id := k + "/" + string(r.Value)
			seen[id]++
			if seen[id] > 1 {
				t.Errorf("record %s read %d times", id, seen[id])
			}
			if prev, ok := last[k]; ok && v != prev+1 {
				t.Errorf("key %s: %d after %d", k, v, prev)
			}
			last[k] = v
			got++
		})
	}
	if got != n || len(seen) != n {
		t.Fatalf("read %d records (%d distinct), want %d exactly once", got, len(seen), n)
	}
	mu.Lock()
	defer mu.Unlock()
	if !failed {
		t.Fatal("no transaction committed offsets: the fault was never injected")
	}
	if !producedOther {
		t.Fatal("the next transaction did not fill while the first one committed: nothing overlapped")
	}
	if len(aborted) < 2 {
		t.Fatalf("EndTxn aborts per transactional id %v: want the failing transaction and the newer one aborted (both producers)", aborted)
	}
	// The failing transaction is counted with its cause (its offsets were
	// refused), the newer one as rewound; every transaction begun ended
	// committed or aborted, and each had its duration observed.
	for _, cause := range []string{"offsets", "rewind"} {
		if key := metrictest.Key("kafka_sink_txn_aborted", "cause", cause); rec.Get(key) < 1 {
			t.Errorf("%s = %d, want at least 1 (aborts: %v)", key, rec.Get(key), rec.Series("kafka_sink_txn_aborted"))
		}
	}
	begun, committed := rec.Get(metrictest.Key("kafka_sink_txn_begun")), rec.Get(metrictest.Key("kafka_sink_txn_committed"))
	abortedN := rec.Total("kafka_sink_txn_aborted")
	if begun != committed+abortedN {
		t.Errorf("transactions begun %d, committed %d, aborted %d (%v): every one begun must end in one of them",
			begun, committed, abortedN, rec.Series("kafka_sink_txn_aborted"))
	}
	if d := rec.Get(metrictest.Key("kafka_sink_txn_duration_ns")); d != begun {
		t.Errorf("%d transaction durations observed, want one per transaction (%d)", d, begun)
	}
	if i := rec.Get(metrictest.Key("kafka_sink_txn_interval_ns")); i != committed-1 {
		t.Errorf("%d intervals observed, want one between each two commits (%d)", i, committed-1)
	}
}

// groupStable reports whether group has members and a stable state.
func groupStable(ctx context.Context, addr, group string) bool {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return false
	}
	defer cl.Close()
	groups, err := kadm.NewClient(cl).DescribeGroups(ctx, group)
	if err != nil {
		return false
	}
	g, ok := groups[group]
	return ok && g.Err == nil && g.State == "Stable" && len(g.Members) > 0
}

// writeMarkers writes a record of value marker, without a key, to each
// partition of topic.
func writeMarkers(ctx context.Context, t *testing.T, addr, topic string, partitions int, marker string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for p := range int32(partitions) {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte(marker)}).FirstErr(); err != nil {
			t.Fatalf("writing the marker to %s/%d: %v", topic, p, err)
		}
	}
}
