package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	_ "github.com/connectd/connectd/plugins/buffer/eventwindow" // event_window
)

// Scenario "windows": the event_window buffer counting records in tumbling
// one-minute event-time windows over 10,000 keys, fed by a generator input
// (no Kafka: this measures the windows, not the source) into drop, in a
// process of its own for CPU seconds and peak RSS. Event time advances 1 ms
// per record and the watermark trails it by 5 s, so about 10,000 windows are
// open and fire every 60,000 records, as a keyed count over a busy topic.

var windowRecords = flag.Int64("window-records", 3_000_000, "records through the windows scenario")

const windowKeys = 10_000

func init() {
	register("windows", windowsScenario)
	modes["window-count"] = func(ctx context.Context, args []string) error {
		fs := flag.NewFlagSet("window-count", flag.ContinueOnError)
		records := fs.Int64("records", 1_000_000, "records")
		aggregates := fs.String("aggregates", "{n: count}", "the buffer's aggregates (YAML)")
		if err := fs.Parse(args); err != nil {
			return err
		}
		debug.SetGCPercent(400) // as connectd's main does
		r, err := windowCount(ctx, *records, *aggregates)
		if err != nil {
			return err
		}
		return jsonOut(r)
	}
}

func windowsScenario(_ context.Context, e env) error {
	variants := []struct{ name, aggregates string }{
		{"count", "{n: count}"},
		{"count + sum(amount) (parses each record's JSON)", "{n: count, total: sum(amount)}"},
	}
	results := make([][]result, len(variants))
	for round := range e.rounds {
		for i, v := range variants {
			var r result
			if err := runMode(e.self, &r, &r, "-mode", "window-count", "--", "-records", fmt.Sprint(*windowRecords),
				"-aggregates", v.aggregates); err != nil {
				return err
			}
			results[i] = append(results[i], r)
			fmt.Fprintf(os.Stderr, "windows round %d %s: %.0f records/s\n", round+1, v.name, r.rps())
		}
	}
	fmt.Printf("### event_window: tumbling 1-minute windows, %d keys\n\n", windowKeys)
	fmt.Printf("%s; %d records from a generator input (no Kafka) through `event_window` into drop, event time +1 ms per "+
		"record, watermark 5 s behind (about %d windows open); %d rounds, medians.\n\n",
		time.Now().UTC().Format("2006-01-02"), *windowRecords, windowKeys, e.rounds)
	fmt.Printf("| aggregates | records/s | CPU s | CPU us/record | peak RSS MiB | per-round records/s |\n|---|---|---|---|---|---|\n")
	for i, v := range variants {
		m := median(results[i])
		fmt.Printf("| %s | %.0f | %.1f | %.2f | %.0f | %s |\n", v.name, m.rps(), m.CPU, m.CPU/float64(m.Records)*1e6,
			float64(m.PeakRSS)/1024, rates(results[i]))
	}
	fmt.Println()
	return nil
}

// windowInput generates keyed records with event time and watermark
// metadata, as kafka_source sets them.
type windowInput struct {
	next, end int64
	keys      []string
}

func (w *windowInput) Connect(context.Context) error { return nil }

func (w *windowInput) ReadBatch(context.Context) (service.MessageBatch, service.AckFunc, error) {
	if w.next >= w.end {
		return nil, nil, service.ErrEndOfInput
	}
	n := min(w.end-w.next, 1024)
	b := make(service.MessageBatch, n)
	for i := range b {
		r := w.next + int64(i)
		m := service.NewMessage([]byte(`{"amount":` + strconv.FormatInt(r%100, 10) + `}`))
		m.MetaSetMut("kafka_key", w.keys[r%windowKeys])
		m.MetaSetMut("kafka_event_time_ms", r)
		wm := r - 5000
		if r == w.end-1 {
			wm = int64(^uint64(0) >> 1) // end of input: fire every window
		}
		m.MetaSetMut("kafka_watermark_ms", wm)
		b[i] = m
	}
	w.next += n
	return b, func(context.Context, error) error { return nil }, nil
}

func (w *windowInput) Close(context.Context) error { return nil }

func windowCount(ctx context.Context, records int64, aggregates string) (result, error) {
	env := service.NewEnvironment()
	keys := make([]string, windowKeys)
	for i := range keys {
		keys[i] = "user-" + strconv.Itoa(i)
	}
	err := env.RegisterBatchInput("bench_window_records", service.NewConfigSpec(),
		func(*service.ParsedConfig, *service.Resources) (service.BatchInput, error) {
			return &windowInput{end: records, keys: keys}, nil
		})
	if err != nil {
		return result{}, err
	}
	sb := env.NewStreamBuilder()
	yaml := fmt.Sprintf(`
input:
  bench_window_records: {}
buffer:
  event_window:
    type: tumbling
    size: 1m
    key: ${! @kafka_key }
    aggregates: %s
output:
  drop: {}
logger:
  level: warn
metrics:
  none: {}
`, aggregates)
	if err := sb.SetYAML(yaml); err != nil {
		return result{}, err
	}
	stream, err := sb.Build()
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	if err := stream.Run(ctx); err != nil {
		return result{}, err
	}
	return result{Records: records, Wall: time.Since(start).Seconds()}, nil
}
