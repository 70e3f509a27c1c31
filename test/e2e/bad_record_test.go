package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkatest"
)

// The bad-record topic: badPartitions partitions of badPerPartition JSON
// rows each, except one malformed record at offset badOffset of partition
// badPartition.
const (
	badPartitions   = 2
	badPerPartition = 15
	badPartition    = 1
	badOffset       = 7
	badBytes        = "this is {not json"
)

// badTable is the table of the rows, as Flink DDL; with is added to its
// WITH options.
func badTable(with string) string {
	return "CREATE TABLE t (id BIGINT NOT NULL, name STRING) WITH ('format' = 'json'" + with + ")"
}

// newBadRecordTopic creates the topic and returns its name and the ids of
// the good records.
func newBadRecordTopic(t *testing.T, brokers string) (string, map[int64]bool) {
	t.Helper()
	topic := kafkatest.NewTopic(t, brokers, "e2e-bad-record", badPartitions)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	good := map[int64]bool{}
	var recs []*kgo.Record
	for p := range int32(badPartitions) {
		for o := range int64(badPerPartition) {
			v := []byte(badBytes)
			if p != badPartition || o != badOffset {
				id := int64(p)*1000 + o
				good[id] = true
				v = fmt.Appendf(nil, `{"id":%d,"name":"r-%d"}`, id, id)
			}
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: v})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return topic, good
}

// runToExit runs the config and returns its stdout, stderr, exit code and
// run time; it fails the test if the run does not end within timeout.
func runToExit(t *testing.T, config string, timeout time.Duration) (stdout, stderr string, code int, took time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, connectdBin(t), "run", writeFile(t, "bad_record.yaml", config))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("connectd did not end within %v\nstdout:\n%s\nstderr:\n%s", timeout, out.String(), errOut.String())
	}
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code, took
}

// committedAt returns the group's committed offset of partition p of
// topic, -1 when none.
func committedAt(t *testing.T, brokers, group, topic string, p int32) int64 {
	t.Helper()
	adm, err := kadm.NewOptClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("fetch the offsets of group %s: %v", group, err)
	}
	o, ok := offs.Lookup(topic, p)
	if !ok {
		return -1
	}
	if o.Err != nil {
		t.Fatalf("committed offset of %s/%d: %v", topic, p, o.Err)
	}
	return o.At
}

// outputLines returns the lines of a file, none when it does not exist.
func outputLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSpace(string(data))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// The two paths to a table row, as pipeline YAML: table_decode after a
// plain kafka_source, or a table on kafka_source. onError is the policy;
// bounded adds stop_at latest. The output section is appended.
var badRecordPaths = []struct {
	name   string
	config func(brokers, topic, group, onError string, bounded bool) string
}{
	{"table_decode", func(brokers, topic, group, onError string, bounded bool) string {
		stop := ""
		if bounded {
			stop = "    stop_at: latest\n"
		}
		return fmt.Sprintf(`http:
  enabled: false
input:
  kafka_source:
    seed_brokers: [ %q ]
    topics: [ %q ]
    consumer_group: %q
    start_from: earliest
    commit_period: 100ms
%spipeline:
  processors:
    - table_decode:
        ddl: %q
        on_error: %s
`, brokers, topic, group, stop, badTable(""), onError)
	}},
	{"kafka_source table", func(brokers, topic, group, onError string, bounded bool) string {
		with := fmt.Sprintf(", 'connector' = 'kafka', 'topic' = '%s', 'properties.bootstrap.servers' = '%s', 'properties.group.id' = '%s', 'scan.startup.mode' = 'earliest-offset'",
			topic, brokers, group)
		if bounded {
			with += ", 'scan.bounded.mode' = 'latest-offset'"
		}
		return fmt.Sprintf(`http:
  enabled: false
input:
  kafka_source:
    ddl: %q
    on_error: %s
    commit_period: 100ms
`, badTable(with), onError)
	}},
}

// on_error fail, on both paths, on the real broker: the run ends by itself
// with exit code 1 and an error naming topic, partition and offset; the bad
// record is not in the output; the group's committed offset of its
// partition does not pass it.
func TestBadRecordFailEndsTheRun(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	connectdBin(t)
	for _, path := range badRecordPaths {
		t.Run(path.name, func(t *testing.T) {
			t.Parallel()
			topic, _ := newBadRecordTopic(t, brokers)
			group := topic + "-group"
			out := filepath.Join(t.TempDir(), "out.jsonl")
			config := path.config(brokers, topic, group, "fail", false) + fmt.Sprintf(`output:
  file:
    path: %q
    codec: lines
`, out)
			stdout, stderr, code, took := runToExit(t, config, 60*time.Second)
			t.Logf("%s: exit %d after %v", path.name, code, took.Round(time.Millisecond))
			if code == 0 {
				t.Fatalf("exit code 0, want != 0 for a bad record under on_error fail\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
			at := fmt.Sprintf("topic %s, partition %d, offset %d", topic, badPartition, badOffset)
			if !strings.Contains(stderr, "connectd: the run stopped: ") || !strings.Contains(stderr, at) {
				t.Fatalf("stderr does not name %q:\n%s", at, stderr)
			}
			for _, l := range outputLines(t, out) {
				if strings.Contains(l, "not json") {
					t.Fatalf("the bad record reached the output: %q", l)
				}
			}
			if c := committedAt(t, brokers, group, topic, badPartition); c > badOffset {
				t.Fatalf("group %s committed offset %d of partition %d, past the bad record at offset %d", group, c, badPartition, badOffset)
			}
		})
	}
}

// on_error dead_letter, on both paths, bounded: every good record reaches
// the main output, the bad one reaches the dead-letter output with its raw
// bytes, and the run exits 0.
func TestBadRecordDeadLetterKeepsGoing(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	connectdBin(t)
	for _, path := range badRecordPaths {
		t.Run(path.name, func(t *testing.T) {
			t.Parallel()
			topic, good := newBadRecordTopic(t, brokers)
			group := topic + "-group"
			dir := t.TempDir()
			out, dead := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "dead.txt")
			config := path.config(brokers, topic, group, "dead_letter", true) + fmt.Sprintf(`output:
  switch:
    cases:
      - check: errored()
        output:
          file: { path: %q, codec: lines }
      - output:
          file: { path: %q, codec: lines }
`, dead, out)
			stdout, stderr, code, took := runToExit(t, config, 60*time.Second)
			if code != 0 {
				t.Fatalf("exit code %d after %v, want 0 (dead_letter keeps the run going, stop_at latest ends it)\nstdout:\n%s\nstderr:\n%s",
					code, took, stdout, stderr)
			}
			seen := map[int64]bool{}
			for _, l := range outputLines(t, out) {
				var row struct{ ID int64 }
				if err := json.Unmarshal([]byte(l), &row); err != nil {
					t.Fatalf("main output line %q: %v", l, err)
				}
				seen[row.ID] = true
			}
			for id := range good {
				if !seen[id] {
					t.Errorf("good record %d missing from the main output", id)
				}
			}
			if len(seen) != len(good) {
				t.Errorf("main output holds %d distinct rows, want the %d good records", len(seen), len(good))
			}
			if lines := outputLines(t, dead); len(lines) != 1 || lines[0] != badBytes {
				t.Fatalf("dead-letter output %q, want exactly the bad record %q", lines, badBytes)
			}
		})
	}
}
