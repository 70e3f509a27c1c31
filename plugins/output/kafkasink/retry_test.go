package kafkasink

import (
	"context"
	"errors"
	"fmt"
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
)

// holdSecondProduce makes the broker sit on the second produce request that
// carries records for partition (of the cluster's only topic: produce v13
// names topics by id), for hold, and then answer it with
// NOT_ENOUGH_REPLICAS for every partition in it: by then the sink's attempt
// has timed out. Requests queued behind it on the connection wait too (Kafka
// answers a connection's requests in order), and are refused for their
// sequence gap when it is answered. It returns whether the request was held.
func holdSecondProduce(c *kfake.Cluster, partition int32, hold time.Duration) *atomic.Bool {
	var (
		seen atomic.Int32
		held atomic.Bool
	)
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		pr := req.(*kmsg.ProduceRequest)
		carries := slices.ContainsFunc(pr.Topics, func(rt kmsg.ProduceRequestTopic) bool {
			return slices.ContainsFunc(rt.Partitions, func(rp kmsg.ProduceRequestTopicPartition) bool {
				return rp.Partition == partition
			})
		})
		if !carries || held.Load() || seen.Add(1) != 2 {
			return nil, nil, false
		}
		held.Store(true)
		c.SleepControl(func() { <-time.After(hold) })
		resp := pr.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range pr.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.NotEnoughReplicas.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	return &held
}

// A record that is not acknowledged in time is written again inside the same
// WriteBatch, with the later records of its partition, so that the partition
// holds the batch in order and WriteBatch succeeds. Failing it back to Benthos
// instead (a batch error) made the input deliver it again after newer
// records of its key.
func TestTimedOutRecordsRetriedInPlaceInOrder(t *testing.T) {
	t.Parallel()
	const (
		topic   = "events"
		timeout = 500 * time.Millisecond
	)
	for _, tc := range []struct {
		guarantee string
		extra     string
		retryLog  string
	}{
		{guarantee: "at_least_once", retryLog: "again in"},
		{guarantee: "none", retryLog: "again in"},
		{guarantee: "exactly_once", extra: "transactional_id_prefix: order-test", retryLog: "writing the batch of 40 messages again"},
	} {
		t.Run(tc.guarantee, func(t *testing.T) {
			t.Parallel()
			c, addr := newCluster(t, kfake.SeedTopics(2, topic))
			// Key k0's partition, as the sink's default partitioner (the
			// Java client's murmur2) chooses it.
			p0 := int32(kgo.StickyKeyPartitioner(nil).ForTopic(topic).Partition(&kgo.Record{Key: []byte("k0")}, 2))
			held := holdSecondProduce(c, p0, 3*timeout)
			// Records of about 300 bytes and batches of at most 1 KiB:
			// a partition's records span several produce requests, so
			// the held one is in the middle of the batch.
			s, logs := newLoggedSink(t, fmt.Sprintf(`
seed_brokers: [ %q ]
topic: %s
key: ${! @key }
delivery_guarantee: %s
timeout: %v
max_message_bytes: 1024
allow_auto_topic_creation: false
%s
`, addr, topic, tc.guarantee, timeout, tc.extra))
			connect(t, s)

			var (
				batch service.MessageBatch
				want  []string
			)
			pad := strings.Repeat(".", 300)
			for i := range 40 {
				key := fmt.Sprintf("k%d", i%4)
				v := fmt.Sprintf("%s-%02d", key, i/4)
				want = append(want, v)
				batch = append(batch, message(v+pad, "key", key))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := s.WriteBatch(ctx, batch); err != nil {
				t.Fatalf("want the batch written with retries in place, got %v\nlog:\n%s", err, logs)
			}
			if !held.Load() {
				t.Fatal("no produce request was held: the test proves nothing")
			}
			t.Logf("log:\n%s", logs)
			if !strings.Contains(logs.String(), tc.retryLog) {
				t.Errorf("no warning about the retry in place (%q) in the log:\n%s", tc.retryLog, logs)
			}

			// Each partition holds its records of the batch once, in
			// batch order.
			got := map[int32][]string{}
			partOf := map[string]int32{}
			for _, r := range readAll(t, addr, topic, len(want), tc.guarantee == "exactly_once") {
				v := strings.TrimRight(string(r.Value), ".")
				got[r.Partition] = append(got[r.Partition], v)
				partOf[string(r.Key)] = r.Partition
			}
			wantPer := map[int32][]string{}
			for _, v := range want {
				p := partOf[v[:2]]
				wantPer[p] = append(wantPer[p], v)
			}
			for p, w := range wantPer {
				if !slices.Equal(got[p], w) {
					t.Errorf("partition %d holds\n%v\nwant\n%v", p, got[p], w)
				}
			}
			if n := endOffsets(t, addr, topic); tc.guarantee != "exactly_once" && n != int64(len(want)) {
				t.Errorf("the topic holds %d records, want %d (the held request was refused, so nothing repeats)", n, len(want))
			}
		})
	}
}

// readAll reads n records of topic from the start (read_committed when
// committed), in each partition's order.
func readAll(t *testing.T, addr, topic string, n int, committed bool) []*kgo.Record {
	t.Helper()
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	if committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for len(recs) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records of %s before the deadline", len(recs), n, topic)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetching %s/%d: %v", topic, p, err) })
		recs = append(recs, fs.Records()...)
	}
	return recs
}

// replaySet: from the first record of a partition that failed for a reason
// that can clear, every later record of that partition that did not fail for
// good goes again, written or not; other partitions are left alone; a record
// without a partition takes its whole topic along.
func TestReplaySet(t *testing.T) {
	t.Parallel()
	rec := func(topic string, p int32) *kgo.Record { return &kgo.Record{Topic: topic, Partition: p} }
	timeout := func(r *kgo.Record) error {
		return &ProduceError{Topic: r.Topic, Partition: r.Partition, Err: ErrProduceTimeout}
	}
	tooLarge := func(r *kgo.Record) error {
		return &ProduceError{Topic: r.Topic, Partition: r.Partition, Err: kerr.MessageTooLarge}
	}
	for _, tc := range []struct {
		name string
		recs []*kgo.Record
		errs func(recs []*kgo.Record) []error
		want []int
	}{
		{
			name: "nothing failed",
			recs: []*kgo.Record{rec("a", 0), rec("a", 1)},
			errs: func([]*kgo.Record) []error { return make([]error, 2) },
		},
		{
			name: "suffix of one partition, written records after the failure included",
			recs: []*kgo.Record{rec("a", 0), rec("a", 1), rec("a", 0), rec("a", 1), rec("a", 0), rec("a", 0)},
			errs: func(r []*kgo.Record) []error { return []error{nil, nil, timeout(r[2]), nil, nil, timeout(r[5])} },
			want: []int{2, 4, 5},
		},
		{
			name: "a record that failed for good stays failed and starts nothing",
			recs: []*kgo.Record{rec("a", 0), rec("a", 0), rec("a", 0), rec("a", 0)},
			errs: func(r []*kgo.Record) []error { return []error{tooLarge(r[0]), nil, timeout(r[2]), tooLarge(r[3])} },
			want: []int{2},
		},
		{
			name: "a message that never became a record is skipped",
			recs: []*kgo.Record{rec("a", 0), nil, rec("a", 0)},
			errs: func(r []*kgo.Record) []error { return []error{timeout(r[0]), errors.New("field key: boom"), nil} },
			want: []int{0, 2},
		},
		{
			name: "no partition yet: the rest of the topic goes again",
			recs: []*kgo.Record{rec("a", 0), rec("b", 0), rec("a", partitionUnassigned), rec("a", 3), rec("b", 1), rec("a", 0)},
			errs: func(r []*kgo.Record) []error { return []error{nil, nil, timeout(r[2]), nil, nil, nil} },
			want: []int{2, 3, 5},
		},
		{
			name: "same partition number, other topic",
			recs: []*kgo.Record{rec("a", 0), rec("b", 0), rec("b", 0)},
			errs: func(r []*kgo.Record) []error { return []error{timeout(r[0]), nil, nil} },
			want: []int{0},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := replaySet(tc.recs, tc.errs(tc.recs)); !slices.Equal(got, tc.want) {
				t.Errorf("replaySet = %v, want %v", got, tc.want)
			}
		})
	}
}

// retryInPlace is the one decision between retrying and giving up.
func TestRetryInPlace(t *testing.T) {
	t.Parallel()
	produced := func(err error) error { return &ProduceError{Topic: "t", Partition: 0, Err: err} }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"timeout", produced(fmt.Errorf("%w after 10s: %w", ErrProduceTimeout, context.DeadlineExceeded)), true},
		{"retriable kafka error", produced(kerr.NotEnoughReplicas), true},
		{"connection refused", produced(errors.New("dial tcp 127.0.0.1:1: connect: connection refused")), true},
		{"sequence lost by a restarted broker", produced(kerr.OutOfOrderSequenceNumber), true},
		{"record too large", produced(kerr.MessageTooLarge), false},
		{"invalid record", produced(kerr.InvalidRecord), false},
		{"topic authorization", produced(kerr.TopicAuthorizationFailed), false},
		{"unknown topic after the client's retries", produced(kerr.UnknownTopicOrPartition), false},
		{"client closed", produced(kgo.ErrClientClosed), false},
		{"field error", errors.New("field topic: boom"), false},
		{"partition out of range", &PartitionError{Field: FieldPartition, Topic: "t", Partition: 9, NumPartitions: 3}, false},
	} {
		if got := recordRetriable(tc.err); got != tc.want {
			t.Errorf("%s: recordRetriable(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

// max_in_flight above 1 gives up per-partition order: the sink says so when
// it starts.
func TestMaxInFlightAboveOneWarns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		yaml string
		warn bool
	}{
		{"", false},
		{"max_in_flight: 1\n", false},
		{"max_in_flight: 8\n", true},
	} {
		_, logs := newLoggedSink(t, "seed_brokers: [ \"localhost:9092\" ]\ntopic: events\n"+tc.yaml)
		if got := strings.Contains(logs.String(), "out of order"); got != tc.warn {
			t.Errorf("%q: warning logged %v, want %v; log:\n%s", tc.yaml, got, tc.warn, logs)
		}
	}
}
