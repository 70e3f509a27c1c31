// Command bench compares connectd with the raw franz-go client on the real
// broker, side by side in one run, and prints a Markdown report. It is a
// report, not a test: `make bench` runs it.
//
//	go run ./bench -brokers 127.0.0.1:19092 -bin bin/connectd
//
// Each scenario registers itself in scenarios (see register) from its own
// file; -scenarios picks which run, in the order given.
//
// Scenario "source": kafka_source -> drop against a raw kgo consumer reading
// the same topic (read_committed, from the start), N records of S bytes over
// P partitions. Each round runs both as separate processes; wall time runs
// from process start until the last record is counted, CPU seconds and peak
// RSS come from the kernel (getrusage / /proc).
//
// With -bin-base, the connectd contenders of the source and sink scenarios
// also run with a second binary (say, one built from main), side by side:
// each round runs the two one after the other, in alternating order, and
// the report puts a "base" row under each connectd row with the ratio of
// the two medians.
//
//	go build -o /tmp/connectd-main ./cmd/connectd   # in a checkout of main
//	go run ./bench -bin bin/connectd -bin-base /tmp/connectd-main -scenarios source,sink
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

type result struct {
	Records int64   `json:"records"`
	Bytes   int64   `json:"bytes"`
	Wall    float64 `json:"wall_s"`
	CPU     float64 `json:"cpu_s"`
	PeakRSS int64   `json:"peak_rss_kib"`
	// Startup is the time from the start (of the process for connectd,
	// of the measured function for an in-process contender) until the
	// first records were counted, and FirstCount how many were counted
	// then; zero where unmeasured.
	Startup    float64 `json:"startup_s,omitempty"`
	FirstCount int64   `json:"first_count,omitempty"`
}

func (r result) rps() float64 { return float64(r.Records) / r.Wall }

// steady is the rate from the first counted records to the last: what a
// run reaches once started, its start-up (process start, connecting,
// listing offsets) left out. It is rps where Startup is unmeasured.
func (r result) steady() float64 {
	if r.Startup <= 0 || r.Wall <= r.Startup {
		return r.rps()
	}
	return float64(r.Records-r.FirstCount) / (r.Wall - r.Startup)
}

// env is what every scenario gets: the flags of this run.
type env struct {
	self    string // this executable, to run helper modes as processes
	brokers string
	bin     string
	// binBase is a second connectd binary run side by side with bin, ""
	// for none.
	binBase    string
	records    int64
	size       int
	partitions int
	rounds     int
}

// scenario runs one comparison and prints its Markdown section to stdout.
type scenario func(ctx context.Context, e env) error

var scenarios = map[string]scenario{}

// modes are internal helper modes (-mode NAME), run as separate processes so
// that their CPU time and RSS are measured apart from the report's.
var modes = map[string]func(ctx context.Context, args []string) error{}

// register adds a scenario; each scenario's file calls it from init.
func register(name string, s scenario) { scenarios[name] = s }

func main() {
	var (
		mode       = flag.String("mode", "report", "report, or an internal helper mode")
		which      = flag.String("scenarios", "source", "comma-separated scenarios to run, in order")
		brokers    = flag.String("brokers", envOr("CONNECTD_KAFKA_BROKERS", "127.0.0.1:19092"), "bootstrap address")
		bin        = flag.String("bin", "bin/connectd", "connectd binary")
		binBase    = flag.String("bin-base", "", "a second connectd binary to compare with -bin, side by side (for example one built from main); none if empty")
		records    = flag.Int64("records", 5_000_000, "records in the topic")
		size       = flag.Int("size", 200, "record value size in bytes")
		partitions = flag.Int("partitions", 8, "partitions")
		rounds     = flag.Int("rounds", 3, "rounds per contender")
		topic      = flag.String("topic", "", "topic (internal, raw-consume mode)")
	)
	flag.Parse()
	ctx := context.Background()
	switch *mode {
	case "raw-consume":
		r, err := rawConsume(ctx, *brokers, *topic, *records)
		if err != nil {
			fatal(err)
		}
		_ = jsonOut(r)
	case "report":
		self, err := os.Executable()
		if err != nil {
			fatal(err)
		}
		e := env{self: self, brokers: *brokers, bin: *bin, binBase: *binBase, records: *records, size: *size, partitions: *partitions, rounds: *rounds}
		for _, name := range strings.Split(*which, ",") {
			s, ok := scenarios[strings.TrimSpace(name)]
			if !ok {
				fatal(fmt.Errorf("unknown scenario %q (have %s)", name, strings.Join(slices.Sorted(maps.Keys(scenarios)), ", ")))
			}
			if err := s(ctx, e); err != nil {
				fatal(fmt.Errorf("scenario %s: %w", name, err))
			}
		}
	default:
		m, ok := modes[*mode]
		if !ok {
			fatal(fmt.Errorf("unknown -mode %q", *mode))
		}
		if err := m(ctx, flag.Args()); err != nil {
			fatal(err)
		}
	}
}

func init() {
	register("source", func(ctx context.Context, e env) error {
		t, err := ensureTopic(ctx, e.brokers, e.records, e.size, e.partitions)
		if err != nil {
			return err
		}
		return report(ctx, e, t)
	})
}

// sourceContender is one connectd configuration in the source scenario.
type sourceContender struct {
	name  string
	extra string   // YAML appended to the kafka_source block
	env   []string // extra environment of the process
}

var sourceContenders = []sourceContender{
	{name: "connectd kafka_source -> drop (defaults: readers 1, batch_size 1024, Benthos metadata keys)"},
	{name: "connectd, `metadata_keys: [kafka_topic, kafka_partition, kafka_offset]`",
		extra: "    metadata_keys: [ kafka_topic, kafka_partition, kafka_offset ]"},
	{name: "connectd, `metadata_keys: []` (raw bytes only)", extra: "    metadata_keys: []"},
	{name: "connectd, `batch_size: 4096`", extra: "    batch_size: 4096"},
	{name: "connectd, `readers: 2`", extra: "    readers: 2"},
	{name: "connectd, `watermark: {max_out_of_orderness: 5s}` (event time on; compare with the default row)",
		extra: "    watermark: { max_out_of_orderness: 5s }"},
	// Watermarks add two metadata keys; with six listed keys the message
	// keeps eight, as the default row, so the difference to that row is
	// the watermark itself (tracker and stamping), not the map's growth.
	{name: "connectd, watermark on and `metadata_keys` of six (eight keys in all, as the default row)",
		extra: "    watermark: { max_out_of_orderness: 5s }\n" +
			"    metadata_keys: [ kafka_key, kafka_topic, kafka_partition, kafka_offset, kafka_timestamp_ms, kafka_lag ]"},
	{name: "connectd, `GOGC=100` (Go's default; connectd sets 400)", env: []string{"GOGC=100"}},
	// A table source: each record decoded into a row (raw format, the
	// value as a STRING column) with metadata columns read from the
	// record; the decoding itself is cheap, so the row shows what the way
	// to it costs.
	{name: "connectd, table: `format raw`, metadata columns partition, offset, timestamp",
		extra: benchTableDDL("")},
	// The same with the event time from the row's column (column-mode
	// watermark).
	{name: "connectd, table: as above, `WATERMARK FOR ts` (event time from the row)",
		extra: benchTableDDL(", WATERMARK FOR ts AS ts - INTERVAL '5' SECOND")},
}

// benchTableDDL is the `ddl` field of a table contender over the scenario's
// topic (whose values are not JSON: the raw format reads them); watermark
// is added to its columns. Topic, brokers and group stay YAML fields.
func benchTableDDL(watermark string) string {
	return "    ddl: |\n" +
		"      CREATE TABLE bench (v STRING, p INT METADATA FROM 'partition' VIRTUAL, o BIGINT METADATA FROM 'offset' VIRTUAL,\n" +
		"        ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp'" + watermark + ") WITH ('connector' = 'kafka', 'format' = 'raw')"
}

// onlyContenders keeps the source contenders whose name contains one of
// the comma-separated parts of BENCH_CONTENDERS (all when unset).
func onlyContenders(all []sourceContender) []sourceContender {
	want := os.Getenv("BENCH_CONTENDERS")
	if want == "" {
		return all
	}
	var out []sourceContender
	for _, c := range all {
		for _, w := range strings.Split(want, ",") {
			if w != "" && strings.Contains(c.name, w) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// binary is a connectd binary a scenario runs.
type binary struct {
	label string // "" for -bin, "base" for -bin-base
	path  string
}

// binaries are the connectd binaries of e, in the order round i runs them:
// with -bin-base the two take turns going first.
func (e env) binaries(round int) []binary {
	bins := []binary{{path: e.bin}}
	if e.binBase != "" {
		bins = append(bins, binary{label: "base", path: e.binBase})
		if round%2 == 1 {
			bins[0], bins[1] = bins[1], bins[0]
		}
	}
	return bins
}

// withBase names a contender run with a binary.
func withBase(name string, b binary) string {
	if b.label == "" {
		return name
	}
	return fmt.Sprintf("%s [%s: %s]", name, b.label, b.path)
}

func report(ctx context.Context, e env, topic string) error {
	var raw, floor []result
	sourceContenders := onlyContenders(sourceContenders)
	// cds[j][label] are contender j's results with each binary.
	cds := make([]map[string][]result, len(sourceContenders))
	for j := range cds {
		cds[j] = map[string][]result{}
	}
	var loads []float64
	for i := range e.rounds {
		loads = append(loads, loadAverage1())
		r, err := runRaw(e.self, e.brokers, topic, e.records)
		if err != nil {
			return fmt.Errorf("round %d raw: %w", i+1, err)
		}
		raw = append(raw, r)
		fmt.Fprintf(os.Stderr, "round %d raw franz-go: %.0f records/s\n", i+1, r.rps())
		f, err := runFloor(e.self, e.records, e.size)
		if err != nil {
			return fmt.Errorf("round %d Benthos floor: %w", i+1, err)
		}
		floor = append(floor, f)
		fmt.Fprintf(os.Stderr, "round %d Benthos floor: %.0f records/s\n", i+1, f.rps())
		for j, c := range sourceContenders {
			for _, b := range e.binaries(i) {
				r, err := runConnectdSource(ctx, b.path, e.brokers, topic, e.records, c.extra, c.env)
				if err != nil {
					return fmt.Errorf("round %d %s: %w", i+1, withBase(c.name, b), err)
				}
				cds[j][b.label] = append(cds[j][b.label], r)
				fmt.Fprintf(os.Stderr, "round %d %s: %.0f records/s, %.2f CPU us/record\n", i+1, withBase(c.name, b), r.rps(), r.CPU/float64(r.Records)*1e6)
			}
		}
	}
	mr, mf := median(raw), medianSteady(floor)
	fmt.Printf("### kafka_source -> drop vs raw franz-go consumer\n\n")
	fmt.Printf("%s; %d records of %d bytes over %d partitions, read_committed from the start; %d rounds each, alternating; medians; load average (1 min) %s.\n\n",
		time.Now().UTC().Format("2006-01-02"), e.records, e.size, e.partitions, e.rounds, loadRange(loads))
	fmt.Printf("records/s is from the process start (connectd) or the function start (raw, floor) to the last record; " +
		"\"steady\" leaves out the start-up, the time until the first records were counted (connectd: process start, " +
		"connecting, listing offsets; the floor's Wall starts after its process and stream are built); \"vs floor\" is the " +
		"steady rate against the Benthos floor's, of the medians, then per round (each round runs the floor and the contender " +
		"one after the other): the median and range of those ratios. CPU-s per M records and peak RSS are of the whole process.\n\n")
	if e.binBase != "" {
		fmt.Printf("Each connectd row is followed by the same contender with the base binary %s; \"vs base\" is the ratio of the two steady medians.\n\n", e.binBase)
	}
	fmt.Printf("| contender | records/s | ratio to raw | steady records/s | vs floor | vs floor per round | vs base | start-up s | CPU s | CPU-s per M records | peak RSS MiB | per-round steady records/s |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	row := func(name string, rs []result, vsBase string) {
		r, st := median(rs), medianSteady(rs)
		fmt.Printf("| %s | %.0f | %.2f | %.0f | %.2f | %s | %s | %.2f | %.1f | %.2f | %.0f | %s |\n", name, r.rps(), r.rps()/mr.rps(),
			st.steady(), st.steady()/mf.steady(), steadyRatios(rs, floor), vsBase, st.Startup, st.CPU, st.CPU/float64(st.Records)*1e6,
			float64(st.PeakRSS)/1024, steadyRates(rs))
	}
	row("raw franz-go (kgo PollRecords)", raw, "")
	row("Benthos floor: generator -> drop, no Kafka, same payload, 8 metadata keys", floor, "")
	for j, c := range sourceContenders {
		for _, b := range e.binaries(0) {
			vs := ""
			if base, ok := cds[j]["base"]; ok && b.label == "" {
				vs = fmt.Sprintf("%.2f", medianSteady(cds[j][""]).steady()/medianSteady(base).steady())
			}
			row(withBase(c.name, b), cds[j][b.label], vs)
		}
	}
	fmt.Println()
	return nil
}

func steadyRates(rs []result) string {
	var s []string
	for _, r := range rs {
		s = append(s, fmt.Sprintf("%.0f", r.steady()))
	}
	return strings.Join(s, ", ")
}

// steadyRatios is the median and range of rs[i] / base[i] (steady rates)
// over the rounds.
func steadyRatios(rs, base []result) string {
	var q []float64
	for i := range min(len(rs), len(base)) {
		q = append(q, rs[i].steady()/base[i].steady())
	}
	if len(q) == 0 {
		return "-"
	}
	slices.Sort(q)
	return fmt.Sprintf("%.2f (%.2f–%.2f)", q[len(q)/2], q[0], q[len(q)-1])
}

// medianSteady picks the round with the median steady rate.
func medianSteady(rs []result) result {
	if len(rs) == 0 {
		return result{Wall: 1}
	}
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b result) int { return cmp.Compare(a.steady(), b.steady()) })
	return s[len(s)/2]
}

// loadAverage1 is the 1-minute load average, -1 if unknown.
func loadAverage1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	if err != nil {
		return -1
	}
	return f
}

// loadRange prints the lowest and highest of loads.
func loadRange(loads []float64) string {
	if len(loads) == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f–%.1f", slices.Min(loads), slices.Max(loads))
}

func rates(rs []result) string {
	var s []string
	for _, r := range rs {
		s = append(s, fmt.Sprintf("%.0f", r.rps()))
	}
	return strings.Join(s, ", ")
}

// median picks the round with the median records/s.
func median(rs []result) result {
	if len(rs) == 0 {
		return result{Wall: 1}
	}
	s := append([]result(nil), rs...)
	sort.Slice(s, func(i, j int) bool { return s[i].rps() < s[j].rps() })
	return s[len(s)/2]
}

func runRaw(self, brokers, topic string, records int64) (result, error) {
	var r result
	err := runMode(self, &r, &r, "-mode", "raw-consume", "-brokers", brokers, "-topic", topic, "-records", fmt.Sprint(records))
	return r, err
}

// runMode runs this executable with args (a helper mode that prints one JSON
// value), decodes its output into out, and sets the process's CPU seconds
// and peak RSS on stats.
func runMode(self string, out any, stats *result, args ...string) error {
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Join(args, " "), err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s: output %q: %w", strings.Join(args, " "), b, err)
	}
	stats.CPU = cmd.ProcessState.UserTime().Seconds() + cmd.ProcessState.SystemTime().Seconds()
	stats.PeakRSS = maxRSSKiB(cmd.ProcessState)
	return nil
}

// jsonOut prints a helper mode's result for runMode.
func jsonOut(v any) error { return json.NewEncoder(os.Stdout).Encode(v) }

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
