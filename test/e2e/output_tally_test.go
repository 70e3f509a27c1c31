package e2e

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkatest"
)

// outputTally consumes a topic with read_committed and counts every value,
// by its identity.
type outputTally struct {
	// id gives a value's identity, what distinct counts: the value itself
	// unless newOutputTallyBy says otherwise.
	id func(value []byte) string
	mu struct {
		sync.Mutex
		seen  map[string]int
		total int
	}
}

func newOutputTally() *outputTally {
	return newOutputTallyBy(func(value []byte) string { return string(value) })
}

// newOutputTallyBy counts values by id(value), so that different values of
// one identity (two results of one window) count as one distinct value.
func newOutputTallyBy(id func(value []byte) string) *outputTally {
	o := &outputTally{id: id}
	o.mu.seen = map[string]int{}
	return o
}

// run consumes topic from its start until ctx is done.
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
			o.mu.seen[o.id(r.Value)]++
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

// missingNumbered returns the values "0".."n-1" (as written by
// produceNumbered) that the output does not hold.
func (o *outputTally) missingNumbered(n int) []int {
	o.mu.Lock()
	defer o.mu.Unlock()
	var missing []int
	for i := range n {
		if o.mu.seen[strconv.Itoa(i)] == 0 {
			missing = append(missing, i)
		}
	}
	return missing
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
