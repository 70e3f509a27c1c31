package kafkasource

import (
	"strconv"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/watermark"
)

// This file is the per-partition metrics and their cardinality switch
// (field partition_metrics): one series per partition (labels topic and
// partition), or one per topic. At 10,000 partitions the per-partition
// series make /metrics megabytes long (see docs/benchmarks.md, "10,000
// partitions"); per topic, a gauge is the sum (or, for watermarks, the
// minimum) over the topic's partitions that this process reads, so that a
// query summing by topic gives the same answer in both modes.

// PartitionMetrics is the cardinality of the per-partition metrics (field
// partition_metrics).
type PartitionMetrics string

const (
	// PartitionMetricsPartition labels them by topic and partition.
	PartitionMetricsPartition PartitionMetrics = "partition"
	// PartitionMetricsTopic labels them by topic only: gauges are summed
	// over the topic's partitions (watermarks: their minimum), counters
	// counted per topic.
	PartitionMetricsTopic PartitionMetrics = "topic"
)

// manyPartitions is the number of partitions past which a session with
// per-partition metrics says at start-up that partition_metrics: topic
// exists.
const manyPartitions = 1000

// Metric names of the per-partition metrics.
const (
	metricLag          = "kafka_source_lag"
	metricOffset       = "kafka_source_offset"
	metricCommitted    = "kafka_source_committed_offset"
	metricUnacked      = "kafka_source_unacked_records"
	metricFetchErrors  = "kafka_source_fetch_errors"
	metricOffsetResets = "kafka_source_offset_resets"
	metricPartitionWM  = "kafka_source_partition_watermark_ms"
)

// partitionMetrics sets the metrics of single partitions. Every method but
// fetchError runs on the owner's goroutine; fetchError, from the readers,
// only counts.
type partitionMetrics interface {
	// position sets a partition's next offset to fetch and its lag.
	position(tp topicPartition, next, lag int64)
	// committed sets a partition's committed offset.
	committed(tp topicPartition, offset int64)
	// unacked sets a partition's unacknowledged records.
	unacked(tp topicPartition, n int64)
	// delivered counts n records of size bytes that reader fetched from
	// tp and handed to the pipeline.
	delivered(tp topicPartition, reader int, n, size int64)
	// fetchError and offsetReset count a failed fetch and an offset reset
	// of a partition.
	fetchError(tp topicPartition)
	offsetReset(tp topicPartition)
	// watermarks sets the partitions' watermarks.
	watermarks(parts []watermark.PartitionStats)
	// remove says that a partition is no longer read by this process (it
	// was revoked or released): per topic, its values leave the sums. Per
	// partition, its series keep their last values (Benthos metrics have
	// no way to drop a series).
	remove(tp topicPartition)
}

// newPartitionMetrics registers the per-partition metrics of mode.
func newPartitionMetrics(m *service.Metrics, mode PartitionMetrics) partitionMetrics {
	if mode == PartitionMetricsTopic {
		return &topicMetrics{
			lag:          m.NewGauge(metricLag, "topic"),
			offset:       m.NewGauge(metricOffset, "topic"),
			committedG:   m.NewGauge(metricCommitted, "topic"),
			unackedG:     m.NewGauge(metricUnacked, "topic"),
			fetchErrors:  m.NewCounter(metricFetchErrors, "topic"),
			offsetResets: m.NewCounter(metricOffsetResets, "topic"),
			watermark:    m.NewGauge(metricPartitionWM, "topic"),
			records:      m.NewCounter(metricPartitionRecords, labelTopic, labelReader),
			bytes:        m.NewCounter(metricPartitionBytes, labelTopic, labelReader),
			parts:        map[topicPartition]*partitionValues{},
			topics:       map[string]*partitionValues{},
		}
	}
	return &perPartitionMetrics{
		lag:          m.NewGauge(metricLag, "topic", "partition"),
		offset:       m.NewGauge(metricOffset, "topic", "partition"),
		committedG:   m.NewGauge(metricCommitted, "topic", "partition"),
		unackedG:     m.NewGauge(metricUnacked, "topic", "partition"),
		fetchErrors:  m.NewCounter(metricFetchErrors, "topic", "partition"),
		offsetResets: m.NewCounter(metricOffsetResets, "topic", "partition"),
		watermark:    m.NewGauge(metricPartitionWM, "topic", "partition"),
		records:      m.NewCounter(metricPartitionRecords, byPartitionRead...),
		bytes:        m.NewCounter(metricPartitionBytes, byPartitionRead...),
		wmLast:       map[topicPartition]int64{},
	}
}

// perPartitionMetrics is partition_metrics: partition.
type perPartitionMetrics struct {
	lag, offset, committedG, unackedG *service.MetricGauge
	fetchErrors, offsetResets         *service.MetricCounter
	watermark                         *service.MetricGauge
	records, bytes                    *service.MetricCounter
	// wmLast is the watermark last set per partition: the gauges are set
	// only when it changed, not for every partition every emit_interval.
	wmLast map[topicPartition]int64
}

func partitionLabel(p int32) string { return strconv.Itoa(int(p)) }

// readerLabel is the reader label: the reader's index, as
// kafka_source_reader_partitions has it.
func readerLabel(r int) string { return strconv.Itoa(r) }

func (m *perPartitionMetrics) delivered(tp topicPartition, reader int, n, size int64) {
	p, r := partitionLabel(tp.partition), readerLabel(reader)
	m.records.Incr(n, tp.topic, p, r)
	m.bytes.Incr(size, tp.topic, p, r)
}

func (m *perPartitionMetrics) position(tp topicPartition, next, lag int64) {
	p := partitionLabel(tp.partition)
	m.offset.Set(next, tp.topic, p)
	m.lag.Set(lag, tp.topic, p)
}

func (m *perPartitionMetrics) committed(tp topicPartition, offset int64) {
	m.committedG.Set(offset, tp.topic, partitionLabel(tp.partition))
}

func (m *perPartitionMetrics) unacked(tp topicPartition, n int64) {
	m.unackedG.Set(n, tp.topic, partitionLabel(tp.partition))
}

func (m *perPartitionMetrics) fetchError(tp topicPartition) {
	m.fetchErrors.Incr(1, tp.topic, partitionLabel(tp.partition))
}

func (m *perPartitionMetrics) offsetReset(tp topicPartition) {
	m.offsetResets.Incr(1, tp.topic, partitionLabel(tp.partition))
}

func (m *perPartitionMetrics) watermarks(parts []watermark.PartitionStats) {
	for _, p := range parts {
		tp := topicPartition{topic: p.Topic, partition: p.Partition}
		if last, ok := m.wmLast[tp]; ok && last == p.Watermark {
			continue
		}
		m.wmLast[tp] = p.Watermark
		m.watermark.Set(p.Watermark, p.Topic, partitionLabel(p.Partition))
	}
}

func (m *perPartitionMetrics) remove(tp topicPartition) { delete(m.wmLast, tp) }

// topicMetrics is partition_metrics: topic.
type topicMetrics struct {
	lag, offset, committedG, unackedG *service.MetricGauge
	fetchErrors, offsetResets         *service.MetricCounter
	watermark                         *service.MetricGauge
	records, bytes                    *service.MetricCounter
	// parts are the last values of each partition, topics their sums.
	parts  map[topicPartition]*partitionValues
	topics map[string]*partitionValues
	// wmLast is the watermark last set per topic, wmMin the minimum
	// being computed.
	wmLast, wmMin map[string]int64
}

// partitionValues are the gauge values of a partition, or their sums over
// a topic. A value not set yet counts as 0 in the sums; has says which
// were set.
type partitionValues struct {
	next, lag, committed, unacked int64
	has                           uint8
}

const (
	hasPosition uint8 = 1 << iota
	hasCommitted
	hasUnacked
)

// update applies f to tp's values and to its topic's sums by the same
// difference, and returns the topic's sums with what was set.
func (m *topicMetrics) update(tp topicPartition, f func(v *partitionValues)) *partitionValues {
	v := m.parts[tp]
	if v == nil {
		v = &partitionValues{}
		m.parts[tp] = v
	}
	sum := m.topics[tp.topic]
	if sum == nil {
		sum = &partitionValues{}
		m.topics[tp.topic] = sum
	}
	old := *v
	f(v)
	sum.next += v.next - old.next
	sum.lag += v.lag - old.lag
	sum.committed += v.committed - old.committed
	sum.unacked += v.unacked - old.unacked
	sum.has |= v.has
	return sum
}

func (m *topicMetrics) position(tp topicPartition, next, lag int64) {
	sum := m.update(tp, func(v *partitionValues) { v.next, v.lag, v.has = next, lag, v.has|hasPosition })
	m.offset.Set(sum.next, tp.topic)
	m.lag.Set(sum.lag, tp.topic)
}

func (m *topicMetrics) committed(tp topicPartition, offset int64) {
	sum := m.update(tp, func(v *partitionValues) { v.committed, v.has = offset, v.has|hasCommitted })
	m.committedG.Set(sum.committed, tp.topic)
}

func (m *topicMetrics) unacked(tp topicPartition, n int64) {
	sum := m.update(tp, func(v *partitionValues) { v.unacked, v.has = n, v.has|hasUnacked })
	m.unackedG.Set(sum.unacked, tp.topic)
}

func (m *topicMetrics) delivered(tp topicPartition, reader int, n, size int64) {
	r := readerLabel(reader)
	m.records.Incr(n, tp.topic, r)
	m.bytes.Incr(size, tp.topic, r)
}

func (m *topicMetrics) fetchError(tp topicPartition)  { m.fetchErrors.Incr(1, tp.topic) }
func (m *topicMetrics) offsetReset(tp topicPartition) { m.offsetResets.Incr(1, tp.topic) }

func (m *topicMetrics) watermarks(parts []watermark.PartitionStats) {
	if m.wmMin == nil {
		m.wmMin, m.wmLast = map[string]int64{}, map[string]int64{}
	}
	clear(m.wmMin)
	for _, p := range parts {
		if cur, ok := m.wmMin[p.Topic]; !ok || p.Watermark < cur {
			m.wmMin[p.Topic] = p.Watermark
		}
	}
	for t, wm := range m.wmMin {
		if last, ok := m.wmLast[t]; ok && last == wm {
			continue
		}
		m.wmLast[t] = wm
		m.watermark.Set(wm, t)
	}
}

// remove takes tp's values out of its topic's sums and sets the gauges
// that it had set.
func (m *topicMetrics) remove(tp topicPartition) {
	v := m.parts[tp]
	if v == nil {
		return
	}
	had := v.has
	sum := m.update(tp, func(v *partitionValues) { *v = partitionValues{} })
	delete(m.parts, tp)
	if had&hasPosition != 0 {
		m.offset.Set(sum.next, tp.topic)
		m.lag.Set(sum.lag, tp.topic)
	}
	if had&hasCommitted != 0 {
		m.committedG.Set(sum.committed, tp.topic)
	}
	if had&hasUnacked != 0 {
		m.unackedG.Set(sum.unacked, tp.topic)
	}
}
