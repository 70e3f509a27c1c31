// Package watermark is the event-time core of kafka_source: per-partition
// watermarks with bounded out-of-orderness, their combination over a
// source's partitions with idleness, late-record detection, and watermark
// alignment across the sources of a process. It is plain Go: no Kafka, no
// Benthos, no goroutines or timers of its own; the caller drives it and
// injects a Clock, so tests are deterministic.
//
// Event times and watermarks are int64 Unix milliseconds, as Kafka record
// timestamps and Flink watermarks are. NoWatermark (math.MinInt64, Flink's
// Long.MIN_VALUE) means "no watermark yet".
//
// # Per-partition watermark
//
// Each Partition runs Flink's BoundedOutOfOrdernessWatermarks: its watermark
// is the largest event time seen minus MaxOutOfOrderness minus 1ms, and never
// decreases. A watermark W promises that no record with event time <= W is
// still to come, so a record exactly MaxOutOfOrderness behind the largest
// event time is on time and one 1ms older is late.
//
// # Combined watermark and idleness
//
// A Tracker holds one source's partitions (over however many readers). Its
// combined watermark is the minimum over its non-idle partitions, and it
// never goes backwards:
//
//   - A partition with no records for IdleTimeout becomes idle on the next
//     Tick and stops holding the combined watermark back; if it held the
//     minimum, the combined watermark advances.
//   - A record on an idle partition makes it active again, and it holds the
//     combined watermark again from then on. If its watermark is behind the
//     combined watermark, the combined watermark stays where it is (it does
//     not go back) until the partition catches up; meanwhile that
//     partition's records at or below the combined watermark are late. This
//     is what Flink does.
//   - When every partition is idle, or the tracker has no partitions, the
//     combined watermark stays where it was. A newly assigned partition
//     starts active with no watermark: it stops the combined watermark from
//     advancing (never pulls it back) until its first record or IdleTimeout.
//   - A reader that owns no partitions contributes nothing, so it cannot hold
//     the combined watermark back; a tracker with no partitions is an idle
//     member of its alignment group. (In Flink a source subtask without
//     splits can hold the job's watermark back unless idleness is
//     configured; here it never does.)
//
// Partition.Observe runs on every record. It returns the combined watermark
// to attach to the record and whether the record is late, and costs a few
// atomic loads with no lock and no allocation; only a record that moves its
// partition past the combined watermark scans the tracker's partitions.
// With several readers feeding one tracker at once, the value returned may
// briefly lag the true minimum (it never exceeds it); Tick, which the caller
// runs every EmitInterval, recomputes it and re-evaluates idleness, and its
// result is what to emit when no records arrive.
//
// # Alignment
//
// Trackers that join the same named group of a Registry (DefaultRegistry for
// the process) align with each other. Every UpdateInterval the caller runs
// Aligner.Update, which compares each of its partitions' watermarks with the
// group's minimum (the lowest combined watermark over the group's non-idle
// trackers that have a watermark) plus MaxDrift, and returns the partitions
// to pause (further ahead than that) and to resume (paused and now within
// it). As in Flink, a tracker with no watermark yet does not count, so an
// empty partition does not stall the group. The caller does
// the fetching side with kgo's PauseFetchPartitions / ResumeFetchPartitions.
// A paused partition never becomes idle (it is silent because it is paused,
// not because it has no data; Flink fixed the same trap in FLIP-471); its
// idle timeout restarts when it is resumed. When the group has no minimum
// (every tracker idle or without a watermark), every paused partition is
// resumed.
//
// # Settings and the Flink options they map to
//
//	setting (YAML)                  Flink                                      default
//	MaxOutOfOrderness               WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, 0
//	  (max_out_of_orderness)        WatermarkStrategy.forBoundedOutOfOrderness
//	IdleTimeout (idle_timeout)      scan.watermark.idle-timeout                0 (off)
//	EmitInterval (emit_interval)    pipeline.auto-watermark-interval           200ms
//	Group (alignment.group)         scan.watermark.alignment.group             none
//	MaxDrift (alignment.max_drift)  scan.watermark.alignment.max-drift         0
//	UpdateInterval                  scan.watermark.alignment.update-interval   1s
//	  (alignment.update_interval)
//	StallWarning (stall_warning)    none                                       0 (off; kafka_source: 1m)
//
// # Use from a source
//
//   - At start: NewTracker(Config), and if alignment is configured
//     DefaultRegistry().Join(AlignmentConfig, tracker).
//   - On assignment: Tracker.Add per partition, handing the *Partition to
//     the goroutine that reads it; on revocation: Tracker.Remove.
//   - Per record, on the reader goroutine: wm, late := p.Observe(eventTime)
//     gives kafka_watermark_ms and kafka_late. When several readers feed
//     one output channel, observe where records are handed out instead
//     (kafka_source does, at delivery): a batch fetched later may be
//     delivered earlier, and a watermark observed at fetch time would run
//     ahead of the records still waiting, making them late downstream.
//   - On the owner goroutine, every EmitInterval: Tracker.Tick (emit the
//     result even when no records flow); every UpdateInterval:
//     Aligner.Update, then pause and resume fetching what it returns.
//   - At close: Aligner.Leave.
//
// # A watermark that stands still
//
// With idleness off, a partition without records holds the combined
// watermark where it is for good, and windows downstream never fire; Flink
// says nothing about it. Tracker.CheckStall, called after each Tick, reports
// how long the combined watermark has stood still and, once that is at least
// StallWarning, the partitions to blame: the non-idle partitions at the
// minimum, each silent for at least StallWarning, while another non-idle
// partition is ahead (see Stall). It says warn once per stall episode, which
// ends when the combined watermark advances. The decision is pure, and
// tested with an injected Clock.
//
// # Metrics
//
// Tracker.Stats gives the combined watermark and the number of partitions,
// idle partitions and paused partitions; Tracker.AppendPartitionStats gives
// each partition's watermark, idleness and pause state. The caller exports
// them (and derives watermark lag as now minus the combined watermark).
package watermark
