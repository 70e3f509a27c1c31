package eventwindow

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

const writersConf = `
type: tumbling
size: 1s
key: ${! json("c") }
aggregates: { n: count }
late: error
watermark_metadata: repartition_watermark_ms
watermark_writer_metadata: repartition_writer
watermark_writer_idle: 10s
watermark_writers: 2
`

// fromWriter is a record of the repartition topic's partition p, written by
// writer with its watermark wm.
func fromWriter(writer string, p int, ts, wm int64) *service.Message {
	m := service.NewMessage([]byte(`{"c":"fr"}`))
	m.MetaSetMut("kafka_event_time_ms", ts)
	m.MetaSetMut("kafka_topic", "rep")
	m.MetaSetMut("kafka_partition", fmt.Sprint(p))
	m.MetaSetMut("repartition_watermark_ms", fmt.Sprint(wm))
	m.MetaSetMut("repartition_writer", writer)
	return m
}

func watermarkOf(b *Buffer) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.watermark
}

// Behind a repartition topic the watermark is the minimum over the writers
// of their last watermarks, not the largest seen: the records of a writer
// behind another are on time. A writer idle for watermark_writer_idle no
// longer holds it back.
func TestWriterWatermarks(t *testing.T) {
	for _, withWriters := range []bool{true, false} {
		t.Run(fmt.Sprintf("writers=%v", withWriters), func(t *testing.T) {
			conf := writersConf
			if !withWriters {
				conf = "type: tumbling\nsize: 1s\nkey: ${! json(\"c\") }\naggregates: { n: count }\nlate: error\nwatermark_metadata: repartition_watermark_ms\n"
			}
			b := newTestBuffer(t, conf)
			defer b.Close(context.Background())
			clock := time.Unix(1000, 0)
			b.now = func() time.Time { return clock }
			write := func(msgs ...*service.Message) {
				t.Helper()
				if err := b.WriteBatch(context.Background(), msgs, func(context.Context, error) error { return nil }); err != nil {
					t.Fatal(err)
				}
			}
			// Writer a is 8s of event time ahead of writer b, in both
			// partitions; b's record at 3.2s comes after a's at 10.5s.
			write(fromWriter("a", 0, 10_500, 10_000))
			if wm := watermarkOf(b); withWriters && wm != math.MinInt64 {
				t.Fatalf("watermark %d after one writer of two, want it held", wm)
			}
			write(fromWriter("b", 0, 2_500, 2_000), fromWriter("a", 1, 10_600, 10_100), fromWriter("b", 1, 3_200, 2_600))
			late := 0
			for _, m := range drainReady(b) {
				if m.GetError() != nil {
					late++
				}
			}
			if !withWriters {
				if late != 2 || watermarkOf(b) != 10_100 {
					t.Fatalf("without writer watermarks: %d late, watermark %d; want b's 2 records late at 10100", late, watermarkOf(b))
				}
				return
			}
			if late != 0 {
				t.Fatalf("%d records late, want none", late)
			}
			if wm := watermarkOf(b); wm != 2_000 {
				t.Fatalf("watermark %d, want 2000: writer b's mark in partition 0", wm)
			}
			// b moves on in partition 0 only; in partition 1 it still
			// holds the watermark at 2600.
			clock = clock.Add(5 * time.Second)
			write(fromWriter("b", 0, 9_000, 8_500))
			if wm := watermarkOf(b); wm != 2_600 {
				t.Fatalf("watermark %d, want 2600: writer b's mark in partition 1", wm)
			}
			// Nothing comes to partition 1 for the idle time: its marks are
			// dropped; a's and b's in partition 0 hold.
			clock = clock.Add(5 * time.Second)
			write(fromWriter("a", 0, 11_000, 10_500))
			if wm := watermarkOf(b); wm != 8_500 {
				t.Fatalf("watermark %d after b idled in partition 1, want 8500", wm)
			}
			var fired []windowResultDoc
			for _, m := range drainReady(b) {
				var r windowResultDoc
				raw, _ := m.AsBytes()
				if err := json.Unmarshal(raw, &r); err != nil {
					t.Fatal(err)
				}
				fired = append(fired, r)
			}
			if len(fired) != 2 || fired[0].Start != 2000 || fired[0].N != 1 || fired[1].Start != 3000 || fired[1].N != 1 {
				t.Errorf("fired %+v, want windows 2000 and 3000 with 1 record each", fired)
			}
		})
	}
}

type windowResultDoc struct {
	Start int64 `json:"window_start_ms"`
	N     int   `json:"n"`
}

// drainReady returns the messages the buffer has ready, acknowledging them.
func drainReady(b *Buffer) service.MessageBatch {
	var out service.MessageBatch
	for {
		b.mu.Lock()
		n := len(b.mu.ready)
		b.mu.Unlock()
		if n == 0 {
			return out
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		batch, ack, err := b.ReadBatch(ctx)
		cancel()
		if err != nil {
			return out
		}
		_ = ack(context.Background(), nil)
		out = append(out, batch...)
	}
}

// The writers' watermark never runs ahead of the source's own, which holds
// until every partition the source reads delivered a record: after a
// restart, the first partition's records must not move the watermark past
// those of another still to come.
func TestWriterWatermarksCappedBySource(t *testing.T) {
	b := newTestBuffer(t, writersConf)
	defer b.Close(context.Background())
	m := func(writer string, ts, wm, own int64) *service.Message {
		msg := fromWriter(writer, 0, ts, wm)
		msg.MetaSetMut("kafka_watermark_ms", own)
		return msg
	}
	batch := service.MessageBatch{m("a", 10_500, 10_000, math.MinInt64), m("b", 10_600, 10_100, 3_000)}
	if err := b.WriteBatch(context.Background(), batch, func(context.Context, error) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if wm := watermarkOf(b); wm != 3_000 {
		t.Fatalf("watermark %d, want 3000: the source's own", wm)
	}
}
