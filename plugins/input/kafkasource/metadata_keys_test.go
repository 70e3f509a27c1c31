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
	_ = recordMessage(r, 3, set).MetaWalkMut(func(k string, _ any) error {
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
