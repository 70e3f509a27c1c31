package kafkasource

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// A reader takes all its client has buffered in one poll (where the
// checkpoint limit leaves room), and the owner splits it: every batch
// handed out holds at most batch_size records, each partition's records
// come in offset order, and none is lost or repeated.
func TestSourceSplitsPollIntoBatches(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	const perPartition, batchSize = 300, 7
	produceN(t, addr, "t", perPartition, 0, 1, 2)
	s := newTestSource(t, sourceYAML(addr, "g", "start_from: earliest", "stop_at: latest",
		"batch_size: 7", "checkpoint_limit: 100000", "fetch_max_wait: 50ms"))
	next := map[topicPartition]int64{}
	var batches, largest int
	deadline := time.Now().Add(testTimeout)
	for {
		b, err := readOne(t, s, time.Until(deadline))
		if err != nil {
			break // end of input, checked by the counts below
		}
		batches++
		largest = max(largest, len(b.msgs))
		if len(b.msgs) > batchSize {
			t.Fatalf("a batch of %d records, batch_size %d", len(b.msgs), batchSize)
		}
		for _, p := range b.pos {
			if p.offset != next[p.tp] {
				t.Fatalf("%v: offset %d, want %d", p.tp, p.offset, next[p.tp])
			}
			next[p.tp]++
		}
		if err := b.ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	for p := range int32(3) {
		if got := next[tpT(p)]; got != perPartition {
			t.Errorf("partition %d: read %d records, want %d", p, got, perPartition)
		}
	}
	if largest != batchSize {
		t.Errorf("largest batch %d records, want batch_size %d", largest, batchSize)
	}
}

// pollMax never lets one poll take a partition past the checkpoint limit
// (unless it is batchSize, what any poll could always take), and leaves
// polls at least the room of the fullest partition or half the limit,
// after any sequence of fetches, acknowledgements and removals.
func TestTrackerPollMax(t *testing.T) {
	t.Parallel()
	const limit, batchSize = 40, 3
	rng := rand.New(rand.NewPCG(3, 5))
	tr := newOffsetTracker(limit)
	tps := make([]topicPartition, 6)
	for i := range tps {
		tps[i] = topicPartition{topic: "t", partition: int32(i)}
		tr.addPartition(tps[i], 0, -1, -1)
	}
	fetched := map[topicPartition][]int64{}
	for step := range 20000 {
		tp := tps[rng.IntN(len(tps))]
		switch op := rng.IntN(10); {
		case op < 5:
			if next, ok := tr.next(tp); ok && tr.unacked(tp) < limit {
				tr.fetched([]position{{tp: tp, offset: next}})
				fetched[tp] = append(fetched[tp], next)
			}
		case op < 9:
			if fs := fetched[tp]; len(fs) > 0 {
				i := rng.IntN(len(fs))
				tr.acked([]position{{tp: tp, offset: fs[i]}})
				fetched[tp] = append(fs[:i], fs[i+1:]...)
			}
		default:
			if rng.IntN(50) == 0 {
				tr.removePartition(tp)
				delete(fetched, tp)
				tr.addPartition(tp, 0, -1, -1)
			}
		}
		most := 0
		for _, p := range tps {
			most = max(most, tr.unacked(p))
		}
		got, exact := tr.pollMax(batchSize), max(batchSize, limit-most)
		if got > exact {
			t.Fatalf("step %d: pollMax %d lets a partition pass the limit %d (it holds %d)", step, got, limit, most)
		}
		if got < min(exact, limit/2) {
			t.Fatalf("step %d: pollMax %d, the fullest partition leaves room for %d", step, got, exact)
		}
	}
}

// fetchSizer asks for fetches whose records weigh about a quarter of the
// budget (payload plus recordOverhead each), within one partition's fetch
// of 256 KiB and fetchBytes, and leaves a fetch_max_bytes that was set.
func TestFetchSizer(t *testing.T) {
	t.Parallel()
	const budget = 16 << 20
	for _, c := range []struct {
		name      string
		fetchMax  int
		perRecord int64
		want      int32
	}{
		// 16 MiB / 4 × 200 / (200 + 768)
		{"200-byte records", defaultFetchMaxBytes, 200, 866591},
		{"16 KiB records: within a quarter of the start, kept", defaultFetchMaxBytes, 16 << 10, budget / 4},
		{"tiny records: the smallest fetch", defaultFetchMaxBytes, 10, minAutoFetchBytes},
		{"huge records: a quarter of the budget", defaultFetchMaxBytes, 10 << 20, budget / 4},
		{"fetch_max_bytes set", 1 << 20, 200, 1 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFetchSizer(Config{FetchMaxBytes: c.fetchMax, MaxUnackedBytes: budget, FetchMaxPartitionBytes: 1 << 20})
			got, changed := f.observe(1000, 1000*c.perRecord)
			if got != c.want {
				t.Fatalf("fetch size %d, want %d", got, c.want)
			}
			if changed != (c.want != f0(c.fetchMax, budget)) {
				t.Errorf("changed %v", changed)
			}
			// The same records again change nothing.
			if _, changed := f.observe(1000, 1000*c.perRecord); changed {
				t.Errorf("changed again for the same records")
			}
		})
	}
}

// f0 is the fetch size a session starts with.
func f0(fetchMax int, budget int64) int32 {
	return Config{FetchMaxBytes: fetchMax, MaxUnackedBytes: budget}.fetchMaxBytes()
}
