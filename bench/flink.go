package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Scenario "flink": connectd, Apache Flink's own Kafka connector and the raw
// franz-go client side by side, on the same broker and the same topic (N
// records of S bytes over P partitions), for the same job shapes:
//
//   - read -> discard: read_committed from the start until every record is
//     counted;
//   - at-least-once copy into a fresh topic (Flink: checkpoints every 1 s;
//     the raw copy flushes and commits every 1 s; connectd at its defaults);
//   - exactly-once copy with a 1 s and a 100 ms commit interval (Flink:
//     KafkaSink EXACTLY_ONCE with checkpoints at that interval; connectd:
//     kafka_sink `commit_interval`; raw: GroupTransactSession transactions of
//     that length; 1 s is connectd's default).
//
// Flink runs as a java process per round (bench/flink, built by Maven into
// ~/.cache/connectd/flink-<version>; see flinkjob.go), in a local MiniCluster
// at each parallelism of -flink-parallelism. Its rate runs from its first
// record to its last (read) or to the end of the job (copies: the final
// checkpoint commits the last transaction); its start-up, process start to
// first record, is a column of its own. The other contenders' rates run from
// process start, as in the other scenarios (their start-up is milliseconds).
//
// Every run is verified: the read contenders count exactly N records; every
// copy's output is counted by a read_committed franz-go consumer once no
// transaction is open, exactly N for exactly-once and at least N for
// at-least-once. A run that fails the check fails the scenario.

var (
	flinkRecords     = flag.Int64("flink-records", 3_000_000, "records in the flink scenario's topic")
	flinkParallelism = flag.String("flink-parallelism", "1,2", "comma-separated MiniCluster parallelisms, each a Flink contender (flink scenario)")
)

func init() { register("flink", flinkScenario) }

// flinkCase is one job shape.
type flinkCase struct {
	title     string
	guarantee string        // "" for read -> discard, else at_least_once or exactly_once
	interval  time.Duration // copies: checkpoint / flush / transaction interval
}

var flinkCases = []flinkCase{
	{title: "read → discard"},
	{title: "at-least-once copy", guarantee: "at_least_once", interval: time.Second},
	{title: "exactly-once copy, 1 s commit interval", guarantee: "exactly_once", interval: time.Second},
	{title: "exactly-once copy, 100 ms commit interval", guarantee: "exactly_once", interval: 100 * time.Millisecond},
}

// peerResult is one run. result.Wall is the time the rate is measured over.
type peerResult struct {
	result
	startup float64 // Flink: process start to its first record, s (0: not measured)
	total   float64 // process start to the end, s
	runCPU  float64 // Flink: process CPU from the first record to the end, s
	output  int64   // copies: records in the output, read_committed
}

// peer is one contender of a case.
type peer struct {
	name    string
	summary string // its column in the summary table ("" if none)
	run     func(ctx context.Context, out string) (peerResult, error)
}

func flinkScenario(ctx context.Context, e env) error {
	pars, err := parseParallelisms(*flinkParallelism)
	if err != nil {
		return err
	}
	job, err := buildFlinkJob(ctx)
	if err != nil {
		return err
	}
	n := *flinkRecords
	in, err := ensureTopic(ctx, e.brokers, n, e.size, e.partitions)
	if err != nil {
		return err
	}
	loadStart := loadAvg()
	type caseResults struct {
		c     flinkCase
		peers []peer
		runs  [][]peerResult
	}
	var all []caseResults
	for _, c := range flinkCases {
		peers := flinkPeers(e, job, c, in, n, pars)
		runs := make([][]peerResult, len(peers))
		for round := range e.rounds {
			for i, p := range peers {
				out := ""
				if c.guarantee != "" {
					out = fmt.Sprintf("bench-flink-out-%d-%d", time.Now().UnixNano(), i)
					if err := createTopic(ctx, e.brokers, out, e.partitions); err != nil {
						return fmt.Errorf("creating output topic %s: %w", out, err)
					}
				}
				r, err := p.run(ctx, out)
				if err == nil && out != "" {
					r.output, err = verifyCopy(ctx, e.brokers, out, c.guarantee, n)
				}
				if out != "" {
					deleteTopic(ctx, e.brokers, out)
				}
				if err != nil {
					return fmt.Errorf("%s, %s, round %d: %w", c.title, p.name, round+1, err)
				}
				runs[i] = append(runs[i], r)
				fmt.Fprintf(os.Stderr, "%s round %d %s: %.0f records/s, %.2f CPU-s/M, %.0f MiB, start-up %.1f s, wall %.1f s, output %d (load %s)\n",
					c.title, round+1, p.name, r.rps(), r.CPU/float64(r.Records)*1e6, float64(r.PeakRSS)/1024, r.startup, r.total, r.output, loadAvg())
			}
		}
		all = append(all, caseResults{c, peers, runs})
	}
	loadEnd := loadAvg()

	fmt.Printf("### connectd vs Apache Flink's Kafka connector vs raw franz-go\n\n")
	fmt.Printf("%s; %d records of %d bytes over %d partitions, read_committed from the start; copies into a fresh "+
		"%d-partition topic; Flink %s with flink-connector-kafka %s in a local MiniCluster (`%s`, JVM options: %s); %d rounds each, "+
		"alternating; medians. Load average (1, 5, 15 min) at the start %s, at the end %s. Counts verified: every reader "+
		"counted exactly %d records; every copy's output, read back read_committed, held exactly %d records "+
		"(exactly-once) or at least %d (at-least-once).\n\n",
		time.Now().UTC().Format("2006-01-02"), n, e.size, e.partitions, e.partitions, *flinkVersion, *flinkKafkaVersion,
		job.version, job.optsText(), e.rounds, loadStart, loadEnd, n, n, n)
	fmt.Printf("records/s: Flink from its first record to its last (read) or to the end of the job (copies, including " +
		"the final checkpoint's commit); the others from process start. Start-up: Flink's process start to first " +
		"record (JVM, MiniCluster, job submission, split assignment). CPU-s per M records: the process's user+system " +
		"CPU (rusage) over the whole run, start-up included; for Flink also from its first record on. Wall: process " +
		"start to the end.\n\n")
	summary := map[string]map[string]peerResult{}
	for _, cr := range all {
		fmt.Printf("#### %s\n\n", cr.c.title)
		fmt.Printf("| contender | records/s | ratio to raw | CPU-s per M records | CPU-s per M from first record | " +
			"peak RSS MiB | start-up s | wall s | per-round records/s |\n|---|---|---|---|---|---|---|---|---|\n")
		raw := medianPeer(cr.runs[0])
		summary[cr.c.title] = map[string]peerResult{}
		for i, p := range cr.peers {
			m := medianPeer(cr.runs[i])
			if p.summary != "" {
				summary[cr.c.title][p.summary] = m
			}
			runCPU, startup := "—", "—"
			if m.startup > 0 {
				runCPU = fmt.Sprintf("%.2f", m.runCPU/float64(m.Records)*1e6)
				startup = fmt.Sprintf("%.1f", m.startup)
			}
			var rs []result
			for _, r := range cr.runs[i] {
				rs = append(rs, r.result)
			}
			fmt.Printf("| %s | %.0f | %.2f | %.2f | %s | %.0f | %s | %.1f | %s |\n", p.name, m.rps(), m.rps()/raw.rps(),
				m.CPU/float64(m.Records)*1e6, runCPU, float64(m.PeakRSS)/1024, startup, m.total, rates(rs))
		}
		fmt.Println()
	}
	printFlinkSummary(summary, pars)
	return nil
}

// flinkPeers lists the contenders of case c, raw franz-go first.
func flinkPeers(e env, job flinkJob, c flinkCase, in string, n int64, pars []int) []peer {
	var peers []peer
	switch c.guarantee {
	case "":
		peers = append(peers,
			peer{"raw franz-go (kgo PollRecords)", "raw franz-go", func(ctx context.Context, _ string) (peerResult, error) {
				r, err := runRaw(e.self, e.brokers, in, n)
				if err == nil && r.Records != n {
					err = fmt.Errorf("read %d records, want %d", r.Records, n)
				}
				return peerResult{result: r, total: r.Wall}, err
			}},
			peer{"connectd kafka_source -> drop (defaults)", "connectd", func(ctx context.Context, _ string) (peerResult, error) {
				return runConnectdPeer(ctx, e, in, "", "drop: {}", receivedRe, n)
			}})
	case "at_least_once":
		peers = append(peers,
			peer{"raw franz-go copy: produce, flush and commit every 1 s", "raw franz-go", func(ctx context.Context, out string) (peerResult, error) {
				return runRawCopyPeer(e, in, out, c.interval, false, n)
			}},
			peer{"connectd kafka_source -> kafka_sink at_least_once (defaults)", "connectd", func(ctx context.Context, out string) (peerResult, error) {
				return runConnectdPeer(ctx, e, in, out, kafkaSinkYAML(e.brokers, out, "at_least_once", "", 0), sinkSentRe, n)
			}})
	case "exactly_once":
		peers = append(peers,
			peer{fmt.Sprintf("raw franz-go GroupTransactSession, %v transactions", c.interval), "raw franz-go",
				func(ctx context.Context, out string) (peerResult, error) {
					return runRawCopyPeer(e, in, out, c.interval, true, n)
				}},
			peer{fmt.Sprintf("connectd exactly_once, `commit_interval: %v`%s", c.interval, defaultMark(c.interval)), "connectd",
				func(ctx context.Context, out string) (peerResult, error) {
					yaml := kafkaSinkYAML(e.brokers, out, "exactly_once", fmt.Sprintf("bench-flink-cd-%d", time.Now().UnixNano()), c.interval)
					// Records are acknowledged before their transaction
					// commits: count the committed ones.
					return runConnectdPeer(ctx, e, in, out, yaml, sinkSentRe, n)
				}})
	}
	for _, par := range pars {
		name := fmt.Sprintf("Flink KafkaSource -> discarding sink, parallelism %d", par)
		switch c.guarantee {
		case "at_least_once":
			name = fmt.Sprintf("Flink KafkaSource -> KafkaSink AT_LEAST_ONCE, checkpoints every %v, parallelism %d", c.interval, par)
		case "exactly_once":
			name = fmt.Sprintf("Flink KafkaSource -> KafkaSink EXACTLY_ONCE, checkpoints every %v, parallelism %d", c.interval, par)
		}
		peers = append(peers, peer{name, fmt.Sprintf("Flink p=%d", par), func(ctx context.Context, out string) (peerResult, error) {
			return runFlinkPeer(ctx, e, job, c, in, out, par, n)
		}})
	}
	return peers
}

// runConnectdPeer runs kafka_source (defaults, a fresh consumer group, from
// the start) into output (a YAML block under `output:`) until the series done
// counts n records.
func runConnectdPeer(ctx context.Context, e env, in, out, output string, done *regexp.Regexp, n int64) (peerResult, error) {
	group := fmt.Sprintf("bench-flink-cd-%d", time.Now().UnixNano())
	yaml := fmt.Sprintf(`
input:
  kafka_source:
    seed_brokers: [ %q ]
    topics: [ %q ]
    consumer_group: %q
    start_from: earliest
output:
  %s
`, e.brokers, in, group, output)
	r, _, err := runConnectd(ctx, e.bin, yaml, nil, done, n)
	if err != nil {
		return peerResult{}, err
	}
	if out == "" && r.Records != n {
		return peerResult{}, fmt.Errorf("connectd counted %d records, want %d", r.Records, n)
	}
	r.Records = n
	r.Bytes = n * int64(e.size)
	return peerResult{result: r, total: r.Wall}, nil
}

// kafkaSinkYAML is a kafka_sink block at its defaults but for the guarantee,
// the transactional id prefix and, if interval > 0, `commit_interval` (the
// transaction interval of records that flow from kafka_source).
func kafkaSinkYAML(brokers, topic, guarantee, txnPrefix string, interval time.Duration) string {
	y := fmt.Sprintf("kafka_sink:\n    seed_brokers: [ %q ]\n    topic: %q\n    delivery_guarantee: %s", brokers, topic, guarantee)
	if txnPrefix != "" {
		y += fmt.Sprintf("\n    transactional_id_prefix: %q", txnPrefix)
	}
	if interval > 0 {
		y += fmt.Sprintf("\n    commit_interval: %s", interval)
	}
	return y
}

// defaultMark notes the sink's default commit interval in a row's name.
func defaultMark(interval time.Duration) string {
	if interval == time.Second {
		return " (the default)"
	}
	return ""
}

// runRawCopyPeer runs the sink scenario's raw-copy mode with batches of
// period (any count).
func runRawCopyPeer(e env, in, out string, period time.Duration, txn bool, n int64) (peerResult, error) {
	var r result
	err := runMode(e.self, &r, &r, "-mode", "raw-copy", "--", "-brokers", e.brokers, "-in", in, "-out", out,
		"-records", fmt.Sprint(n), "-txn-records", fmt.Sprint(1<<30), "-txn-period", period.String(),
		"-transactional="+strconv.FormatBool(txn), "-size", fmt.Sprint(e.size))
	if err == nil && r.Records != n {
		err = fmt.Errorf("raw copy copied %d records, want %d", r.Records, n)
	}
	return peerResult{result: r, total: r.Wall}, err
}

// runFlinkPeer runs the Flink job for case c at parallelism par.
func runFlinkPeer(ctx context.Context, e env, job flinkJob, c flinkCase, in, out string, par int, n int64) (peerResult, error) {
	id := fmt.Sprintf("bench-flink-%d", time.Now().UnixNano())
	args := []string{"--brokers", e.brokers, "--in", in, "--group", id, "--parallelism", strconv.Itoa(par)}
	switch c.guarantee {
	case "":
		args = append(args, "--job", "read")
	case "at_least_once":
		args = append(args, "--job", "copy", "--out", out, "--guarantee", "at-least-once",
			"--checkpoint-ms", strconv.FormatInt(c.interval.Milliseconds(), 10))
	case "exactly_once":
		args = append(args, "--job", "copy", "--out", out, "--guarantee", "exactly-once",
			"--checkpoint-ms", strconv.FormatInt(c.interval.Milliseconds(), 10), "--txn-prefix", id)
	}
	fr, err := job.run(ctx, args...)
	if err != nil {
		return peerResult{}, err
	}
	o := fr.out
	if o.RecordsRead != n {
		return peerResult{}, fmt.Errorf("flink read %d records, want %d", o.RecordsRead, n)
	}
	end, endCPU := o.EndMs, o.EndCPU
	if c.guarantee == "" {
		if o.RecordsSunk != n || o.LastRecordMs == 0 {
			return peerResult{}, fmt.Errorf("flink's sink counted %d records, want %d", o.RecordsSunk, n)
		}
		end, endCPU = o.LastRecordMs, o.LastRecordCPU
	}
	r := peerResult{
		result: result{Records: n, Bytes: n * int64(e.size), Wall: float64(end-o.FirstRecordMs) / 1e3,
			CPU: fr.cpu, PeakRSS: fr.peakRSS},
		startup: float64(o.FirstRecordMs-fr.start.UnixMilli()) / 1e3,
		total:   fr.wall,
		runCPU:  endCPU - o.FirstRecordCPU,
	}
	return r, nil
}

// verifyCopy counts the output read_committed: exactly n records for
// exactly-once, at least n for at-least-once.
func verifyCopy(ctx context.Context, brokers, out, guarantee string, n int64) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	got, err := countCommitted(ctx, brokers, out)
	if err != nil {
		return got, err
	}
	switch {
	case guarantee == "exactly_once" && got != n:
		return got, fmt.Errorf("output %s holds %d records read_committed, want exactly %d", out, got, n)
	case got < n:
		return got, fmt.Errorf("output %s holds %d records read_committed, want at least %d", out, got, n)
	}
	return got, nil
}

// printFlinkSummary prints one line per case: each summary column's median
// records/s, CPU-s per M records and peak RSS, and connectd against the best
// Flink parallelism.
func printFlinkSummary(summary map[string]map[string]peerResult, pars []int) {
	cols := []string{"raw franz-go", "connectd"}
	for _, p := range pars {
		cols = append(cols, fmt.Sprintf("Flink p=%d", p))
	}
	fmt.Printf("#### Summary (records/s · CPU-s per M records · peak RSS MiB)\n\n| scenario | %s | connectd / best Flink |\n|---|%s---|\n",
		strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
	for _, c := range flinkCases {
		row := summary[c.title]
		var cells []string
		best := 0.0
		for _, col := range cols {
			m, ok := row[col]
			if !ok {
				cells = append(cells, "—")
				continue
			}
			cells = append(cells, fmt.Sprintf("%.0fk · %.2f · %.0f", m.rps()/1e3, m.CPU/float64(m.Records)*1e6, float64(m.PeakRSS)/1024))
			if strings.HasPrefix(col, "Flink") {
				best = max(best, m.rps())
			}
		}
		ratio := "—"
		if cd, ok := row["connectd"]; ok && best > 0 {
			ratio = fmt.Sprintf("%.2f", cd.rps()/best)
		}
		fmt.Printf("| %s | %s | %s |\n", c.title, strings.Join(cells, " | "), ratio)
	}
	fmt.Println()
}

func medianPeer(rs []peerResult) peerResult {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b peerResult) int {
		switch {
		case a.rps() < b.rps():
			return -1
		case a.rps() > b.rps():
			return 1
		}
		return 0
	})
	return s[len(s)/2]
}

func parseParallelisms(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p < 1 {
			return nil, fmt.Errorf("-flink-parallelism: want comma-separated parallelisms of at least 1, got %q", s)
		}
		out = append(out, p)
	}
	return out, nil
}

// loadAvg is the 1, 5 and 15 minute load average, as uptime prints it.
func loadAvg() string {
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
