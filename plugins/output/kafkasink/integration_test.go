package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/kafkatest"
)

// A record written by kafka_sink to a real Apache Kafka broker reads back in
// kcat (librdkafka, a client this project did not write) with its key,
// headers, timestamp and Java-client partition.
func TestIntegrationKcatReadsRecord(t *testing.T) {
	t.Parallel()
	broker := kafkatest.Broker(t)
	kcat := kafkatest.Kcat(t)
	topic := kafkatest.NewTopic(t, broker, "kafkasink", 3)

	s := newConnectedSink(t, fmt.Sprintf(`
seed_brokers: [ %q ]
topic: %s
key: ${! @key }
timestamp_ms: ${! @ts }
metadata:
  include_prefixes: [ "h_" ]
`, broker, topic))
	batch := service.MessageBatch{
		message(`{"hello":"kafka"}`, "key", "key", "ts", "1700000000123", "h_trace", "abc", "h_source", "connectd", "other", "dropped"),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.WriteBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}

	out, err := exec.CommandContext(ctx, kcat, "-C", "-b", broker, "-t", topic, "-o", "beginning", "-c", "1", "-e", "-q",
		"-X", "isolation.level=read_committed", "-f", "%k|%h|%T|%p|%s\n").Output()
	if err != nil {
		var stderr string
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("kcat: %v: %s", err, stderr)
	}
	// Headers are sorted by key; partition 1 is the Java client's
	// murmur2 choice for "key" over 3 partitions (javaPartitions).
	want := `key|h_source=connectd,h_trace=abc|1700000000123|1|{"hello":"kafka"}`
	if got := strings.TrimSpace(string(out)); got != want {
		t.Fatalf("kcat read\n  %s\nwant\n  %s", got, want)
	}
}
