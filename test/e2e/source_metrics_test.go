package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkatest"
)

// TestSourceMetricsServed runs kafka_source with two readers on the real
// broker and checks its per-partition metrics at /metrics: lag down to 0,
// current and committed offsets at the end of each partition, records and
// bytes received, and the partitions per reader.
func TestSourceMetricsServed(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	topic := kafkatest.NewTopic(t, brokers, "e2e-source-metrics", 4)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for p := range int32(4) {
		for range 10 {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte("0123456789")})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	port := freePort(t)
	conf := writeFile(t, "source-metrics.yaml", fmt.Sprintf(`
http:
  address: 127.0.0.1:%d
logger:
  level: warn
input:
  kafka_source:
    seed_brokers: [ %q ]
    topics: [ %q ]
    consumer_group: %q
    start_from: earliest
    commit_period: 100ms
    readers: 2
output:
  drop: {}
`, port, brokers, topic, topic+"-group"))
	cmd := exec.Command(connectdBin(t), "run", conf)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	q := regexp.QuoteMeta(topic)
	want := []*regexp.Regexp{
		regexp.MustCompile(`(?m)^kafka_source_records_received\{[^}]*topic="` + q + `"[^}]*\} 40$`),
		regexp.MustCompile(`(?m)^kafka_source_bytes_received\{[^}]*topic="` + q + `"[^}]*\} 400$`),
		regexp.MustCompile(`(?m)^kafka_source_reader_partitions\{[^}]*reader="0"[^}]*\} [1-9]$`),
		regexp.MustCompile(`(?m)^kafka_source_reader_partitions\{[^}]*reader="1"[^}]*\} [1-9]$`),
	}
	for p := range 4 {
		for _, m := range []string{"kafka_source_lag", "kafka_source_offset", "kafka_source_committed_offset"} {
			v := "10"
			if m == "kafka_source_lag" {
				v = "0"
			}
			want = append(want, regexp.MustCompile(fmt.Sprintf(`(?m)^%s\{[^}]*partition="%d"[^}]*topic="%s"[^}]*\} %s$`, m, p, q, v)))
		}
	}
	eventually.NoError(t, 45*time.Second, "every metric", func() error {
		body, err := scrape(port)
		if err != nil {
			return stateWithLogs(err.Error(), logs)
		}
		var missing []string
		for _, re := range want {
			if !re.MatchString(body) {
				missing = append(missing, re.String())
			}
		}
		if len(missing) > 0 {
			return stateWithLogs(fmt.Sprintf("missing %v\nbody:\n%s", missing, body), logs)
		}
		return nil
	})
}
