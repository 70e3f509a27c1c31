package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkatest"
)

// TestCountCommitted pins the bench's output check on the real broker: only
// the data records of committed transactions and non-transactional records
// count, a partition that ends with an abort marker or holds nothing is read
// to its end, and an open transaction is reported instead of counted around.
func TestCountCommitted(t *testing.T) {
	brokers := kafkatest.Broker(t)
	topic := kafkatest.NewTopic(t, brokers, "bench-count", 4)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	produce := func(cl *kgo.Client, partition int32, n int) {
		t.Helper()
		for range n {
			r := &kgo.Record{Topic: topic, Partition: partition, Value: []byte("v")}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatalf("producing to partition %d: %v", partition, err)
			}
		}
	}
	txn := func(id string) *kgo.Client {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.TransactionalID(id),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		return cl
	}
	end := func(cl *kgo.Client, commit kgo.TransactionEndTry) {
		t.Helper()
		if err := cl.EndTransaction(ctx, commit); err != nil {
			t.Fatal(err)
		}
	}
	prefix := topic + "-txn-"

	// Partition 0: 5 plain records, then 4 of a committed transaction.
	// Partition 1: 3 of that transaction, then 2 of an aborted one.
	// Partition 2: 2 of the aborted one, 2 of a committed one, 3 more
	// aborted: it ends with an abort marker. Partition 3: nothing.
	plain, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	produce(plain, 0, 5)
	a := txn(prefix + "a")
	produce(a, 0, 4)
	produce(a, 1, 3)
	end(a, kgo.TryCommit)
	b := txn(prefix + "b")
	produce(b, 1, 2)
	produce(b, 2, 2)
	end(b, kgo.TryAbort)
	c := txn(prefix + "c")
	produce(c, 2, 2)
	end(c, kgo.TryCommit)
	if err := b.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(b, 2, 3)
	end(b, kgo.TryAbort)

	got, err := countCommitted(ctx, brokers, topic)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(5 + 4 + 3 + 2); got != want {
		t.Fatalf("counted %d records read_committed, want %d", got, want)
	}

	// An open transaction on partition 3: reported, not counted around.
	d := txn(prefix + "d")
	produce(d, 3, 6)
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	_, err = countCommitted(short, brokers, topic)
	cancelShort()
	if err == nil || !strings.Contains(err.Error(), "open transaction") {
		t.Fatalf("with a transaction open: err = %v, want an open transaction error", err)
	}
	end(d, kgo.TryCommit)
	got, err = countCommitted(ctx, brokers, topic)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(5 + 4 + 3 + 2 + 6); got != want {
		t.Fatalf("after the commit: counted %d records, want %d", got, want)
	}
}
