package eventwindow

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// BenchmarkTumbling1mWindows10kKeys feeds records keyed over 10,000 keys into
// one-minute tumbling windows, event time advancing 1ms per record and the
// watermark 5s behind, so about 10,000 windows fire every 60,000 records; a
// reader acks every result. Message construction is outside the timer.
func BenchmarkTumbling1mWindows10kKeys(b *testing.B) {
	for _, bc := range []struct {
		name, conf string
	}{
		{"count", "size: 1m\nkey: ${! @kafka_key }\naggregates: {n: count}\n"},
		{"count_sum_json", "size: 1m\nkey: ${! @kafka_key }\naggregates: {n: count, total: sum(amount)}\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const keys, batchSize = 10_000, 500
			keyNames := make([]string, keys)
			for i := range keyNames {
				keyNames[i] = "user-" + strconv.Itoa(i)
			}
			buf := newTestBuffer(b, bc.conf)
			ctx := context.Background()
			readDone := make(chan int)
			go func() {
				n := 0
				for {
					batch, ack, err := buf.ReadBatch(ctx)
					if errors.Is(err, service.ErrEndOfBuffer) {
						readDone <- n
						return
					}
					if err != nil {
						panic(err)
					}
					n += len(batch)
					_ = ack(ctx, nil)
				}
			}()
			noop := func(context.Context, error) error { return nil }
			b.ReportAllocs()
			b.ResetTimer()
			b.StopTimer()
			for i := 0; i < b.N; i += batchSize {
				n := min(batchSize, b.N-i)
				batch := make(service.MessageBatch, n)
				for j := range batch {
					r := int64(i + j)
					m := service.NewMessage([]byte(`{"amount":` + strconv.FormatInt(r%100, 10) + `}`))
					m.MetaSetMut("kafka_key", keyNames[r%keys])
					m.MetaSetMut("kafka_event_time_ms", r)
					m.MetaSetMut("kafka_watermark_ms", r-5000)
					batch[j] = m
				}
				b.StartTimer()
				if err := buf.WriteBatch(ctx, batch, noop); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
			buf.mu.Lock()
			open := len(buf.mu.heap)
			buf.mu.Unlock()
			b.ReportMetric(float64(open), "open_windows")
			buf.EndOfInput()
			<-readDone
		})
	}
}

// BenchmarkOpenWindowMemory measures the heap an open window holds: keys
// windows of one key each (one-minute tumbling, none fires: the watermark
// stays an hour behind), each fed perWindow records of a small JSON value
// in batches of 500. It reports the live heap after a collection per open
// window (B/window); the difference between the 1- and 10-record rows is
// what nine more records cost. The input messages are freed once written:
// the buffer keeps their acknowledgements and, with `aggregate`, their
// parsed rows (kafka_source keeps the records, against its
// max_unacknowledged_bytes). Figures in the spec's Memory section; run with
// -benchtime=1x.
func BenchmarkOpenWindowMemory(b *testing.B) {
	for _, bc := range []struct {
		name, conf string
		perWindow  int
	}{
		{"count", "size: 1m\nkey: ${! @kafka_key }\naggregates: {n: count}\n", 1},
		{"count_10_records", "size: 1m\nkey: ${! @kafka_key }\naggregates: {n: count}\n", 10},
		{"count_sum_min_max", "size: 1m\nkey: ${! @kafka_key }\naggregates: {n: count, total: sum(amount), lo: min(amount), hi: max(amount)}\n", 1},
		{"aggregate_mapping_1_record", "size: 1m\nkey: ${! @kafka_key }\naggregate: 'root.n = this.length()'\n", 1},
		{"aggregate_mapping_10_records", "size: 1m\nkey: ${! @kafka_key }\naggregate: 'root.n = this.length()'\n", 10},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const keys, batchSize = 10_000, 500
			ctx := context.Background()
			noop := func(context.Context, error) error { return nil }
			var perWindow float64
			for range b.N {
				b.StopTimer()
				buf := newTestBuffer(b, bc.conf)
				before := liveHeap()
				var batches []service.MessageBatch
				for i := 0; i < keys*bc.perWindow; i += batchSize {
					batch := make(service.MessageBatch, batchSize)
					for j := range batch {
						r := i + j
						m := service.NewMessage([]byte(`{"amount":` + strconv.Itoa(r%100) + `}`))
						m.MetaSetMut("kafka_key", "user-"+strconv.Itoa(r%keys))
						m.MetaSetMut("kafka_event_time_ms", int64(3_600_000))
						m.MetaSetMut("kafka_watermark_ms", int64(0))
						batch[j] = m
					}
					batches = append(batches, batch)
				}
				b.StartTimer()
				for _, batch := range batches {
					if err := buf.WriteBatch(ctx, batch, noop); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				batches = nil
				perWindow = float64(liveHeap()-before) / keys
				buf.mu.Lock()
				open := len(buf.mu.heap)
				buf.mu.Unlock()
				if open != keys {
					b.Fatalf("%d windows open, want %d", open, keys)
				}
				runtime.KeepAlive(buf)
				b.StartTimer()
			}
			b.ReportMetric(perWindow, "B/window")
		})
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
