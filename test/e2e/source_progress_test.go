package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkatest"
)

// TestBoundedReadProgress runs a slow bounded read (stop_at: latest) of two
// partitions on the real broker: while it runs, /metrics shows the records
// left per split and an estimate of the seconds left; its log has the
// progress summary, a line per split, and each split reaching its stop
// offset; it ends on its own with exit code 0.
func TestBoundedReadProgress(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	topic := kafkatest.NewTopic(t, brokers, "e2e-progress", 2)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const perPartition = 150
	var recs []*kgo.Record
	for p := range int32(2) {
		for range perPartition {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte("x")})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	port := freePort(t)
	// checkpoint_limit keeps the fetch position a few records ahead of the
	// slow output, so the read takes seconds and its progress shows.
	conf := writeFile(t, "progress.yaml", fmt.Sprintf(`
http:
  address: 127.0.0.1:%d
logger:
  level: info
  format: logfmt
input:
  kafka_source:
    seed_brokers: [ %q ]
    topics: [ %q ]
    consumer_group: %q
    start_from: earliest
    stop_at: latest
    batch_size: 5
    checkpoint_limit: 10
    fetch_max_wait: 100ms
    commit_period: 100ms
pipeline:
  processors:
    - sleep:
        duration: 15ms
output:
  drop: {}
`, port, brokers, topic, topic+"-group"))
	cmd := exec.CommandContext(ctx, connectdBin(t), "run", conf)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill() }()

	q := regexp.QuoteMeta(topic)
	left := regexp.MustCompile(`(?m)^kafka_source_records_left\{[^}]*partition="[01]"[^}]*topic="` + q + `"[^}]*\} ([1-9][0-9]*)$`)
	seconds := regexp.MustCompile(`(?m)^kafka_source_seconds_left\{[^}]*\} ([0-9]+)$`)
	eventually.NoError(t, 60*time.Second, "records left and seconds left at /metrics during the read", func() error {
		body, err := scrape(port)
		if err != nil {
			return stateWithLogs(err.Error(), logs)
		}
		if !left.MatchString(body) || !seconds.MatchString(body) {
			return stateWithLogs("no records_left > 0 with a seconds_left estimate yet", logs)
		}
		return nil
	})

	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the bounded read did not end with exit code 0: %v\n%s", err, logs.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the bounded read did not end:\n%s", logs.String())
	}
	out := logs.String()
	for _, want := range []string{
		`kafka_source: bounded read (stop_at: latest): 0 of 2 splits done, `,
		fmt.Sprintf(`kafka_source: topic %s partition 0 at offset `, topic),
		fmt.Sprintf(`kafka_source: topic %s partition 1 at offset `, topic),
		fmt.Sprintf(`kafka_source: topic %s partition 0 reached its stop offset %d`, topic, perPartition),
		fmt.Sprintf(`kafka_source: topic %s partition 1 reached its stop offset %d`, topic, perPartition),
		`of 2 splits done)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
}
