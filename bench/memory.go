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

// Scenario "memory": connectd's peak RSS and throughput at its defaults for
// the three job shapes of issue 13 (read -> drop, at-least-once copy,
// exactly-once copy at the default commit_interval), N records of S bytes
// over P partitions (-flink-records, -size, -partitions: the topic of the
// flink scenario, reused), each run a fresh process on a fresh consumer
// group. With -bin-base the base binary runs beside -bin, the two taking
// turns going first; -memory-env adds variants of the environment (say
// GOGC or GOMEMLIMIT), each a contender of its own. Every copy is verified
// as in the flink scenario (read_committed: exactly N for exactly-once, at
// least N for at-least-once).
//
//	go run ./bench -scenarios memory -bin bin/connectd -bin-base /tmp/connectd-main -flink-records 1000000 -rounds 3

var memoryEnv = flag.String("memory-env", "", "memory scenario: ';'-separated environment variants, each space-separated K=V pairs "+
	"(say 'GOGC=100;GOGC=400'); each is a contender besides the unchanged environment")

func init() { register("memory", memoryScenario) }

// memoryCase is one job shape of the memory scenario.
type memoryCase struct {
	title     string
	guarantee string // "" for read -> drop
}

var memoryCases = []memoryCase{
	{title: "read → drop"},
	{title: "at-least-once copy", guarantee: "at_least_once"},
	{title: "exactly-once copy (commit_interval 1s, the default)", guarantee: "exactly_once"},
}

// memoryContender is a binary with an environment.
type memoryContender struct {
	bin binary
	env []string
}

func (c memoryContender) name() string {
	n := "connectd"
	if c.bin.label != "" {
		n += " [" + c.bin.label + ": " + c.bin.path + "]"
	}
	if len(c.env) > 0 {
		n += " `" + strings.Join(c.env, " ") + "`"
	}
	return n
}

func memoryScenario(ctx context.Context, e env) error {
	n := *flinkRecords
	in, err := ensureTopic(ctx, e.brokers, n, e.size, e.partitions)
	if err != nil {
		return err
	}
	envs := [][]string{nil}
	for _, v := range strings.Split(*memoryEnv, ";") {
		if f := strings.Fields(v); len(f) > 0 {
			envs = append(envs, f)
		}
	}
	loadStart := loadAvg()
	type row struct {
		c    memoryContender
		runs []result
	}
	results := make([][]*row, len(memoryCases))
	for ci, mc := range memoryCases {
		byName := map[string]*row{}
		for round := range e.rounds {
			for _, b := range e.binaries(round) {
				for _, ev := range envs {
					c := memoryContender{bin: b, env: ev}
					r, err := runMemoryCase(ctx, e, c, mc, in, n)
					if err != nil {
						return fmt.Errorf("%s, %s, round %d: %w", mc.title, c.name(), round+1, err)
					}
					fmt.Fprintf(os.Stderr, "%s round %d %s: %.0f records/s, %.2f CPU-s/M, %.0f MiB (load %s)\n",
						mc.title, round+1, c.name(), r.rps(), r.CPU/float64(r.Records)*1e6, float64(r.PeakRSS)/1024, loadAvg())
					rw := byName[c.name()]
					if rw == nil {
						rw = &row{c: c}
						byName[c.name()] = rw
						results[ci] = append(results[ci], rw)
					}
					rw.runs = append(rw.runs, r)
				}
			}
		}
	}
	fmt.Printf("### Peak RSS and throughput at the defaults\n\n")
	fmt.Printf("%s; %d records of %d bytes over %d partitions, read_committed from the start; copies into a fresh %d-partition "+
		"topic, verified read_committed; %d rounds, alternating; medians (the round with the median records/s). Load average "+
		"(1, 5, 15 min) at the start %s, at the end %s.\n\n",
		time.Now().UTC().Format("2006-01-02"), n, e.size, e.partitions, e.partitions, e.rounds, loadStart, loadAvg())
	for ci, mc := range memoryCases {
		fmt.Printf("#### %s\n\n", mc.title)
		fmt.Printf("| contender | records/s | CPU-s per M records | peak RSS MiB (median) | peak RSS MiB (max) | per-round records/s | per-round peak RSS MiB |\n|---|---|---|---|---|---|---|\n")
		for _, rw := range results[ci] {
			m := median(rw.runs)
			var rss []string
			var maxRSS int64
			for _, r := range rw.runs {
				rss = append(rss, fmt.Sprintf("%.0f", float64(r.PeakRSS)/1024))
				maxRSS = max(maxRSS, r.PeakRSS)
			}
			fmt.Printf("| %s | %.0f | %.2f | %.0f | %.0f | %s | %s |\n", rw.c.name(), m.rps(), m.CPU/float64(m.Records)*1e6,
				float64(medianRSS(rw.runs))/1024, float64(maxRSS)/1024, rates(rw.runs), strings.Join(rss, ", "))
		}
		fmt.Println()
	}
	return nil
}

// runMemoryCase runs contender c on case mc once.
func runMemoryCase(ctx context.Context, e env, c memoryContender, mc memoryCase, in string, n int64) (result, error) {
	group := fmt.Sprintf("bench-memory-%d", time.Now().UnixNano())
	output, done := "drop: {}", receivedRe
	var out string
	if mc.guarantee != "" {
		out = fmt.Sprintf("bench-memory-out-%d", time.Now().UnixNano())
		if err := createTopic(ctx, e.brokers, out, e.partitions); err != nil {
			return result{}, fmt.Errorf("creating output topic %s: %w", out, err)
		}
		defer deleteTopic(ctx, e.brokers, out)
		txnPrefix := ""
		if mc.guarantee == "exactly_once" {
			txnPrefix = group
		}
		output = kafkaSinkYAML(e.brokers, out, mc.guarantee, txnPrefix, 0)
		// Batches from kafka_source are acknowledged once the sink
		// handed their records to its producer, before Kafka has them
		// (and, exactly-once, before their transaction commits): count
		// the records Kafka acknowledged (committed).
		done = sinkSentRe
	}
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
	r, _, err := runConnectd(ctx, c.bin.path, yaml, c.env, done, n)
	if err != nil {
		return result{}, err
	}
	if out == "" && r.Records != n {
		return result{}, fmt.Errorf("connectd counted %d records, want %d", r.Records, n)
	}
	if out != "" {
		if _, err := verifyCopy(ctx, e.brokers, out, mc.guarantee, n); err != nil {
			return result{}, err
		}
	}
	r.Records, r.Bytes = n, n*int64(e.size)
	return r, nil
}

// medianRSS is the median peak RSS of rs.
func medianRSS(rs []result) int64 {
	v := make([]int64, len(rs))
	for i, r := range rs {
		v[i] = r.PeakRSS
	}
	slices.Sort(v)
	return v[len(v)/2]
}
