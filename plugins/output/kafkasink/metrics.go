package kafkasink

import "github.com/redpanda-data/benthos/v4/public/service"

// Metric names. The record metrics carry a `topic` label; the transaction
// metrics (exactly_once only) carry none beyond Benthos's own.
const (
	metricRecordsSent      = "kafka_sink_records_sent"
	metricBytesSent        = "kafka_sink_bytes_sent"
	metricRecordsFailed    = "kafka_sink_records_failed"
	metricProduceLatency   = "kafka_sink_produce_latency_ns"
	metricTxnBegun         = "kafka_sink_txn_begun"
	metricTxnCommitted     = "kafka_sink_txn_committed"
	metricTxnAborted       = "kafka_sink_txn_aborted"
	metricTxnCommitLatency = "kafka_sink_txn_commit_latency_ns"
	metricTxnRecords       = "kafka_sink_txn_records"
	metricTxnFenced        = "kafka_sink_txn_fenced"
	metricLabelTopic       = "topic"
)

// metrics are the sink's metrics; see the spec's Metrics section.
type metrics struct {
	sent    *service.MetricCounter // records acknowledged (exactly_once: committed)
	bytes   *service.MetricCounter // key + value + header bytes of those
	failed  *service.MetricCounter
	latency *service.MetricTimer

	txnBegun         *service.MetricCounter
	txnCommitted     *service.MetricCounter
	txnAborted       *service.MetricCounter
	txnCommitLatency *service.MetricTimer
	txnRecords       *service.MetricGauge // records in the last committed transaction
	txnFenced        *service.MetricCounter
}

func newMetrics(m *service.Metrics) metrics {
	return metrics{
		sent:             m.NewCounter(metricRecordsSent, metricLabelTopic),
		bytes:            m.NewCounter(metricBytesSent, metricLabelTopic),
		failed:           m.NewCounter(metricRecordsFailed, metricLabelTopic),
		latency:          m.NewTimer(metricProduceLatency, metricLabelTopic),
		txnBegun:         m.NewCounter(metricTxnBegun),
		txnCommitted:     m.NewCounter(metricTxnCommitted),
		txnAborted:       m.NewCounter(metricTxnAborted),
		txnCommitLatency: m.NewTimer(metricTxnCommitLatency),
		txnRecords:       m.NewGauge(metricTxnRecords),
		txnFenced:        m.NewCounter(metricTxnFenced),
	}
}
