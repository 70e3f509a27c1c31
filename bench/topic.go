package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkatest"
)

// ensureTopic returns a topic holding exactly records records of size bytes
// over partitions partitions, reusing one from an earlier run.
func ensureTopic(ctx context.Context, brokers string, records int64, size, partitions int) (string, error) {
	topic := fmt.Sprintf("bench-source-%d-%d-%d", records, size, partitions)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ProducerLinger(5*time.Millisecond),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return "", err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		var n int64
		ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
		if n == records {
			fmt.Fprintf(os.Stderr, "reusing %s\n", topic)
			return topic, nil
		}
		_, _ = adm.DeleteTopics(ctx, topic)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := adm.CreateTopic(ctx, int32(partitions), 1, nil, topic)
		if err == nil && resp.Err == nil {
			break
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("creating %s: %v %v", topic, err, resp.Err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "producing %d records of %d bytes to %s\n", records, size, topic)
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	values := make([][]byte, 1024)
	for i := range values {
		v := make([]byte, size)
		for j := range v {
			v[j] = alphabet[rng.IntN(len(alphabet))]
		}
		values[i] = v
	}
	start := time.Now()
	err = kafkatest.ProduceN(ctx, cl, records, func(i int64) *kgo.Record {
		return &kgo.Record{Topic: topic, Partition: int32(i % int64(partitions)), Value: values[i%1024]}
	})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "produced in %v\n", time.Since(start).Round(time.Millisecond))
	return topic, nil
}
