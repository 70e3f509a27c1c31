package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// rawConsume reads every partition of topic from the start with a bare kgo
// client until it has seen records records: the practical limit for Go.
func rawConsume(ctx context.Context, brokers, topic string, records int64) (result, error) {
	start := time.Now()
	adm, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		return result{}, err
	}
	td, err := kadm.NewClient(adm).ListTopics(ctx, topic)
	adm.Close()
	if err != nil {
		return result{}, err
	}
	parts := map[int32]kgo.Offset{}
	for p := range td[topic].Partitions {
		parts[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return result{}, err
	}
	defer cl.Close()
	var r result
	for r.Records < records {
		fs := cl.PollRecords(ctx, 1024)
		if err := fs.Err0(); err != nil {
			return r, fmt.Errorf("fetch: %w", err)
		}
		if r.Records == 0 && fs.NumRecords() > 0 {
			r.Startup, r.FirstCount = time.Since(start).Seconds(), int64(fs.NumRecords())
		}
		fs.EachRecord(func(rec *kgo.Record) {
			r.Records++
			r.Bytes += int64(len(rec.Value))
		})
	}
	r.Wall = time.Since(start).Seconds()
	return r, nil
}
