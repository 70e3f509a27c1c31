package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/schema/compat"
	"github.com/connectd/connectd/schema/registry/registrytest"
)

// Schema evolution (issue 14 item 9, the seed's troubleshooting case 4),
// with the built binary on the real broker: a kafka_sink table in
// avro-confluent registers its schema; a later run whose table breaks the
// subject's BACKWARD level ends with exit 1 naming the field, before
// anything is written; a compatible change registers and writes.
//
// The registry is the in-process fake of package registrytest with
// compatibility enforced: the test-bed registry (franz-go's srfake) answers
// every compatibility check with "compatible".
func TestSchemaEvolutionRefusedBeforeWriting(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	topic := kafkatest.NewTopic(t, brokers, "schema-evolution", 1)
	reg := registrytest.New()
	t.Cleanup(reg.Close)
	reg.SetCompatibility("", compat.Backward, false)

	configFile := func(name, columns, mapping string) string {
		return writeFile(t, name+".yaml", fmt.Sprintf(`
http: { enabled: false }
input:
  generate:
    count: 5
    interval: ""
    mapping: %q
output:
  kafka_sink:
    ddl: |
      CREATE TABLE orders (%s) WITH (
        'connector' = 'kafka',
        'topic' = '%s',
        'properties.bootstrap.servers' = '%s',
        'format' = 'avro-confluent',
        'avro-confluent.url' = '%s'
      )
`, mapping, columns, topic, brokers, reg.URL()))
	}
	run := func(name, columns, mapping string) (string, int) {
		logs, code, _ := runConfigToExit(t, 60*time.Second, configFile(name, columns, mapping))
		return logs, code
	}
	if logs, code := run("v1", "id BIGINT NOT NULL, name STRING", `root = {"id": count("v1"), "name": "a"}`); code != 0 {
		t.Fatalf("v1: exit %d:\n%s", code, logs)
	}
	if n := endOffset(t, brokers, topic); n != 5 {
		t.Fatalf("v1 wrote %d records, want 5", n)
	}

	// `connectd schema-check` says so before any run: a NOT NULL column
	// added breaks BACKWARD (the new schema cannot read v1's records), a
	// NULL-able one does not.
	out, code := runCLI(t, 30*time.Second, "schema-check", configFile("check-v2", "id BIGINT NOT NULL, name STRING, qty INT NOT NULL", "root = {}"))
	if code != 1 || !strings.Contains(out, "field qty") || !strings.Contains(out, "subject "+topic+"-value") {
		t.Fatalf("schema-check of an incompatible table: exit %d, want 1 naming field qty:\n%s", code, out)
	}
	out, code = runCLI(t, 30*time.Second, "schema-check", configFile("check-v3", "id BIGINT NOT NULL, name STRING, note STRING", "root = {}"))
	if code != 0 || !strings.Contains(out, "(BACKWARD, 1 version): compatible") {
		t.Fatalf("schema-check of a compatible table: exit %d, want 0:\n%s", code, out)
	}

	// The run of the incompatible table.
	logs, code := run("v2", "id BIGINT NOT NULL, name STRING, qty INT NOT NULL", `root = {"id": count("v2"), "name": "b", "qty": 1}`)
	if code != 1 {
		t.Fatalf("an incompatible schema: exit %d, want 1:\n%s", code, logs)
	}
	for _, want := range []string{"connectd: the run stopped:", "subject " + topic + "-value", "BACKWARD", "field qty"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the output does not say %q:\n%s", want, logs)
		}
	}
	if n := endOffset(t, brokers, topic); n != 5 {
		t.Fatalf("the refused run wrote %d records, want none (5 in the topic)", n-5)
	}
	if got := reg.Requests("POST", "/subjects/"+topic+"-value/versions"); got != 1 {
		t.Fatalf("%d registrations, want v1's only", got)
	}

	// A NULL-able column added: compatible.
	if logs, code := run("v3", "id BIGINT NOT NULL, name STRING, note STRING", `root = {"id": count("v3"), "name": "c", "note": "n"}`); code != 0 {
		t.Fatalf("a compatible schema: exit %d:\n%s", code, logs)
	}
	if n := endOffset(t, brokers, topic); n != 10 {
		t.Fatalf("%d records after the compatible run, want 10", n)
	}
}

// endOffset is the sum of topic's partitions' end offsets.
func endOffset(t *testing.T, brokers, topic string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}
