package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkatest"
)

// TestSinkExactlyOnceConfig runs config/sink_exactly_once.yaml against the
// real broker: every generated event is committed exactly once (the run is not
// interrupted), routed by parity to two topics that share each transaction,
// and kcat reading read_committed sees them all.
func TestSinkExactlyOnceConfig(t *testing.T) {
	t.Parallel()
	broker := kafkatest.Broker(t)
	kcat := kafkatest.Kcat(t)
	if out, code := runCLI(t, 60*time.Second, "lint", "config/sink_exactly_once.yaml"); code != 0 {
		t.Fatalf("lint: exit %d:\n%s", code, out)
	}
	base := fmt.Sprintf("e2e-sink-eos-%d", time.Now().UnixNano())
	createTopics(t, broker, 3, base+"-even", base+"-odd")

	const n = 3000
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, connectdBin(t), "run", "config/sink_exactly_once.yaml")
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(),
		"CONNECTD_BROKERS="+broker,
		"CONNECTD_SINK_TOPIC="+base,
		"CONNECTD_SINK_TXN_PREFIX="+base,
		"CONNECTD_SINK_COUNT="+strconv.Itoa(n))
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		t.Fatalf("connectd run: %v\n%s", err, out.String())
	}

	for _, parity := range []int{0, 1} {
		topic := base + []string{"-even", "-odd"}[parity]
		got := kcatValues(ctx, t, kcat, broker, topic)
		ids := map[int]int{}
		for _, v := range got {
			// {"id":12,"kind":"even"}
			i := strings.Index(v, `"id":`)
			if i < 0 {
				t.Fatalf("%s: unexpected record %q", topic, v)
			}
			id, err := strconv.Atoi(strings.TrimRight(strings.SplitN(v[i+5:], ",", 2)[0], "}"))
			if err != nil || id%2 != parity {
				t.Fatalf("%s: unexpected record %q", topic, v)
			}
			ids[id]++
		}
		var dups []int
		for id, c := range ids {
			if c > 1 {
				dups = append(dups, id)
			}
		}
		slices.Sort(dups)
		t.Logf("%s: %d records, %d distinct, duplicates %v", topic, len(got), len(ids), dups)
		if len(ids) != n/2 || len(got) != n/2 {
			t.Errorf("%s: %d records (%d distinct), want %d exactly once", topic, len(got), len(ids), n/2)
		}
	}
}

// kcatValues reads topic with kcat as a read_committed consumer, from the
// beginning to the end.
func kcatValues(ctx context.Context, t *testing.T, kcat, broker, topic string) []string {
	t.Helper()
	out, err := exec.CommandContext(ctx, kcat, "-C", "-b", broker, "-t", topic, "-o", "beginning", "-e", "-q",
		"-X", "isolation.level=read_committed", "-f", "%s\n").Output()
	if err != nil {
		var stderr string
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("kcat %s: %v: %s", topic, err, stderr)
	}
	return strings.Fields(string(out))
}

// createTopics creates topics with the given partitions and deletes them at
// the end of the test.
func createTopics(t *testing.T, broker string, partitions int32, topics ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = adm.DeleteTopics(ctx, topics...)
		cl.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resps, err := adm.CreateTopics(ctx, partitions, 1, nil, topics...)
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		t.Fatalf("creating %v: %v", topics, err)
	}
}
