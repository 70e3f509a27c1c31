// Package eventwindow is the `event_window` buffer: Flink's event-time
// tumbling, sliding and session windows for YAML pipelines, fired by the
// watermark that kafka_source puts on every message, with no data loss: an
// input batch is acknowledged only once every window it went into has fired
// and that window's result has been acknowledged by the output.
package eventwindow

import (
	"errors"
	"fmt"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/speclint"
)

const component = "event_window"

// Field names.
const (
	FieldType              = "type"
	FieldSize              = "size"
	FieldSlide             = "slide"
	FieldGap               = "gap"
	FieldAllowedLateness   = "allowed_lateness"
	FieldKey               = "key"
	FieldTimestampMapping  = "timestamp_mapping"
	FieldEventTimeMetadata = "event_time_metadata"
	FieldWatermarkMetadata = "watermark_metadata"
	FieldAggregates        = "aggregates"
	FieldAggregate         = "aggregate"
	FieldLate              = "late"
	FieldMaxOpenWindows    = "max_open_windows"
	FieldMaxRows           = "max_rows"
	FieldFlushAfterIdle    = "flush_after_idle"

	FieldWatermarkWriterMetadata = "watermark_writer_metadata"
	FieldWatermarkWriterIdle     = "watermark_writer_idle"
	FieldWatermarkWriters        = "watermark_writers"
)

// Defaults, declared once: the spec uses them.
const (
	DefaultType                = "tumbling"
	DefaultLate                = "drop"
	DefaultDuration            = "0s" // allowed_lateness and flush_after_idle: none
	DefaultEventTimeMetadata   = "kafka_event_time_ms"
	DefaultWatermarkMetadata   = "kafka_watermark_ms"
	DefaultMaxOpenWindows      = 100_000
	DefaultMaxRows             = 1_000_000
	DefaultWatermarkWriterIdle = "1m"
)

// Spec returns the config spec of the event_window buffer.
func Spec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Windowing").
		Summary("Event-time tumbling, sliding and session windows fired by the watermark (Flink's `window(...)` with `EventTimeTrigger`), acknowledging the input only once the window results are delivered.").
		Description(`
Each record goes into the windows of its key that hold its event time; a window `+"`[start, end)`"+` fires when the
watermark reaches `+"`end - 1 + allowed_lateness`"+`, and produces one result message. Event time and watermark come
from metadata that `+"`kafka_source`"+` sets on every message (`+"`kafka_event_time_ms`"+`, `+"`kafka_watermark_ms`"+`, both
int64 milliseconds); the watermark only moves forward.

### End of a bounded input

A watermark of `+"`9223372036854775807`"+` (math.MaxInt64, Flink's `+"`Long.MAX_VALUE`"+` that a bounded source emits when it
ends) fires every open window: a bounded backfill whose last record carries it gets every result. Benthos itself
signals the end of input to a buffer only once the input's pending acknowledgements have resolved, and this buffer
holds them until the windows fire: without that final watermark, the windows still open at the end of a bounded input
would wait forever (the buffer does fire them if Benthos does signal the end, for inputs that do not wait). For other
bounded inputs (stdin, files, generate) set `+"`flush_after_idle`"+`: once no record has arrived for that long, the
watermark advances to fire every open window.

### Why a buffer, and what is acknowledged when

A processor cannot hold acknowledgements; a buffer can. An input batch is acknowledged only when every window that
one of its records went into has fired **and** that window's result message has been acknowledged by the output. A
crash with open windows therefore loses nothing: the input replays the records (kafka_source commits offsets only up
to acknowledged records) and the windows are recomputed.

### Sizing kafka_source's checkpoint_limit

A window's input records stay unacknowledged until the window fires, and `+"`kafka_source`"+` pauses a partition
once `+"`checkpoint_limit`"+` (default 8192) of its records are unacknowledged. A paused partition holds the watermark back,
so set `+"`checkpoint_limit`"+` above the records one partition delivers within a window's span (size + allowed lateness +
max_out_of_orderness): 1000 records/s per partition in one-minute windows needs more than 65,000. The source keeps
each unacknowledged record for redelivery, so budget memory for that many records per partition. A partition paused for
30s is logged with this advice. Likewise `+"`max_unacknowledged_bytes`"+` (default 16 MiB over all partitions, each record
counting its payload plus 768 bytes) must exceed what the windows of that span hold: 65,000 records of 200 bytes weigh
about 60 MiB.

### Memory

Besides the input records that kafka_source keeps until the windows fire (above), the buffer holds per open window and
key, measured by `+"`BenchmarkOpenWindowMemory`"+` (10,000 keys, live heap after a collection): about 320 bytes with
`+"`aggregates: {n: count}`"+`, 560 bytes with four aggregates (count, sum, min, max), and about 14 bytes more for each
further record (its batch's acknowledgement). With `+"`aggregate`"+` each record is also kept as a parsed row until
the window fires: about 630 bytes for a window of one small JSON record (`+"`{\"amount\":42}`"+`), and 420 bytes
for each further one; larger records cost their parsed size. 10,000 keys in one-minute windows with a count
therefore hold about 3 MiB in the buffer.

### Exactly-once results

From `+"`kafka_source`"+` to an `+"`exactly_once`"+` `+"`kafka_sink`"+` on the same cluster, window results are
exactly-once across crashes. Results go out in (fire time, key, start) order, one batch at a time, and the
sink's transaction commits with them every source partition's held-back offset and the last window in the output (the
cutoff) as offset-commit metadata. After a restart the source restores it, and this buffer drops replayed records of
windows at or before the cutoff (`+"`event_window_replays_skipped`"+`) instead of emitting those windows again; the
other windows are recomputed from the replay. Sessions are known only when they fire: one rebuilt from replayed records
that fires at or before the cutoff is dropped (`+"`event_window_replayed_sessions_dropped`"+`). Errored records passed on
stay at-least-once across a crash (each transaction is still atomic). Leave the sink's `+"`batching`"+` unset or give it a `+"`period`"+`.
docs/exactly-once.md has the details and limits.

A result (or errored record) the output rejects (nack) is handed out again after 250ms, unchanged, until it is
delivered; its inputs stay unacknowledged meanwhile. Nothing is dropped or recomputed while the process runs. The
results that one watermark step fires go out as one batch (up to 1024), and a nack covers the whole batch: an output
that delivers a batch message by message and fails part way gets the delivered ones again (at-least-once); kafka_sink
in `+"`exactly_once`"+` mode commits a batch in one transaction, all or nothing, so it sees no duplicates. When the buffer closes with
windows open, their input batches are nacked so that an input able to replay does.

On SIGTERM or SIGINT (or when the run stops on an error) the open windows are dropped at once and their input batches
nacked, instead of holding the shutdown until `+"`shutdown_timeout`"+` (the input waits for every record in flight): the source
commits none of those records, and the next run reads them again and computes their windows. Fired results are still
delivered; writes after that are nacked. The buffer logs at info level what it dropped and what it still waits for.

### Firing rule (Flink)

Flink's `+"`EventTimeTrigger`"+` fires a window when `+"`window.maxTimestamp() = end - 1 <= watermark`"+`, and with
`+"`allowedLateness`"+` keeps it until `+"`end - 1 + allowedLateness <= watermark`"+`, firing again for every late record.
This buffer emits exactly one, final result per window, at that later point: with `+"`allowed_lateness: 0`"+` (the
default) that is Flink's firing instant; with a lateness, results come later but never need retracting, which
suits exactly-once sinks. A record is late when every window it belongs to has fired (Flink's `+"`isWindowLate`"+`),
and then is dropped or flagged as `+"`late`"+` says.

A record is assigned against the watermark from before it; the watermark it carries applies after it, as in Flink
where a watermark follows the record that produced it.

### Results

Without `+"`aggregate`"+`, the result is the JSON object
`+"`{\"key\": ..., \"window_start_ms\": ..., \"window_end_ms\": ..., <one field per aggregates entry>}`"+`.
With `+"`aggregate`"+`, that object plus `+"`rows`"+` (the records' JSON contents, in arrival order) is the input of the
mapping, and what it returns is the result; `+"`root = deleted()`"+` emits nothing for the window (SQL HAVING).
Built-in `+"`aggregates`"+` are incremental: a window keeps one accumulator each, not its rows, so prefer them; the
rows are kept only when `+"`aggregate`"+` is set. Tumbling and sliding windows are aligned to the Unix epoch (Flink,
offset 0).

### Metadata

Each result carries `+"`window_key`"+`, `+"`window_start_ms`"+`, `+"`window_end_ms`"+` and `+"`kafka_event_time_ms`"+`
(`+"`window_end_ms - 1`"+`, the timestamp Flink gives window results; use
`+"`timestamp: ${! @kafka_event_time_ms }`"+` on kafka_sink to stamp it on the record).

### Errored records

A record without a usable event time, whose key interpolation fails, whose content is not JSON while needed, or
whose value is not a number for sum, min or max, is not dropped: it passes through flagged with an error, for
`+"`catch`"+`, `+"`switch`"+` on `+"`errored()`"+` or `+"`reject_errored`"+` (metric `+"`event_window_bad_records`"+`).
Its acknowledgement follows its own delivery. So does a late record with `+"`late: error`"+`.

### Memory

`+"`max_open_windows`"+` bounds the windows held (open, or fired and awaiting their ack; about 200 bytes plus 64 per
aggregate each); `+"`max_rows`"+` bounds the rows kept for `+"`aggregate`"+`. When a limit is reached and fired results are
awaiting their ack, the input waits (back-pressure). The limits are checked before each input batch, so one batch may exceed them by the
windows and rows it adds. When open windows alone reach a limit, the watermark is not firing
them: the input batch is rejected (nacked) with an error naming the limit, and the input retries it.

### Windows across processes

Several processes reading one topic (kafka_source `+"`assignment: group`"+`, or a `+"`shard`"+`) each window only the
records of their partitions. A key whose records sit in several partitions then gets a partial result from each
process. Window on the Kafka key (`+"`key: ${! @kafka_key }`"+`), or repartition first: one pipeline writes the records to
a topic keyed by the window key, a second windows that topic (docs/event-time.md, "Windows across processes"). In such
a process the buffer checks each window: the first time one holds records of two partitions it logs a warning naming
the key and the partitions, and `+"`event_window_keys_from_several_partitions`"+` counts such keys (remembering at most
10,000 of them; one partition per open window). A process sees only its own partitions: one that reads a single
partition cannot tell. `+"`connectd lint`"+` warns when the key is not `+"`${! @kafka_key }`"+` behind such a source.
Behind a repartition topic, `+"`watermark_writer_metadata`"+` takes the watermark from the stage-1 writers' watermarks that the
records carry (the minimum over the writers), so that it does not run ahead of the slowest writer.

### Metrics

Each metric's Prometheus HELP line says what it counts and its unit.

- `+"`event_window_open`"+` (gauge): windows open, with records assigned and not fired yet.
- `+"`event_window_watermark_ms`"+` (gauge): the buffer's watermark, Unix ms.
- `+"`event_window_fired`"+` (counter): windows fired, one result each.
- `+"`event_window_late_dropped`"+` / `+"`event_window_late_errored`"+` (counters): late records (every window they belong to had
  fired), dropped or passed on with an error, per `+"`late`"+`.
- `+"`event_window_bad_records`"+` (counter): records passed on with an error because no event time, key or aggregate value
  could be read from them.
- `+"`event_window_result_nacked`"+` (counter): results the output did not deliver; each is handed out again.
- `+"`event_window_replays_skipped`"+` / `+"`event_window_replayed_sessions_dropped`"+` (counters): with exactly-once results,
  records read again after a restart whose windows are in the output already, and sessions rebuilt from them (see
  above).
- `+"`event_window_keys_from_several_partitions`"+` (counter): window keys whose records of one window came from more than one
  partition while other processes read some of the partitions (see Windows across processes).
`).
		Fields(
			service.NewStringEnumField(FieldType, "tumbling", "sliding", "session").
				Description("The window assigner. `tumbling`: windows of `size`, back to back (Flink `TumblingEventTimeWindows`, SQL `TUMBLE`). "+
					"`sliding`: windows of `size` starting every `slide`, a record is in `size/slide` of them (Flink `SlidingEventTimeWindows`, SQL `HOP`). "+
					"`session`: per key, a window that lasts until `gap` passes without a record; a record that bridges two sessions merges them (Flink `EventTimeSessionWindows`, SQL `SESSION`). "+
					"Default: `tumbling`.").
				Default(DefaultType),
			service.NewStringField(FieldSize).
				Description("Window length, a Go duration in whole milliseconds (`1m`, `500ms`). Required for tumbling and sliding. "+
					"Flink: `TumblingEventTimeWindows.of(size)`, `SlidingEventTimeWindows.of(size, slide)`.").
				Example("1m").Optional(),
			service.NewStringField(FieldSlide).
				Description("Sliding windows only: how often a window starts, a Go duration, at most `size` (`10s`). Flink: the `slide` of `SlidingEventTimeWindows.of(size, slide)`.").
				Optional(),
			service.NewStringField(FieldGap).
				Description("Session windows only: the inactivity gap that closes a session, a Go duration (`30m`). Flink: `EventTimeSessionWindows.withGap(gap)`.").
				Optional(),
			service.NewStringField(FieldAllowedLateness).
				Description("How long after the watermark passes a window's end the window stays open for late records, a Go duration. "+
					"Default: `0s`. Flink: `WindowedStream.allowedLateness(...)` (see the firing rule above: one final result here).").
				Default(DefaultDuration),
			service.NewInterpolatedStringField(FieldKey).
				Description("The grouping key of a record, an interpolation (`${! json(\"user\") }`, `${! @kafka_key }`). "+
					"Default: empty, one global key (Flink `windowAll`). Flink: `keyBy(...)`; SQL `GROUP BY`.").
				Example(`${! json("user_id") }`).Example(`${! @kafka_key }`).
				Default(""),
			service.NewBloblangField(FieldTimestampMapping).
				Description("A Bloblang mapping giving a record's event time, as a timestamp or an integer of Unix milliseconds. "+
					"Default: none, the event time is the `event_time_metadata` metadata. "+
					"Flink: the `TimestampAssigner` of a `WatermarkStrategy`; SQL: the rowtime column of `WATERMARK FOR`.").
				Example(`root = this.ordered_at.ts_parse("2006-01-02T15:04:05Z07:00")`).Example(`root = this.ts_ms`).
				Optional(),
			service.NewStringField(FieldEventTimeMetadata).
				Description("The metadata key holding a record's event time, int64 Unix milliseconds, when `timestamp_mapping` is not set. "+
					"Default: `kafka_event_time_ms` (set by kafka_source).").
				Default(DefaultEventTimeMetadata).Advanced(),
			service.NewStringField(FieldWatermarkMetadata).
				Description("The metadata key holding the watermark, int64 Unix milliseconds, read on every record; a record without it "+
					"leaves the watermark where it is (windows then fire at the end of input). Default: `kafka_watermark_ms` (set by kafka_source, "+
					"the minimum over its partitions). Flink: the watermark that the source emits.").
				Default(DefaultWatermarkMetadata).Advanced(),
			service.NewStringField(FieldWatermarkWriterMetadata).
				Description("Behind a repartition topic (docs/event-time.md, \"Windows across processes\"): the metadata key naming the writer "+
					"(a stage-1 process) whose watermark a record carries in `watermark_metadata`. The watermark is then the minimum over the "+
					"partitions read and the writers seen in each of the last watermark each wrote there, instead of the largest one seen, so "+
					"that it does not run ahead of the slowest writer, and never ahead of the source's own `kafka_watermark_ms` (which holds until "+
					"every partition the source reads delivered a record: after a restart, one partition's records must not move it past another's). Default: empty, off. Flink: the watermarks a keyBy shuffle carries "+
					"to each downstream channel, combined as their minimum.").
				Example("repartition_writer").
				Default("").Advanced(),
			service.NewStringField(FieldWatermarkWriterIdle).
				Description("With `watermark_writer_metadata`: a writer from which no record came in a partition for this long (processing "+
					"time, a Go duration) no longer holds the watermark back there. Longer than a stage-1 process takes to restart "+
					"and its consumer group to rebalance: records a writer writes after its mark was dropped may be late. "+
					"Default: `1m`. Flink: `WatermarkStrategy.withIdleness` on the shuffled stream.").
				Default(DefaultWatermarkWriterIdle).Advanced(),
			service.NewIntField(FieldWatermarkWriters).
				Description("With `watermark_writer_metadata`: how many writers (stage-1 processes) write the repartition topic. A partition "+
					"holds the watermark until that many writers were seen in it, or until `watermark_writer_idle` after its first record: "+
					"after a start the first records of a partition come from one writer, and another may be behind it. "+
					"Default: 1 (no hold). Flink: the number of upstream channels of a shuffle, known to Flink, not to a Kafka reader.").
				Default(1).Advanced(),
			service.NewStringMapField(FieldAggregates).
				Description("Built-in aggregates, each `result field: function`: `count` (records; SQL COUNT(*)), `count(path)` (non-null values), "+
					"`sum(path)`, `min(path)`, `max(path)` (numbers; nulls skipped; null over no value), `first(path)`, `last(path)` "+
					"(the value of the record with the smallest / largest event time, ties by arrival). "+
					"`path` is a dot path into the record's JSON (`amount`, `order.total`). Sum is an integer while every value is. "+
					"They are computed incrementally (Flink `AggregateFunction`): no rows are kept. Default: none. "+
					"Set `aggregates`, `aggregate` or both.").
				Example(map[string]any{"orders": "count", "revenue": "sum(amount)", "largest": "max(amount)", "last_status": "last(status)"}).
				Optional(),
			service.NewBloblangField(FieldAggregate).
				Description("A Bloblang mapping run once per fired window over `{\"key\", \"window_start_ms\", \"window_end_ms\", \"rows\": [...], <aggregates>}`; "+
					"its result is the window's result message, `root = deleted()` emits none. Keeps every row in memory (see `max_rows`). "+
					"Reductions: `this.rows.map_each(r -> r.amount).sum()`, `this.rows.length()`, `this.rows.map_each(r -> r.amount).sort().index(-1)`. "+
					"Default: none. Flink: a `ProcessWindowFunction`.").
				Example(`root.user = this.key
root.from = (this.window_start_ms / 1000).ts_format("2006-01-02T15:04:05Z", "UTC")
root.amounts = this.rows.map_each(r -> r.amount)
root = if this.rows.length() < 3 { deleted() }`).
				Optional(),
			service.NewStringEnumField(FieldLate, "drop", "error").
				Description("What happens to a record whose windows have all fired: `drop` acknowledges it and counts `event_window_late_dropped` "+
					"(Flink's default); `error` passes it on flagged with an error, for `catch` or `switch` (Flink `sideOutputLateData`). Default: `drop`.").
				Default(DefaultLate),
			service.NewStringField(FieldFlushAfterIdle).
				Description("When no record has arrived for this long (processing time, a Go duration), advance the watermark just far enough "+
					"to fire every open window; later records for those windows are then late. For bounded inputs other than kafka_source "+
					"(stdin, files, generate), which Benthos ends only after their pending acks resolve while this buffer holds them until "+
					"the windows fire. Default: `0s`, off: only the watermark fires windows. Flink: none (a bounded Flink source ends with "+
					"the `Long.MAX_VALUE` watermark, which this buffer also honours).").
				Example("5s").
				Default(DefaultDuration),
			service.NewIntField(FieldMaxOpenWindows).
				Description("The most windows held at once, open or fired and awaiting the output's ack (about 200 bytes + 64 per aggregate each). "+
					"Reached: back-pressure while results await acks, else the input batch is rejected with an error. Default: 100000. Flink: none (state backend size).").
				Default(DefaultMaxOpenWindows).Advanced(),
			service.NewIntField(FieldMaxRows).
				Description("The most rows kept for `aggregate`, over the same windows as `max_open_windows`; unused without `aggregate`. Default: 1000000.").
				Default(DefaultMaxRows).Advanced(),
		).
		Example("Orders per user per minute",
			"Tumbling one-minute windows keyed by user, counted and summed, written to Kafka in transactions.",
			`
input:
  kafka_source:
    seed_brokers: [ localhost:9092 ]
    topics: [ orders ]
    consumer_group: order-counts
buffer:
  event_window:
    type: tumbling
    size: 1m
    key: ${! json("user") }
    aggregates:
      orders: count
      revenue: sum(amount)
output:
  kafka_sink:
    seed_brokers: [ localhost:9092 ]
    topic: order_counts
    key: ${! @window_key }
`).
		Example("Sessions with a Bloblang reduction",
			"Sessions that end after 30 minutes of inactivity; the mapping gets the rows and drops short sessions.",
			`
buffer:
  event_window:
    type: session
    gap: 30m
    key: ${! json("user") }
    aggregate: |
      root = if this.rows.length() < 3 { deleted() } else {
        {"user": this.key, "clicks": this.rows.length(), "pages": this.rows.map_each(r -> r.page).unique()}
      }
`)
}

// rawFromParsed reads the fields validate needs.
func rawFromParsed(conf *service.ParsedConfig) (rawConfig, error) {
	var r rawConfig
	var err error
	if r.Type, err = conf.FieldString(FieldType); err != nil {
		return r, err
	}
	opt := func(field string) (string, error) {
		if !conf.Contains(field) {
			return "", nil
		}
		return conf.FieldString(field)
	}
	if r.Size, err = opt(FieldSize); err != nil {
		return r, err
	}
	if r.Slide, err = opt(FieldSlide); err != nil {
		return r, err
	}
	if r.Gap, err = opt(FieldGap); err != nil {
		return r, err
	}
	if r.AllowedLateness, err = conf.FieldString(FieldAllowedLateness); err != nil {
		return r, err
	}
	if r.Late, err = conf.FieldString(FieldLate); err != nil {
		return r, err
	}
	if conf.Contains(FieldAggregates) {
		if r.Aggregates, err = conf.FieldStringMap(FieldAggregates); err != nil {
			return r, err
		}
	}
	r.HasAggregate = conf.Contains(FieldAggregate)
	if r.MaxOpenWindows, err = conf.FieldInt(FieldMaxOpenWindows); err != nil {
		return r, err
	}
	if r.MaxRows, err = conf.FieldInt(FieldMaxRows); err != nil {
		return r, err
	}
	if r.FlushAfterIdle, err = conf.FieldString(FieldFlushAfterIdle); err != nil {
		return r, err
	}
	if r.WriterMeta, err = conf.FieldString(FieldWatermarkWriterMetadata); err != nil {
		return r, err
	}
	if r.WriterIdle, err = conf.FieldString(FieldWatermarkWriterIdle); err != nil {
		return r, err
	}
	if r.Writers, err = conf.FieldInt(FieldWatermarkWriters); err != nil {
		return r, err
	}
	return r, nil
}

// ConfigFromParsed turns a parsed config into a validated Config, reporting
// every problem at once. `connectd lint` runs it too (speclint.Register).
func ConfigFromParsed(conf *service.ParsedConfig) (Config, error) {
	var c Config
	r, err := rawFromParsed(conf)
	if err != nil {
		return c, err
	}
	errs := []error{r.validate(&c)}
	if key, err := conf.FieldString(FieldKey); err == nil && key != "" {
		if c.Key, err = conf.FieldInterpolatedString(FieldKey); err != nil {
			errs = append(errs, fmt.Errorf("field %s: %w", FieldKey, err))
		}
	}
	if conf.Contains(FieldTimestampMapping) {
		if c.TimestampMapping, err = conf.FieldBloblang(FieldTimestampMapping); err != nil {
			errs = append(errs, fmt.Errorf("field %s: %w", FieldTimestampMapping, err))
		}
	}
	if conf.Contains(FieldAggregate) {
		if c.Aggregate, err = conf.FieldBloblang(FieldAggregate); err != nil {
			errs = append(errs, fmt.Errorf("field %s: %w", FieldAggregate, err))
		}
	}
	if c.EventTimeMeta, err = conf.FieldString(FieldEventTimeMetadata); err != nil {
		errs = append(errs, err)
	}
	if c.WatermarkMeta, err = conf.FieldString(FieldWatermarkMetadata); err != nil {
		errs = append(errs, err)
	}
	return c, errors.Join(errs...)
}

func init() {
	spec := Spec()
	speclint.Register(speclint.Buffer, component, spec, func(conf *service.ParsedConfig) error {
		_, err := ConfigFromParsed(conf)
		return err
	})
	if err := service.RegisterBatchBuffer(component, spec, func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchBuffer, error) {
		c, err := ConfigFromParsed(conf)
		if err != nil {
			return nil, err
		}
		return New(c, mgr), nil
	}); err != nil {
		panic(err)
	}
}
