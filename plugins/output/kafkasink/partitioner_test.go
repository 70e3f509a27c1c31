package kafkasink

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
)

// javaPartitions was produced with the real Java client,
// org.apache.kafka:kafka-clients 4.4.0 (and checked identical with 4.1.0),
// by a program printing
//
//	Utils.toPositive(Utils.murmur2(key.getBytes(UTF_8))) % n
//
// for n in partitionCounts. murmur2 is the raw Utils.murmur2 result, kept to
// show which keys hash negative (where toPositive matters).
var partitionCounts = []int{1, 3, 7, 12, 100}

var javaPartitions = []struct {
	key     string
	murmur2 int32
	want    [5]int // index-aligned with partitionCounts
}{
	{"", 275646681, [5]int{0, 0, 2, 9, 81}},
	{"a", -1563381124, [5]int{0, 1, 5, 4, 24}},
	{"ab", 316155434, [5]int{0, 2, 0, 2, 34}},
	{"abc", 479470107, [5]int{0, 0, 4, 3, 7}},
	{"key", -1079937367, [5]int{0, 1, 4, 1, 81}},
	{"0", 971027396, [5]int{0, 2, 3, 8, 96}},
	{"1", -1993445489, [5]int{0, 0, 2, 3, 59}},
	{"user-42", 1459644460, [5]int{0, 1, 1, 4, 60}},
	{"order:123456789", 342822809, [5]int{0, 2, 0, 5, 9}},
	{"hello world", 1221641059, [5]int{0, 1, 2, 7, 59}},
	{"The quick brown fox jumps over the lazy dog", 495243318, [5]int{0, 0, 3, 6, 18}},
	{strings.Repeat("x", 1000), -1068453602, [5]int{0, 0, 3, 6, 46}},
	{"ключ", 2122343024, [5]int{0, 2, 4, 8, 24}},
	{"日本", -700811021, [5]int{0, 0, 1, 3, 27}},
	{"🙂 emoji", 709957530, [5]int{0, 0, 2, 6, 30}},
	{"foo", 597841616, [5]int{0, 2, 1, 8, 16}},
	{"bar", 988958145, [5]int{0, 0, 0, 9, 45}},
	{"baz", 1973573280, [5]int{0, 0, 0, 0, 80}},
	{"connectd", -2044240864, [5]int{0, 1, 1, 4, 84}},
	{"flink", 1202002136, [5]int{0, 2, 6, 8, 36}},
	{"kafka", -798503068, [5]int{0, 1, 3, 4, 80}},
	{"partition-key-7", -305281694, [5]int{0, 0, 5, 6, 54}},
}

func TestDefaultPartitionerMatchesJava(t *testing.T) {
	t.Parallel()
	for _, tc := range javaPartitions {
		name := tc.key
		if len(name) > 20 {
			name = name[:20] + "..."
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// The same constructor the sink hands to kgo.RecordPartitioner.
			p, err := Config{Partitioner: PartitionerDefault}.kgoPartitioner()
			if err != nil {
				t.Fatal(err)
			}
			tp := p.ForTopic("t")
			r := &kgo.Record{Topic: "t", Key: []byte(tc.key)}
			if !tp.RequiresConsistency(r) {
				t.Fatalf("a keyed record must always go to its hashed partition")
			}
			for j, n := range partitionCounts {
				if got := tp.Partition(r, n); got != tc.want[j] {
					t.Errorf("key %q, %d partitions: got partition %d, Java client %d", tc.key, n, got, tc.want[j])
				}
			}
		})
	}
}

func TestDefaultPartitionerNullKeyIsSticky(t *testing.T) {
	t.Parallel()
	p, err := Config{Partitioner: PartitionerDefault}.kgoPartitioner()
	if err != nil {
		t.Fatal(err)
	}
	tp := p.ForTopic("t")
	r := &kgo.Record{Topic: "t"}
	if tp.RequiresConsistency(r) {
		t.Fatal("a null-key record must not be pinned to a partition")
	}
	const n = 12
	first := tp.Partition(r, n)
	for range 100 {
		if got := tp.Partition(r, n); got != first {
			t.Fatalf("null key moved from partition %d to %d without a new batch", first, got)
		}
	}
	nb, ok := tp.(kgo.TopicPartitionerOnNewBatch)
	if !ok {
		t.Fatal("default partitioner does not react to new batches (KIP-480)")
	}
	nb.OnNewBatch()
	if got := tp.Partition(r, n); got == first {
		t.Fatalf("null key stayed on partition %d after a new batch", got)
	}
}

func TestUnknownPartitioner(t *testing.T) {
	t.Parallel()
	if _, err := (Config{Partitioner: "murmur3"}).kgoPartitioner(); err == nil || !strings.Contains(err.Error(), FieldPartitioner) {
		t.Fatalf("want an error naming field %s, got %v", FieldPartitioner, err)
	}
}

// Flink's FlinkFixedPartitioner: partitions[writerIndex % partitions.length],
// whatever the key.
func TestFixedPartitioner(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		writer, n, want int
	}{
		{writer: 0, n: 1, want: 0},
		{writer: 0, n: 4, want: 0},
		{writer: 3, n: 4, want: 3},
		{writer: 5, n: 4, want: 1},
		{writer: 7, n: 3, want: 1},
		{writer: 12, n: 12, want: 0},
		{writer: 1000, n: 7, want: 6},
	} {
		t.Run(fmt.Sprintf("writer %d of %d partitions", tc.writer, tc.n), func(t *testing.T) {
			t.Parallel()
			p, err := Config{Partitioner: PartitionerFixed, WriterIndex: tc.writer}.kgoPartitioner()
			if err != nil {
				t.Fatal(err)
			}
			tp := p.ForTopic("t")
			for _, key := range []string{"", "a", "user-42", "ключ"} {
				r := &kgo.Record{Topic: "t", Key: []byte(key)}
				if key == "" {
					r.Key = nil
				}
				if !tp.RequiresConsistency(r) {
					t.Fatal("fixed must pin every record")
				}
				if got := tp.Partition(r, tc.n); got != tc.want {
					t.Errorf("key %q: partition %d, want %d", key, got, tc.want)
				}
			}
		})
	}
}

// round_robin moves on at every record, whatever the key (not sticky), and
// follows a partition count that grows.
func TestRoundRobinPartitioner(t *testing.T) {
	t.Parallel()
	for _, spelling := range []string{"round_robin", "round-robin", "ROUND_ROBIN"} {
		t.Run(spelling, func(t *testing.T) {
			t.Parallel()
			p, err := Config{Partitioner: parsePartitioner(spelling)}.kgoPartitioner()
			if err != nil {
				t.Fatal(err)
			}
			tp := p.ForTopic("t")
			var got []int
			for i, n := range []int{3, 3, 3, 3, 3, 3, 5, 5, 5, 5} {
				r := &kgo.Record{Topic: "t", Key: []byte("same key")}
				if i%2 == 1 {
					r.Key = nil
				}
				got = append(got, tp.Partition(r, n))
			}
			if want := []int{0, 1, 2, 0, 1, 2, 3, 4, 0, 1}; !slices.Equal(got, want) {
				t.Fatalf("partitions %v, want %v", got, want)
			}
			// Each topic has its own cycle.
			if got := p.ForTopic("u").Partition(&kgo.Record{Topic: "u"}, 3); got != 0 {
				t.Errorf("a new topic starts at partition %d, want 0", got)
			}
		})
	}
}

// manual keeps the record's partition and reports one the topic does not
// have as a PartitionError naming it.
func TestManualPartitioner(t *testing.T) {
	t.Parallel()
	p, err := Config{Partitioner: PartitionerManual}.kgoPartitioner()
	if err != nil {
		t.Fatal(err)
	}
	tp := p.ForTopic("orders")
	for _, tc := range []struct {
		partition int32
		n         int
		wantErr   string
	}{
		{partition: 0, n: 1},
		{partition: 2, n: 3},
		{partition: 3, n: 3, wantErr: `field partition: partition 3 is out of range for topic "orders", which has 3 partitions (want 0 to 2)`},
		{partition: 100, n: 8, wantErr: "partition 100 is out of range"},
	} {
		ctx, _ := withPartitionCheck(context.Background(), nil)
		r := &kgo.Record{Topic: "orders", Partition: tc.partition, Context: ctx}
		got := tp.Partition(r, tc.n)
		pe := partitionErrorOf(r)
		if tc.wantErr == "" {
			if got != int(tc.partition) || pe != nil {
				t.Errorf("partition %d of %d: got %d, error %v", tc.partition, tc.n, got, pe)
			}
			continue
		}
		if got >= 0 && got < tc.n {
			t.Errorf("partition %d of %d: the client was handed valid partition %d", tc.partition, tc.n, got)
		}
		if pe == nil || !strings.Contains(pe.Error(), tc.wantErr) {
			t.Errorf("partition %d of %d: error %v, want %q", tc.partition, tc.n, pe, tc.wantErr)
		}
	}
}

func TestParsePartition(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		want    int32
		wantErr string
	}{
		{in: "0", want: 0},
		{in: " 7 ", want: 7},
		{in: "-1", wantErr: "partition must not be negative, got -1"},
		{in: "two", wantErr: "want a partition number"},
		{in: "", wantErr: "want a partition number"},
		{in: "4294967296", wantErr: "want a partition number"},
	} {
		got, err := parsePartition(tc.in)
		switch {
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("%q: got %d, %v; want %d", tc.in, got, err, tc.want)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.wantErr)
		}
	}
}

// Partitioners see the current partition count: after a topic grows, new
// partitions receive records without a restart.
func TestPartitionerFollowsTopicGrowth(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(2, "grows"))
	s, _ := newLoggedSink(t, fmt.Sprintf(`
seed_brokers: [ %q ]
topic: grows
partitioner: round_robin
metadata_max_age: 500ms
`, addr))
	s.clientOpts = []kgo.Opt{kgo.MetadataMinAge(100 * time.Millisecond)} // default 5s, above metadata_max_age
	connect(t, s)
	ctx := context.Background()
	if err := s.WriteBatch(ctx, values("", "a", "b", "c", "d")); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreatePartitions(ctx, 2, "grows"); err != nil {
		t.Fatal(err)
	}
	eventually.NoError(t, 20*time.Second, "a record in partition 3, added to the topic", func() error {
		if err := s.WriteBatch(ctx, values("", "e", "f", "g", "h")); err != nil {
			t.Fatal(err)
		}
		offs, err := adm.ListEndOffsets(ctx, "grows")
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := offs.Lookup("grows", 3); !ok || o.Offset == 0 {
			return fmt.Errorf("partition 3 listed %t, end offset %d", ok, o.Offset)
		}
		return nil
	})
}
