package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkatest"
)

const (
	killRecords = 100_000
	killCount   = 5
)

// TestSIGKILLLosesNothing pushes 100,000 records through kafka_source ->
// kafka_sink on the real broker while the connectd process is killed with
// SIGKILL five times mid-stream and restarted. Every input record must reach
// the output; duplicates are allowed (at-least-once) and reported.
func TestSIGKILLLosesNothing(t *testing.T) {
	brokers := kafkatest.Broker(t)
	in := kafkatest.NewTopic(t, brokers, "e2e-kill-in", 4)
	out := kafkatest.NewTopic(t, brokers, "e2e-kill-out", 4)
	group := in + "-group"

	produceNumbered(t, brokers, in, killRecords)

	conf := writeFile(t, "kill.yaml", fmt.Sprintf(`
http:
  enabled: false
logger:
  level: warn
input:
  kafka_source:
    seed_brokers: [ %[1]q ]
    topics: [ %[2]q ]
    consumer_group: %[4]q
    start_from: committed
    committed_fallback: earliest
    commit_period: 200ms
output:
  kafka_sink:
    seed_brokers: [ %[1]q ]
    topic: %[3]q
    key: ${! @kafka_key }
    max_in_flight: 4
    batching:
      count: 200
      period: 20ms
`, brokers, in, out, group))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tally := newOutputTally()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); tally.run(ctx, t, brokers, out) }()
	defer wg.Wait()
	defer cancel()

	start := func() (*exec.Cmd, *lockedBuffer) {
		cmd := exec.Command(connectdBin(t), "run", conf)
		logs := &lockedBuffer{}
		cmd.Stdout, cmd.Stderr = logs, logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
		})
		return cmd, logs
	}
	// waitDistinct waits until the output holds want distinct records.
	waitDistinct := func(run string, want int, within time.Duration, logs *lockedBuffer) {
		t.Helper()
		eventually.NoError(t, within, fmt.Sprintf("%s: %d distinct output records", run, want), func() error {
			if distinct, _ := tally.counts(); distinct < want {
				return stateWithLogs(fmt.Sprintf("output at %d distinct records", distinct), logs)
			}
			return nil
		})
	}

	for k := 1; k <= killCount; k++ {
		target := k * killRecords / (killCount + 1)
		cmd, logs := start()
		waitDistinct(fmt.Sprintf("run %d", k), target, 3*time.Minute, logs)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		distinct, total := tally.counts()
		t.Logf("SIGKILL %d at %d distinct / %d total output records", k, distinct, total)
	}

	cmd, logs := start()
	waitDistinct("final run", killRecords, 5*time.Minute, logs)
	_ = cmd.Process.Signal(syscall.SIGTERM)

	tally.mu.Lock()
	defer tally.mu.Unlock()
	for i := range killRecords {
		if tally.mu.seen[strconv.Itoa(i)] == 0 {
			t.Errorf("record %d lost", i)
		}
	}
	dups := tally.mu.total - killRecords
	t.Logf("at-least-once after %d SIGKILLs: %d records in, %d distinct out, %d duplicates (%.2f%%)",
		killCount, killRecords, len(tally.mu.seen), dups, 100*float64(dups)/killRecords)
	if len(tally.mu.seen) != killRecords {
		t.Errorf("output holds %d distinct values, want exactly the %d input values", len(tally.mu.seen), killRecords)
	}
}

func init() {
	// The kill test runs the binary with the real broker's address; make
	// sure a stray dev-broker setting in the environment does not apply.
	_ = os.Unsetenv("CONNECTD_DEV_BROKER")
}
