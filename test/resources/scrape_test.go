package resources

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkatest"
)

// Names the dashboard or the rules read that a scrape cannot show.
var (
	// synthetic are series Prometheus makes itself, not the target.
	synthetic = map[string]bool{"up": true}

	// onlyAfterFailure are counters exported from their first increment,
	// on failures this test does not cause (a failed produce, a failed
	// fetch, a refused offset commit). Each must still be a metric its
	// component's reference page documents (docs/components/*.md, generated
	// from the specs and checked against the metric tables), so a rename
	// there fails this test too. (kafka_sink_txn_aborted is not here: the
	// fencing pair aborts transactions, cause "fenced".)
	onlyAfterFailure = map[string]bool{
		"kafka_sink_records_failed":    true,
		"kafka_source_fetch_errors":    true,
		"kafka_source_commit_failures": true,
	}
)

// TestLiveScrapeHasEveryMetric runs pipelines on the real broker with the
// built binary and the Prometheus exporter, and checks that every metric
// name that resources/grafana/connectd.json and resources/prometheus/*.yml
// read (found in their expressions, not listed here) is in a /metrics
// scrape: a renamed metric leaves a panel empty and an alert silent, and
// fails here.
//
//   - main: kafka_source (two readers, a watermark, one partition without
//     records) -> event_window -> a mapping -> kafka_sink exactly_once;
//     a record that is not JSON makes the buffer pass it on errored and the
//     mapping fail (processor_error);
//   - fenced-a and fenced-b: two copies of one kafka_source (a table, bad
//     records dead-lettered or skipped) -> kafka_sink exactly_once pipeline
//     with the same transactional id, which fence each other.
func TestLiveScrapeHasEveryMetric(t *testing.T) {
	brokers := kafkatest.Broker(t)
	used := usedNames(t)
	if len(used) == 0 {
		t.Fatal("no metric names found in the dashboard and the rules")
	}

	in := kafkatest.NewTopic(t, brokers, "res-scrape-in", 4)
	out := kafkatest.NewTopic(t, brokers, "res-scrape-out", 2)
	fencedOut := kafkatest.NewTopic(t, brokers, "res-scrape-fenced", 1)
	suffix := strings.TrimPrefix(in, "res-scrape-in")

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	produceEvents(ctx, t, brokers, in)

	mainP := startConnectd(t, freePort(t), fmt.Sprintf(mainPipeline, brokers, in, "res-scrape-main"+suffix, brokers, out, "res-scrape-main"+suffix))
	var fenced []*process
	for _, onError := range []string{"dead_letter", "skip"} {
		fenced = append(fenced, startConnectd(t, freePort(t), fmt.Sprintf(fencedPipeline,
			brokers, in, "res-scrape-"+onError+suffix, onError, brokers, fencedOut, "res-scrape-fenced"+suffix)))
	}
	procs := append([]*process{mainP}, fenced...)

	seen := map[string]bool{}
	labelsSeen := map[string]map[string]bool{}
	missing := func() []string {
		var m []string
		for n := range used {
			if !seen[n] && !synthetic[n] && !onlyAfterFailure[n] {
				m = append(m, n)
			}
		}
		sort.Strings(m)
		return m
	}
	eventually.NoError(t, 3*time.Minute, "every metric the dashboard and the rules read in a /metrics scrape", func() error {
		for _, p := range procs {
			text, err := p.scrape()
			if err != nil {
				return err
			}
			for n, labels := range sampleLabels(text) {
				seen[n] = true
				if labelsSeen[n] == nil {
					labelsSeen[n] = map[string]bool{}
				}
				for l := range labels {
					labelsSeen[n][l] = true
				}
			}
		}
		if m := missing(); len(m) > 0 {
			var b strings.Builder
			for _, n := range m {
				fmt.Fprintf(&b, "\n  %s, read by %s", n, strings.Join(used[n], "; "))
			}
			return fmt.Errorf("not exported yet:%s", b.String())
		}
		return nil
	})

	// Labels: each one an expression groups or matches by must be on a
	// metric it reads (a renamed label empties a panel and silences an
	// alert as surely as a renamed metric). Expressions that read a
	// recorded series, or a metric the scrape did not show, are left out.
	exprs := ruleExprs(t)
	for where, e := range dashboardExprs(t, readDashboard(t)) {
		exprs[where] = e
	}
	for where, e := range exprs {
		names := metricNames(e)
		checkable := true
		for _, n := range names {
			if strings.Contains(n, ":") || !synthetic[n] && labelsSeen[n] == nil {
				checkable = false
			}
		}
		if !checkable {
			continue
		}
		for _, l := range labelNames(e) {
			found := false
			for _, n := range names {
				found = found || labelsSeen[n][l]
			}
			if !found {
				t.Errorf("%s: label %s is on none of %v in the scrape", where, l, names)
			}
		}
	}

	docs := componentDocs(t)
	for n := range onlyAfterFailure {
		if _, ok := used[n]; ok && !seen[n] && !strings.Contains(docs, "`"+n+"`") {
			t.Errorf("%s (read by %s) is neither in the scrape nor a metric documented in docs/components", n, strings.Join(used[n], "; "))
		}
	}
}

// produceEvents writes JSON events to partitions 0 to 2 of topic (3 stays
// empty, so that it goes idle), first 10 minutes of history at one record
// a second, with three records that are not JSON, then 20 a second at the
// current time until ctx ends.
func produceEvents(ctx context.Context, t *testing.T, brokers, topic string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	start := time.Now().Add(-10 * time.Minute)
	err = kafkatest.ProduceN(ctx, cl, 600, func(i int64) *kgo.Record {
		v := fmt.Sprintf(`{"user":"u%d","amount":%d}`, i%5, i)
		if i%200 == 7 {
			v = "not json"
		}
		return &kgo.Record{Topic: topic, Partition: int32(i % 3), Value: []byte(v), Timestamp: start.Add(time.Duration(i) * time.Second)}
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: int32(i % 3), Value: []byte(fmt.Sprintf(`{"user":"u%d","amount":%d}`, i%5, i))}, nil)
			}
		}
	}()
}

// componentDocs returns the generated component reference pages.
func componentDocs(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "docs", "components", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs/components/*.md: %v", err)
	}
	var b strings.Builder
	for _, f := range files {
		c, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(c)
	}
	return b.String()
}

const mainPipeline = `
logger:
  level: info
metrics:
  prometheus:
    add_process_metrics: true
input:
  kafka_source:
    seed_brokers: [ "%s" ]
    topics: [ "%s" ]
    consumer_group: %s
    readers: 2
    commit_period: 1s
    watermark:
      max_out_of_orderness: 1s
      idle_timeout: 3s
buffer:
  event_window:
    type: tumbling
    size: 1m
    key: ${! json("user") }
    aggregates:
      orders: count
pipeline:
  threads: 1
  processors:
    - mapping: root = this
output:
  switch:
    cases:
      - check: errored()
        output:
          drop: {}
      - output:
          kafka_sink:
            seed_brokers: [ "%s" ]
            topic: %s
            delivery_guarantee: exactly_once
            transactional_id_prefix: %s
            commit_interval: 100ms
`

const fencedPipeline = `
logger:
  level: info
metrics:
  prometheus: {}
input:
  kafka_source:
    seed_brokers: [ "%s" ]
    topics: [ "%s" ]
    consumer_group: %s
    on_error: %s
    ddl: |
      CREATE TABLE events (
        ` + "`user`" + ` STRING,
        amount INT
      ) WITH ('connector' = 'kafka', 'format' = 'json')
pipeline:
  threads: 1
output:
  switch:
    cases:
      - check: errored()
        output:
          drop: {}
      - output:
          kafka_sink:
            seed_brokers: [ "%s" ]
            topic: %s
            delivery_guarantee: exactly_once
            transactional_id_prefix: %s
            transactional_id_suffix: "0"
            commit_interval: 100ms
`
