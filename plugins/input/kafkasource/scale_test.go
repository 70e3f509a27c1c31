package kafkasource

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// An offset commit of many partitions is split into requests whose records
// stay under commitChunkBytes (one batch of the broker's, bounded by its
// message.max.bytes), each partition in exactly one of them.
func TestChunkPositions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		group      string
		partitions int
		wantChunks int
	}{
		{"10,000 partitions, short names", "orders-to-warehouse", 10_000, 3},
		{"1,000 partitions, a 1,100-character group", strings.Repeat("g", 1100), 1000, 3},
		{"8 partitions", "g", 8, 1},
		{"a group over the budget: one partition a request", strings.Repeat("g", commitChunkBytes), 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pos := map[topicPartition]int64{}
			for i := range tc.partitions {
				pos[topicPartition{topic: fmt.Sprintf("bench-many-1000000-200-t%03d", i/100), partition: int32(i % 100)}] = int64(i)
			}
			chunks := chunkPositions(tc.group, pos)
			if len(chunks) != tc.wantChunks {
				t.Errorf("%d requests, want %d", len(chunks), tc.wantChunks)
			}
			seen := map[topicPartition]int{}
			for i, c := range chunks {
				size := 0
				for tp, off := range c {
					seen[tp]++
					if off != pos[tp] {
						t.Errorf("%v: offset %d, want %d", tp, off, pos[tp])
					}
					size += commitRecordBytes(tc.group, tp.topic, 0)
				}
				if size > commitChunkBytes && len(c) > 1 {
					t.Errorf("request %d: %d bytes of records over %d partitions, over %d", i, size, len(c), commitChunkBytes)
				}
			}
			if len(seen) != len(pos) {
				t.Errorf("%d partitions in the requests, want %d", len(seen), len(pos))
			}
			for tp, n := range seen {
				if n != 1 {
					t.Errorf("%v in %d requests", tp, n)
				}
			}
		})
	}
}

// The tracker's counts of unfinished and busy partitions and of
// unacknowledged records, which answer allFinished, drained and pollMax
// without a scan, agree with a scan of every
// partition after any sequence of fetches, acknowledgements, holds,
// releases and removals.
func TestTrackerCountsMatchScan(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 13))
	tr := newOffsetTracker(4)
	tps := make([]topicPartition, 12)
	for i := range tps {
		tps[i] = topicPartition{topic: "t", partition: int32(i)}
		tr.addPartition(tps[i], 0, -1, int64(5+i%3))
	}
	fetched := map[topicPartition][]int64{}
	scan := func() (allFinished, drained bool, unacked int) {
		allFinished, drained = len(tr.parts) > 0, true
		for _, po := range tr.parts {
			unacked += po.unacked
			if !po.done {
				allFinished, drained = false, false
			}
			if po.unacked > 0 || len(po.held) > 0 {
				drained = false
			}
		}
		return allFinished, drained, unacked
	}
	type held struct {
		id holdID
		tp topicPartition
	}
	var holds []held
	for step := range 5000 {
		tp := tps[rng.IntN(len(tps))]
		switch op := rng.IntN(10); {
		case op < 4:
			if next, ok := tr.next(tp); ok && tr.wanted(tp, next) {
				tr.fetched([]position{{tp: tp, offset: next}})
				fetched[tp] = append(fetched[tp], next)
			}
		case op < 7:
			if fs := fetched[tp]; len(fs) > 0 {
				i := rng.IntN(len(fs))
				tr.acked([]position{{tp: tp, offset: fs[i]}})
				fetched[tp] = append(fs[:i], fs[i+1:]...)
			}
		case op == 7:
			id := holdID(step)
			if tr.hold(id, map[topicPartition]int64{tp: 0}, nil) == nil {
				holds = append(holds, held{id: id, tp: tp})
			}
		case op == 8 && len(holds) > 0:
			i := rng.IntN(len(holds))
			if rng.IntN(2) == 0 {
				tr.release([]holdID{holds[i].id}, nil)
			} else {
				tr.release([]holdID{holds[i].id}, []topicPartition{holds[i].tp})
			}
			holds = append(holds[:i], holds[i+1:]...)
		case op == 9 && rng.IntN(20) == 0:
			tr.removePartition(tp)
			delete(fetched, tp)
			tr.addPartition(tp, 0, -1, int64(5+rng.IntN(3)))
		}
		wantAll, wantDrained, wantUnacked := scan()
		if tr.unackedSum != wantUnacked {
			t.Fatalf("step %d: %d records unacknowledged, a scan says %d", step, tr.unackedSum, wantUnacked)
		}
		if got := tr.allFinished(); got != wantAll {
			t.Fatalf("step %d: allFinished %v, a scan says %v", step, got, wantAll)
		}
		if got, _ := tr.drained(); got != wantDrained {
			t.Fatalf("step %d: drained %v, a scan says %v", step, got, wantDrained)
		}
	}
}
