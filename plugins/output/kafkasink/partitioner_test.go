package kafkasink

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
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
			p, err := PartitionerDefault.kgoPartitioner()
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
	p, err := PartitionerDefault.kgoPartitioner()
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
	if _, err := Partitioner("murmur3").kgoPartitioner(); err == nil || !strings.Contains(err.Error(), FieldPartitioner) {
		t.Fatalf("want an error naming field %s, got %v", FieldPartitioner, err)
	}
}
