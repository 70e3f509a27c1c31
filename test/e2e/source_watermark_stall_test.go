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

// TestSourceWatermarkStallWarning is issue 11 item 9 on the real broker: a
// kafka_source with watermarks over two partitions, only one of which gets
// records, and idle_timeout unset. The watermark never advances (the silent
// partition has none), so a window downstream would never fire. The
// watermark gauges are served from the start, also while there is no
// watermark; after stall_warning the source warns once, naming the silent
// partition and idle_timeout, and counts it in
// kafka_source_watermark_held_partitions.
func TestSourceWatermarkStallWarning(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	topic := kafkatest.NewTopic(t, brokers, "e2e-wm-stall", 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := range 5 {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: 0, Value: fmt.Appendf(nil, "r%d", i)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	const stall = 2 * time.Second
	port := freePort(t)
	conf := writeFile(t, "wm-stall.yaml", fmt.Sprintf(`
http:
  address: 127.0.0.1:%d
input:
  kafka_source:
    seed_brokers: [ %q ]
    topics: [ %q ]
    start_from: earliest
    watermark:
      max_out_of_orderness: 1s
      stall_warning: %v
output:
  drop: {}
`, port, brokers, topic, stall))
	cmd := exec.Command(connectdBin(t), "run", conf)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	q := regexp.QuoteMeta(topic)
	const noWatermark = `-9\.223372036854776e\+18` // math.MinInt64, Flink's Long.MIN_VALUE
	want := []*regexp.Regexp{
		regexp.MustCompile(`(?m)^kafka_source_watermark_ms(\{[^}]*\})? ` + noWatermark + `$`),
		regexp.MustCompile(`(?m)^kafka_source_watermark_lag_ms(\{[^}]*\})? [0-9.e+]+$`),
		regexp.MustCompile(`(?m)^kafka_source_partition_watermark_ms\{[^}]*partition="0"[^}]*topic="` + q + `"[^}]*\} [0-9.e+]+$`),
		regexp.MustCompile(`(?m)^kafka_source_partition_watermark_ms\{[^}]*partition="1"[^}]*topic="` + q + `"[^}]*\} ` + noWatermark + `$`),
		regexp.MustCompile(`(?m)^kafka_source_watermark_held_partitions(\{[^}]*\})? 1$`),
	}
	warning := regexp.MustCompile(`the watermark has not advanced for [0-9]+s \(it is none yet\): held back by topic ` + q +
		` partition 1 \(no record for [0-9]+s, watermark none yet\), while other partitions are ahead.*set watermark\.idle_timeout`)
	var warnAt time.Time
	eventually.NoError(t, 45*time.Second, "the stall's metrics and its warning", func() error {
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
		if warnAt.IsZero() && warning.MatchString(logs.String()) {
			warnAt = time.Now()
		}
		if len(missing) > 0 || warnAt.IsZero() {
			return stateWithLogs(fmt.Sprintf("metrics missing %v, warning logged: %v\nbody:\n%s", missing, !warnAt.IsZero(), body), logs)
		}
		return nil
	})
	if strings.Contains(logs.String(), fmt.Sprintf("topic %s partition 0 (no record", topic)) {
		t.Errorf("the warning blames partition 0, which has records:\n%s", logs.String())
	}
	// Warned once per stall, not every tick: two more stall_warning
	// periods (twenty emit intervals) pass without a second warning. The
	// absence over that period is the property (no later event of the
	// source stands for it), so it is a bounded wait.
	eventually.Never(t, 2*stall-time.Since(warnAt), "a second warning of the same stall", func() bool {
		if n := strings.Count(logs.String(), "the watermark has not advanced"); n != 1 {
			t.Logf("warned %d times, want once:\n%s", n, logs.String())
			return true
		}
		return false
	})
}
