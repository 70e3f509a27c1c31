package kafkasource

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkatest"
)

// heldRecordHeap returns the heap that n fetched records of size bytes of
// value hold per record, besides their values, while the source keeps them:
// the records as franz-go returns them (one slab per fetch, values in the
// fetch's buffer), their batch and its messages with the default metadata
// and an origin.
func heldRecordHeap(n, size int) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	buf := make([]byte, n*size)
	slab := make([]kgo.Record, n)
	recs := make([]*kgo.Record, n)
	lags := make([]int64, n)
	for i := range slab {
		slab[i] = kgo.Record{Topic: "topic", Partition: int32(i % 8), Offset: int64(i), Value: buf[i*size : (i+1)*size : (i+1)*size]}
		recs[i] = &slab[i]
	}
	var batches []*fetchedBatch
	build := &messageBuilder{meta: metaDefault, origin: &session{}}
	const batchSize = 1024
	for i := 0; i < n; i += batchSize {
		b := newFetchedBatch(recs[i:min(n, i+batchSize)], lags[i:min(n, i+batchSize)], build)
		b.prepared = &preparedBatch{built: built{msgs: b.buildMessages()}}
		batches = append(batches, b)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(batches)
	runtime.KeepAlive(buf)
	return (float64(after.HeapAlloc) - float64(before.HeapAlloc) - float64(n*size)) / float64(n)
}

// TestRecordOverhead pins recordOverhead, what max_unacknowledged_bytes
// counts for a record besides its payload, to the heap a kept record holds,
// within a quarter.
func TestRecordOverhead(t *testing.T) {
	got := heldRecordHeap(50_000, 200)
	t.Logf("a kept record holds %.0f bytes of heap besides its value (recordOverhead %d)", got, recordOverhead)
	if got < 0.75*recordOverhead || got > 1.25*recordOverhead {
		t.Fatalf("a kept record holds %.0f bytes of heap besides its value; recordOverhead is %d: measure again and update it (and the field's docs)", got, recordOverhead)
	}
}

// TestIntegrationBudgetSlowOutput: behind an output slower than the broker
// (it acknowledges its oldest batch every 100ms), kafka_source holds back at
// max_unacknowledged_bytes: the records it handed out and that are not
// acknowledged stay under the bound plus one fetch, and the Go heap holds at
// most the bound plus budgetOverhead more than once the source is closed;
// every record still arrives. 32 MiB of 16 KiB records over 4 partitions against a bound
// of 4 MiB: without the bound, checkpoint_limit (8192 per partition) lets
// the source fetch all of it.
//
// It measures the live heap after a forced collection rather than RSS: the
// test process's RSS holds the test binary, pages the runtime freed but
// has not returned yet and what earlier tests left, none of which the
// bound is about. Not parallel: other tests' allocations would count.
func TestIntegrationBudgetSlowOutput(t *testing.T) {
	broker := kafkatest.Broker(t)
	const (
		partitions   = 4
		perPartition = 512
		size         = 16 << 10
		bound        = minUnackedBytes
		// budgetOverhead is what the heap may hold besides the
		// bound: the records of a fetch that landed after fetching
		// paused and the one buffered or on its way (a fetch each,
		// fetchBytes), and the source's clients, goroutines and
		// metrics.
		budgetOverhead = 2*fetchPartitionBytes + 4<<20
	)
	topic := kafkatest.NewTopic(t, broker, "kafkasource-budget", partitions)
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()
	// Random values, uncompressed: a fetch then holds what it weighs.
	value := make([]byte, size)
	_, _ = rand.Read(value)
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	err = kafkatest.ProduceN(ctx, cl, partitions*perPartition, func(i int64) *kgo.Record {
		return &kgo.Record{Topic: topic, Partition: int32(i % partitions), Value: value}
	})
	cl.Close()
	if err != nil {
		t.Fatal(err)
	}
	value = nil

	s := newTestSource(t, fmt.Sprintf(`
seed_brokers: [ %q ]
topics: [ %q ]
start_from: earliest
fetch_max_wait: 100ms
max_unacknowledged_bytes: %d
`, broker, topic, bound))

	// The slow output: it keeps what it reads and acknowledges its
	// oldest batch every 100ms.
	var (
		held                  []readBatch
		heldBytes, received   int
		maxHeld, maxHeap      int
		lastAck, lastSample   time.Time
		total                 = partitions * perPartition
		ackEvery, sampleEvery = 100 * time.Millisecond, 250 * time.Millisecond
	)
	for received < total || len(held) > 0 {
		if ctx.Err() != nil {
			t.Fatalf("received %d of %d records, %d batches held: %v", received, total, len(held), ctx.Err())
		}
		if b, err := readOne(t, s, 20*time.Millisecond); err == nil {
			held = append(held, b)
			received += len(b.msgs)
			for _, m := range b.msgs {
				v, _ := m.AsBytes()
				heldBytes += len(v)
			}
			maxHeld = max(maxHeld, heldBytes)
		} else if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		if now := time.Now(); now.Sub(lastSample) >= sampleEvery {
			lastSample = now
			maxHeap = max(maxHeap, liveHeap())
		}
		if now := time.Now(); len(held) > 0 && now.Sub(lastAck) >= ackEvery {
			lastAck = now
			for _, m := range held[0].msgs {
				v, _ := m.AsBytes()
				heldBytes -= len(v)
			}
			if err := held[0].ack(ctx, nil); err != nil {
				t.Fatal(err)
			}
			held[0] = readBatch{}
			held = held[1:]
		}
	}
	// The heap once the source is closed and nothing is held is the
	// baseline: what the test process holds anyway.
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	maxHeap -= liveHeap()
	t.Logf("bound %d B: at most %d B of values unacknowledged, live heap at most %d B above the closed source's (bound + overhead: %d B)",
		bound, maxHeld, maxHeap, bound+budgetOverhead)
	if limit := bound + int(fetchBytes(bound)); maxHeld > limit {
		t.Errorf("%d bytes of values were unacknowledged at once, want at most the bound plus one fetch, %d", maxHeld, limit)
	}
	if maxHeap > bound+budgetOverhead {
		t.Errorf("the live heap grew by %d bytes, want at most the bound plus the overhead, %d", maxHeap, bound+budgetOverhead)
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() int {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int(m.HeapAlloc)
}

func TestFetchBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ budget, want int64 }{
		{minUnackedBytes, fetchPartitionBytes},
		{16 << 20, 4 << 20},
		{1 << 30, maxFetchBytes},
	} {
		if got := fetchBytes(tc.budget); int64(got) != tc.want {
			t.Errorf("fetchBytes(%d) = %d, want %d", tc.budget, got, tc.want)
		}
	}
}
