package eventwindow

import (
	"context"
	"errors"
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
