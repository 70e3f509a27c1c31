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

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkatest"
)

const (
	killRecords = 100_000
	killCount   = 5
)

// outputTally consumes a topic with read_committed and counts every value.
type outputTally struct {
	mu struct {
		sync.Mutex
		seen  map[string]int
		total int
	}
}

func (o *outputTally) run(ctx context.Context, t *testing.T, brokers, topic string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Errorf("output consumer: %v", err)
		return
	}
	defer cl.Close()
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachError(func(topic string, p int32, err error) {
			if ctx.Err() == nil {
				t.Logf("output consumer %s[%d]: %v", topic, p, err)
			}
		})
		o.mu.Lock()
		fs.EachRecord(func(r *kgo.Record) {
			o.mu.seen[string(r.Value)]++
			o.mu.total++
		})
		o.mu.Unlock()
	}
}

func (o *outputTally) counts() (distinct, total int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.mu.seen), o.mu.total
}

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
	tally := &outputTally{}
	tally.mu.seen = map[string]int{}
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
		return cmd, logs
	}

	for k := 1; k <= killCount; k++ {
		target := k * killRecords / (killCount + 1)
		cmd, logs := start()
		deadline := time.Now().Add(3 * time.Minute)
		for {
			distinct, _ := tally.counts()
			if distinct >= target {
				break
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("run %d: output reached %d distinct records, want %d within 3m; connectd log:\n%s", k, distinct, target, logs.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		distinct, total := tally.counts()
		t.Logf("SIGKILL %d at %d distinct / %d total output records", k, distinct, total)
	}

	cmd, logs := start()
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		distinct, _ := tally.counts()
		if distinct == killRecords {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("final run: %d of %d records reached the output in 5m; connectd log:\n%s", distinct, killRecords, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
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

// produceNumbered writes values "0".."n-1" keyed by value mod 1000.
func produceNumbered(t *testing.T, brokers, topic string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = kafkatest.ProduceN(ctx, cl, int64(n), func(i int64) *kgo.Record {
		return &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(int(i % 1000))), Value: []byte(strconv.Itoa(int(i)))}
	})
	if err != nil {
		t.Fatalf("producing input to %s: %v", topic, err)
	}
}

func init() {
	// The kill test runs the binary with the real broker's address; make
	// sure a stray dev-broker setting in the environment does not apply.
	_ = os.Unsetenv("CONNECTD_DEV_BROKER")
}
