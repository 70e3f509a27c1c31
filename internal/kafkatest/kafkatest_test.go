package kafkatest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

func TestTopicName(t *testing.T) {
	n := topicName("TestX/sub case:1")
	if !strings.HasPrefix(n, "TestX_sub_case_1-") || len(n) != len("TestX_sub_case_1-")+12 {
		t.Fatalf("topicName = %q", n)
	}
	if a, b := topicName("p"), topicName("p"); a == b {
		t.Fatal("topicName is not unique")
	}
}

func newClient(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// consume polls cl until want records arrived or the deadline passes.
func consume(t *testing.T, cl *kgo.Client, want int) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []*kgo.Record
	for len(got) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records before timeout", len(got), want)
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Fatalf("fetch %s/%d: %v", topic, p, err)
		})
		got = append(got, fs.Records()...)
	}
	return got
}

func TestProduceConsumeAndKcat(t *testing.T) {
	broker := Broker(t)
	kcat := Kcat(t)
	topic := NewTopic(t, broker, t.Name(), 3)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	prod := newClient(t, kgo.SeedBrokers(seeds(broker)...))
	rec := &kgo.Record{Topic: topic, Key: []byte("k1"), Value: []byte("hello kafka"),
		Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("v")}}}
	if err := prod.ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}

	cons := newClient(t, kgo.SeedBrokers(seeds(broker)...),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := consume(t, cons, 1)
	if len(got) != 1 || string(got[0].Value) != "hello kafka" || string(got[0].Key) != "k1" ||
		got[0].Partition != rec.Partition || got[0].Offset != 0 {
		t.Fatalf("consumed %+v, want the produced record", got)
	}

	out, err := exec.CommandContext(ctx, kcat, "-b", broker, "-m", "10", "-L", "-t", topic).CombinedOutput()
	if err != nil {
		t.Fatalf("kcat -L: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `topic "`+topic+`" with 3 partitions`) {
		t.Fatalf("kcat -L output does not show the topic with 3 partitions:\n%s", out)
	}

	// kcat (librdkafka) reads the record produced by franz-go.
	out, err = exec.CommandContext(ctx, kcat, "-b", broker, "-C", "-t", topic, "-o", "beginning", "-e", "-q",
		"-f", `%k=%s\n`).CombinedOutput()
	if err != nil {
		t.Fatalf("kcat -C: %v\n%s", err, out)
	}
	if strings.TrimSpace(string(out)) != "k1=hello kafka" {
		t.Fatalf("kcat -C read %q", out)
	}
}

func ping(t *testing.T, addr string, m sasl.Mechanism) error {
	t.Helper()
	cl := newClient(t, kgo.SeedBrokers(seeds(addr)...), kgo.SASL(m), kgo.DialTimeout(5*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return cl.Ping(ctx)
}

func TestSASL(t *testing.T) {
	addr, user, password := SASL(t)
	for _, tc := range []struct {
		name string
		mech func(pass string) sasl.Mechanism
	}{
		{"SCRAM-SHA-512", func(p string) sasl.Mechanism { return scram.Auth{User: user, Pass: p}.AsSha512Mechanism() }},
		{"SCRAM-SHA-256", func(p string) sasl.Mechanism { return scram.Auth{User: user, Pass: p}.AsSha256Mechanism() }},
		{"PLAIN", func(p string) sasl.Mechanism { return plain.Auth{User: user, Pass: p}.AsMechanism() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := ping(t, addr, tc.mech(password)); err != nil {
				t.Fatalf("%s login as %q with the right password failed: %v", tc.name, user, err)
			}
			err := ping(t, addr, tc.mech(password+"-wrong"))
			if err == nil {
				t.Fatalf("%s login with a wrong password succeeded", tc.name)
			}
			if !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Fatalf("%s login with a wrong password: got %v, want SASL_AUTHENTICATION_FAILED", tc.name, err)
			}
		})
	}
}

// TestTransactions checks that transactions work on the single-node broker:
// a committed transaction is visible to read_committed readers (franz-go and
// kcat/librdkafka), an aborted one is not.
func TestTransactions(t *testing.T) {
	broker := Broker(t)
	topic := NewTopic(t, broker, t.Name(), 2)

	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	txnID := "kafkatest-" + hex.EncodeToString(suffix[:])

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	prod := newClient(t, kgo.SeedBrokers(seeds(broker)...), kgo.TransactionalID(txnID),
		kgo.DefaultProduceTopic(topic), kgo.TransactionTimeout(30*time.Second))

	txn := func(commit kgo.TransactionEndTry, values ...string) {
		t.Helper()
		if err := prod.BeginTransaction(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		for _, v := range values {
			if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(v), Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatalf("produce %q: %v", v, err)
			}
		}
		if err := prod.EndTransaction(ctx, commit); err != nil {
			t.Fatalf("end transaction (commit=%v): %v", commit, err)
		}
	}
	txn(kgo.TryCommit, "c1", "c2")
	txn(kgo.TryAbort, "a1", "a2")
	txn(kgo.TryCommit, "c3")

	cons := newClient(t, kgo.SeedBrokers(seeds(broker)...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	seen := map[string]bool{}
	for _, r := range consume(t, cons, 3) {
		seen[string(r.Value)] = true
	}
	for _, v := range []string{"c1", "c2", "c3"} {
		if !seen[v] {
			t.Errorf("committed record %q not read; read %v", v, seen)
		}
	}
	if seen["a1"] || seen["a2"] || len(seen) != 3 {
		t.Errorf("read_committed consumer read %v, want exactly c1 c2 c3", seen)
	}

	// An independent client (kcat / librdkafka) agrees.
	if kcat, err := exec.LookPath("kcat"); err == nil {
		out, err := exec.CommandContext(ctx, kcat, "-b", broker, "-C", "-t", topic, "-o", "beginning", "-e", "-q",
			"-X", "isolation.level=read_committed", "-f", `%s\n`).CombinedOutput()
		if err != nil {
			t.Fatalf("kcat read_committed: %v\n%s", err, out)
		}
		lines := strings.Fields(string(out))
		got := map[string]bool{}
		for _, l := range lines {
			got[l] = true
		}
		if len(lines) != 3 || !got["c1"] || !got["c2"] || !got["c3"] {
			t.Errorf("kcat read_committed read %q, want c1 c2 c3", lines)
		}
	}
}
