package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/kafkatest"
)

// TestUpsertBufferFlushLastRowPerKey runs an upsert-kafka sink with
// 'sink.buffer-flush.max-rows' set to the whole changelog (100 keys, 6
// changes each, interleaved; every third key ends deleted) and a long
// 'sink.buffer-flush.interval': the changelog is one flush, and as Flink's
// ReducingUpsertWriter the sink writes only each key's last row, its last
// value or a tombstone. kcat (librdkafka, read_committed) reads exactly one
// record per key. Under at-least-once and exactly-once.
func TestUpsertBufferFlushLastRowPerKey(t *testing.T) {
	brokers := kafkatest.Broker(t)
	kcat := kafkatest.Kcat(t)
	const (
		keys  = 100
		steps = 6
	)
	for _, guarantee := range []string{"at-least-once", "exactly-once"} {
		t.Run(guarantee, func(t *testing.T) {
			topic := kafkatest.NewTopic(t, brokers, "e2e-upsert-flush", 3)
			txn := ""
			if guarantee == "exactly-once" {
				txn = fmt.Sprintf(",\n        'sink.transactional-id-prefix' = '%s'", topic)
			}
			conf := writeFile(t, "upsert-flush.yaml", fmt.Sprintf(`
http:
  enabled: false
logger:
  level: warn
input:
  generate:
    count: %[3]d
    interval: ""
    mapping: |
      let n = count("upsert-flush") - 1
      let id = $n %% %[4]d
      let step = ($n / %[4]d).floor().int64()
      let del = $id %% 3 == 0 && $step == %[5]d - 1
      root = if $del { {"id": $id} } else { {"id": $id, "pv": $step} }
      meta kafka_tombstone_message = $del
output:
  kafka_sink:
    ddl: |
      CREATE TABLE pageviews (
        id BIGINT,
        pv BIGINT,
        PRIMARY KEY (id) NOT ENFORCED
      ) WITH (
        'connector' = 'upsert-kafka',
        'topic' = '%[2]s',
        'properties.bootstrap.servers' = '%[1]s',
        'key.format' = 'json',
        'value.format' = 'json',
        'sink.delivery-guarantee' = '%[6]s'%[7]s,
        'sink.buffer-flush.max-rows' = '%[3]d',
        'sink.buffer-flush.interval' = '30 s'
      )
`, brokers, topic, keys*steps, keys, steps, guarantee, txn))
			if out, code := runCLI(t, 3*time.Minute, "run", conf); code != 0 {
				t.Fatalf("connectd run exited %d:\n%s", code, out)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, kcat, "-C", "-b", brokers, "-t", topic, "-o", "beginning", "-e", "-q",
				"-X", "isolation.level=read_committed", "-f", "%k\t%S\t%s\n").Output()
			if err != nil {
				t.Fatalf("kcat: %v", err)
			}
			got := map[int][]string{}
			records := 0
			for _, line := range strings.Split(string(out), "\n") {
				if line == "" {
					continue
				}
				f := strings.SplitN(line, "\t", 3)
				var key struct{ ID *int }
				if len(f) != 3 || json.Unmarshal([]byte(f[0]), &key) != nil || key.ID == nil {
					t.Fatalf("kcat line %q is not <key json> TAB <value size> TAB <value>", line)
				}
				records++
				if f[1] == "-1" {
					got[*key.ID] = append(got[*key.ID], "delete")
					continue
				}
				var v struct{ ID, PV *int }
				if json.Unmarshal([]byte(f[2]), &v) != nil || v.ID == nil || v.PV == nil || *v.ID != *key.ID {
					t.Fatalf("kcat line %q: value is not {\"id\":%d,\"pv\":<n>}", line, *key.ID)
				}
				got[*key.ID] = append(got[*key.ID], fmt.Sprintf("pv=%d", *v.PV))
			}
			var wrong []string
			for id := range keys {
				want := fmt.Sprintf("pv=%d", steps-1)
				if id%3 == 0 {
					want = "delete"
				}
				if g := got[id]; len(g) != 1 || g[0] != want {
					wrong = append(wrong, fmt.Sprintf("key %d: %v, want [%s]", id, g, want))
				}
			}
			t.Logf("kcat read %d records of %d changes over %d keys", records, keys*steps, len(got))
			if len(wrong) > 0 || records != keys {
				t.Fatalf("want one record per key, its last change (%d records); got %d records, %d keys differ; first:\n%s",
					keys, records, len(wrong), strings.Join(wrong[:min(len(wrong), 10)], "\n"))
			}
		})
	}
}
