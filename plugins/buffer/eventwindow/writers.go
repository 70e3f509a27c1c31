package eventwindow

import (
	"math"
	"strconv"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/txnoffsets"
)

// This file carries watermarks across a repartition topic. Stage 1 of the
// repartition pattern (docs/event-time.md) writes each record to the
// partition of its window key with two headers: its writer (a name per
// stage-1 process) and that writer's watermark. A partition of the
// repartition topic interleaves the records of every writer, each writer
// at its own pace, so the largest event time seen there says little: a
// watermark derived from it (kafka_source's own, in stage 2) runs ahead of
// the slowest writer, and that writer's records arrive late. Instead, as
// Flink's and Kafka Streams' shuffles do, the watermark is the minimum over
// the partitions read, and over the writers seen in each, of the last
// watermark a writer wrote there: the records a writer wrote after that
// watermark are not late by its own measure, so they are not late here.
//
// A writer that stops writing to a partition (it stopped, or its keys no
// longer go there) would hold the watermark back for ever: its mark is
// dropped once no record of it arrived there for watermark_writer_idle of
// processing time. A writer that comes back later is seen anew. Choose the
// idle time longer than a stage-1 process takes to restart, and than a
// stage-1 consumer group's rebalance: a writer's records written after
// its mark was dropped may be late.

// partMarks are the writers' marks in one partition of the repartition
// topic, and when its first record came.
type partMarks struct {
	first   time.Time
	writers map[string]*writerMark
}

// writerMark is a writer's last watermark in a partition and when it came.
type writerMark struct {
	wm   int64
	seen time.Time
}

// writerWatermarkLocked records the watermark wm that msg carries for its
// writer and partition, and returns the combined watermark: the minimum
// over the partitions seen, and over the writers of each not idle for
// watermark_writer_idle, of their marks, and the source's own watermark. hold is true while a partition has
// seen fewer than watermark_writers writers and its first record is less
// than watermark_writer_idle old: a writer not seen yet may be behind, so
// the watermark must not move (after a start, the first records of a
// partition come from one writer).
func (b *Buffer) writerWatermarkLocked(msg *service.Message, wm int64) (low int64, hold bool) {
	writer, _ := msg.MetaGet(b.cfg.WatermarkWriterMeta)
	now := b.mu.lastWrite
	p := recordPart(msg)
	pm := b.mu.writers[p]
	if pm == nil {
		pm = &partMarks{first: now, writers: map[string]*writerMark{}}
		b.mu.writers[p] = pm
	}
	if m := pm.writers[writer]; m != nil {
		m.wm, m.seen = wm, now
	} else {
		pm.writers[writer] = &writerMark{wm: wm, seen: now}
	}
	idle := b.cfg.WatermarkWriterIdle
	low = math.MaxInt64
	for q, pm := range b.mu.writers {
		if len(pm.writers) < b.cfg.WatermarkWriters && now.Sub(pm.first) < idle {
			hold = true
		}
		for w, m := range pm.writers {
			if now.Sub(m.seen) >= idle {
				b.log.Debugf("event_window: writer %q sent no record to topic %s partition %d for %v: its watermark %d ms no longer holds the watermark back",
					w, q.topic, q.partition, idle, m.wm)
				delete(pm.writers, w)
				continue
			}
			low = min(low, m.wm)
		}
		if len(pm.writers) == 0 {
			delete(b.mu.writers, q)
		}
	}
	// A partition this buffer has not seen a record of yet does not count
	// above; the source's own watermark (kafka_watermark_ms) does: it
	// holds until every partition the source reads delivered a record (or
	// went idle). After a restart, one partition's records would otherwise
	// move the watermark past those of another still to come.
	if b.cfg.WatermarkMeta != DefaultWatermarkMetadata {
		if own, ok, err := metaInt(msg, DefaultWatermarkMetadata); err == nil && ok {
			low = min(low, own)
		}
	}
	return low, hold
}

// recordPart returns the partition msg was read from: its kafka_source
// origin, else its kafka_topic and kafka_partition metadata, else none.
func recordPart(msg *service.Message) part {
	if o, ok := txnoffsets.FromContext(msg.Context()); ok {
		return part{topic: o.Topic, partition: o.Partition}
	}
	topic, _ := msg.MetaGet("kafka_topic")
	p, _ := msg.MetaGet("kafka_partition")
	n, _ := strconv.ParseInt(p, 10, 32)
	return part{topic: topic, partition: int32(n)}
}
