package kafkasink

import (
	"errors"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/connectd/connectd/internal/metricdoc"
)

// Metric names. The record metrics carry a `topic` label; the transaction
// metrics (exactly_once only) carry none beyond Benthos's own, but for the
// cause of an abort.
const (
	metricRecordsSent      = "kafka_sink_records_sent"
	metricBytesSent        = "kafka_sink_bytes_sent"
	metricRecordsFailed    = "kafka_sink_records_failed"
	metricProduceLatency   = "kafka_sink_produce_latency_ns"
	metricTxnBegun         = "kafka_sink_txn_begun"
	metricTxnCommitted     = "kafka_sink_txn_committed"
	metricTxnAborted       = "kafka_sink_txn_aborted"
	metricTxnCommitLatency = "kafka_sink_txn_commit_latency_ns"
	metricTxnDuration      = "kafka_sink_txn_duration_ns"
	metricTxnInterval      = "kafka_sink_txn_interval_ns"
	metricTxnRecords       = "kafka_sink_txn_records"
	metricTxnFenced        = "kafka_sink_txn_fenced"
	metricLabelTopic       = "topic"
	metricLabelCause       = "cause"
)

// metricDocs is the table of the sink's metrics (internal/metricdoc): the
// help texts of /metrics. The spec's Metrics section lists the same metrics
// (a test holds them to each other).
var metricDocs = []metricdoc.Metric{
	{Name: metricRecordsSent, Kind: metricdoc.Counter, Labels: []string{metricLabelTopic},
		Help: "Records Kafka acknowledged (with exactly_once: committed), per topic."},
	{Name: metricBytesSent, Kind: metricdoc.Counter, Labels: []string{metricLabelTopic},
		Help: "Key, value and header bytes of the records sent, before compression, per topic."},
	{Name: metricRecordsFailed, Kind: metricdoc.Counter, Labels: []string{metricLabelTopic},
		Help: "Failed attempts to write a record, per topic (empty when the topic could not be computed)."},
	{Name: metricProduceLatency, Kind: metricdoc.Timer, Labels: []string{metricLabelTopic},
		Help: "Time from handing a batch's records of a topic to the client to Kafka's acknowledgement of the last of them."},
	{Name: metricTxnBegun, Kind: metricdoc.Counter,
		Help: "Transactions begun."},
	{Name: metricTxnCommitted, Kind: metricdoc.Counter,
		Help: "Transactions committed."},
	{Name: metricTxnAborted, Kind: metricdoc.Counter, Labels: []string{metricLabelCause},
		Help: "Transactions aborted, by cause (failure, offsets, rewind, shutdown, fenced, timeout)."},
	{Name: metricTxnCommitLatency, Kind: metricdoc.Timer,
		Help: "Time the commit of a transaction (EndTxn) took."},
	{Name: metricTxnDuration, Kind: metricdoc.Timer,
		Help: "Time from a transaction's begin (its first record) to the end of its commit or abort."},
	{Name: metricTxnInterval, Kind: metricdoc.Timer,
		Help: "Time between the ends of two successive committed transactions (Flink's checkpoint interval, observed)."},
	{Name: metricTxnRecords, Kind: metricdoc.Gauge,
		Help: "Records in the last committed transaction."},
	{Name: metricTxnFenced, Kind: metricdoc.Counter,
		Help: "Times the transactional producer was fenced and replaced."},
}

func init() { metricdoc.Register(metricDocs...) }

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
	txnDuration      *service.MetricTimer
	txnInterval      *service.MetricTimer
	txnRecords       *service.MetricGauge // records in the last committed transaction
	txnFenced        *service.MetricCounter

	// lastCommit is when the last committed transaction's commit ended:
	// rounds commit on a goroutine of their own, one at a time, and
	// one-batch transactions under txnMu, so it is locked.
	lastCommit *commitClock
}

type commitClock struct {
	mu struct {
		sync.Mutex
		at time.Time
	}
}

func newMetrics(m *service.Metrics) metrics {
	return metrics{
		sent:             m.NewCounter(metricRecordsSent, metricLabelTopic),
		bytes:            m.NewCounter(metricBytesSent, metricLabelTopic),
		failed:           m.NewCounter(metricRecordsFailed, metricLabelTopic),
		latency:          m.NewTimer(metricProduceLatency, metricLabelTopic),
		txnBegun:         m.NewCounter(metricTxnBegun),
		txnCommitted:     m.NewCounter(metricTxnCommitted),
		txnAborted:       m.NewCounter(metricTxnAborted, metricLabelCause),
		txnCommitLatency: m.NewTimer(metricTxnCommitLatency),
		txnDuration:      m.NewTimer(metricTxnDuration),
		txnInterval:      m.NewTimer(metricTxnInterval),
		txnRecords:       m.NewGauge(metricTxnRecords),
		txnFenced:        m.NewCounter(metricTxnFenced),
		lastCommit:       &commitClock{},
	}
}

// txnCommittedAt records a committed transaction of records: begun when it
// began, its EndTxn sent at commitStart and answered now.
func (m metrics) txnCommittedAt(begun, commitStart time.Time, records int64) {
	now := time.Now()
	m.txnCommitted.Incr(1)
	m.txnCommitLatency.Timing(now.Sub(commitStart).Nanoseconds())
	m.txnDuration.Timing(now.Sub(begun).Nanoseconds())
	m.txnRecords.Set(records)
	m.lastCommit.mu.Lock()
	last := m.lastCommit.mu.at
	m.lastCommit.mu.at = now
	m.lastCommit.mu.Unlock()
	if !last.IsZero() {
		m.txnInterval.Timing(now.Sub(last).Nanoseconds())
	}
}

// txnAbortedAt records a transaction that began at begun and ended now
// without a commit, for cause.
func (m metrics) txnAbortedAt(cause abortCause, begun time.Time) {
	m.txnAborted.Incr(1, string(cause))
	m.txnDuration.Timing(time.Since(begun).Nanoseconds())
}

// abortCause is why a transaction was aborted: the cause label of
// kafka_sink_txn_aborted. Every transaction begun ends committed or
// aborted with exactly one cause.
type abortCause string

const (
	// abortFailure: a record was not written (refused, or not acknowledged
	// within timeout) or the commit (EndTxn) failed.
	abortFailure abortCause = "failure"
	// abortOffsets: the source offsets could not join the transaction (a
	// rebalance moved the partitions, the group coordinator refused them).
	abortOffsets abortCause = "offsets"
	// abortRewind: an earlier transaction failed, and this one, open
	// meanwhile, is aborted with it; its sources read again from their
	// committed offsets.
	abortRewind abortCause = "rewind"
	// abortShutdown: the run is stopping on an error (internal/halt), so
	// the transaction is aborted instead of committed.
	abortShutdown abortCause = "shutdown"
	// abortFenced: the producer was fenced (another writer took the
	// transactional id).
	abortFenced abortCause = "fenced"
	// abortTimeout: the transaction was open longer than
	// transaction_timeout when the broker refused it as fenced or in an
	// invalid state: the broker aborted it on its own.
	abortTimeout abortCause = "timeout"
)

// errEarlierFailed is the cause of a transaction aborted because an earlier
// one failed (abortRewind).
var errEarlierFailed = errors.New("an earlier transaction failed")

// abortCauseOf classifies the error a transaction is aborted after; open is
// how long the transaction was open, timeout the transaction timeout.
func abortCauseOf(err error, open, timeout time.Duration) abortCause {
	switch {
	case errors.Is(err, ErrRunStopped):
		return abortShutdown
	case errors.Is(err, errEarlierFailed):
		return abortRewind
	case open >= timeout && brokerAborted(err):
		return abortTimeout
	case isFenced(err):
		return abortFenced
	case errors.Is(err, ErrOffsetsNotCommitted):
		return abortOffsets
	}
	return abortFailure
}

// brokerAborted reports whether err is what a producer meets once the
// broker aborted its transaction (at the transaction timeout, bumping the
// producer's epoch).
func brokerAborted(err error) bool {
	return isFenced(err) || errors.Is(err, kerr.InvalidTxnState) || errors.Is(err, kerr.TransactionAbortable) ||
		errors.Is(err, kerr.InvalidProducerIDMapping)
}
