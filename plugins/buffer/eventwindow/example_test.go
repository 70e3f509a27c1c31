package eventwindow_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"

	_ "github.com/connectd/connectd/plugins/buffer/eventwindow"
)

// runStream runs generate -> event_window -> a consumer and returns the
// messages it got, errored ones as "errored: <error>"; fail makes the
// consumer reject the first delivery of every result, as an output that is
// down would.
func runStream(input, buffer string, fail bool) []string {
	builder := service.NewStreamBuilder()
	builder.SetThreads(1)
	if err := builder.AddInputYAML(input); err != nil {
		panic(err)
	}
	if err := builder.SetBufferYAML(buffer); err != nil {
		panic(err)
	}
	var mu sync.Mutex
	var lines []string
	seen := map[string]bool{}
	if err := builder.AddConsumerFunc(func(_ context.Context, msg *service.Message) error {
		mu.Lock()
		defer mu.Unlock()
		if err := msg.GetError(); err != nil {
			lines = append(lines, "errored: "+err.Error())
			return nil
		}
		b, err := msg.AsBytes()
		if err != nil {
			return err
		}
		if fail && !seen[string(b)] {
			seen[string(b)] = true
			return errors.New("output down")
		}
		lines = append(lines, string(b))
		return nil
	}); err != nil {
		panic(err)
	}
	if err := builder.SetLoggerYAML("level: none"); err != nil {
		panic(err)
	}
	stream, err := builder.Build()
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := stream.Run(ctx); err != nil {
		panic(err)
	}
	return lines
}

func printLines(lines []string) {
	for _, l := range lines {
		fmt.Println(l)
	}
}

// clicks is a generate input of eight clicks with crafted event times
// (seconds) and the watermark kafka_source would set (event time minus 10s
// bounded out-of-orderness). The last record carries the end-of-input
// watermark (math.MaxInt64, Flink's Long.MAX_VALUE at the end of a bounded
// source), which fires every window left.
const clicks = `
generate:
  count: 8
  interval: ""
  mapping: |
    let n = counter()
    let c = [
      {"user": "ann", "s": 5},
      {"user": "bob", "s": 20},
      {"user": "ann", "s": 58},
      {"user": "ann", "s": 50},
      {"user": "bob", "s": 75},
      {"user": "ann", "s": 71},
      {"user": "ann", "s": 30},
      {"user": "bob", "s": 130},
    ].index($n - 1)
    root = {"user": $c.user, "amount": $c.s % 7}
    meta kafka_event_time_ms = $c.s * 1000
    meta kafka_watermark_ms = if $n < 8 { $c.s * 1000 - 10000 } else { 9223372036854775807 }
`

// Tumbling one-minute counts per user. The minute [0s, 60s) fires when a
// record carries a watermark of 59.999s or more (bob at 75s, watermark 65s);
// ann's click at 30s arrives after that and is late: dropped and counted.
func Example_tumbling() {
	printLines(runStream(clicks, `
event_window:
  type: tumbling
  size: 1m
  key: ${! json("user") }
  aggregates: { clicks: count, amount: sum(amount), last: last(amount) }
`, false))
	// Output:
	// {"amount":8,"clicks":3,"key":"ann","last":2,"window_end_ms":60000,"window_start_ms":0}
	// {"amount":6,"clicks":1,"key":"bob","last":6,"window_end_ms":60000,"window_start_ms":0}
	// {"amount":1,"clicks":1,"key":"ann","last":1,"window_end_ms":120000,"window_start_ms":60000}
	// {"amount":5,"clicks":1,"key":"bob","last":5,"window_end_ms":120000,"window_start_ms":60000}
	// {"amount":4,"clicks":1,"key":"bob","last":4,"window_end_ms":180000,"window_start_ms":120000}
}

// Late records routed: with late: error, ann's click at 30s comes out flagged
// with an error instead of being dropped, for a catch or switch to handle.
func Example_lateAsErrors() {
	printLines(runStream(clicks, `
event_window:
  size: 1m
  key: ${! json("user") }
  late: error
  aggregates: { clicks: count }
`, false))
	// Output:
	// {"clicks":3,"key":"ann","window_end_ms":60000,"window_start_ms":0}
	// {"clicks":1,"key":"bob","window_end_ms":60000,"window_start_ms":0}
	// errored: event_window: late record: key "ann", event time 30000 ms, watermark 65000 ms, allowed lateness 0 ms: its windows have fired
	// {"clicks":1,"key":"ann","window_end_ms":120000,"window_start_ms":60000}
	// {"clicks":1,"key":"bob","window_end_ms":120000,"window_start_ms":60000}
	// {"clicks":1,"key":"bob","window_end_ms":180000,"window_start_ms":120000}
}

// Sessions with a 30s gap and a Bloblang reduction over the rows. Ann's
// sessions [5s, 35s) and [50s, 88s) are apart; her click at 71s extends the
// second, and her click at 30s, after the watermark closed the first, joins
// the second ([30s, 60s) overlaps it), which now starts at 30s.
func Example_session() {
	printLines(runStream(clicks, `
event_window:
  type: session
  gap: 30s
  key: ${! json("user") }
  aggregate: |
    root.user = this.key
    root.seconds = (this.window_end_ms - this.window_start_ms) / 1000
    root.amounts = this.rows.map_each(r -> r.amount)
`, false))
	// Output:
	// {"amounts":[5],"seconds":30,"user":"ann"}
	// {"amounts":[6],"seconds":30,"user":"bob"}
	// {"amounts":[2,1,1,2],"seconds":71,"user":"ann"}
	// {"amounts":[5],"seconds":30,"user":"bob"}
	// {"amounts":[4],"seconds":30,"user":"bob"}
}

// An output that rejects every result once gets each of them again: none
// is lost. A nack covers the whole batch handed out, so results of the same
// batch that the consumer had taken are delivered again (at-least-once for
// outputs that deliver a batch message by message; kafka_sink's exactly_once
// commits a batch in one transaction, all or nothing).
func TestStreamRedeliversNackedResults(t *testing.T) {
	got := runStream(clicks, `
event_window:
  size: 1m
  key: ${! json("user") }
  aggregates: { clicks: count }
`, true)
	sort.Strings(got)
	got = slices.Compact(got)
	want := []string{
		`{"clicks":1,"key":"ann","window_end_ms":120000,"window_start_ms":60000}`,
		`{"clicks":1,"key":"bob","window_end_ms":120000,"window_start_ms":60000}`,
		`{"clicks":1,"key":"bob","window_end_ms":180000,"window_start_ms":120000}`,
		`{"clicks":1,"key":"bob","window_end_ms":60000,"window_start_ms":0}`,
		`{"clicks":3,"key":"ann","window_end_ms":60000,"window_start_ms":0}`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
