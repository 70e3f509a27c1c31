package watermark

import (
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkObserve measures the per-record path: Partition.Observe, which
// kafka_source calls for every record.
func BenchmarkObserve(b *testing.B) {
	b.Run("1 partition, in order", func(b *testing.B) {
		tr := newTracker(b, Config{MaxOutOfOrderness: time.Second})
		p := addPartition(b, tr, "t", 0)
		b.ReportAllocs()
		ts := int64(1_700_000_000_000)
		for b.Loop() {
			ts++
			p.Observe(ts)
		}
	})
	b.Run("1 partition, no advance", func(b *testing.B) {
		tr := newTracker(b, Config{MaxOutOfOrderness: time.Second})
		p := addPartition(b, tr, "t", 0)
		p.Observe(1_700_000_000_000)
		b.ReportAllocs()
		for b.Loop() {
			p.Observe(1_699_999_999_500)
		}
	})
	b.Run("64 partitions, round robin", func(b *testing.B) {
		tr := newTracker(b, Config{MaxOutOfOrderness: time.Second})
		ps := make([]*Partition, 64)
		for i := range ps {
			ps[i] = addPartition(b, tr, "t", int32(i))
		}
		b.ReportAllocs()
		ts, i := int64(1_700_000_000_000), 0
		for b.Loop() {
			ts++
			ps[i&63].Observe(ts)
			i++
		}
	})
	// A fetch hands a reader a batch of one partition's records at a time:
	// only the first record of a batch can move the partition past the
	// combined watermark, so the scan is paid once per batch.
	b.Run("64 partitions, batches of 100", func(b *testing.B) {
		tr := newTracker(b, Config{MaxOutOfOrderness: time.Second})
		ps := make([]*Partition, 64)
		for i := range ps {
			ps[i] = addPartition(b, tr, "t", int32(i))
		}
		b.ReportAllocs()
		ts, i := int64(1_700_000_000_000), 0
		for b.Loop() {
			ts++
			ps[(i/100)&63].Observe(ts)
			i++
		}
	})
	b.Run("64 partitions, round robin, same millisecond", func(b *testing.B) {
		tr := newTracker(b, Config{MaxOutOfOrderness: time.Second})
		ps := make([]*Partition, 64)
		for i := range ps {
			ps[i] = addPartition(b, tr, "t", int32(i))
			ps[i].Observe(1_700_000_000_000)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			ps[i&63].Observe(1_700_000_000_000)
			i++
		}
	})
	b.Run("parallel readers, own partitions", func(b *testing.B) {
		tr := newTracker(b, Config{MaxOutOfOrderness: time.Second})
		var next atomic.Int32
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			p, err := tr.Add("t", next.Add(1))
			if err != nil {
				b.Error(err)
				return
			}
			ts := int64(1_700_000_000_000)
			for pb.Next() {
				ts++
				p.Observe(ts)
			}
		})
	})
}

// BenchmarkTick measures the periodic re-evaluation over 64 partitions.
func BenchmarkTick(b *testing.B) {
	tr := newTracker(b, Config{IdleTimeout: time.Minute})
	for i := range 64 {
		addPartition(b, tr, "t", int32(i)).Observe(int64(i))
	}
	b.ReportAllocs()
	for b.Loop() {
		tr.Tick()
	}
}
