package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkatest"
)

// TestSourceGroupModeSIGKILL runs two connectd processes with kafka_source
// in group mode on the real broker. Once both hold partitions, one is
// killed with SIGKILL; the other must take its partitions over (after the
// session timeout) and, together, their outputs must hold every record
// (duplicates allowed: at-least-once). It runs with the classic protocol and
// with KIP-848's (group_protocol: consumer), where the broker assigns.
func TestSourceGroupModeSIGKILL(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"classic", "consumer"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			testSourceGroupModeSIGKILL(t, protocol)
		})
	}
}

func testSourceGroupModeSIGKILL(t *testing.T, protocol string) {
	brokers := kafkatest.Broker(t)
	topic := kafkatest.NewTopic(t, brokers, "e2e-source-group-"+protocol, 4)
	group := topic + "-group"
	dir := t.TempDir()
	conf := writeFile(t, "group.yaml", fmt.Sprintf(`
http:
  enabled: false
logger:
  level: warn
input:
  kafka_source:
    seed_brokers: [ %q ]
    topics: [ %q ]
    consumer_group: %q
    assignment: group
    group_protocol: %s
    group_session_timeout: 6s
    commit_period: 100ms
    fetch_max_wait: 100ms
output:
  file:
    path: "${OUT}"
    codec: lines
`, brokers, topic, group, protocol))
	start := func(name string) (*exec.Cmd, string, *lockedBuffer) {
		out := filepath.Join(dir, name+".txt")
		cmd := exec.Command(connectdBin(t), "run", conf)
		cmd.Env = append(os.Environ(), "OUT="+out)
		logs := &lockedBuffer{}
		cmd.Stdout, cmd.Stderr = logs, logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd, out, logs
	}
	a, outA, logsA := start("a")
	b, outB, logsB := start("b")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm, err := kadm.NewOptClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	// Both processes are members and hold partitions.
	eventually.NoError(t, 90*time.Second, "the two processes to share the partitions", func() error {
		if !bothHoldPartitions(ctx, adm, group, protocol) {
			return stateWithLogs("not shared", logsA, logsB)
		}
		return nil
	})

	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(from, n int) {
		t.Helper()
		recs := make([]*kgo.Record, n)
		for i := range recs {
			recs[i] = &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", from+i), Value: fmt.Appendf(nil, "r%d", from+i)}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	lines := func(path string) []string {
		data, _ := os.ReadFile(path)
		return strings.Fields(string(data))
	}
	const batch = 2000
	produce(0, batch)
	eventually.NoError(t, 90*time.Second, "both processes to output records", func() error {
		if a, b := len(lines(outA)), len(lines(outB)); a == 0 || b == 0 {
			return fmt.Errorf("%d and %d lines", a, b)
		}
		return nil
	})
	// Wait for the group to commit the first batch, so that the survivor
	// must resume the killed process's partitions at its commits.
	eventually.NoError(t, 90*time.Second, fmt.Sprintf("the group to commit the %d offsets of the first batch", batch), func() error {
		offs, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return err
		}
		total := int64(0)
		offs.Each(func(o kadm.OffsetResponse) { total += o.At })
		if total != batch {
			return fmt.Errorf("committed %d offsets", total)
		}
		return nil
	})
	if err := a.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait()
	produce(batch, batch)

	eventually.NoError(t, 90*time.Second, fmt.Sprintf("all %d records in an output", 2*batch), func() error {
		seen := map[string]bool{}
		for _, l := range append(lines(outA), lines(outB)...) {
			seen[l] = true
		}
		missing := 0
		for i := range 2 * batch {
			if !seen[fmt.Sprintf("r%d", i)] {
				missing++
			}
		}
		if missing > 0 {
			return stateWithLogs(fmt.Sprintf("%d records missing; the survivor's logs:", missing), logsB)
		}
		return nil
	})
	t.Logf("all %d records out: %d lines from the killed process, %d from the survivor", 2*batch, len(lines(outA)), len(lines(outB)))
	// Everything the killed process wrote was committed before the kill,
	// so the survivor resumed exactly there.
	if n := len(lines(outA)) + len(lines(outB)); n != 2*batch {
		t.Errorf("%d lines in all, want %d: the survivor did not resume at the committed offsets", n, 2*batch)
	}
	if err := b.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := b.Wait(); err != nil {
		t.Fatalf("survivor did not exit cleanly on SIGTERM: %v\n%s", err, logsB.String())
	}
}

// bothHoldPartitions reports whether group has two members and each holds a
// partition. A KIP-848 group (protocol consumer) is described with
// ConsumerGroupDescribe, a classic one with DescribeGroups.
func bothHoldPartitions(ctx context.Context, adm *kadm.Client, group, protocol string) bool {
	held := 0
	if protocol == "consumer" {
		groups, err := adm.DescribeConsumerGroups(ctx, group)
		g, ok := groups[group]
		if err != nil || !ok || g.Err != nil || len(g.Members) != 2 {
			return false
		}
		for _, m := range g.Members {
			if len(m.Assignment.Sorted()) > 0 {
				held++
			}
		}
		return held == 2
	}
	groups, err := adm.DescribeGroups(ctx, group)
	g, ok := groups[group]
	if err != nil || !ok || g.State != "Stable" || len(g.Members) != 2 {
		return false
	}
	for _, m := range g.Members {
		if a, ok := m.Assigned.AsConsumer(); ok && len(a.Topics) > 0 && len(a.Topics[0].Partitions) > 0 {
			held++
		}
	}
	return held == 2
}
