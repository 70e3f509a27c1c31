package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkatest"
)

// Two connectd processes misconfigured with the same transactional id fence
// each other: each logs the fencing at error level naming the id, and they
// back off instead of looping silently.
func TestSinkFencingIsLoud(t *testing.T) {
	t.Parallel()
	broker := kafkatest.Broker(t)
	base := fmt.Sprintf("e2e-sink-fence-%d", time.Now().UnixNano())
	createTopics(t, broker, 1, base+"-even", base+"-odd")
	txnID := base + "-twin"

	start := func() (*exec.Cmd, *lockedBuffer) {
		t.Helper()
		cmd := exec.Command(connectdBin(t), "run", "config/sink_exactly_once.yaml")
		cmd.Dir = repoRoot(t)
		cmd.Env = append(os.Environ(),
			"CONNECTD_BROKERS="+broker,
			"CONNECTD_SINK_TOPIC="+base,
			"CONNECTD_SINK_TXN_PREFIX="+base,
			"HOSTNAME=twin", // both processes: transactional id <base>-twin
			"CONNECTD_SINK_COUNT=100000000")
		out := &lockedBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd, out
	}

	_, firstOut := start()
	eventually.True(t, 60*time.Second, "the first process to commit", func() bool { return committed(t, broker, base+"-even") > 0 })
	_, secondOut := start()

	fenced := func(out *lockedBuffer) int {
		n := 0
		for _, l := range strings.Split(out.String(), "\n") {
			// A fencing is logged as FENCED, or, when a commit races
			// the other writer's initialisation, as a lost producer.
			if strings.Contains(l, "level=error") && strings.Contains(l, "lost since the last commit") && strings.Contains(l, txnID) {
				n++
			}
		}
		return n
	}
	eventually.True(t, 60*time.Second, "both processes to report a fencing", func() bool {
		return fenced(firstOut) > 0 && fenced(secondOut) > 0
	})
	a, b := fenced(firstOut), fenced(secondOut)
	t.Logf("lost producers logged: first %d, second %d", a, b)
	if a > 8 || b > 8 {
		t.Errorf("lost producers logged: first %d, second %d; the back-off should keep them few", a, b)
	}
}

// committed returns the last stable offset summed over topic's partitions:
// the records a read_committed reader can see, plus markers.
func committed(t *testing.T, broker, topic string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	offs, err := kadm.NewClient(cl).ListCommittedOffsets(ctx, topic)
	if err != nil {
		return 0
	}
	var n int64
	offs.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}
