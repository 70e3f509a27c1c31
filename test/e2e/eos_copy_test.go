package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkatest"
)

// The contract of DESIGN.md point 2, with config/eos_copy.yaml and the built
// binary on the real broker.
const (
	eosRecords    = 200_000
	eosKeys       = 1000
	eosPartitions = 8
	eosKills      = 10
)

// eosValue is an input record: the key and its per-key sequence number.
type eosValue struct {
	Key string `json:"key"`
	Seq int    `json:"seq"`
}

// produceKeyed writes eosRecords JSON records over eosKeys keys, each key's
// sequence numbers in order (a key goes to one partition).
func produceKeyed(t *testing.T, brokers, topic string) {
	t.Helper()
	produceKeyedRange(t, brokers, topic, 0, eosRecords)
}

// produceKeyedRange writes the input records from up to (not including) to
// of what produceKeyed writes.
func produceKeyedRange(t *testing.T, brokers, topic string, from, to int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = kafkatest.ProduceN(ctx, cl, to-from, func(i int64) *kgo.Record {
		i += from
		key := fmt.Sprintf("k%03d", i%eosKeys)
		v, _ := json.Marshal(eosValue{Key: key, Seq: int(i / eosKeys)})
		return &kgo.Record{Topic: topic, Key: []byte(key), Value: v}
	})
	if err != nil {
		t.Fatalf("producing input to %s: %v", topic, err)
	}
}

// eosCheck counts what a reader saw, in read order.
type eosCheck struct {
	total, distinct, duplicates, missing, outOfOrder int
}

// checkExactlyOnce checks that values hold every (key, seq) of the input once
// and, per key, in sequence order.
func checkExactlyOnce(t *testing.T, values [][]byte) eosCheck {
	t.Helper()
	next := map[string]int{}
	seen := map[eosValue]int{}
	var c eosCheck
	for _, raw := range values {
		var v eosValue
		if err := json.Unmarshal(raw, &v); err != nil || v.Key == "" {
			t.Fatalf("unexpected output record %q: %v", raw, err)
		}
		c.total++
		seen[v]++
		if seen[v] > 1 {
			c.duplicates++
			continue
		}
		if v.Seq != next[v.Key] {
			c.outOfOrder++
		}
		next[v.Key] = v.Seq + 1
	}
	c.distinct = len(seen)
	for i := range eosRecords {
		if seen[eosValue{Key: fmt.Sprintf("k%03d", i%eosKeys), Seq: i / eosKeys}] == 0 {
			c.missing++
		}
	}
	return c
}

// readAllCommitted reads topic from the start as a read_committed franz-go
// consumer, in per-partition order, until it is quiet for 3s (the copy has
// stopped).
func readAllCommitted(t *testing.T, brokers, topic string) [][]byte {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out [][]byte
	eventually.NoError(t, time.Minute, fmt.Sprintf("a read_committed reader of %s to read everything", topic), func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachError(func(topic string, p int32, err error) {
			if ctx.Err() == nil {
				t.Logf("reading %s/%d: %v", topic, p, err)
			}
		})
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, r.Value)
			n++
		})
		if n == 0 && len(out) > 0 {
			return nil
		}
		return fmt.Errorf("%d records read, %d in the last 3s", len(out), n)
	})
	return out
}

// kcatAll reads topic with kcat (librdkafka) as a read_committed consumer,
// from the beginning to the end.
func kcatAll(t *testing.T, kcat, brokers, topic string) [][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, kcat, "-C", "-b", brokers, "-t", topic, "-o", "beginning", "-e", "-q",
		"-X", "isolation.level=read_committed", "-f", "%s\n").Output()
	if err != nil {
		t.Fatalf("kcat %s: %v", topic, err)
	}
	var values [][]byte
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			values = append(values, bytes.Clone(line))
		}
	}
	return values
}

// eosProcess is one `connectd run` of a config, its output captured.
type eosProcess struct {
	cmd  *exec.Cmd
	logs *lockedBuffer
}

// startEOSCopy runs config/eos_copy.yaml.
func startEOSCopy(t *testing.T, env ...string) *eosProcess {
	t.Helper()
	return startConnectd(t, "config/eos_copy.yaml", env...)
}

// startConnectd runs `connectd run config` from the module root, with env
// added to the test's environment; the process is killed at cleanup if it
// still runs.
func startConnectd(t *testing.T, config string, env ...string) *eosProcess {
	t.Helper()
	cmd := exec.Command(connectdBin(t), "run", config)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), env...)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &eosProcess{cmd: cmd, logs: logs}
	t.Cleanup(func() { p.kill() })
	return p
}

func (p *eosProcess) kill() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		_ = p.cmd.Wait()
	}
}

// stop ends the process cleanly (SIGTERM), killing it after a grace period.
func (p *eosProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// waitTotal waits until the read_committed tally holds at least n records.
func waitTotal(t *testing.T, tally *outputTally, n int, timeout time.Duration, ps ...*eosProcess) {
	t.Helper()
	eventually.NoError(t, timeout, fmt.Sprintf("%d distinct output records", n), func() error {
		if distinct, total := tally.counts(); distinct < n {
			return stateWithLogs(fmt.Sprintf("output at %d distinct (%d total) records", distinct, total), logsOf(ps...)...)
		}
		return nil
	})
}

// logsOf returns the logs of ps.
func logsOf(ps ...*eosProcess) []*lockedBuffer {
	logs := make([]*lockedBuffer, len(ps))
	for i, p := range ps {
		logs[i] = p.logs
	}
	return logs
}

// verifyEOS reads the output with franz-go and kcat, both read_committed,
// logs the counts and fails unless each sees every input record exactly
// once in per-key order.
func verifyEOS(t *testing.T, brokers, kcat, out, what string) {
	t.Helper()
	for _, reader := range []struct {
		name string
		read func() [][]byte
	}{
		{"franz-go read_committed", func() [][]byte { return readAllCommitted(t, brokers, out) }},
		{"kcat read_committed", func() [][]byte { return kcatAll(t, kcat, brokers, out) }},
	} {
		c := checkExactlyOnce(t, reader.read())
		t.Logf("%s, %s: records in %d, out %d, distinct %d, duplicates %d, missing %d, out of per-key order %d",
			what, reader.name, eosRecords, c.total, c.distinct, c.duplicates, c.missing, c.outOfOrder)
		if c.total != eosRecords || c.distinct != eosRecords || c.duplicates != 0 || c.missing != 0 || c.outOfOrder != 0 {
			t.Errorf("%s, %s: not exactly once in per-key order", what, reader.name)
		}
	}
}

// TestEOSCopySIGKILL: kafka_source -> kafka_sink exactly_once copies 200,000
// keyed records while connectd is SIGKILLed at random moments at least ten
// times and restarted; a read_committed franz-go consumer and kcat each see
// every input record exactly once, in per-key order.
func TestEOSCopySIGKILL(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	kcat := kafkatest.Kcat(t)
	in := kafkatest.NewTopic(t, brokers, "e2e-eos-in", eosPartitions)
	out := kafkatest.NewTopic(t, brokers, "e2e-eos-out", eosPartitions)
	produceKeyed(t, brokers, in)

	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("random seed %d", seed)
	env := []string{"CONNECTD_BROKERS=" + brokers, "CONNECTD_EOS_IN=" + in, "CONNECTD_EOS_OUT=" + out,
		"CONNECTD_EOS_GROUP=" + in + "-g", "CONNECTD_EOS_TXN_PREFIX=" + in, "CONNECTD_EOS_TXN_TIMEOUT=20s",
		"CONNECTD_LOG_LEVEL=info"}

	ctx, cancel := context.WithCancel(context.Background())
	tally := newOutputTally()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); tally.run(ctx, t, brokers, out) }()
	defer wg.Wait()
	defer cancel()

	begin := time.Now()
	// Kill when the output grew by a random share of what is left to reach
	// (so that every kill lands mid-stream), after a random delay.
	var procs []*eosProcess
	defer func() {
		if t.Failed() {
			for i, p := range procs {
				t.Logf("--- process %d:\n%s", i+1, p.logs.String())
			}
		}
	}()
	for k := 1; k <= eosKills; k++ {
		p := startEOSCopy(t, env...)
		procs = append(procs, p)
		done, _ := tally.counts()
		// Past 90 % already (a fast run): the later kills land at once,
		// still mid-stream, rather than at a negative step.
		step := max(0, (eosRecords*9/10-done)/(eosKills-k+2))
		waitTotal(t, tally, done+step/2+rng.IntN(step/2+1), 2*time.Minute, p)
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond) // a random instant, not a wait for a condition
		p.kill()
		distinct, total := tally.counts()
		t.Logf("SIGKILL %d at %v: %d distinct / %d total committed output records", k, time.Since(begin).Round(time.Millisecond), distinct, total)
	}
	p := startEOSCopy(t, env...)
	procs = append(procs, p)
	waitTotal(t, tally, eosRecords, 2*time.Minute, p)
	p.stop()
	verifyEOS(t, brokers, kcat, out, fmt.Sprintf("after %d SIGKILLs", eosKills))
}

// TestEOSCopyGroupTakeover: two connectd processes in assignment: group
// copy 200,000 keyed records exactly once; one is SIGKILLed mid-run and not
// restarted, the other takes its partitions over (after the session
// timeout, and after the broker aborted the dead process's open
// transaction, which the survivor's require-stable offset fetch waits for).
// It runs with the classic group protocol and with KIP-848's, where the
// transactional offset commit carries the member epoch as the generation.
func TestEOSCopyGroupTakeover(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"classic", "consumer"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			testEOSCopyGroupTakeover(t, protocol)
		})
	}
}

func testEOSCopyGroupTakeover(t *testing.T, protocol string) {
	brokers := kafkatest.Broker(t)
	kcat := kafkatest.Kcat(t)
	in := kafkatest.NewTopic(t, brokers, "e2e-eosg-"+protocol+"-in", eosPartitions)
	out := kafkatest.NewTopic(t, brokers, "e2e-eosg-"+protocol+"-out", eosPartitions)

	env := []string{"CONNECTD_BROKERS=" + brokers, "CONNECTD_EOS_IN=" + in, "CONNECTD_EOS_OUT=" + out,
		"CONNECTD_EOS_GROUP=" + in + "-g", "CONNECTD_EOS_TXN_PREFIX=" + in, "CONNECTD_EOS_ASSIGNMENT=group",
		"CONNECTD_EOS_SESSION_TIMEOUT=6s", "CONNECTD_EOS_TXN_TIMEOUT=10s", "CONNECTD_LOG_LEVEL=info",
		"CONNECTD_EOS_GROUP_PROTOCOL=" + protocol}

	ctx, cancel := context.WithCancel(context.Background())
	tally := newOutputTally()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); tally.run(ctx, t, brokers, out) }()
	defer wg.Wait()
	defer cancel()

	a := startEOSCopy(t, append(env, "CONNECTD_EOS_INSTANCE=0")...)
	b := startEOSCopy(t, append(env, "CONNECTD_EOS_INSTANCE=1")...)
	// Both must own partitions before one dies.
	eventually.NoError(t, time.Minute, "both processes to get partitions", func() error {
		if !strings.Contains(a.logs.String(), "was assigned") || !strings.Contains(b.logs.String(), "was assigned") {
			return stateWithLogs("not both assigned", a.logs, b.logs)
		}
		return nil
	})
	// The input is written only now, so that both processes share it: with
	// KIP-848 the second member's assignment takes seconds, time enough
	// for the first to copy everything. Its second half is written after
	// the kill, so that the killed process's partitions have records left
	// for the takeover however fast the first half was copied.
	produceKeyedRange(t, brokers, in, 0, eosRecords/2)
	waitTotal(t, tally, eosRecords/6, 2*time.Minute, a, b)
	a.kill()
	produceKeyedRange(t, brokers, in, eosRecords/2, eosRecords)
	distinct, total := tally.counts()
	t.Logf("SIGKILL of one of two group members at %d distinct / %d total committed output records", distinct, total)
	waitTotal(t, tally, eosRecords, 2*time.Minute, b)
	b.stop()
	if n := strings.Count(b.logs.String(), "was assigned"); n < 2 {
		t.Errorf("the surviving process was assigned partitions %d times, want a takeover after its first assignment:\n%s", n, b.logs.String())
	}
	verifyEOS(t, brokers, kcat, out, "group mode ("+protocol+" protocol), one member killed")
	if t.Failed() {
		t.Logf("--- killed process:\n%s\n--- surviving process:\n%s", a.logs.String(), b.logs.String())
	}
}
