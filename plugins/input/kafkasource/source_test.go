package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connectd/connectd/internal/eventually"
)

const testTimeout = 15 * time.Second

// newCluster starts a one-broker kfake cluster with topic "t" of 3 partitions.
func newCluster(t *testing.T) string {
	t.Helper()
	_, addr := newFakeCluster(t)
	return addr
}

func newFakeCluster(t *testing.T) (*kfake.Cluster, string) {
	t.Helper()
	return newFakeClusterOf(t, 3)
}

// newFakeClusterOf is a one-broker kfake cluster with topic "t" of
// partitions partitions, closed with the test, and its address.
func newFakeClusterOf(t *testing.T, partitions int32) (*kfake.Cluster, string) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, c.ListenAddrs()[0]
}

func newClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produceN writes n records with values "p<partition>-<i>" to each of the
// given partitions of topic.
func produceN(t *testing.T, addr, topic string, n int, partitions ...int32) {
	t.Helper()
	var recs []*kgo.Record
	for _, p := range partitions {
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "p%d-%d", p, i)})
		}
	}
	produce(t, addr, recs...)
}

func produce(t *testing.T, addr string, recs ...*kgo.Record) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := newClient(t, addr).ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// newTestSource builds the input from YAML through the public spec, as
// Benthos would, and connects it.
func newTestSource(t *testing.T, yaml string) *source {
	t.Helper()
	s, err := buildSource(t, yaml)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := s.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func buildSource(t *testing.T, yaml string) (*source, error) {
	t.Helper()
	pc, err := testSpec().ParseYAML(yaml, nil)
	if err != nil {
		return nil, err
	}
	c, err := configFromParsed(pc)
	if err != nil {
		return nil, err
	}
	return newSource(c, service.MockResources()), nil
}

func sourceYAML(addr, group string, extra ...string) string {
	return fmt.Sprintf("seed_brokers: [ %q ]\ntopics: [ t ]\nconsumer_group: %s\n%s\n", addr, group, strings.Join(extra, "\n"))
}

type readBatch struct {
	msgs service.MessageBatch
	ack  service.AckFunc
	pos  []position
}

func readOne(t *testing.T, s *source, timeout time.Duration) (readBatch, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	msgs, ack, err := s.ReadBatch(ctx)
	if err != nil {
		return readBatch{}, err
	}
	b := readBatch{msgs: msgs, ack: ack}
	for _, m := range msgs {
		b.pos = append(b.pos, msgPosition(t, m))
	}
	return b, nil
}

// readRecords reads batches until n records arrived.
func readRecords(t *testing.T, s *source, n int) []readBatch {
	t.Helper()
	var out []readBatch
	deadline := time.Now().Add(testTimeout)
	for got := 0; got < n; {
		b, err := readOne(t, s, time.Until(deadline))
		if err != nil {
			t.Fatalf("after %d of %d records: %v", got, n, err)
		}
		got += len(b.msgs)
		out = append(out, b)
	}
	return out
}

func msgPosition(t *testing.T, m *service.Message) position {
	t.Helper()
	topic, _ := m.MetaGetMut(metaTopic)
	p, _ := m.MetaGetMut(metaPartition)
	o, _ := m.MetaGetMut(metaOffset)
	return position{tp: topicPartition{topic: topic.(string), partition: int32(p.(int))}, offset: o.(int64)}
}

func committedOffsets(t *testing.T, addr, group string) map[topicPartition]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	resp, err := kadm.NewClient(newClient(t, addr)).FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return map[topicPartition]int64{}
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[topicPartition]int64{}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil {
			t.Fatalf("committed offset of %s/%d: %v", o.Topic, o.Partition, o.Err)
		}
		out[topicPartition{topic: o.Topic, partition: o.Partition}] = o.At
	})
	return out
}

func commitOffsets(t *testing.T, addr, group string, offsets map[topicPartition]int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	os := make(kadm.Offsets)
	for tp, o := range offsets {
		os.Add(kadm.Offset{Topic: tp.topic, Partition: tp.partition, At: o, LeaderEpoch: -1})
	}
	if err := kadm.NewClient(newClient(t, addr)).CommitAllOffsets(ctx, group, os); err != nil {
		t.Fatal(err)
	}
}

// waitCommitted waits until the group's committed offsets equal want, and
// fails at once if any committed offset passes its wanted value: that would
// commit past a record that is not acknowledged.
func waitCommitted(t *testing.T, addr, group string, want map[topicPartition]int64) {
	t.Helper()
	eventually.NoError(t, testTimeout, fmt.Sprintf("committed offsets %v", want), func() error {
		got := committedOffsets(t, addr, group)
		for tp, o := range got {
			if w, ok := want[tp]; ok && o > w {
				t.Fatalf("committed %d for %s, past the lowest unacknowledged offset %d", o, tp, w)
			}
		}
		if !maps.Equal(got, want) {
			return fmt.Errorf("committed %v", got)
		}
		return nil
	})
}

func tpT(p int32) topicPartition { return topicPartition{topic: "t", partition: p} }

// TestSourceAckOrderAndNack is the at-least-once contract end to end: with
// many batches in flight, acked in random order and one nacked, the committed
// offset of every partition is the lowest unacknowledged offset, never more;
// the nacked batch comes back before new data, and acking it releases the
// rest.
func TestSourceAckOrderAndNack(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			addr := newCluster(t)
			const perPartition = 10
			produceN(t, addr, "t", perPartition, 0, 1, 2)
			s := newTestSource(t, sourceYAML(addr, "g", "start_from: earliest", "commit_period: 20ms", "batch_size: 4", "checkpoint_limit: 64"))

			batches := readRecords(t, s, 3*perPartition)
			outstanding := map[position]bool{}
			for _, b := range batches {
				for _, p := range b.pos {
					outstanding[p] = true
				}
			}
			if len(outstanding) != 3*perPartition {
				t.Fatalf("read %d distinct records, want %d", len(outstanding), 3*perPartition)
			}
			want := func() map[topicPartition]int64 {
				w := map[topicPartition]int64{tpT(0): perPartition, tpT(1): perPartition, tpT(2): perPartition}
				for p := range outstanding {
					w[p.tp] = min(w[p.tp], p.offset)
				}
				return w
			}
			waitCommitted(t, addr, "g", want())

			rng := rand.New(rand.NewPCG(seed, 2))
			order := rng.Perm(len(batches))
			nacked := batches[order[rng.IntN(len(order))]]
			ctx := context.Background()
			for _, i := range order {
				b := batches[i]
				if b.pos[0] == nacked.pos[0] {
					if err := b.ack(ctx, errors.New("output failed")); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := b.ack(ctx, nil); err != nil {
					t.Fatal(err)
				}
				for _, p := range b.pos {
					delete(outstanding, p)
				}
				waitCommitted(t, addr, "g", want())
			}

			// New data arrives, but the nacked batch comes first.
			produceN(t, addr, "t", 1, 0)
			again, err := readOne(t, s, testTimeout)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(again.pos, nacked.pos) {
				t.Fatalf("redelivered %v, want the nacked batch %v", again.pos, nacked.pos)
			}
			for i, m := range again.msgs {
				b1, _ := m.AsBytes()
				b2, _ := nacked.msgs[i].AsBytes()
				if string(b1) != string(b2) {
					t.Fatalf("redelivered record %d is %q, want %q", i, b1, b2)
				}
			}
			if err := again.ack(ctx, nil); err != nil {
				t.Fatal(err)
			}
			for _, p := range nacked.pos {
				delete(outstanding, p)
			}
			// The new record on partition 0 is fetched (and unacked) or not
			// yet fetched: either way partition 0 commits 10.
			waitCommitted(t, addr, "g", want())

			next, err := readOne(t, s, testTimeout)
			if err != nil {
				t.Fatal(err)
			}
			if len(next.pos) != 1 || next.pos[0] != (position{tp: tpT(0), offset: perPartition}) {
				t.Fatalf("after the redelivery read %v, want t/0 offset %d", next.pos, perPartition)
			}
			if err := next.ack(ctx, nil); err != nil {
				t.Fatal(err)
			}
			waitCommitted(t, addr, "g", map[topicPartition]int64{tpT(0): perPartition + 1, tpT(1): perPartition, tpT(2): perPartition})
		})
	}
}

// TestSourceCheckpointLimitPauses checks that a partition stops being read
// at checkpoint_limit unacknowledged records and continues after acks.
func TestSourceCheckpointLimitPauses(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	produceN(t, addr, "t", 40, 0)
	const limit, batchSize = 6, 3
	s := newTestSource(t, sourceYAML(addr, "g", "start_from: earliest", "commit_period: 1h",
		fmt.Sprintf("checkpoint_limit: %d", limit), fmt.Sprintf("batch_size: %d", batchSize)))

	var held []readBatch
	got := 0
	for {
		b, err := readOne(t, s, 500*time.Millisecond)
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, b)
		got += len(b.msgs)
		if got > limit+batchSize {
			t.Fatalf("read %d unacknowledged records, limit %d (+ one batch of %d)", got, limit, batchSize)
		}
	}
	if got < limit {
		t.Fatalf("read only %d records before pausing, limit %d", got, limit)
	}
	for _, b := range held {
		if err := b.ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	more := readRecords(t, s, 1)
	if p := more[0].pos[0]; p.offset != int64(got) {
		t.Fatalf("after resume read offset %d, want %d", p.offset, got)
	}
}

func TestSourceMetadata(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	ts := time.UnixMilli(1_700_000_123_456)
	produce(t, addr,
		&kgo.Record{Topic: "t", Partition: 1, Key: []byte("k1"), Value: []byte("v1"), Timestamp: ts,
			Headers: []kgo.RecordHeader{{Key: "h1", Value: []byte("x")}, {Key: "h2", Value: []byte("y")}, {Key: "kafka_topic", Value: []byte("spoof")}}},
		&kgo.Record{Topic: "t", Partition: 1, Key: []byte("gone"), Value: nil, Timestamp: ts.Add(time.Second)},
	)
	s := newTestSource(t, sourceYAML(addr, "g", "start_from: earliest",
		"metadata_keys: [ kafka_key, kafka_topic, kafka_partition, kafka_offset, kafka_timestamp_ms, kafka_timestamp_unix, "+
			"kafka_timestamp_type, kafka_tombstone_message, kafka_leader_epoch, kafka_lag, headers ]"))
	b := readRecords(t, s, 2)
	var msgs service.MessageBatch
	for _, rb := range b {
		msgs = append(msgs, rb.msgs...)
	}
	if len(msgs) != 2 {
		t.Fatalf("read %d messages, want 2", len(msgs))
	}
	tests := []struct {
		msg  int
		key  string
		want any
	}{
		{0, metaKey, "k1"},
		{0, metaTopic, "t"},
		{0, metaPartition, 1},
		{0, metaOffset, int64(0)},
		{0, metaTimestampMs, int64(1_700_000_123_456)},
		{0, metaTimestampUnix, int64(1_700_000_123)},
		{0, metaTimestampType, "CreateTime"},
		{0, metaTombstone, false},
		{0, metaLeaderEpoch, 0},
		{0, "h1", "x"},
		{0, "h2", "y"},
		{1, metaKey, "gone"},
		{1, metaOffset, int64(1)},
		{1, metaTombstone, true},
		{1, metaTimestampMs, int64(1_700_000_124_456)},
	}
	for _, tt := range tests {
		got, ok := msgs[tt.msg].MetaGetMut(tt.key)
		if !ok || got != tt.want {
			t.Errorf("message %d: %s = %#v (set %v), want %#v", tt.msg, tt.key, got, ok, tt.want)
		}
	}
	if v, _ := msgs[0].AsBytes(); string(v) != "v1" {
		t.Errorf("message 0 content %q, want v1", v)
	}
	if v, _ := msgs[1].AsBytes(); v != nil {
		t.Errorf("tombstone content %q, want nil", v)
	}
}

// TestSourceStartFrom checks where each partition starts. Each partition
// holds offsets 0..4; the group has committed 2 on partition 0 only.
func TestSourceStartFrom(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		conf    []string
		want    map[topicPartition]int64 // first offset read per partition
		wantErr []string
	}{
		// The committed offset of t/0 is the pipeline's state: it is
		// where t/0 resumes in every mode (DESIGN.md contract 8).
		{
			name: "earliest",
			conf: []string{"start_from: earliest", "committed_fallback: error"},
			want: map[topicPartition]int64{tpT(0): 2, tpT(1): 0, tpT(2): 0},
		},
		{
			name: "latest",
			conf: []string{"start_from: latest", "committed_fallback: error"},
			want: map[topicPartition]int64{tpT(0): 2, tpT(1): 5, tpT(2): 5},
		},
		{
			name: "earliest with reset_offsets",
			conf: []string{"start_from: earliest", "reset_offsets: true"},
			want: map[topicPartition]int64{tpT(0): 0, tpT(1): 0, tpT(2): 0},
		},
		{
			name: "latest with reset_offsets",
			conf: []string{"start_from: latest", "reset_offsets: true"},
			want: map[topicPartition]int64{tpT(0): 5, tpT(1): 5, tpT(2): 5},
		},
		{
			name: "committed, fallback earliest",
			conf: []string{"start_from: committed", "committed_fallback: earliest"},
			want: map[topicPartition]int64{tpT(0): 2, tpT(1): 0, tpT(2): 0},
		},
		{
			name: "committed is the default, fallback earliest the default",
			want: map[topicPartition]int64{tpT(0): 2, tpT(1): 0, tpT(2): 0},
		},
		{
			name: "committed, fallback latest",
			conf: []string{"start_from: committed", "committed_fallback: latest"},
			want: map[topicPartition]int64{tpT(0): 2, tpT(1): 5, tpT(2): 5},
		},
		{
			name:    "committed, fallback error",
			conf:    []string{"start_from: committed", "committed_fallback: error"},
			wantErr: []string{`consumer group "g" has no committed offset for topic "t" partition 1`, `topic "t" partition 2`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr := newCluster(t)
			produceN(t, addr, "t", 5, 0, 1, 2)
			commitOffsets(t, addr, "g", map[topicPartition]int64{tpT(0): 2})

			s, err := buildSource(t, sourceYAML(addr, "g", tt.conf...))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			err = s.Connect(ctx)
			if tt.wantErr != nil {
				if err == nil {
					_ = s.Close(ctx)
					t.Fatal("connected, want an error")
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if !errors.Is(err, ErrNoCommittedOffset) {
					t.Errorf("error %v does not wrap ErrNoCommittedOffset", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(ctx)
			// One more record per partition, so that partitions starting at
			// the end have something to read.
			produceN(t, addr, "t", 1, 0, 1, 2)
			wantCount := 0
			for _, o := range tt.want {
				wantCount += 6 - int(o)
			}
			first := map[topicPartition]int64{}
			for _, b := range readRecords(t, s, wantCount) {
				for _, p := range b.pos {
					if o, ok := first[p.tp]; !ok || p.offset < o {
						first[p.tp] = p.offset
					}
				}
			}
			if !maps.Equal(first, tt.want) {
				t.Fatalf("first offsets %v, want %v", first, tt.want)
			}
		})
	}
}

func TestSourceUnknownTopic(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	s, err := buildSource(t, fmt.Sprintf("seed_brokers: [ %q ]\ntopics: [ t, nope ]\nconsumer_group: g\n", addr))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	err = s.Connect(ctx)
	if err == nil || !strings.Contains(err.Error(), `topic "nope" does not exist`) {
		t.Fatalf("error %v, want one naming topic nope", err)
	}
}

// TestSourceCloseCommitsAndRestartResumes checks the final commit on Close
// (commit_period is far away) and that a new input resumes from it: acked
// records are not read again, unacked ones are.
func TestSourceCloseCommitsAndRestartResumes(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	produceN(t, addr, "t", 4, 0, 1, 2)
	conf := sourceYAML(addr, "g", "commit_period: 1h", "batch_size: 1")

	s1 := newTestSource(t, conf)
	batches := readRecords(t, s1, 12)
	// Ack everything but the last record read of partition 1.
	var hold position
	for _, b := range batches {
		if b.pos[0].tp == tpT(1) {
			hold = b.pos[0]
		}
	}
	for _, b := range batches {
		if b.pos[0] != hold {
			if err := b.ack(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := s1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[topicPartition]int64{tpT(0): 4, tpT(1): hold.offset, tpT(2): 4}
	if got := committedOffsets(t, addr, "g"); !maps.Equal(got, want) {
		t.Fatalf("committed after close %v, want %v", got, want)
	}

	produceN(t, addr, "t", 1, 0)
	s2 := newTestSource(t, conf)
	got := map[position]bool{}
	for _, b := range readRecords(t, s2, 2) {
		for _, p := range b.pos {
			got[p] = true
		}
	}
	wantRead := map[position]bool{hold: true, {tp: tpT(0), offset: 4}: true}
	if !maps.Equal(got, wantRead) {
		t.Fatalf("after restart read %v, want %v", got, wantRead)
	}
}

// TestStreamRestartResumes runs the registered input in Benthos streams: the
// first consumes everything and stops, the second sees only new records.
func TestStreamRestartResumes(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	produceN(t, addr, "t", 3, 0, 1, 2)

	run := func(want int) []string {
		t.Helper()
		b := service.NewStreamBuilder()
		if err := b.AddInputYAML(fmt.Sprintf(`
kafka_source:
  seed_brokers: [ %q ]
  topics: [ t ]
  consumer_group: stream
  commit_period: 50ms
`, addr)); err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 100)
		if err := b.AddConsumerFunc(func(_ context.Context, m *service.Message) error {
			v, err := m.AsBytes()
			got <- string(v)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if err := b.SetLoggerYAML("level: none"); err != nil {
			t.Fatal(err)
		}
		stream, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- stream.Run(context.Background()) }()
		var vals []string
		deadline := time.After(testTimeout)
		for len(vals) < want {
			select {
			case v := <-got:
				vals = append(vals, v)
			case <-deadline:
				t.Fatalf("received %v, want %d records", vals, want)
			}
		}
		if err := stream.StopWithin(testTimeout); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		slices.Sort(vals)
		return vals
	}

	if got := run(9); len(got) != 9 {
		t.Fatalf("first run read %v", got)
	}
	waitCommitted(t, addr, "stream", map[topicPartition]int64{tpT(0): 3, tpT(1): 3, tpT(2): 3})
	produce(t, addr, &kgo.Record{Topic: "t", Partition: 2, Value: []byte("new")})
	if got := run(1); !slices.Equal(got, []string{"new"}) {
		t.Fatalf("second run read %v, want [new]", got)
	}
	waitCommitted(t, addr, "stream", map[topicPartition]int64{tpT(0): 3, tpT(1): 3, tpT(2): 4})
}

// failNextFetch makes the cluster answer the next fetch request with err for
// every partition in it.
func failNextFetch(c *kfake.Cluster, err *kerr.Error) {
	c.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		req := kreq.(*kmsg.FetchRequest)
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewFetchResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewFetchResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = err.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
}

// TestSourceReconnectResumes: a fatal fetch error (authentication) makes
// ReadBatch return ErrNotConnected after a final commit; the next Connect
// resumes at the lowest unacknowledged offset, not at start_from.
func TestSourceReconnectResumes(t *testing.T) {
	t.Parallel()
	c, addr := newFakeCluster(t)
	produceN(t, addr, "t", 5, 0)
	s := newTestSource(t, sourceYAML(addr, "g", "start_from: earliest", "commit_period: 1h", "batch_size: 1"))

	var old []readBatch
	for i := range 5 {
		b := readRecords(t, s, 1)[0]
		old = append(old, b)
		if i < 2 {
			if err := b.ack(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	failNextFetch(c, kerr.SaslAuthenticationFailed)
	deadline := time.Now().Add(testTimeout)
	for {
		_, err := readOne(t, s, time.Until(deadline))
		if errors.Is(err, service.ErrNotConnected) {
			break
		}
		if err == nil || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("ReadBatch: %v, want ErrNotConnected", err)
		}
	}
	waitCommitted(t, addr, "g", map[topicPartition]int64{tpT(0): 2, tpT(1): 0, tpT(2): 0})
	// A late ack of the old session changes nothing in the new one.
	if err := old[2].ack(context.Background(), nil); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := s.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, b := range readRecords(t, s, 3) {
		if err := b.ack(ctx, nil); err != nil {
			t.Fatal(err)
		}
		for _, p := range b.pos {
			got = append(got, p.offset)
		}
	}
	if !slices.Equal(got, []int64{2, 3, 4}) {
		t.Fatalf("after reconnect read offsets %v, want [2 3 4]", got)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitCommitted(t, addr, "g", map[topicPartition]int64{tpT(0): 5, tpT(1): 0, tpT(2): 0})
}
