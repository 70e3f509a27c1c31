package e2e

import (
	"bytes"
	"context"
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

// TestSourceBackfillTransactional runs config/source_backfill.yaml (stop_at:
// latest, read_committed, two readers) over 8 partitions of transactional
// data on the real broker: committed and aborted transactions, several
// partitions ending with aborted records and their abort marker. connectd
// must exit 0 on its own, having written exactly the committed records and
// committed the end offset of every partition (past the trailing markers).
func TestSourceBackfillTransactional(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	const partitions = 8
	topic := kafkatest.NewTopic(t, brokers, "e2e-backfill", partitions)
	group := topic + "-group"

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionalID(topic+"-txn"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	want := 0
	txn := func(commit bool, n int, on func(p int32) bool) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		for p := range int32(partitions) {
			if !on(p) {
				continue
			}
			for i := range n {
				v := fmt.Sprintf("committed-%d", want)
				if commit {
					want++
				} else {
					v = fmt.Sprintf("aborted-%d-%d", p, i)
				}
				recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)})
			}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	all := func(int32) bool { return true }
	txn(true, 10, all)
	txn(false, 4, all) // odd partitions end here: aborted records, abort marker
	txn(true, 5, func(p int32) bool { return p%2 == 0 })
	txn(false, 3, func(p int32) bool { return p%3 == 0 }) // partitions 0 and 6 end aborted too
	cl.Close()

	out := filepath.Join(t.TempDir(), "out.txt")
	cmd := exec.CommandContext(ctx, connectdBin(t), "run", "config/source_backfill.yaml")
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(),
		"CONNECTD_BROKERS="+brokers,
		"CONNECTD_BACKFILL_TOPIC="+topic,
		"CONNECTD_BACKFILL_GROUP="+group,
		"CONNECTD_BACKFILL_OUT="+out,
	)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("connectd run: %v (after %v; want exit 0 at the end of input)\n%s", err, time.Since(start), logs.String())
	}
	t.Logf("backfill of %d committed records over %d partitions exited 0 after %v", want, partitions, time.Since(start).Round(time.Millisecond))

	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		if strings.Contains(l, "aborted-") {
			t.Errorf("record of an aborted transaction in the output: %q", l)
		}
		seen[l[strings.LastIndex(l, " ")+1:]] = true
	}
	if len(lines) != want || len(seen) != want {
		t.Fatalf("output has %d lines (%d distinct records), want exactly %d committed records", len(lines), len(seen), want)
	}

	adm, err := kadm.NewOptClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(e kadm.ListedOffset) {
		c, ok := committed.Lookup(topic, e.Partition)
		if !ok || c.At != e.Offset {
			t.Errorf("partition %d: committed %v, want the end offset %d", e.Partition, c.At, e.Offset)
		}
	})
}
