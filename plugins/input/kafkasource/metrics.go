package kafkasource

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/metricdoc"
	"github.com/connectd/connectd/internal/table"
)

// This file is the table of the input's metrics: name, kind, labels and the
// one-line help that /metrics shows (internal/metricdoc). The spec's Metrics
// section lists the same metrics (a test holds them to each other), and a
// test holds a running input's metrics to it. Labels are those of
// partition_metrics: partition; with topic, the metrics of partmetrics.go
// lose their partition label.

// Label keys.
const (
	labelTopic     = "topic"
	labelPartition = "partition"
	labelReader    = "reader"
	labelCause     = "cause"
)

var (
	byTopic         = []string{labelTopic}
	byPartition     = []string{labelTopic, labelPartition}
	byPartitionRead = []string{labelTopic, labelPartition, labelReader}
	byCommitFailure = []string{labelTopic, labelCause}
)

// metricDocs is every metric of the input.
var metricDocs = append([]metricdoc.Metric{
	{Name: "kafka_source_records_received", Kind: metricdoc.Counter, Labels: byTopic,
		Help: "Records fetched and handed to the pipeline, per topic."},
	{Name: "kafka_source_bytes_received", Kind: metricdoc.Counter, Labels: byTopic,
		Help: "Key, value and header bytes of the records fetched and handed to the pipeline, per topic."},
	{Name: "kafka_source_records_redelivered", Kind: metricdoc.Counter, Labels: byTopic,
		Help: "Records handed to the pipeline again after a nack."},
	{Name: metricPartitionRecords, Kind: metricdoc.Counter, Labels: byPartitionRead,
		Help: "Records handed to the pipeline from the partition, by the reader that fetched them."},
	{Name: metricPartitionBytes, Kind: metricdoc.Counter, Labels: byPartitionRead,
		Help: "Key, value and header bytes of the records handed to the pipeline from the partition, by the reader that fetched them."},
	{Name: metricReaderPartitions, Kind: metricdoc.Gauge, Labels: []string{labelReader},
		Help: "Partitions assigned to the reader."},
	{Name: metricLag, Kind: metricdoc.Gauge, Labels: byPartition,
		Help: "Records behind the log end: the partition's high watermark minus the next offset to fetch."},
	{Name: metricOffset, Kind: metricdoc.Gauge, Labels: byPartition,
		Help: "The next offset to fetch from the partition."},
	{Name: metricCommitted, Kind: metricdoc.Gauge, Labels: byPartition,
		Help: "The last offset of the partition committed to the consumer group."},
	{Name: "kafka_source_commits", Kind: metricdoc.Counter, Labels: byTopic,
		Help: "Partition offsets committed to the consumer group (by the input or in a kafka_sink transaction)."},
	{Name: metricCommitFailures, Kind: metricdoc.Counter, Labels: byCommitFailure,
		Help: "Offset commits refused, per topic and cause (rebalance, fenced, permanent, broker, shutdown)."},
	{Name: "kafka_source_commit_latency_ns", Kind: metricdoc.Timer,
		Help: "Time an offset commit of the input took, from taking the positions to the broker's last answer."},
	{Name: metricUnacked, Kind: metricdoc.Gauge, Labels: byPartition,
		Help: "Records of the partition fetched and not yet acknowledged by the output."},
	{Name: "kafka_source_unacked_bytes", Kind: metricdoc.Gauge,
		Help: "Bytes fetched and not yet acknowledged, weighed against max_unacknowledged_bytes."},
	{Name: metricFetchErrors, Kind: metricdoc.Counter, Labels: byPartition,
		Help: "Fetches of the partition that failed."},
	{Name: metricOffsetResets, Kind: metricdoc.Counter, Labels: byPartition,
		Help: "Fetch positions that fell out of the log and were reset per committed_fallback."},
	{Name: metricRecordsLeft, Kind: metricdoc.Gauge, Labels: byPartition,
		Help: "With stop_at: offsets from the fetch position to the partition's stop offset."},
	{Name: "kafka_source_seconds_left", Kind: metricdoc.Gauge,
		Help: "With stop_at: estimated seconds until every partition reaches its stop offset; -1 while unknown."},
	{Name: "kafka_source_watermark_ms", Kind: metricdoc.Gauge,
		Help: "The combined watermark, Unix milliseconds; math.MinInt64 while there is none."},
	{Name: "kafka_source_watermark_lag_ms", Kind: metricdoc.Gauge,
		Help: "Milliseconds from the combined watermark to now."},
	{Name: metricPartitionWM, Kind: metricdoc.Gauge, Labels: byPartition,
		Help: "The partition's own watermark, Unix milliseconds; math.MinInt64 before its first record."},
	{Name: "kafka_source_watermark_held_partitions", Kind: metricdoc.Gauge,
		Help: "Partitions holding the watermark back after stall_warning of silence."},
	{Name: "kafka_source_event_time_lag_ms", Kind: metricdoc.Gauge,
		Help: "Milliseconds from the event time of the last record emitted to now."},
	{Name: "kafka_source_idle_partitions", Kind: metricdoc.Gauge,
		Help: "Partitions idle per idle_timeout."},
	{Name: "kafka_source_alignment_paused_partitions", Kind: metricdoc.Gauge,
		Help: "Partitions paused by watermark alignment."},
	{Name: "kafka_source_late_records", Kind: metricdoc.Counter, Labels: byTopic,
		Help: "Records emitted with kafka_late: behind the watermark."},
}, table.BadMetrics("kafka_source")...)

func init() { metricdoc.Register(metricDocs...) }

// Metric names that the input's code and its table share.
const (
	metricPartitionRecords = "kafka_source_partition_records"
	metricPartitionBytes   = "kafka_source_partition_bytes"
	metricReaderPartitions = "kafka_source_reader_partitions"
	metricCommitFailures   = "kafka_source_commit_failures"
	metricRecordsLeft      = "kafka_source_records_left"
)

// Causes of a refused offset commit: the cause label of
// kafka_source_commit_failures.
const (
	// commitRebalance: the group's membership moved on (a rebalance under
	// way, a new generation or member epoch; with assignment: enumerator,
	// other live members in the group). Group mode commits again after the
	// rebalance.
	commitRebalance = "rebalance"
	// commitFenced: another member with the same group_instance_id took
	// over (static membership).
	commitFenced = "fenced"
	// commitPermanent: an error that no retry clears (kafkaconn.Permanent:
	// a missing ACL on the group, an invalid group id); the run ends.
	commitPermanent = "permanent"
	// commitShutdown: the input closed or reconnected while the commit was
	// in flight.
	commitShutdown = "shutdown"
	// commitBroker: any other refusal or failed request (the coordinator
	// moving or unavailable, a timeout, a connection lost); the next commit
	// tries again.
	commitBroker = "broker"
)

// commitFailureCause is the cause label of a refused offset commit's error.
func commitFailureCause(err error) string {
	switch {
	case errors.Is(err, kerr.FencedInstanceID):
		return commitFenced
	case errors.Is(err, kerr.RebalanceInProgress), errors.Is(err, kerr.IllegalGeneration),
		errors.Is(err, kerr.UnknownMemberID), errors.Is(err, kerr.StaleMemberEpoch):
		return commitRebalance
	case kafkaconn.Classify(err) == kafkaconn.Permanent:
		return commitPermanent
	case errors.Is(err, context.Canceled):
		return commitShutdown
	}
	return commitBroker
}
