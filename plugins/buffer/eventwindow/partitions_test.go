package eventwindow

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/txnoffsets"
)

// sharingSource is a kafka_source whose topics' partitions other processes
// may read too (shared) or not.
type sharingSource struct {
	fakeWindowSource
	shared bool
}

func (s *sharingSource) PartitionsShared() bool { return s.shared }

// fromPartition makes a record of {"c": key} at event time ts, read by src
// from partition p of topic t.
func fromPartition(src txnoffsets.Source, p int32, key string, ts int64) *service.Message {
	m := msgOf(in{content: fmt.Sprintf(`{"c":%q}`, key), ts: ts, wm: -1})
	return m.WithContext(txnoffsets.WithOrigin(context.Background(), txnoffsets.Origin{Source: src, Topic: "t", Partition: p}))
}

func splitKeys(b *Buffer) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for k := range b.mu.splitKeys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// A window key whose records of one window come from two partitions is
// reported when the source shares its partitions with other processes; a
// key whose windows are each fed by one partition, or a source that reads
// every partition, is not.
func TestKeysFromSeveralPartitions(t *testing.T) {
	type rec struct {
		p   int32
		key string
		ts  int64
	}
	cases := []struct {
		name   string
		conf   string
		shared bool
		recs   []rec
		want   []string
	}{
		{
			name: "one window fed by two partitions", shared: true, conf: tumblingByC,
			recs: []rec{{0, "fr", 1000}, {0, "de", 1500}, {1, "fr", 2000}, {1, "fr", 2500}, {2, "it", 3000}},
			want: []string{"fr"},
		},
		{
			name: "each key in one partition", shared: true, conf: tumblingByC,
			recs: []rec{{0, "fr", 1000}, {1, "de", 1500}, {0, "fr", 2000}, {1, "de", 2500}},
		},
		{
			name: "a key in two partitions but never in one window", shared: true, conf: tumblingByC,
			recs: []rec{{0, "fr", 1000}, {1, "fr", 11000}, {0, "fr", 21000}},
		},
		{
			name: "source reads every partition", shared: false, conf: tumblingByC,
			recs: []rec{{0, "fr", 1000}, {1, "fr", 2000}},
		},
		{
			name: "sliding windows", shared: true, conf: `
type: sliding
size: 10s
slide: 5s
key: ${! json("c") }
aggregates: { n: count }
`,
			recs: []rec{{0, "fr", 1000}, {1, "fr", 6000}},
			want: []string{"fr"},
		},
		{
			// Two sessions of one key, each of one partition, merged
			// by a record that bridges them.
			name: "sessions merged", shared: true, conf: `
type: session
gap: 15s
key: ${! json("c") }
aggregates: { n: count }
`,
			recs: []rec{{0, "fr", 1000}, {1, "fr", 30000}, {0, "fr", 15000}},
			want: []string{"fr"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newTestBuffer(t, tc.conf)
			defer b.Close(context.Background())
			src := &sharingSource{shared: tc.shared}
			var batch service.MessageBatch
			for _, r := range tc.recs {
				batch = append(batch, fromPartition(src, r.p, r.key, r.ts))
			}
			if err := b.WriteBatch(context.Background(), batch, func(context.Context, error) error { return nil }); err != nil {
				t.Fatal(err)
			}
			if got := splitKeys(b); !slices.Equal(got, tc.want) {
				t.Errorf("keys reported as split = %v, want %v", got, tc.want)
			}
			b.mu.Lock()
			warned := b.mu.splitWarned
			b.mu.Unlock()
			if warned != (len(tc.want) > 0) {
				t.Errorf("warned = %v, want %v", warned, len(tc.want) > 0)
			}
		})
	}
}

// The keys remembered as reported are bounded: past maxSplitKeys the set
// starts again, and a key is counted once while it is remembered.
func TestSplitKeysBounded(t *testing.T) {
	b := newTestBuffer(t, tumblingByC)
	defer b.Close(context.Background())
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range maxSplitKeys + 5 {
		key := fmt.Sprint(i)
		b.splitKeyLocked(key, part{"t", 0}, part{"t", 1})
		b.splitKeyLocked(key, part{"t", 0}, part{"t", 2}) // remembered: not again
	}
	if n := len(b.mu.splitKeys); n != 5 {
		t.Errorf("remembered %d keys after %d, want 5 (cleared once full)", n, maxSplitKeys+5)
	}
}

const tumblingByC = `
type: tumbling
size: 10s
key: ${! json("c") }
aggregates: { n: count }
`
