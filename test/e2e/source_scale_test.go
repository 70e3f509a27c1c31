package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkatest"
)

// uniquePrefix is a topic-name prefix no other test or run uses.
func uniquePrefix(name string) string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return name + "-" + hex.EncodeToString(b[:]) + "-"
}

// newTopics creates n topics of partitions partitions each, named prefix +
// t00, t01, ..., in one CreateTopics request, waits (at most two minutes:
// a loaded controller is slow to place 1,000 partitions) until every
// partition has a leader, and deletes them when the test ends. It returns
// their names and a topic_pattern matching them and nothing else.
func newTopics(t *testing.T, brokers, prefix string, n, partitions int) ([]string, string) {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%st%02d", prefix, i)
	}
	adm, err := kadm.NewOptClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(adm.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.CreateTopics(ctx, int32(partitions), 1, nil, names...)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("creating %d topics of %d partitions: %v", n, partitions, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := adm.DeleteTopics(ctx, names...); err != nil {
			t.Logf("deleting the topics: %v", err)
		}
	})
	eventually.NoError(t, 2*time.Minute, fmt.Sprintf("a leader for each of the %d partitions", n*partitions), func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		md, err := adm.Metadata(ctx, names...)
		if err != nil {
			return err
		}
		ready := 0
		for _, td := range md.Topics {
			for _, p := range td.Partitions {
				if p.Err == nil && p.Leader >= 0 {
					ready++
				}
			}
		}
		if ready != n*partitions {
			return fmt.Errorf("%d of %d partitions have a leader", ready, n*partitions)
		}
		return nil
	})
	return names, regexp.QuoteMeta(prefix) + `t[0-9]{2}`
}

// TestSourceBoundedManyPartitions runs a bounded read (start_from earliest,
// stop_at latest) of 1,000 partitions over 20 topics, subscribed by
// topic_pattern, on the real broker: connectd must exit 0 on its own with
// every record written once and the end offset of every partition
// committed.
//
// 1,000 and not 10,000 partitions: the test shares its broker with the
// rest of the suite, whose open-file limit 10,000 partitions would crowd
// (one log segment file each; see docs/benchmarks.md), and creating,
// filling and deleting them takes minutes on two loaded cores. `make bench`
// (scenario partitions10k) runs the full size on a broker of its own.
//
// The consumer group's name is 1,100 characters long: the broker writes an
// offset commit's records as one batch, and a record carries the group's
// name, so one commit of these 1,000 partitions is over the broker's
// message.max.bytes (1 MiB), as one of 10,000 partitions with ordinary
// names is. The source must split its commits (a refused final commit would
// keep the run from ending).
func TestSourceBoundedManyPartitions(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	const (
		topics     = 20
		partitions = 50
		perPart    = 20
		total      = topics * partitions * perPart
	)
	names, pattern := newTopics(t, brokers, uniquePrefix("e2e-many"), topics, partitions)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	err = kafkatest.ProduceN(ctx, cl, total, func(i int64) *kgo.Record {
		p := int(i) % (topics * partitions)
		return &kgo.Record{Topic: names[p/partitions], Partition: int32(p % partitions), Value: []byte(fmt.Sprintf("r-%06d", i))}
	})
	if err != nil {
		t.Fatal(err)
	}

	group := "e2e-many-" + strings.Repeat("g", 1100) + "-" + names[0]
	out := filepath.Join(t.TempDir(), "out.txt")
	conf := writeFile(t, "many.yaml", fmt.Sprintf(`
logger:
  level: info
input:
  kafka_source:
    seed_brokers: [ %q ]
    topic_pattern: %q
    consumer_group: %q
    start_from: earliest
    stop_at: latest
output:
  file:
    path: %q
    codec: lines
`, brokers, pattern, group, out))
	cmd := exec.CommandContext(ctx, connectdBin(t), "run", conf)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("connectd run: %v after %v (want exit 0 at the end of input)\n%s", err, time.Since(start), tail(logs.String(), 40))
	}
	t.Logf("bounded read of %d records over %d partitions of %d topics exited 0 after %v",
		total, topics*partitions, topics, time.Since(start).Round(time.Millisecond))
	if !strings.Contains(logs.String(), fmt.Sprintf("reading %d partitions", topics*partitions)) {
		t.Errorf("no start-up line for %d partitions:\n%s", topics*partitions, tail(logs.String(), 40))
	}

	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	seen := make(map[string]bool, len(lines))
	for _, l := range lines {
		seen[l] = true
	}
	if len(lines) != total || len(seen) != total {
		t.Fatalf("output has %d lines (%d distinct records), want exactly %d", len(lines), len(seen), total)
	}

	adm, err := kadm.NewOptClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ends, err := adm.ListEndOffsets(ctx, names...)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	wrong := 0
	ends.Each(func(e kadm.ListedOffset) {
		if c, ok := committed.Lookup(e.Topic, e.Partition); !ok || c.At != e.Offset {
			if wrong++; wrong <= 5 {
				t.Errorf("topic %s partition %d: committed %v, want the end offset %d", e.Topic, e.Partition, c.At, e.Offset)
			}
		}
	})
	if wrong > 0 {
		t.Errorf("%d of %d partitions not committed at their end", wrong, topics*partitions)
	}
	// Deleting the group writes a tombstone per offset in one batch, too
	// large for this group's name: its offsets go first, a topic at a time.
	for _, topic := range names {
		s := make(kadm.TopicsSet)
		for p := range int32(partitions) {
			s.Add(topic, p)
		}
		if _, err := adm.DeleteOffsets(ctx, group, s); err != nil {
			t.Logf("deleting the offsets of topic %s of the group: %v", topic, err)
		}
	}
	if _, err := adm.DeleteGroup(ctx, group); err != nil {
		t.Logf("deleting the group: %v", err)
	}
}

// sourceLines are the kafka_source_ lines of a /metrics page.
func sourceLines(page string) string {
	var out []string
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, "kafka_source_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestSourcePartitionMetricsPerTopic runs kafka_source with
// partition_metrics: topic over two topics of four partitions: /metrics must
// carry no series with a partition label, and the per-topic gauges must be
// the sums over each topic's partitions (offset and committed offset 40
// each, lag 0).
func TestSourcePartitionMetricsPerTopic(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	names, pattern := newTopics(t, brokers, uniquePrefix("e2e-topic-metrics"), 2, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for _, topic := range names {
		for p := range int32(4) {
			for range 10 {
				recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte("0123456789")})
			}
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	port := freePort(t)
	conf := writeFile(t, "topic-metrics.yaml", fmt.Sprintf(`
http:
  address: 127.0.0.1:%d
logger:
  level: warn
input:
  kafka_source:
    seed_brokers: [ %q ]
    topic_pattern: %q
    consumer_group: %q
    start_from: earliest
    commit_period: 100ms
    partition_metrics: topic
    watermark: { max_out_of_orderness: 1s }
output:
  drop: {}
`, port, brokers, pattern, names[0]+"-group"))
	cmd := exec.Command(connectdBin(t), "run", conf)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	var want []*regexp.Regexp
	for _, topic := range names {
		q := regexp.QuoteMeta(topic)
		for _, m := range []struct{ name, value string }{
			{"kafka_source_offset", "40"},
			{"kafka_source_committed_offset", "40"},
			{"kafka_source_lag", "0"},
			{"kafka_source_unacked_records", "0"},
			{"kafka_source_partition_watermark_ms", "[0-9.e+]+"},
		} {
			want = append(want, regexp.MustCompile(fmt.Sprintf(`(?m)^%s\{[^}]*topic="%s"[^}]*\} %s$`, m.name, q, m.value)))
		}
	}
	var page string
	eventually.NoError(t, 60*time.Second, "the per-topic sums at /metrics", func() error {
		var err error
		if page, err = scrape(port); err != nil {
			return err
		}
		for _, re := range want {
			if !re.MatchString(page) {
				return fmt.Errorf("no line matching %s in:\n%s", re, sourceLines(page))
			}
		}
		return nil
	})
	if m := regexp.MustCompile(`(?m)^kafka_source_[a-z_]+\{[^}]*partition="[^}]*\}.*$`).FindString(page); m != "" {
		t.Errorf("with partition_metrics: topic, /metrics has a series with a partition label: %s", m)
	}
}
