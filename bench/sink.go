package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Scenario "sink": Kafka -> Kafka copies of one topic, each contender a
// separate process on the same broker, for two transaction shapes (a batch
// of 10,000 records, or 100 ms of records):
//
//   - raw franz-go, transactional: kgo.GroupTransactSession, the consumed
//     offsets committed in each transaction (the practical limit for Go);
//   - raw franz-go, non-transactional: produce a batch, flush, commit the
//     consumed offsets (at-least-once);
//   - connectd kafka_source -> kafka_sink, delivery_guarantee exactly_once
//     with `commit_interval` the shape's period (its transactions end by
//     time only; the 10k-record shape's are larger than the raw copy's);
//   - connectd kafka_source -> kafka_sink, at_least_once (default
//     max_in_flight: 1 batch, as the raw copy).
//
// Each run ends when its output holds every record (read back from the
// process's counters), and reports commit latency quantiles: the raw copies
// time each commit, connectd reports kafka_sink_txn_commit_latency_ns.

var copyRecords = flag.Int64("copy-records", 1_000_000, "records copied per run in the sink scenario")

// txnShape is how a batch (a transaction) ends.
type txnShape struct {
	name    string
	records int           // count limit; 0 = none
	period  time.Duration // time limit; 0 = none
}

var txnShapes = []txnShape{
	{name: "10k-record transactions", records: 10_000, period: time.Second},
	{name: "100 ms transactions", records: 1_000_000, period: 100 * time.Millisecond},
}

// copyResult is a run's result with its commit latencies (milliseconds).
type copyResult struct {
	result
	CommitP50 float64 `json:"commit_p50_ms"`
	CommitP99 float64 `json:"commit_p99_ms"`
}

func init() {
	register("sink", sinkScenario)
	modes["raw-copy"] = rawCopyMode
}

func sinkScenario(ctx context.Context, e env) error {
	in, err := ensureTopic(ctx, e.brokers, *copyRecords, e.size, e.partitions)
	if err != nil {
		return err
	}
	type contender struct {
		name string
		run  func(shape txnShape, out string) (copyResult, error)
		// raw is the index of the raw copy of the same guarantee, the
		// row a connectd row's ratio is to (-1 for a raw row); base is
		// that of the same contender with -bin-base (-1 for none).
		raw, base int
	}
	var contenders []contender
	for _, g := range []struct{ raw, guarantee string }{
		{"raw franz-go GroupTransactSession (exactly-once)", "exactly_once"},
		{"raw franz-go copy, non-transactional (at-least-once)", "at_least_once"},
	} {
		if only := os.Getenv("BENCH_GUARANTEES"); only != "" && !slices.Contains(strings.Split(only, ","), g.guarantee) {
			continue
		}
		raw := len(contenders)
		contenders = append(contenders, contender{name: g.raw, raw: -1, base: -1, run: func(s txnShape, out string) (copyResult, error) {
			return runRawCopy(e, in, out, s, g.guarantee == "exactly_once")
		}})
		bins := e.binaries(0)
		for _, b := range bins {
			c := contender{name: withBase("connectd kafka_source -> kafka_sink "+g.guarantee, b), raw: raw, base: -1,
				run: func(s txnShape, out string) (copyResult, error) {
					return runConnectdCopy(ctx, e, b.path, in, out, s, g.guarantee)
				}}
			if b.label == "" && len(bins) > 1 {
				c.base = len(contenders) + 1
			}
			contenders = append(contenders, c)
		}
	}
	fmt.Printf("### Kafka -> Kafka copy: exactly-once and at-least-once vs raw franz-go\n\n")
	fmt.Printf("%s; %d records of %d bytes over %d partitions copied to a new topic, read_committed; "+
		"%d rounds each, alternating; medians. Commit latency: time to commit one transaction (raw: "+
		"GroupTransactSession.End or flush + offset commit; connectd: kafka_sink_txn_commit_latency_ns, exactly_once only). "+
		"connectd counts records Kafka acknowledged (kafka_sink_records_sent: at_least_once when acknowledged, exactly_once "+
		"when their transaction committed). records/s is from the process start (connectd) or the function start (raw); "+
		"\"steady\" from the first records counted (connectd) or polled (raw) to the last, the ratios are of steady rates. "+
		"CPU-s per M records and peak RSS are of the whole process.\n\n",
		time.Now().UTC().Format("2006-01-02"), *copyRecords, e.size, e.partitions, e.rounds)
	for _, shape := range txnShapes {
		results := make([]copyResults, len(contenders))
		var loads []float64
		for round := range e.rounds {
			loads = append(loads, loadAverage1())
			order := make([]int, len(contenders))
			for i := range order {
				order[i] = i
			}
			if round%2 == 1 {
				// With -bin-base, the base binary goes first in odd
				// rounds.
				for i, c := range contenders {
					if c.base > i {
						order[i], order[c.base] = c.base, i
					}
				}
			}
			for _, i := range order {
				c := contenders[i]
				out := fmt.Sprintf("bench-copy-%d-%d", time.Now().UnixNano(), i)
				r, err := c.run(shape, out)
				deleteTopic(ctx, e.brokers, out)
				if err != nil {
					return fmt.Errorf("%s, %s, round %d: %w", shape.name, c.name, round+1, err)
				}
				results[i] = append(results[i], r)
				fmt.Fprintf(os.Stderr, "%s round %d %s: %.0f records/s\n", shape.name, round+1, c.name, r.rps())
			}
		}
		fmt.Printf("#### %s\n\nLoad average (1 min) %s.\n\n| contender | records/s | steady records/s | ratio to raw | ratio to raw per round | vs base | start-up s | CPU s | CPU-s per M records | peak RSS MiB | commit p50 ms | commit p99 ms | per-round steady records/s |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
			shape.name, loadRange(loads))
		for i, c := range contenders {
			m := medianCopy(results[i])
			// Ratios: each connectd contender against the raw copy of
			// the same guarantee, and against the base binary.
			ratio, vsBase := "1.00", ""
			if c.raw >= 0 {
				ratio = fmt.Sprintf("%.2f", m.steady()/medianCopy(results[c.raw]).steady())
			}
			if c.base >= 0 {
				vsBase = fmt.Sprintf("%.2f", m.steady()/medianCopy(results[c.base]).steady())
			}
			rs, perRound := results[i].results(), "1.00"
			if c.raw >= 0 {
				perRound = steadyRatios(rs, results[c.raw].results())
			}
			fmt.Printf("| %s | %.0f | %.0f | %s | %s | %s | %.2f | %.1f | %.2f | %.0f | %.1f | %.1f | %s |\n", c.name, m.rps(), m.steady(), ratio, perRound, vsBase,
				m.Startup, m.CPU, m.CPU/float64(m.Records)*1e6, float64(m.PeakRSS)/1024, m.CommitP50, m.CommitP99, steadyRates(rs))
		}
		fmt.Println()
	}
	return nil
}

// copyResults are a contender's rounds.
type copyResults []copyResult

func (cs copyResults) results() []result {
	rs := make([]result, len(cs))
	for i, c := range cs {
		rs[i] = c.result
	}
	return rs
}

func medianCopy(rs []copyResult) copyResult {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b copyResult) int {
		return cmp.Compare(a.steady(), b.steady())
	})
	return s[len(s)/2]
}

func deleteTopic(ctx context.Context, brokers, topic string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		return
	}
	defer cl.Close()
	_, _ = kadm.NewClient(cl).DeleteTopics(ctx, topic)
}

func createTopic(ctx context.Context, brokers, topic string, partitions int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	resp, err := adm.CreateTopic(ctx, int32(partitions), 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return err
	}
	// A contender started before the broker's metadata shows the topic
	// could fail on it (a loaded broker takes a while).
	deadline := time.Now().Add(time.Minute)
	for {
		td, err := adm.ListTopics(ctx, topic)
		if err == nil && td[topic].Err == nil && len(td[topic].Partitions) == partitions {
			led := true
			for _, p := range td[topic].Partitions {
				led = led && p.Leader >= 0
			}
			if led {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topic %s not ready in metadata after a minute", topic)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runRawCopy runs the raw-copy mode as a process.
func runRawCopy(e env, in, out string, shape txnShape, txn bool) (copyResult, error) {
	if err := createTopic(context.Background(), e.brokers, out, e.partitions); err != nil {
		return copyResult{}, err
	}
	var r copyResult
	err := runMode(e.self, &r, &r.result, "-mode", "raw-copy", "--", "-brokers", e.brokers, "-in", in, "-out", out,
		"-records", fmt.Sprint(*copyRecords), "-txn-records", fmt.Sprint(shape.records), "-txn-period", shape.period.String(),
		"-transactional="+strconv.FormatBool(txn), "-size", fmt.Sprint(e.size))
	return r, err
}

// rawCopyMode copies -records records from -in to -out with a bare kgo
// client, in batches of -txn-records or -txn-period, and prints a
// copyResult.
func rawCopyMode(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("raw-copy", flag.ContinueOnError)
	brokers := fs.String("brokers", "127.0.0.1:19092", "bootstrap address")
	in := fs.String("in", "", "input topic")
	out := fs.String("out", "", "output topic")
	records := fs.Int64("records", 0, "records to copy")
	size := fs.Int("size", 200, "record size, for MB/s")
	txnRecords := fs.Int("txn-records", 10_000, "records per batch")
	txnPeriod := fs.Duration("txn-period", time.Second, "longest batch")
	transactional := fs.Bool("transactional", true, "GroupTransactSession (else produce, flush, commit)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	group := fmt.Sprintf("bench-raw-copy-%d", time.Now().UnixNano())
	opts := []kgo.Opt{
		kgo.SeedBrokers(*brokers),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(*in),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.DefaultProduceTopic(*out),
		kgo.ProducerLinger(0),
		kgo.DisableAutoCommit(),
	}
	start := time.Now()
	var (
		copied    int64
		latencies []time.Duration
		first     time.Time
	)
	if *transactional {
		opts = append(opts, kgo.TransactionalID(group),
			kgo.TransactionTimeout(time.Minute))
		sess, err := kgo.NewGroupTransactSession(opts...)
		if err != nil {
			return err
		}
		defer sess.Close()
		for copied < *records {
			if err := sess.Begin(); err != nil {
				return err
			}
			n, err := fillBatch(ctx, sess.Client(), *txnRecords, *txnPeriod, *records-copied, &first, func(r *kgo.Record) {
				sess.Produce(ctx, &kgo.Record{Key: r.Key, Value: r.Value}, nil)
			})
			if err != nil {
				return err
			}
			t := time.Now()
			committed, err := sess.End(ctx, kgo.TryCommit)
			if err != nil {
				return err
			}
			latencies = append(latencies, time.Since(t))
			if committed {
				copied += n
			}
		}
	} else {
		opts = append(opts, kgo.BlockRebalanceOnPoll())
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return err
		}
		defer cl.Close()
		for copied < *records {
			var polled []*kgo.Record
			n, err := fillBatch(ctx, cl, *txnRecords, *txnPeriod, *records-copied, &first, func(r *kgo.Record) {
				polled = append(polled, r)
				cl.Produce(ctx, &kgo.Record{Key: r.Key, Value: r.Value}, nil)
			})
			if err != nil {
				return err
			}
			t := time.Now()
			if err := cl.Flush(ctx); err != nil {
				return err
			}
			if err := cl.CommitRecords(ctx, polled...); err != nil {
				return err
			}
			cl.AllowRebalance()
			latencies = append(latencies, time.Since(t))
			copied += n
		}
	}
	r := copyResult{result: result{Records: copied, Bytes: copied * int64(*size), Wall: time.Since(start).Seconds(),
		Startup: first.Sub(start).Seconds()}}
	r.CommitP50, r.CommitP99 = quantileMs(latencies, 0.5), quantileMs(latencies, 0.99)
	return jsonOut(r)
}

// fillBatch polls until it has handed limit records to each (or left, or
// period passed) and returns how many it handed.
// first is set to when the first records were polled, if it is zero.
func fillBatch(ctx context.Context, cl *kgo.Client, limit int, period time.Duration, left int64, first *time.Time, each func(*kgo.Record)) (int64, error) {
	deadline := time.Now().Add(period)
	var n int64
	for n < int64(limit) && n < left {
		wait := time.Until(deadline)
		if wait <= 0 {
			break
		}
		pctx, cancel := context.WithTimeout(ctx, wait)
		fs := cl.PollRecords(pctx, int(min(int64(limit)-n, left-n)))
		cancel()
		if err := fs.Err0(); err != nil && err != context.DeadlineExceeded {
			return n, err
		}
		if *first == (time.Time{}) && fs.NumRecords() > 0 {
			*first = time.Now()
		}
		fs.EachRecord(func(r *kgo.Record) {
			n++
			each(r)
		})
	}
	return n, nil
}

func quantileMs(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[int(q*float64(len(s)-1))]) / float64(time.Millisecond)
}

var (
	outputSentRe = regexp.MustCompile(`(?m)^output_sent\{[^}]*\} ([0-9.e+]+)$`)
	// sinkSentRe is kafka_sink's count of records acknowledged by Kafka
	// (exactly_once: committed), for one output topic.
	sinkSentRe      = regexp.MustCompile(`(?m)^kafka_sink_records_sent\{[^}]*\} ([0-9.e+]+)$`)
	commitLatencyRe = regexp.MustCompile(`(?m)^kafka_sink_txn_commit_latency_ns\{[^}]*quantile="(0\.5|0\.99)"[^}]*\} ([0-9.e+]+)$`)
)

// runConnectdCopy runs kafka_source -> kafka_sink until
// kafka_sink_records_sent counts every record (acknowledged by Kafka;
// exactly_once: committed).
func runConnectdCopy(ctx context.Context, e env, bin, in, out string, shape txnShape, guarantee string) (copyResult, error) {
	if err := createTopic(ctx, e.brokers, out, e.partitions); err != nil {
		return copyResult{}, err
	}
	group := fmt.Sprintf("bench-copy-%d", time.Now().UnixNano())
	// Both guarantees run with max_in_flight 1, the default (and the
	// only value exactly_once allows). at_least_once batches as the raw
	// copy flushes (shape.records or shape.period); exactly_once commits a
	// transaction every shape.period (commit_interval) and writes with the
	// sink's default batching: its transactions end by time only.
	sinkTail := fmt.Sprintf("\n    batching:\n      count: %d\n      period: %s", shape.records, shape.period)
	if guarantee == "exactly_once" {
		sinkTail = fmt.Sprintf("\n    transactional_id_prefix: %q\n    commit_interval: %s", group, shape.period)
	}
	yaml := fmt.Sprintf(`
input:
  kafka_source:
    seed_brokers: [ %[1]q ]
    topics: [ %[2]q ]
    consumer_group: %[3]q
    start_from: earliest
output:
  kafka_sink:
    seed_brokers: [ %[1]q ]
    topic: %[4]q
    key: ${! @kafka_key }
    delivery_guarantee: %[5]s%[6]s
`, e.brokers, in, group, out, guarantee, sinkTail)
	res, body, err := runConnectd(ctx, bin, yaml, nil, sinkSentRe, *copyRecords)
	if err != nil {
		return copyResult{}, fmt.Errorf("copying %d records: %w", *copyRecords, err)
	}
	res.Bytes = res.Records * int64(e.size)
	r := copyResult{result: res}
	for _, m := range commitLatencyRe.FindAllStringSubmatch(body, -1) {
		ns, _ := strconv.ParseFloat(m[2], 64)
		if m[1] == "0.5" {
			r.CommitP50 = ns / 1e6
		} else {
			r.CommitP99 = ns / 1e6
		}
	}
	return r, nil
}
