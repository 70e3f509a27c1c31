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
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// newCluster starts a kfake cluster with the given options and returns it
// with its seed address.
func newCluster(t *testing.T, opts ...kfake.Opt) (*kfake.Cluster, string) {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, c.ListenAddrs()[0]
}

// newConnectedSink builds a sink from YAML through the spec, connects it, and
// closes it at the end of the test.
func newConnectedSink(t *testing.T, yaml string) *Sink {
	t.Helper()
	cfg, err := parseConfig(t, yaml)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSink(cfg, service.MockResources())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	})
	return s
}

// consume reads topic from the start until it has n records, failing the test
// if they do not arrive within the deadline.
func consume(t *testing.T, addr, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for len(recs) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records from %s before the deadline", len(recs), n, topic)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetching %s/%d: %v", topic, p, err) })
		recs = append(recs, fs.Records()...)
	}
	return recs
}

// endOffsets returns the total number of records in topic.
func endOffsets(t *testing.T, addr, topic string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	offs, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	offs.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Fatalf("end offset of %s/%d: %v", o.Topic, o.Partition, o.Err)
		}
		total += o.Offset
	})
	return total
}

func message(payload string, meta ...string) *service.Message {
	m := service.NewMessage([]byte(payload))
	for i := 0; i+1 < len(meta); i += 2 {
		m.MetaSet(meta[i], meta[i+1])
	}
	return m
}

func TestWriteBatchRecordFields(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(3, "events"))
	s := newConnectedSink(t, fmt.Sprintf(`
seed_brokers: [ %q ]
topic: ${! @topic }
key: ${! @key.or("") }
timestamp_ms: ${! @ts.or("") }
metadata:
  include_prefixes: [ trace_ ]
`, addr))

	before := time.Now().Truncate(time.Millisecond)
	batch := service.MessageBatch{
		message("v0", "topic", "events", "key", "key", "ts", "1700000000123", "trace_id", "abc", "trace_span", "s1", "secret", "no"),
		message("v1", "topic", "events", "key", "ключ", "ts", "1700000000456"),
		message("v2", "topic", "events", "trace_id", "def"),
	}
	if err := s.WriteBatch(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	after := time.Now()

	recs := consume(t, addr, "events", 3)
	byValue := map[string]*kgo.Record{}
	for _, r := range recs {
		byValue[string(r.Value)] = r
	}
	header := func(hs ...string) []kgo.RecordHeader {
		var out []kgo.RecordHeader
		for i := 0; i < len(hs); i += 2 {
			out = append(out, kgo.RecordHeader{Key: hs[i], Value: []byte(hs[i+1])})
		}
		return out
	}
	for _, tc := range []struct {
		value     string
		key       []byte
		partition int32 // -1: any (null key)
		tsMs      int64 // 0: produce time
		headers   []kgo.RecordHeader
	}{
		// Partitions from javaPartitions for 3 partitions.
		{value: "v0", key: []byte("key"), partition: 1, tsMs: 1700000000123, headers: header("trace_id", "abc", "trace_span", "s1")},
		{value: "v1", key: []byte("ключ"), partition: 2, tsMs: 1700000000456},
		{value: "v2", key: nil, partition: -1, headers: header("trace_id", "def")},
	} {
		r := byValue[tc.value]
		if r == nil {
			t.Fatalf("record %s not found", tc.value)
		}
		if r.Topic != "events" {
			t.Errorf("%s: topic %q", tc.value, r.Topic)
		}
		if !slices.Equal(r.Key, tc.key) || (tc.key == nil) != (r.Key == nil) {
			t.Errorf("%s: key %q, want %q", tc.value, r.Key, tc.key)
		}
		if tc.partition >= 0 && r.Partition != tc.partition {
			t.Errorf("%s: partition %d, want %d (Java client)", tc.value, r.Partition, tc.partition)
		}
		if tc.tsMs != 0 && r.Timestamp.UnixMilli() != tc.tsMs {
			t.Errorf("%s: timestamp %d, want %d", tc.value, r.Timestamp.UnixMilli(), tc.tsMs)
		}
		if tc.tsMs == 0 && (r.Timestamp.Before(before) || r.Timestamp.After(after)) {
			t.Errorf("%s: timestamp %v, want produce time in [%v, %v]", tc.value, r.Timestamp, before, after)
		}
		if !slices.EqualFunc(r.Headers, tc.headers, func(a, b kgo.RecordHeader) bool {
			return a.Key == b.Key && string(a.Value) == string(b.Value)
		}) {
			t.Errorf("%s: headers %v, want %v", tc.value, r.Headers, tc.headers)
		}
	}
}

// failedIndices returns the indices a batch error marks as failed, with
// their errors.
func failedIndices(t *testing.T, err error) map[int]error {
	t.Helper()
	var berr *service.BatchError
	if !errors.As(err, &berr) {
		t.Fatalf("want a *service.BatchError, got %T: %v", err, err)
	}
	failed := map[int]error{}
	//lint:ignore SA1019 the sink builds its BatchError over the batch it was given, so indexes match it.
	berr.WalkMessages(func(i int, _ *service.Message, err error) bool {
		if err != nil {
			failed[i] = err
		}
		return true
	})
	if berr.IndexedErrors() != len(failed) {
		t.Fatalf("batch error counts %d indexed errors, walk found %d", berr.IndexedErrors(), len(failed))
	}
	return failed
}

func TestWriteBatchFailsOnlyFailedMessages(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(3, "events"))
	// "small" accepts batches of at most 1 KiB: the broker, not the
	// client, rejects a bigger record, for its partition only.
	admCl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	limit := "1024"
	if _, err := kadm.NewClient(admCl).CreateTopic(context.Background(), 1, 1,
		map[string]*string{"max.message.bytes": &limit}, "small"); err != nil {
		t.Fatal(err)
	}
	admCl.Close()

	s, _ := newLoggedSink(t, fmt.Sprintf(`
seed_brokers: [ %q ]
topic: ${! @topic.not_null() }
key: ${! @key.or("") }
timestamp_ms: ${! @ts.or("") }
max_message_bytes: 65536
allow_auto_topic_creation: false
`, addr))
	// The client gives up on an unknown topic after 5 metadata loads,
	// which are at least MetadataMinAge (default 5s) apart when nothing
	// else triggers them: keep the test well inside the 10s timeout.
	s.clientOpts = []kgo.Opt{kgo.MetadataMinAge(200 * time.Millisecond)}
	connect(t, s)

	batch := service.MessageBatch{
		0: message("ok-0", "topic", "events", "key", "a"),
		1: message(strings.Repeat("b", 4096), "topic", "small"),                 // broker: MESSAGE_TOO_LARGE
		2: message("no topic"),                                                  // topic interpolation fails
		3: message(strings.Repeat("c", 100<<10), "topic", "events", "key", "a"), // client: over max_message_bytes
		4: message("bad ts", "topic", "events", "ts", "yesterday"),              // timestamp_ms does not parse
		5: message("ok-5", "topic", "events", "key", "a"),
		6: message("lost", "topic", "no-such-topic"), // UNKNOWN_TOPIC_OR_PARTITION after retries
	}
	failed := failedIndices(t, s.WriteBatch(context.Background(), batch))
	if got := slices.Sorted(func(yield func(int) bool) {
		for i := range failed {
			if !yield(i) {
				return
			}
		}
	}); !slices.Equal(got, []int{1, 2, 3, 4, 6}) {
		t.Fatalf("failed indices %v, want [1 2 3 4 6]; errors: %v", got, failed)
	}

	var pe *ProduceError
	if !errors.As(failed[1], &pe) || pe.Topic != "small" || pe.Partition != 0 || !errors.Is(failed[1], kerr.MessageTooLarge) {
		t.Errorf("message 1: want MESSAGE_TOO_LARGE for small/0, got %v", failed[1])
	}
	if !strings.Contains(failed[1].Error(), `topic "small" partition 0`) {
		t.Errorf("message 1: error does not name topic and partition: %v", failed[1])
	}
	if !strings.Contains(failed[2].Error(), "field topic") {
		t.Errorf("message 2: want an error naming field topic, got %v", failed[2])
	}
	if !errors.As(failed[3], &pe) || pe.Topic != "events" || pe.Partition != 1 || !errors.Is(failed[3], kerr.MessageTooLarge) {
		t.Errorf("message 3: want MESSAGE_TOO_LARGE for events/1 (key a), got %v", failed[3])
	}
	if !strings.Contains(failed[4].Error(), "field timestamp_ms") {
		t.Errorf("message 4: want an error naming field timestamp_ms, got %v", failed[4])
	}
	if !errors.As(failed[6], &pe) || pe.Topic != "no-such-topic" || pe.Partition != partitionUnassigned ||
		!errors.Is(failed[6], kerr.UnknownTopicOrPartition) {
		t.Errorf("message 6: want UNKNOWN_TOPIC_OR_PARTITION for no-such-topic before partitioning, got %v", failed[6])
	}

	recs := consume(t, addr, "events", 2)
	var values []string
	for _, r := range recs {
		values = append(values, string(r.Value))
	}
	if !slices.Equal(values, []string{"ok-0", "ok-5"}) {
		t.Errorf("events holds %q, want [ok-0 ok-5] in order", values)
	}
	if n := endOffsets(t, addr, "events"); n != 2 {
		t.Errorf("events holds %d records, want 2", n)
	}
	if n := endOffsets(t, addr, "small"); n != 0 {
		t.Errorf("small holds %d records, want 0", n)
	}
}

// The settings must reach the wire: acks, idempotence and compression are
// read from the produce requests kfake receives.
func TestProducerSettingsOnTheWire(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		guarantee      string
		compression    string
		wantAcks       int16
		wantIdempotent bool
		wantCodec      int16 // RecordBatch attributes & 0x07
	}{
		{guarantee: "at_least_once", compression: "none", wantAcks: -1, wantIdempotent: true, wantCodec: 0},
		{guarantee: "at-least-once", compression: "gzip", wantAcks: -1, wantIdempotent: true, wantCodec: 1},
		{guarantee: "none", compression: "zstd", wantAcks: 1, wantIdempotent: false, wantCodec: 4},
		{guarantee: "none", compression: "lz4", wantAcks: 1, wantIdempotent: false, wantCodec: 3},
	} {
		t.Run(tc.guarantee+"/"+tc.compression, func(t *testing.T) {
			t.Parallel()
			c, addr := newCluster(t, kfake.SeedTopics(1, "events"))
			var (
				mu       sync.Mutex
				acks     []int16
				codecs   []int16
				pids     []int64
				initPIDs int
			)
			c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				mu.Lock()
				defer mu.Unlock()
				pr := req.(*kmsg.ProduceRequest)
				acks = append(acks, pr.Acks)
				for _, t := range pr.Topics {
					for _, p := range t.Partitions {
						var rb kmsg.RecordBatch
						if err := rb.ReadFrom(p.Records); err == nil {
							codecs = append(codecs, rb.Attributes&0x07)
							pids = append(pids, rb.ProducerID)
						}
					}
				}
				return nil, nil, false
			})
			c.ControlKey(int16(kmsg.InitProducerID), func(kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				mu.Lock()
				initPIDs++
				mu.Unlock()
				return nil, nil, false
			})
			s := newConnectedSink(t, fmt.Sprintf(`
seed_brokers: [ %q ]
topic: events
delivery_guarantee: %s
compression: %s
`, addr, tc.guarantee, tc.compression))
			batch := service.MessageBatch{message(strings.Repeat("compressible ", 100))}
			if err := s.WriteBatch(context.Background(), batch); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(acks) == 0 || len(codecs) == 0 {
				t.Fatal("no produce request seen")
			}
			for _, a := range acks {
				if a != tc.wantAcks {
					t.Errorf("acks %d, want %d", a, tc.wantAcks)
				}
			}
			for _, codec := range codecs {
				if codec != tc.wantCodec {
					t.Errorf("codec %d, want %d", codec, tc.wantCodec)
				}
			}
			idempotent := initPIDs > 0 && pids[0] >= 0
			if idempotent != tc.wantIdempotent {
				t.Errorf("idempotent producer %v (InitProducerID calls %d, producer ids %v), want %v", idempotent, initPIDs, pids, tc.wantIdempotent)
			}
		})
	}
}

func TestNotConnected(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(1, "events"))
	cfg, err := parseConfig(t, fmt.Sprintf("seed_brokers: [ %q ]\ntopic: events\n", addr))
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSink(cfg, service.MockResources())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	batch := service.MessageBatch{message("v")}
	if err := s.WriteBatch(ctx, batch); !errors.Is(err, service.ErrNotConnected) {
		t.Fatalf("before Connect: want ErrNotConnected, got %v", err)
	}
	if err := s.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteBatch(ctx, batch); !errors.Is(err, service.ErrNotConnected) {
		t.Fatalf("after Close: want ErrNotConnected, got %v", err)
	}
	if err := s.Connect(ctx); !errors.Is(err, ErrSinkClosed) {
		t.Fatalf("Connect after Close: want ErrSinkClosed, got %v", err)
	}
}

// When the cluster goes away, a batch none of whose records reached Kafka is
// reported as ErrNotConnected (Benthos then calls Connect, with backoff, until
// a broker answers), not as a batch error.
func TestClusterLossIsNotConnected(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t, kfake.SeedTopics(1, "events"))
	s := newConnectedSink(t, fmt.Sprintf("seed_brokers: [ %q ]\ntopic: events\ntimeout: 1s\n", addr))
	ctx := context.Background()
	if err := s.WriteBatch(ctx, service.MessageBatch{message("first")}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	start := time.Now()
	err := s.WriteBatch(ctx, service.MessageBatch{message("a"), message("b")})
	if !errors.Is(err, service.ErrNotConnected) {
		t.Fatalf("want ErrNotConnected, got %T: %v", err, err)
	}
	t.Logf("WriteBatch took %v: %v", time.Since(start), err)
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := s.Connect(cctx); err == nil {
		t.Fatal("Connect succeeded with no broker")
	}
}

// TestAutoTopicCreation: by default the sink asks the broker to create a
// missing topic, as the Java producer does; with the option off, a record for
// a missing topic fails naming the topic.
func TestAutoTopicCreation(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(2))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	on := newConnectedSink(t, fmt.Sprintf(`
seed_brokers: [ %q ]
topic: created-on-demand
`, addr))
	if err := on.WriteBatch(ctx, service.MessageBatch{message("first")}); err != nil {
		t.Fatalf("write to a missing topic with auto-creation on: %v", err)
	}
	if recs := consume(t, addr, "created-on-demand", 1); string(recs[0].Value) != "first" {
		t.Fatalf("read back %q", recs[0].Value)
	}

	off := newConnectedSink(t, fmt.Sprintf(`
seed_brokers: [ %q ]
topic: never-created
allow_auto_topic_creation: false
timeout: 3s
`, addr))
	err := off.WriteBatch(ctx, service.MessageBatch{message("second")})
	if err == nil {
		t.Fatal("write to a missing topic with auto-creation off succeeded")
	}
	if !strings.Contains(err.Error(), "never-created") {
		t.Fatalf("error does not name the topic: %v", err)
	}
}
