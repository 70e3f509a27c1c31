package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// Scenario "order": what per-partition order costs kafka_sink at-least-once.
// kafka_sink keeps each partition's order by writing one batch at a time
// (max_in_flight 1) and retrying failed records in place; before, it wrote 64
// batches in parallel (and reordered records). Each contender is a separate
// process on the same broker, rounds alternate, medians are reported:
//
//   - copies, kafka_source -> kafka_sink at_least_once, of -copy-records
//     records: with the sink's defaults, with other batching and
//     max_in_flight settings, and with the two explicit batching policies of
//     the sink scenario (10,000 records or 1s, and 100 ms);
//   - generate -> kafka_sink at_least_once at the defaults, of
//     -generate-records records: an input that hands over one message at a
//     time (as stdin does), where batches in flight mattered most.
//
// The previous behaviour is the binary given with -previous-bin (for
// example main, built with `go build -o /tmp/connectd-main ./cmd/connectd`);
// without it, only this build's contenders run. BENCH_CONTENDERS filters
// contenders by name, as in the source scenario (comma-separated parts of
// names: pick parts without a comma, such as "copy - this build - sink").

var (
	previousBin     = flag.String("previous-bin", "", "connectd binary with the previous behaviour, for the order scenario (none: skip it)")
	generateRecords = flag.Int64("generate-records", 200_000, "records written per run by the generate contenders of the order scenario")
)

// orderContender is one process configuration of the order scenario.
type orderContender struct {
	name     string
	previous bool   // run -previous-bin instead of -bin
	input    string // "copy" or "generate"
	sink     string // YAML lines appended to the kafka_sink block (four-space indent)
	// share is the part of the input's record count this contender writes
	// (1 when 0), for contenders too slow to write all of it.
	share float64
}

var orderContenders = []orderContender{
	{name: "copy - this build - sink defaults", input: "copy"},
	{name: "copy - previous build - sink defaults", previous: true, input: "copy"},
	{name: "copy - this build - `max_in_flight: 64` and `batching: {count: 1}` (the previous defaults, unordered)", input: "copy",
		sink: "    max_in_flight: 64\n    batching: { count: 1 }"},
	{name: "copy - this build - `batching: {count: 1}` (one batch in flight, each fetch written alone)", input: "copy",
		sink: "    batching: { count: 1 }"},
	{name: "copy - this build - `batching: {count: 1000, period: 5ms}` (a smaller default)", input: "copy",
		sink: "    batching: { count: 1000, period: 5ms }"},
	{name: "copy - this build - `max_in_flight: 64` (unordered)", input: "copy", sink: "    max_in_flight: 64"},
	{name: "copy - this build - `batching: {count: 10000, period: 1s}`", input: "copy",
		sink: "    batching: { count: 10000, period: 1s }"},
	{name: "copy - previous build - `batching: {count: 10000, period: 1s}`", previous: true, input: "copy",
		sink: "    batching: { count: 10000, period: 1s }"},
	{name: "copy - this build - `batching: {count: 1000000, period: 100ms}`", input: "copy",
		sink: "    batching: { count: 1000000, period: 100ms }"},
	{name: "copy - previous build - `batching: {count: 1000000, period: 100ms}`", previous: true, input: "copy",
		sink: "    batching: { count: 1000000, period: 100ms }"},
	{name: "generate - this build - sink defaults", input: "generate"},
	{name: "generate - previous build - sink defaults", previous: true, input: "generate"},
	{name: "generate - this build - `batching: {count: 1}` (one message per write, one write at a time; a tenth of the records)",
		input: "generate", sink: "    batching: { count: 1 }", share: 0.1},
}

func init() { register("order", orderScenario) }

func orderScenario(ctx context.Context, e env) error {
	var contenders []orderContender
	for _, c := range orderContenders {
		if c.previous && *previousBin == "" {
			continue
		}
		if want := os.Getenv("BENCH_CONTENDERS"); want != "" && !containsAny(c.name, strings.Split(want, ",")) {
			continue
		}
		contenders = append(contenders, c)
	}
	in, err := ensureTopic(ctx, e.brokers, *copyRecords, e.size, e.partitions)
	if err != nil {
		return err
	}
	loadBefore := loadAverage()
	results := make([][]result, len(contenders))
	for round := range e.rounds {
		for i, c := range contenders {
			out := fmt.Sprintf("bench-order-%d-%d", time.Now().UnixNano(), i)
			r, err := runOrderContender(ctx, e, c, in, out)
			deleteTopic(ctx, e.brokers, out)
			if err != nil {
				return fmt.Errorf("%s, round %d: %w", c.name, round+1, err)
			}
			results[i] = append(results[i], r)
			fmt.Fprintf(os.Stderr, "order round %d %s: %.0f records/s\n", round+1, c.name, r.rps())
		}
	}
	fmt.Printf("### kafka_sink at-least-once: the cost of per-partition order\n\n")
	fmt.Printf("%s; copies of %d records, generate runs of %d records, %d bytes each, over %d partitions, at_least_once; "+
		"%d rounds each, alternating; medians. The ratio compares a row with the first row of its input. This build: %s; "+
		"previous build: %s. Load average (1, 5, 15 min) before: %s, after: %s.\n\n",
		time.Now().UTC().Format("2006-01-02"), *copyRecords, *generateRecords, e.size, e.partitions, e.rounds, e.bin,
		orNone(*previousBin), loadBefore, loadAverage())
	fmt.Printf("| contender | records/s | ratio | per-round ratio (median, range) | CPU us/record | peak RSS MiB | per-round records/s |\n" +
		"|---|---|---|---|---|---|---|\n")
	for i, c := range contenders {
		m := median(results[i])
		// The ratio compares a row with the first row of the same input
		// (this build at its defaults): of the medians, and the median of
		// the ratios of each round, which a load that changes from round
		// to round moves less.
		ratio, perRound := "1.00", "1.00"
		for j, base := range contenders[:i] {
			if base.input == c.input {
				ratio = fmt.Sprintf("%.2f", m.rps()/median(results[j]).rps())
				perRound = roundRatios(results[i], results[j])
				break
			}
		}
		fmt.Printf("| %s | %.0f | %s | %s | %.2f | %.0f | %s |\n", c.name, m.rps(), ratio, perRound,
			m.CPU/float64(m.Records)*1e6, float64(m.PeakRSS)/1024, rates(results[i]))
	}
	fmt.Println()
	return nil
}

// runOrderContender runs one contender until output_sent counts every record.
func runOrderContender(ctx context.Context, e env, c orderContender, in, out string) (result, error) {
	if err := createTopic(ctx, e.brokers, out, e.partitions); err != nil {
		return result{}, err
	}
	bin := e.bin
	if c.previous {
		bin = *previousBin
	}
	var (
		input   string
		records = *copyRecords
	)
	switch c.input {
	case "copy":
		input = fmt.Sprintf(`
  kafka_source:
    seed_brokers: [ %q ]
    topics: [ %q ]
    consumer_group: %q
    start_from: earliest`, e.brokers, in, fmt.Sprintf("bench-order-%d", time.Now().UnixNano()))
	case "generate":
		records = *generateRecords
		// A key per message from 1,000 keys and a value of -size bytes,
		// without end (an input that ends stops the process before
		// /metrics shows the last count); runConnectd stops it.
		input = fmt.Sprintf(`
  generate:
    count: 0
    interval: ""
    mapping: |
      meta kafka_key = "k%%d".format(count("order") %% 1000)
      root = %q`, strings.Repeat("x", e.size))
	default:
		return result{}, fmt.Errorf("unknown input %q", c.input)
	}
	yaml := fmt.Sprintf(`
input:%s
output:
  kafka_sink:
    seed_brokers: [ %q ]
    topic: %q
    key: ${! @kafka_key }
    delivery_guarantee: at_least_once
%s
`, input, e.brokers, out, c.sink)
	if c.share > 0 {
		records = int64(float64(records) * c.share)
	}
	r, _, err := runConnectd(ctx, bin, yaml, nil, sinkSentRe, records)
	r.Bytes = r.Records * int64(e.size)
	return r, err
}

func containsAny(s string, parts []string) bool {
	for _, p := range parts {
		if p != "" && strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// loadAverage is the machine's load average, as uptime prints it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}

// roundRatios is the median and range of rs[i] / base[i] (records/s) over
// the rounds.
func roundRatios(rs, base []result) string {
	var q []float64
	for i := range min(len(rs), len(base)) {
		q = append(q, rs[i].rps()/base[i].rps())
	}
	if len(q) == 0 {
		return "-"
	}
	slices.Sort(q)
	return fmt.Sprintf("%.2f (%.2f-%.2f)", q[len(q)/2], q[0], q[len(q)-1])
}
