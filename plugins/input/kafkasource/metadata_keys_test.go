package kafkasource

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"
)

func metaKeysOf(t *testing.T, set metaSet) []string {
	t.Helper()
	r := &kgo.Record{Topic: "t", Partition: 2, Offset: 7, Key: []byte("k"), Value: []byte("v"),
		Timestamp: time.UnixMilli(1_700_000_000_123), Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}}
	var keys []string
	var boxes valueBoxes
	_ = recordMessage(r, 3, set, &boxes).MetaWalkMut(func(k string, _ any) error {
		keys = append(keys, k)
		return nil
	})
	slices.Sort(keys)
	return keys
}

func TestMetadataKeysSelectsMetadata(t *testing.T) {
	t.Parallel()
	all := metaKeysOf(t, metaAll)
	want := append(allMetaKeyNames()[:len(metaKeys)-1], "h") // every kafka_ key plus the header
	slices.Sort(want)
	if !slices.Equal(all, want) {
		t.Fatalf("default metadata %v, want %v", all, want)
	}
	set, err := parseMetaSet([]string{metaTopic, metaOffset})
	if err != nil {
		t.Fatal(err)
	}
	if got := metaKeysOf(t, set); !slices.Equal(got, []string{metaOffset, metaTopic}) {
		t.Fatalf("metadata_keys [topic offset] set %v", got)
	}
	set, err = parseMetaSet([]string{metaHeaders})
	if err != nil {
		t.Fatal(err)
	}
	if got := metaKeysOf(t, set); !slices.Equal(got, []string{"h"}) {
		t.Fatalf("metadata_keys [headers] set %v", got)
	}
	if _, err := parseMetaSet([]string{"kafka_nope"}); err == nil || !strings.Contains(err.Error(), `field metadata_keys: unknown key "kafka_nope"`) {
		t.Fatalf("unknown key error = %v", err)
	}
}

func TestMetadataKeysDefault(t *testing.T) {
	t.Parallel()
	pc, err := Spec().ParseYAML(`
seed_brokers: [ "127.0.0.1:9092" ]
topics: [ a ]
consumer_group: g
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := configFromParsed(pc)
	if err != nil {
		t.Fatal(err)
	}
	if c.Metadata != metaDefault {
		t.Fatalf("default metadata_keys = %v, want %v", metaKeyNames(c.Metadata), metaKeyNames(metaDefault))
	}
	// Benthos's kafka_franz keys and the headers; nine entries at most with
	// one header keeps the count of kafka_ keys at eight.
	want := []string{metaKey, metaLag, metaOffset, metaPartition, metaTimestampMs, metaTimestampUnix, metaTombstone, metaTopic, "h"}
	slices.Sort(want)
	if got := metaKeysOf(t, metaDefault); !slices.Equal(got, want) {
		t.Fatalf("default metadata %v, want %v", got, want)
	}
}

// TestMetadataValuesFollowPartition checks that the values boxed once per
// partition run change with the record: a batch holds several partitions.
func TestMetadataValuesFollowPartition(t *testing.T) {
	t.Parallel()
	b := newFetchedBatch([]*kgo.Record{
		{Topic: "a", Partition: 0, Offset: 1},
		{Topic: "a", Partition: 0, Offset: 2},
		{Topic: "a", Partition: 300, Offset: 3, Attrs: kgo.RecordAttrs{}},
		{Topic: "b", Partition: 300, Offset: 4},
		{Topic: "a", Partition: 0, Offset: 5},
	}, []int64{0, 0, 0, 0, 0}, &messageBuilder{meta: metaAll})
	want := []struct {
		topic     string
		partition int
	}{{"a", 0}, {"a", 0}, {"a", 300}, {"b", 300}, {"a", 0}}
	for i, m := range b.buildMessages() {
		topic, _ := m.MetaGetMut(metaTopic)
		partition, _ := m.MetaGetMut(metaPartition)
		tt, _ := m.MetaGetMut(metaTimestampType)
		if topic != want[i].topic || partition != want[i].partition || tt != timestampTypeCreate {
			t.Fatalf("message %d: topic %#v partition %#v timestamp type %#v, want %q %d %q",
				i, topic, partition, tt, want[i].topic, want[i].partition, timestampTypeCreate)
		}
	}
}

func TestMetadataKeysLint(t *testing.T) {
	t.Parallel()
	err := service.NewStreamBuilder().SetYAML(`
input:
  kafka_source:
    seed_brokers: [ "127.0.0.1:9092" ]
    topics: [ a ]
    consumer_group: g
    metadata_keys: [ kafka_offset, kafka_nope ]
output:
  drop: {}
`)
	if err == nil || !strings.Contains(err.Error(), `unknown key "kafka_nope"`) {
		t.Fatalf("lint of an unknown metadata key: %v", err)
	}
}
