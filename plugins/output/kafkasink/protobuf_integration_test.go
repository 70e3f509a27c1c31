package kafkasink

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/connectd/connectd/internal/kafkatest"
)

// On a real Apache Kafka broker, a table in the protobuf format (a .proto
// file and a message name): kafka_sink writes rows as messages that
// kafka_source, reading by the same table, gives back typed, NULLs and
// nested rows included.
func TestIntegrationTableProtobufRoundTrip(t *testing.T) {
	t.Parallel()
	broker := kafkatest.Broker(t)
	topic := kafkatest.NewTopic(t, broker, "table_protobuf", 1)
	proto, err := filepath.Abs("../../../schema/format/protobuf/testdata/shop.proto")
	if err != nil {
		t.Fatal(err)
	}
	ddl := fmt.Sprintf(`CREATE TABLE orders (
        id BIGINT, customer STRING, note STRING, status STRING, first ROW<sku STRING, qty INT>, tags ARRAY<STRING>
      ) WITH (
        'connector' = 'kafka', 'topic' = '%s', 'properties.bootstrap.servers' = '%s',
        'format' = 'protobuf', 'protobuf.descriptor-file' = '%s', 'protobuf.message-name' = 'shop.v1.Order')`, topic, broker, proto)

	runStream(t, fmt.Sprintf(`
input:
  generate:
    count: 4
    interval: ""
    mapping: |
      let n = count("pb")
      root.id = $n
      root.customer = "c-%%d".format($n)
      root.note = if $n %% 2 == 0 { "even" } else { null }
      root.status = "PAID"
      root.first = {"sku": "s%%d".format($n), "qty": $n}
      root.tags = ["a", "b"]
output:
  kafka_sink:
    ddl: %q
`, ddl))

	got := runStream(t, fmt.Sprintf(`
input:
  kafka_source:
    ddl: %q
    start_from: earliest
    stop_at: latest
output:
  drop: {}
`, ddl))
	if len(got) != 4 {
		t.Fatalf("read back %d rows, want 4", len(got))
	}
	for _, m := range got {
		v, err := m.AsStructured()
		if err != nil {
			t.Fatal(err)
		}
		row := v.(map[string]any)
		n, _ := row["id"].(int64)
		want := map[string]any{"customer": fmt.Sprintf("c-%d", n), "status": "PAID", "note": nil}
		if n%2 == 0 {
			want["note"] = "even"
		}
		for k, w := range want {
			if row[k] != w {
				t.Errorf("row %d: %s = %#v, want %#v", n, k, row[k], w)
			}
		}
		first, _ := row["first"].(map[string]any)
		if first["sku"] != fmt.Sprintf("s%d", n) || first["qty"] != n {
			t.Errorf("row %d: first = %#v", n, row["first"])
		}
		if tags, _ := row["tags"].([]any); len(tags) != 2 || tags[0] != "a" {
			t.Errorf("row %d: tags = %#v", n, row["tags"])
		}
	}
}
