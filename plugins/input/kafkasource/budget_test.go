package kafkasource

import (
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
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
