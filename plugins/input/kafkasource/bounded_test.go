package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// newTopicsCluster starts a one-broker kfake cluster with the given topics,
// each of partitions partitions.
func newTopicsCluster(t *testing.T, partitions int, topics ...string) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(partitions), topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

// baseTime is the timestamp of record 0 in produceTimed; record i is i
// seconds later.
var baseTime = time.UnixMilli(1_714_521_600_000)

// produceTimed writes n records to each partition of topic "t", record i
// with value "p<partition>-<i>" and timestamp baseTime + i seconds.
func produceTimed(t *testing.T, addr string, n int, partitions ...int32) {
	t.Helper()
	var recs []*kgo.Record
	for _, p := range partitions {
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: "t", Partition: p, Value: fmt.Appendf(nil, "p%d-%d", p, i),
				Timestamp: baseTime.Add(time.Duration(i) * time.Second)})
		}
	}
	produce(t, addr, recs...)
}

// readToEnd reads and acknowledges batches until the input ends with
// ErrEndOfInput, and returns every record's position in delivery order.
func readToEnd(t *testing.T, s *source) []position {
	t.Helper()
	var out []position
	deadline := time.Now().Add(testTimeout)
	for {
		b, err := readOne(t, s, time.Until(deadline))
		if errors.Is(err, service.ErrEndOfInput) {
			return out
		}
		if err != nil {
			t.Fatalf("after %d records: %v", len(out), err)
		}
		out = append(out, b.pos...)
		if err := b.ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
}

// summary is, per partition, the first offset read and the number read.
func summary(ps []position) (first map[topicPartition]int64, count map[topicPartition]int) {
	first, count = map[topicPartition]int64{}, map[topicPartition]int{}
	for _, p := range ps {
		if o, ok := first[p.tp]; !ok || p.offset < o {
			first[p.tp] = p.offset
		}
		count[p.tp]++
	}
	return first, count
}

// TestSourceStartFromTimestampAndOffsets checks the start modes that need a
// timestamp or explicit offsets. Each partition of t holds offsets 0..4 with
// timestamps baseTime + 0..4 s; the group has committed 2 on partition 2.
// Every case reads to stop_at: latest, so the counts are exact.
func TestSourceStartFromTimestampAndOffsets(t *testing.T) {
	t.Parallel()
	all := func(o int64) map[topicPartition]int64 {
		return map[topicPartition]int64{tpT(0): o, tpT(1): o, tpT(2): o}
	}
	tests := []struct {
		name      string
		conf      []string
		wantFirst map[topicPartition]int64 // absent: nothing read
		wantErr   string
	}{
		// t/2 has committed offset 2, where it resumes in every mode
		// (DESIGN.md contract 8); start_from places t/0 and t/1.
		{
			name:      "timestamp in milliseconds between records",
			conf:      []string{"start_from: timestamp", fmt.Sprintf("start_timestamp: %d", baseTime.Add(2500*time.Millisecond).UnixMilli())},
			wantFirst: map[topicPartition]int64{tpT(0): 3, tpT(1): 3, tpT(2): 2},
		},
		{
			name:      "timestamp in RFC 3339 on a record",
			conf:      []string{"start_from: timestamp", "start_timestamp: " + baseTime.Add(time.Second).UTC().Format(time.RFC3339)},
			wantFirst: map[topicPartition]int64{tpT(0): 1, tpT(1): 1, tpT(2): 2},
		},
		{
			name:      "timestamp before every record",
			conf:      []string{"start_from: timestamp", "start_timestamp: 0"},
			wantFirst: map[topicPartition]int64{tpT(0): 0, tpT(1): 0, tpT(2): 2},
		},
		{
			name:      "timestamp before every record, reset_offsets",
			conf:      []string{"start_from: timestamp", "start_timestamp: 0", "reset_offsets: true"},
			wantFirst: all(0),
		},
		{
			name:      "timestamp after every record starts at the end",
			conf:      []string{"start_from: timestamp", fmt.Sprintf("start_timestamp: %d", baseTime.Add(time.Hour).UnixMilli())},
			wantFirst: map[topicPartition]int64{tpT(2): 2},
		},
		{
			name:      "offsets in Flink's form, unlisted partition from committed",
			conf:      []string{"start_from: offsets", `start_offsets: { t: "partition:0,offset:1;partition:1,offset:4" }`},
			wantFirst: map[topicPartition]int64{tpT(0): 1, tpT(1): 4, tpT(2): 2},
		},
		{
			name:      "offsets as a map, offset at the end reads nothing, committed wins",
			conf:      []string{"start_from: offsets", `start_offsets: { t: { 0: 5, 2: 0 } }`},
			wantFirst: map[topicPartition]int64{tpT(1): 0, tpT(2): 2},
		},
		{
			name:      "offsets as a map with reset_offsets",
			conf:      []string{"start_from: offsets", `start_offsets: { t: { 0: 5, 2: 0 } }`, "reset_offsets: true"},
			wantFirst: map[topicPartition]int64{tpT(1): 0, tpT(2): 0},
		},
		{
			name:    "offset outside the log with committed_fallback error",
			conf:    []string{"start_from: offsets", `start_offsets: { t: { 1: 9 } }`, "committed_fallback: error"},
			wantErr: `offset 9 of topic "t" partition 1 in start_offsets is outside the log [0, 5]`,
		},
		{
			name:      "offset outside the log with committed_fallback earliest",
			conf:      []string{"start_from: offsets", `start_offsets: { t: { 1: 9 } }`},
			wantFirst: map[topicPartition]int64{tpT(0): 0, tpT(1): 0, tpT(2): 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr := newCluster(t)
			produceTimed(t, addr, 5, 0, 1, 2)
			commitOffsets(t, addr, "g", map[topicPartition]int64{tpT(2): 2})
			s, err := buildSource(t, sourceYAML(addr, "g", append(tt.conf, "stop_at: latest")...))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			err = s.Connect(ctx)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("connect error %v, want one containing %q", err, tt.wantErr)
				}
				var se *StartOffsetError
				if !errors.As(err, &se) || !errors.Is(err, ErrNoCommittedOffset) {
					t.Fatalf("error %v is not a *StartOffsetError wrapping ErrNoCommittedOffset", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(ctx)
			first, count := summary(readToEnd(t, s))
			if !maps.Equal(first, tt.wantFirst) {
				t.Fatalf("first offsets %v, want %v", first, tt.wantFirst)
			}
			for tp, o := range tt.wantFirst {
				if count[tp] != int(5-o) {
					t.Errorf("%s: read %d records, want %d", tp, count[tp], 5-o)
				}
			}
		})
	}
}

// TestSourceStopAt checks each bounded mode: the input reads exactly the
// records below the stop offsets, resolved at connect (records produced
// later are not read), returns ErrEndOfInput, and has committed the stop
// offsets by then.
func TestSourceStopAt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		conf       []string
		wantCount  map[topicPartition]int
		wantCommit map[topicPartition]int64
		// bound are offsets committed in group "bound" before connect.
		bound map[topicPartition]int64
	}{
		{
			name:       "latest",
			conf:       []string{"stop_at: latest"},
			wantCount:  map[topicPartition]int{tpT(0): 5, tpT(1): 5, tpT(2): 5},
			wantCommit: map[topicPartition]int64{tpT(0): 5, tpT(1): 5, tpT(2): 5},
		},
		{
			name:       "timestamp between records",
			conf:       []string{"stop_at: timestamp", fmt.Sprintf("stop_timestamp: %d", baseTime.Add(2500*time.Millisecond).UnixMilli())},
			wantCount:  map[topicPartition]int{tpT(0): 3, tpT(1): 3, tpT(2): 3},
			wantCommit: map[topicPartition]int64{tpT(0): 3, tpT(1): 3, tpT(2): 3},
		},
		{
			name:       "timestamp after every record is latest",
			conf:       []string{"stop_at: timestamp", "stop_timestamp: " + baseTime.Add(time.Hour).UTC().Format(time.RFC3339)},
			wantCount:  map[topicPartition]int{tpT(0): 5, tpT(1): 5, tpT(2): 5},
			wantCommit: map[topicPartition]int64{tpT(0): 5, tpT(1): 5, tpT(2): 5},
		},
		{
			name: "offsets, an empty range and an unlisted partition",
			conf: []string{"stop_at: offsets", `stop_offsets: { t: "partition:0,offset:2;partition:1,offset:0" }`},
			// Partition 1 is finished at once; partition 2 stops at latest.
			wantCount:  map[topicPartition]int{tpT(0): 2, tpT(2): 5},
			wantCommit: map[topicPartition]int64{tpT(0): 2, tpT(1): 0, tpT(2): 5},
		},
		{
			name:       "start and stop timestamps",
			conf:       []string{"start_from: timestamp", fmt.Sprintf("start_timestamp: %d", baseTime.Add(time.Second).UnixMilli()), "stop_at: timestamp", fmt.Sprintf("stop_timestamp: %d", baseTime.Add(3*time.Second).UnixMilli())},
			wantCount:  map[topicPartition]int{tpT(0): 2, tpT(1): 2, tpT(2): 2},
			wantCommit: map[topicPartition]int64{tpT(0): 3, tpT(1): 3, tpT(2): 3},
		},
		{
			// Flink's scan.bounded.mode = 'group-offsets': up to where
			// another group is; that group is only read.
			name:       "committed in another group",
			conf:       []string{"stop_at: committed", "stop_group: bound"},
			bound:      map[topicPartition]int64{tpT(0): 3, tpT(1): 0, tpT(2): 5},
			wantCount:  map[topicPartition]int{tpT(0): 3, tpT(2): 5},
			wantCommit: map[topicPartition]int64{tpT(0): 3, tpT(1): 0, tpT(2): 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr := newCluster(t)
			produceTimed(t, addr, 5, 0, 1, 2)
			conf := append(tt.conf, "commit_period: 1h")
			if !strings.Contains(strings.Join(conf, "\n"), "start_from") {
				conf = append(conf, "start_from: earliest")
			}
			if tt.bound != nil {
				commitOffsets(t, addr, "bound", tt.bound)
			}
			s := newTestSource(t, sourceYAML(addr, "g", conf...))
			// Records produced after connect are past the stop offsets.
			produceTimed(t, addr, 2, 0, 1, 2)
			_, count := summary(readToEnd(t, s))
			if !maps.Equal(count, tt.wantCount) {
				t.Errorf("records read per partition %v, want %v", count, tt.wantCount)
			}
			// Committed before ErrEndOfInput, though commit_period is an hour.
			if got := committedOffsets(t, addr, "g"); !maps.Equal(got, tt.wantCommit) {
				t.Errorf("committed %v, want %v", got, tt.wantCommit)
			}
			// The end is sticky.
			if _, err := readOne(t, s, time.Second); !errors.Is(err, service.ErrEndOfInput) {
				t.Errorf("read after the end: %v, want ErrEndOfInput", err)
			}
		})
	}
}

// A stop_group without an offset committed for a partition cannot place
// its end: the input refuses to start, naming the group and the partition
// (Flink's committedOffsets() without a reset strategy fails alike); the
// stop group's offsets do not move.
func TestSourceStopAtCommittedMissing(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	produceTimed(t, addr, 5, 0, 1, 2)
	commitOffsets(t, addr, "bound", map[topicPartition]int64{tpT(0): 3, tpT(2): 5})
	s, err := buildSource(t, sourceYAML(addr, "", "start_from: earliest", "stop_at: committed", "stop_group: bound"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	err = s.Connect(ctx)
	_ = s.Close(context.Background())
	if err == nil || !strings.Contains(err.Error(), `field stop_group: consumer group "bound" has no offset committed for topic "t" partition 1`) {
		t.Fatalf("Connect: %v", err)
	}
	if got := committedOffsets(t, addr, "bound"); !maps.Equal(got, map[topicPartition]int64{tpT(0): 3, tpT(2): 5}) {
		t.Fatalf("the stop group's offsets moved: %v", got)
	}
}

// produceTxn writes recs in one transaction of a producer with id txnID,
// committing or aborting it.
func produceTxn(t *testing.T, addr, txnID string, commit bool, recs ...*kgo.Record) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cl := newClient(t, addr, kgo.TransactionalID(txnID))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatal(err)
	}
}

func recsTo(topic string, partition int32, n int, prefix string) []*kgo.Record {
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Partition: partition, Value: fmt.Appendf(nil, "%s-%d", prefix, i)}
	}
	return recs
}

// TestSourceTransactionMarkers: a bounded read_committed run over
// partitions whose last entries are transaction markers and aborted
// records ends, with exactly the committed records, and commits the end of
// each partition (past the trailing markers). read_uncommitted also returns
// the aborted records. An unbounded run commits past trailing markers too.
//
// Partition 0: committed txn of 3, aborted txn of 2 (last entries: aborted
// records and the abort marker). Partition 1: plain record, committed txn
// of 2 (last entry: commit marker). Partition 2: aborted txn of 4 only.
func TestSourceTransactionMarkers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		conf      []string
		wantCount map[topicPartition]int
	}{
		{"bounded read_committed", []string{"stop_at: latest"}, map[topicPartition]int{tpT(0): 3, tpT(1): 3}},
		{"bounded read_uncommitted", []string{"stop_at: latest", "isolation_level: read_uncommitted"}, map[topicPartition]int{tpT(0): 5, tpT(1): 3, tpT(2): 4}},
		{"unbounded read_committed", []string{"commit_period: 20ms"}, map[topicPartition]int{tpT(0): 3, tpT(1): 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr := newCluster(t)
			produceTxn(t, addr, "a", true, recsTo("t", 0, 3, "c")...)
			produceTxn(t, addr, "a", false, recsTo("t", 0, 2, "x")...)
			produce(t, addr, recsTo("t", 1, 1, "plain")...)
			produceTxn(t, addr, "b", true, recsTo("t", 1, 2, "c")...)
			produceTxn(t, addr, "c", false, recsTo("t", 2, 4, "x")...)
			// Offsets: p0 0-2 records, 3 marker, 4-5 aborted, 6 marker;
			// p1 0 plain, 1-2 records, 3 marker; p2 0-3 aborted, 4 marker.
			wantEnd := map[topicPartition]int64{tpT(0): 7, tpT(1): 4, tpT(2): 5}

			s := newTestSource(t, sourceYAML(addr, "g", append(tt.conf, "start_from: earliest")...))
			var got []position
			if strings.Contains(tt.name, "unbounded") {
				want := 0
				for _, n := range tt.wantCount {
					want += n
				}
				for _, b := range readRecords(t, s, want) {
					got = append(got, b.pos...)
					if err := b.ack(context.Background(), nil); err != nil {
						t.Fatal(err)
					}
				}
				waitCommitted(t, addr, "g", wantEnd)
			} else {
				got = readToEnd(t, s)
				if c := committedOffsets(t, addr, "g"); !maps.Equal(c, wantEnd) {
					t.Errorf("committed %v, want %v", c, wantEnd)
				}
			}
			if _, count := summary(got); !maps.Equal(count, tt.wantCount) {
				t.Errorf("records per partition %v, want %v", count, tt.wantCount)
			}
		})
	}
}

// TestSourceEmptyBoundedEndsAtOnce: with nothing between start and stop,
// the first read ends the input.
func TestSourceEmptyBoundedEndsAtOnce(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	s := newTestSource(t, sourceYAML(addr, "g", "stop_at: latest"))
	if _, err := readOne(t, s, testTimeout); !errors.Is(err, service.ErrEndOfInput) {
		t.Fatalf("read %v, want ErrEndOfInput", err)
	}
}

// TestSourceReaders: with several readers every partition is read, by the
// reader Flink's owner function names, and each partition's records arrive
// in offset order.
func TestSourceReaders(t *testing.T) {
	t.Parallel()
	const partitions, perPartition, readers = 7, 40, 3
	addr := newTopicsCluster(t, partitions, "orders", "日本語")
	var recs []*kgo.Record
	for _, topic := range []string{"orders", "日本語"} {
		for p := range int32(partitions) {
			recs = append(recs, recsTo(topic, p, perPartition, "r")...)
		}
	}
	produce(t, addr, recs...)
	s := newTestSource(t, fmt.Sprintf("seed_brokers: [ %q ]\ntopics: [ orders, 日本語 ]\nconsumer_group: g\nstart_from: earliest\nstop_at: latest\nreaders: %d\nbatch_size: 7\ncheckpoint_limit: 20\n", addr, readers))

	var readerOf map[topicPartition]int
	onOwner(s, func(o *owner) { readerOf = maps.Clone(o.readerOf) })
	perReader := make([]int, readers)
	for tp, r := range readerOf {
		if want := ownerSlot(tp.topic, tp.partition, readers); r != want {
			t.Errorf("%s is on reader %d, want %d", tp, r, want)
		}
		perReader[r]++
	}
	for r, n := range perReader {
		if n == 0 {
			t.Errorf("reader %d has no partition (%v)", r, perReader)
		}
	}

	next := map[topicPartition]int64{}
	for _, p := range readToEnd(t, s) {
		if p.offset != next[p.tp] {
			t.Fatalf("%s: offset %d after %d, want them in order", p.tp, p.offset, next[p.tp]-1)
		}
		next[p.tp]++
	}
	if len(next) != 2*partitions {
		t.Fatalf("read %d partitions, want %d", len(next), 2*partitions)
	}
	for tp, n := range next {
		if n != perPartition {
			t.Errorf("%s: read %d records, want %d", tp, n, perPartition)
		}
	}
}

// TestSourceShards: two sources with shard count 2 (and two readers each)
// together read every partition exactly once.
func TestSourceShards(t *testing.T) {
	t.Parallel()
	const partitions = 8
	addr := newTopicsCluster(t, partitions, "t", "u")
	var recs []*kgo.Record
	for _, topic := range []string{"t", "u"} {
		for p := range int32(partitions) {
			recs = append(recs, recsTo(topic, p, 3, "r")...)
		}
	}
	produce(t, addr, recs...)
	seen := map[topicPartition]int{}
	for index := range 2 {
		s := newTestSource(t, fmt.Sprintf("seed_brokers: [ %q ]\ntopics: [ t, u ]\nconsumer_group: g%d\nstart_from: earliest\nstop_at: latest\nreaders: 2\nshard: { index: %d, count: 2 }\n", addr, index, index))
		_, count := summary(readToEnd(t, s))
		if len(count) == 0 {
			t.Errorf("shard %d read nothing", index)
		}
		for tp, n := range count {
			if n != 3 {
				t.Errorf("shard %d read %d records of %s, want 3", index, n, tp)
			}
			if want := ownerSlot(tp.topic, tp.partition, 4) / 2; want != index {
				t.Errorf("shard %d read %s, which is shard %d's", index, tp, want)
			}
			seen[tp]++
		}
	}
	if len(seen) != 2*partitions {
		t.Errorf("read %d partitions, want %d: %v", len(seen), 2*partitions, seen)
	}
	for tp, n := range seen {
		if n != 1 {
			t.Errorf("%s read by %d shards", tp, n)
		}
	}
}

// TestSourceBoundedReconnectKeepsStops: stop offsets are resolved once; a
// reconnect resumes from the session's positions and ends at the same stop
// offsets, not at the end of what was written since.
func TestSourceBoundedReconnectKeepsStops(t *testing.T) {
	t.Parallel()
	c, addr := newFakeCluster(t)
	produceN(t, addr, "t", 5, 0)
	// One record in flight at a time, so that every ack leads to a fetch.
	s := newTestSource(t, sourceYAML(addr, "g", "start_from: earliest", "stop_at: latest", "batch_size: 1", "checkpoint_limit: 1", "readers: 2", "fetch_max_wait: 50ms"))
	produceN(t, addr, "t", 3, 0, 1)
	var got []int64
	for range 2 {
		b := readRecords(t, s, 1)[0]
		got = append(got, b.pos[0].offset)
		if err := b.ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	failNextFetch(c, kerr.SaslAuthenticationFailed)
	deadline := time.Now().Add(testTimeout)
	for {
		b, err := readOne(t, s, time.Until(deadline))
		if errors.Is(err, service.ErrNotConnected) {
			break
		}
		if err != nil {
			t.Fatalf("ReadBatch: %v, want ErrNotConnected", err)
		}
		got = append(got, b.pos[0].offset)
		if err := b.ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := s.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range readToEnd(t, s) {
		if p.tp != tpT(0) {
			t.Fatalf("read %s at %d; partitions 1 and 2 had nothing before their stop offsets", p.tp, p.offset)
		}
		got = append(got, p.offset)
	}
	if fmt.Sprint(got) != "[0 1 2 3 4]" {
		t.Fatalf("read %v across the reconnect, want [0 1 2 3 4] (stop offset 5, resolved at the first connect)", got)
	}
	if c := committedOffsets(t, addr, "g"); !maps.Equal(c, map[topicPartition]int64{tpT(0): 5, tpT(1): 0, tpT(2): 0}) {
		t.Fatalf("committed %v, want the stop offsets", c)
	}
}
