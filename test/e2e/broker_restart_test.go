package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkatest"
)

const (
	restartRecords = 50_000
	// restartAt is the distinct output count at which the broker is restarted
	// (30% of the input).
	restartAt = restartRecords * 3 / 10

	// The private broker: its own ports and data dir, so that stopping it
	// leaves the shared broker on 19092 alone. The data dir is fixed rather
	// than a t.TempDir so that a broker leaked by a killed test run is found
	// (and reused or replaced) by the next `up` instead of holding the ports.
	// CONNECTD_E2E_PRIVATE_PORT_BASE moves both, for two checkouts testing on
	// one machine at once.
	defaultPrivatePortBase = "29092"
	privateDataDirPrefix   = "/tmp/connectd-kafka-restart"
)

// privateInstance returns the port base and data dir of the private broker
// offset ports above the configured base: each test that starts a private
// broker takes its own offset (a broker uses five ports), so that such
// tests can run in parallel.
func privateInstance(offset int) (portBase, dataDir string) {
	portBase = defaultPrivatePortBase
	if v := os.Getenv("CONNECTD_E2E_PRIVATE_PORT_BASE"); v != "" {
		portBase = v
	}
	if offset != 0 {
		if n, err := strconv.Atoi(portBase); err == nil {
			portBase = strconv.Itoa(n + offset)
		}
	}
	dataDir = privateDataDirPrefix
	if portBase != defaultPrivatePortBase {
		dataDir += "-" + portBase
	}
	return portBase, dataDir
}

// Port offsets of the tests that start a private broker.
const (
	restartPortOffset      = 0
	orderRestartPortOffset = 10
)

// privateBroker is a second Apache Kafka broker started with scripts/kafka.sh
// for one test, which may restart it.
type privateBroker struct {
	t                 *testing.T
	brokers           string // PLAINTEXT bootstrap address
	portBase, dataDir string
}

// startPrivateBroker runs `scripts/kafka.sh up` for the private instance at
// offset (see privateInstance) and registers `down` (which also removes its
// data dir) as cleanup.
func startPrivateBroker(t *testing.T, offset int) *privateBroker {
	t.Helper()
	b := &privateBroker{t: t}
	b.portBase, b.dataDir = privateInstance(offset)
	t.Cleanup(func() {
		if _, err := b.script(time.Minute, "down"); err != nil {
			t.Errorf("stopping the private broker: %v", err)
		}
	})
	out, err := b.script(3*time.Minute, "up")
	if err != nil {
		t.Fatalf("starting the private broker: %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "export CONNECTD_KAFKA_BROKERS="); ok {
			b.brokers = v
		}
	}
	if b.brokers == "" {
		t.Fatalf("scripts/kafka.sh up printed no CONNECTD_KAFKA_BROKERS line:\n%s", out)
	}
	return b
}

// restart runs `scripts/kafka.sh restart`: SIGTERM (SIGKILL after 30s), then
// a start on the same data, waiting until the broker answers.
func (b *privateBroker) restart() error {
	_, err := b.script(2*time.Minute, "restart")
	return err
}

// script runs scripts/kafka.sh with the private instance's port base and
// data dir and returns its stdout; its stderr is logged.
func (b *privateBroker) script(timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(b.t), "scripts", "kafka.sh"), args...)
	cmd.Dir = repoRoot(b.t)
	cmd.Env = append(os.Environ(),
		"CONNECTD_KAFKA_PORT_BASE="+b.portBase,
		"CONNECTD_KAFKA_DATA="+b.dataDir,
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	b.t.Logf("scripts/kafka.sh %s (private, port base %s) took %s:\n%s",
		strings.Join(args, " "), b.portBase, time.Since(t0).Round(100*time.Millisecond), strings.TrimSpace(stderr.String()))
	if err != nil {
		return stdout.String(), fmt.Errorf("scripts/kafka.sh %s: %w", strings.Join(args, " "), err)
	}
	return stdout.String(), nil
}

// TestBrokerRestartLosesNothing pushes 50,000 records through kafka_source ->
// kafka_sink (at_least_once) on a private broker and restarts that broker
// (SIGTERM, start on the same data) when 30% have reached the output. The
// connectd process is not restarted: it must ride out the outage and the
// output must end up holding every input record. Duplicates are allowed and
// reported.
func TestBrokerRestartLosesNothing(t *testing.T) {
	_ = kafkatest.Broker(t) // the shared broker's skip/require rule
	testStart := time.Now()
	broker := startPrivateBroker(t, restartPortOffset)
	brokers := broker.brokers

	in := kafkatest.NewTopic(t, brokers, "e2e-restart-in", 4)
	out := kafkatest.NewTopic(t, brokers, "e2e-restart-out", 4)
	group := in + "-group"
	t0 := time.Now()
	produceNumbered(t, brokers, in, restartRecords)
	t.Logf("produced %d input records in %s", restartRecords, time.Since(t0).Round(time.Millisecond))

	// The rate limit (5,000 records/s) keeps the stream running for
	// seconds, so that the broker goes away mid-stream rather than after the
	// last record on a fast machine.
	conf := writeFile(t, "restart.yaml", fmt.Sprintf(`
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
pipeline:
  processors:
    - rate_limit:
        resource: throttle
output:
  kafka_sink:
    seed_brokers: [ %[1]q ]
    topic: %[3]q
    key: ${! @kafka_key }
    delivery_guarantee: at_least_once
    max_in_flight: 4
    batching:
      count: 200
      period: 20ms
rate_limit_resources:
  - label: throttle
    local:
      count: 500
      interval: 100ms
`, brokers, in, out, group))

	ctx, cancel := context.WithCancel(context.Background())
	tally := newOutputTally()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); tally.run(ctx, t, brokers, out) }()
	defer wg.Wait()
	defer cancel()

	cmd := exec.Command(connectdBin(t), "run", conf)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	runStart := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	defer func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	// waitDistinct waits until the output holds want distinct values;
	// connectd exiting or the deadline passing fails the test.
	waitDistinct := func(stage string, want int, within time.Duration) {
		t.Helper()
		eventually.NoError(t, within, fmt.Sprintf("%d distinct output records %s", want, stage), func() error {
			distinct, total := tally.counts()
			if distinct >= want {
				return nil
			}
			select {
			case <-exited:
				t.Fatalf("%s: connectd exited (%v) with %d distinct / %d total output records; log:\n%s",
					stage, waitErr, distinct, total, logs.String())
			default:
			}
			return stateWithLogs(fmt.Sprintf("output at %d distinct / %d total records", distinct, total), logs)
		})
	}

	waitDistinct("before the broker restart", restartAt, time.Minute)
	distinct, total := tally.counts()
	t.Logf("restarting the broker at %d distinct / %d total output records, %s after connectd started",
		distinct, total, time.Since(runStart).Round(time.Millisecond))
	t0 = time.Now()
	if err := broker.restart(); err != nil {
		t.Fatalf("restarting the private broker: %v", err)
	}
	restartTook := time.Since(t0)
	distinct, total = tally.counts()
	t.Logf("broker back after %s, output at %d distinct / %d total records", restartTook.Round(time.Millisecond), distinct, total)
	if distinct >= restartRecords {
		t.Fatalf("all %d records were in the output before the restarted broker answered: the restart was not mid-stream (raise the input size or lower the rate limit)", restartRecords)
	}
	select {
	case <-exited:
		t.Fatalf("connectd exited during the broker restart (%v); log:\n%s", waitErr, logs.String())
	default:
	}

	t0 = time.Now()
	waitDistinct("after the broker restart", restartRecords, 90*time.Second)
	t.Logf("output complete %s after the broker answered again", time.Since(t0).Round(time.Millisecond))

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Errorf("connectd did not exit within 30s of SIGTERM; log:\n%s", logs.String())
	}

	if missing := tally.missingNumbered(restartRecords); len(missing) > 0 {
		t.Errorf("%d records lost, first %v", len(missing), missing[:min(len(missing), 20)])
	}
	distinct, total = tally.counts()
	dups := total - restartRecords
	t.Logf("at-least-once across a broker restart: %d records in, %d distinct out, %d duplicates (%.2f%%); test took %s",
		restartRecords, distinct, dups, 100*float64(dups)/restartRecords, time.Since(testStart).Round(time.Millisecond))
	if distinct != restartRecords {
		t.Errorf("output holds %d distinct values, want exactly the %d input values", distinct, restartRecords)
	}
	if l := strings.TrimSpace(logs.String()); l != "" {
		t.Logf("connectd log (level warn):\n%s", lastLines(l, 40))
	}
}

// lastLines returns the last n lines of s, noting how many were left out.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return fmt.Sprintf("[%d earlier lines left out]\n%s", len(lines)-n, strings.Join(lines[len(lines)-n:], "\n"))
}
