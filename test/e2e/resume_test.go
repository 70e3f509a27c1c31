package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkatest"
)

// DESIGN.md contract 8 with the built binary on the real broker: the
// group's committed offsets are the pipeline's state, so an exactly-once
// copy that is stopped (SIGKILL or SIGTERM) and started again resumes from
// them whatever start_from says, and writes each input record once.
const (
	resumePartitions = 4
	// resumeRecords are the records a case expects in the output.
	resumeRecords = 1000
	// resumeOld are records written before them that start_from leaves
	// out (latest, timestamp, offsets): 50 per partition.
	resumeOld = 200
	// resumeTail are records written after a clean restart.
	resumeTail = 100
)

// resumeCase is one start_from setting and the input that makes its
// expected output clear.
type resumeCase struct {
	name string
	// start are the kafka_source fields that say where to start; in is
	// the input topic, ts the timestamp of the expected records.
	start func(in string, ts time.Time) string
	// old: resumeOld records precede the expected ones, an hour older.
	old bool
	// afterStart: the expected records are written once the first
	// process has connected (start_from: latest).
	afterStart bool
	// term stops the first process with SIGTERM once it copied
	// everything, and writes resumeTail records after the restart;
	// otherwise it is SIGKILLed mid-stream.
	term bool
}

// TestRestartResumesFromCommitted: for each start_from, an exactly-once
// copy (kafka_source -> kafka_sink exactly_once, throttled to about 1,000
// records/s so that the kill lands mid-stream) is SIGKILLed after a third
// of its input and started again with the same consumer group; then with
// earliest, stopped with SIGTERM after copying everything, started again
// and fed a tail. A read_committed franz-go consumer and kcat each see
// every expected record once and nothing else. Before the committed
// offsets took precedence, every mode but committed re-read from start_from:
// earliest, timestamp and offsets wrote duplicates, and latest skipped the
// records not yet copied.
func TestRestartResumesFromCommitted(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	kcat := kafkatest.Kcat(t)
	cases := []resumeCase{
		{name: "earliest", start: func(string, time.Time) string { return "start_from: earliest" }},
		{name: "committed", start: func(string, time.Time) string { return "start_from: committed\ncommitted_fallback: earliest" }},
		{name: "latest", start: func(string, time.Time) string { return "start_from: latest" }, old: true, afterStart: true},
		{name: "timestamp", old: true, start: func(_ string, ts time.Time) string {
			return fmt.Sprintf("start_from: timestamp\nstart_timestamp: %d", ts.UnixMilli())
		}},
		{name: "offsets", old: true, start: func(in string, _ time.Time) string {
			at := resumeOld / resumePartitions // the first expected record's offset in every partition
			return fmt.Sprintf("start_from: offsets\nstart_offsets: { %q: { 0: %d, 1: %d, 2: %d, 3: %d } }", in, at, at, at, at)
		}},
		{name: "earliest, SIGTERM", start: func(string, time.Time) string { return "start_from: earliest" }, term: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testResume(t, brokers, kcat, tc)
		})
	}
}

func testResume(t *testing.T, brokers, kcat string, tc resumeCase) {
	in := kafkatest.NewTopic(t, brokers, "e2e-restart-in", resumePartitions)
	out := kafkatest.NewTopic(t, brokers, "e2e-restart-out", 1)
	group := in + "-g"
	ts := time.Now().Truncate(time.Millisecond)
	if tc.old {
		produceResume(t, brokers, in, "old", resumeOld, ts.Add(-time.Hour))
	}
	if !tc.afterStart {
		produceResume(t, brokers, in, "new", resumeRecords, ts)
	}
	conf := writeFile(t, "restart.yaml", resumeConfig(brokers, in, out, group, tc.start(in, ts)))

	ctx, cancel := context.WithCancel(context.Background())
	tally := newOutputTally()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); tally.run(ctx, t, brokers, out) }()
	defer wg.Wait()
	defer cancel()

	first := startConnectd(t, conf)
	if tc.afterStart {
		waitLog(t, first, "kafka_source: reading ")
		produceResume(t, brokers, in, "new", resumeRecords, ts)
	}
	want := resumeRecords
	if tc.term {
		waitTotal(t, tally, resumeRecords, time.Minute, first)
		first.stop()
		if code := first.cmd.ProcessState.ExitCode(); code != 0 {
			t.Fatalf("SIGTERM: exit code %d, want 0:\n%s", code, first.logs.String())
		}
	} else {
		waitTotal(t, tally, resumeRecords/3, time.Minute, first)
		// Every partition has a committed offset (the source commits its
		// start position within commit_period): a partition without one
		// would start at start_from again, which for latest skips what
		// was written meanwhile, as in Flink.
		waitAllCommitted(t, brokers, group, in, first)
		first.kill()
		if !behindEnd(t, brokers, group, in) {
			t.Fatalf("the group's offsets reached the end of %s before the SIGKILL: the kill did not land mid-stream", in)
		}
	}
	distinct, total := tally.counts()
	t.Logf("%v: stopped the first process at %d distinct / %d total committed output records", time.Since(ts).Round(time.Millisecond), distinct, total)

	second := startConnectd(t, conf)
	if tc.term {
		waitLog(t, second, "kafka_source: reading ")
		produceResume(t, brokers, in, "tail", resumeTail, ts)
		want += resumeTail
	}
	waitTotal(t, tally, want, time.Minute, first, second)
	t.Logf("%v: copied", time.Since(ts).Round(time.Millisecond))
	second.stop()
	t.Logf("%v: stopped", time.Since(ts).Round(time.Millisecond))

	expected := map[string]bool{}
	for i := range resumeRecords {
		expected[fmt.Sprintf("new-%d", i)] = true
	}
	if tc.term {
		for i := range resumeTail {
			expected[fmt.Sprintf("tail-%d", i)] = true
		}
	}
	for _, reader := range []struct {
		name string
		read func() [][]byte
	}{
		{"franz-go read_committed", func() [][]byte { return readAllCommitted(t, brokers, out) }},
		{"kcat read_committed", func() [][]byte { return kcatAll(t, kcat, brokers, out) }},
	} {
		seen := map[string]int{}
		var duplicates, unexpected []string
		values := reader.read()
		for _, v := range values {
			s := string(v)
			seen[s]++
			switch {
			case !expected[s]:
				unexpected = append(unexpected, s)
			case seen[s] == 2:
				duplicates = append(duplicates, s)
			}
		}
		missing := 0
		for v := range expected {
			if seen[v] == 0 {
				missing++
			}
		}
		t.Logf("%s: %d expected, %d read, %d duplicated, %d missing, %d not expected", reader.name, len(expected), len(values),
			len(duplicates), missing, len(unexpected))
		if len(values) != len(expected) || len(duplicates) > 0 || missing > 0 || len(unexpected) > 0 {
			t.Errorf("%s: not each expected record exactly once (duplicates %q, not expected %q, at most 5 of each)", reader.name,
				duplicates[:min(5, len(duplicates))], unexpected[:min(5, len(unexpected))])
		}
	}
	if t.Failed() {
		t.Logf("--- first process:\n%s\n--- second process:\n%s", first.logs.String(), second.logs.String())
	}
}

// resumeConfig is an exactly-once copy from in to out with the given start
// fields, throttled by a sleep of 1ms per record (Benthos's sleep processor sleeps per message): 1,000 records/s at most.
func resumeConfig(brokers, in, out, group, start string) string {
	return fmt.Sprintf(`
http:
  enabled: false
logger:
  level: info
input:
  kafka_source:
    seed_brokers: [ %[1]q ]
    topics: [ %[2]q ]
    consumer_group: %[4]q
    commit_period: 200ms
    batch_size: 50
    %[5]s
pipeline:
  threads: 1
  processors:
    - sleep:
        duration: 1ms
output:
  kafka_sink:
    seed_brokers: [ %[1]q ]
    topic: %[3]q
    delivery_guarantee: exactly_once
    transactional_id_prefix: %[2]q
    transaction_timeout: 20s
    batching:
      count: 100
      period: 50ms
`, brokers, in, out, group, strings.ReplaceAll(start, "\n", "\n    "))
}

// produceResume writes n records with values "<prefix>-<i>" and timestamp
// ts, record i to partition i mod resumePartitions, in order.
func produceResume(t *testing.T, brokers, topic, prefix string, n int, ts time.Time) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Partition: int32(i % resumePartitions), Value: fmt.Appendf(nil, "%s-%d", prefix, i), Timestamp: ts}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("producing %s records to %s: %v", prefix, topic, err)
	}
}

// waitLog waits until the process has logged want.
func waitLog(t *testing.T, p *eosProcess, want string) {
	t.Helper()
	eventually.NoError(t, time.Minute, fmt.Sprintf("the process to log %q", want), func() error {
		if !strings.Contains(p.logs.String(), want) {
			return stateWithLogs("not logged", p.logs)
		}
		return nil
	})
}

// newAdmin returns an admin client of brokers, closed at cleanup.
func newAdmin(t *testing.T, brokers string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// committedOffsets returns the offsets group committed for topic.
func committedOffsets(t *testing.T, adm *kadm.Client, group, topic string) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("fetching the offsets of group %q: %v", group, err)
	}
	out := map[int32]int64{}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil && o.At >= 0 {
			out[o.Partition] = o.At
		}
	})
	return out
}

// waitAllCommitted waits until group has a committed offset for every
// partition of topic.
func waitAllCommitted(t *testing.T, brokers, group, topic string, p *eosProcess) {
	t.Helper()
	adm := newAdmin(t, brokers)
	eventually.NoError(t, time.Minute, fmt.Sprintf("group %q to commit every partition of %s", group, topic), func() error {
		if got := committedOffsets(t, adm, group, topic); len(got) != resumePartitions {
			return stateWithLogs(fmt.Sprintf("committed %v", got), p.logs)
		}
		return nil
	})
}

// behindEnd reports whether a committed offset of group is below the end
// of its partition of topic: records were left to copy.
func behindEnd(t *testing.T, brokers, group, topic string) bool {
	t.Helper()
	adm := newAdmin(t, brokers)
	committed := committedOffsets(t, adm, group, topic)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	behind := false
	ends.Each(func(o kadm.ListedOffset) {
		if c, ok := committed[o.Partition]; !ok || c < o.Offset {
			behind = true
		}
	})
	return behind
}

// TestReadWithoutGroup: a bounded read (start_from: earliest, stop_at:
// latest) without consumer_group, as YAML fields and as a table without
// 'properties.group.id', exits 0 with every record, says at start-up that
// nothing is committed, and commits nothing: no group on the broker holds
// an offset of its topic, and there is no group "". A second run reads
// everything again.
func TestReadWithoutGroup(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	for _, tc := range []struct {
		name  string
		input func(topic string) string
	}{
		{"fields", func(topic string) string {
			return fmt.Sprintf("  kafka_source:\n    seed_brokers: [ %q ]\n    topics: [ %q ]\n    start_from: earliest\n    stop_at: latest\n", brokers, topic)
		}},
		{"table", func(topic string) string {
			return fmt.Sprintf("  kafka_source:\n    ddl: |\n      CREATE TABLE t (v STRING) WITH ('connector' = 'kafka', 'topic' = '%s', "+
				"'properties.bootstrap.servers' = '%s', 'format' = 'raw', 'scan.startup.mode' = 'earliest-offset', "+
				"'scan.bounded.mode' = 'latest-offset')\n", topic, brokers)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			topic := kafkatest.NewTopic(t, brokers, "e2e-nogroup", resumePartitions)
			produceResume(t, brokers, topic, "r", 500, time.Now())
			dir := t.TempDir()
			outFile := filepath.Join(dir, "out.txt")
			conf := writeFile(t, "nogroup.yaml", fmt.Sprintf("http:\n  enabled: false\nlogger:\n  level: info\ninput:\n%s"+
				"output:\n  file:\n    path: %q\n    codec: lines\n", tc.input(topic), outFile))
			if out, code := runCLI(t, 90*time.Second, "lint", conf); code != 0 {
				t.Fatalf("lint exit %d:\n%s", code, out)
			}
			for run := 1; run <= 2; run++ {
				_ = os.Remove(outFile)
				logs, code := runCLI(t, 90*time.Second, "run", conf)
				if code != 0 {
					t.Fatalf("run %d: exit code %d, want 0:\n%s", run, code, logs)
				}
				if !strings.Contains(logs, "no consumer_group: nothing is committed") {
					t.Errorf("run %d: no start-up line saying that nothing is committed:\n%s", run, logs)
				}
				data, err := os.ReadFile(outFile)
				if err != nil {
					t.Fatal(err)
				}
				if n := strings.Count(string(data), "\n"); n != 500 {
					t.Fatalf("run %d wrote %d records, want 500", run, n)
				}
			}
			adm := newAdmin(t, brokers)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			groups, err := adm.ListGroups(ctx)
			if err != nil {
				t.Fatal(err)
			}
			names := groups.Groups()
			if slices.Contains(names, "") {
				t.Errorf("the broker has a group \"\"")
			}
			for g, resp := range adm.FetchManyOffsets(ctx, names...) {
				resp.Fetched.Each(func(o kadm.OffsetResponse) {
					if o.Topic == topic {
						t.Errorf("group %q committed offset %d of %s partition %d", g, o.At, topic, o.Partition)
					}
				})
			}
		})
	}
}
