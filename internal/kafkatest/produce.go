package kafkatest

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ProduceN produces n records built by rec(i) asynchronously on cl and waits
// for all of them, returning the first failure. Tests and the benchmarks use it
// to load topics quickly.
func ProduceN(ctx context.Context, cl *kgo.Client, n int64, rec func(i int64) *kgo.Record) error {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for i := range n {
		wg.Add(1)
		cl.Produce(ctx, rec(i), func(r *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = fmt.Errorf("producing to %s partition %d: %w", r.Topic, r.Partition, err)
				}
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	return firstErr
}
