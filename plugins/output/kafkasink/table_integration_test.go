package kafkasink

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/schema/registry/registrytest"
)

// On a real Apache Kafka broker, the seed's kafka_sink table (avro-confluent,
// exactly-once, PRIMARY KEY as the key) writes rows in transactions that
// kafka_source, reading by the same table, gives back identical and typed.
func TestIntegrationTableSeedRoundTrip(t *testing.T) {
	t.Parallel()
	broker := kafkatest.Broker(t)
	topic := kafkatest.NewTopic(t, broker, "table_seed", 2)
	reg := registrytest.New()
	t.Cleanup(reg.Close)
	seed, err := os.ReadFile("../../../schema/testdata/seed.sql")
	if err != nil {
		t.Fatal(err)
	}
	sql := strings.ReplaceAll(string(seed), "kafka:9092", broker)
	sql = strings.ReplaceAll(sql, "http://schema-registry:8081", reg.URL())
	sql = strings.ReplaceAll(sql, "'device_metrics'", "'"+topic+"'")
	sql = strings.ReplaceAll(sql, "'flink-producer-'", "'"+topic+"-'")
	cat := filepath.Join(t.TempDir(), "seed.sql")
	if err := os.WriteFile(cat, []byte(sql), 0o600); err != nil {
		t.Fatal(err)
	}

	runStream(t, fmt.Sprintf(`
input:
  generate:
    count: 20
    interval: ""
    mapping: |
      root.device_id = "dev-%%d".format(count("seed") %% 5)
      root.metric_value = count("seed-v") / 4
output:
  kafka_sink:
    catalog: %q
    table: kafka_sink
`, cat))

	got := runStream(t, fmt.Sprintf(`
input:
  kafka_source:
    catalog: %q
    table: kafka_sink
    consumer_group: %s-check
    start_from: earliest
    stop_at: latest
output:
  drop: {}
`, cat, topic))
	if len(got) != 20 {
		t.Fatalf("read back %d rows, want 20", len(got))
	}
	seen := map[float64]bool{}
	for _, m := range got {
		v, err := m.AsStructured()
		if err != nil {
			t.Fatal(err)
		}
		row := v.(map[string]any)
		id, _ := row["device_id"].(string)
		f, ok := row["metric_value"].(float64)
		if !ok || !strings.HasPrefix(id, "dev-") || len(row) != 2 {
			t.Fatalf("row %#v: want a STRING device_id and a DOUBLE metric_value", row)
		}
		if k, _ := m.MetaGet("kafka_key"); k != id {
			t.Fatalf("kafka_key %q, want the PRIMARY KEY %q", k, id)
		}
		seen[f] = true
	}
	if len(seen) != 20 {
		t.Fatalf("read %d distinct rows, want 20 (no duplicates, none lost)", len(seen))
	}
}
