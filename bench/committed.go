package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// countCommitted counts the records of topic that a read_committed consumer
// sees, once no transaction is open on it: the check that a copy delivered
// what it claims, so that a broken run is never reported as fast.
//
// It first waits (until ctx ends) until every partition's last stable offset
// equals its end offset, then reads every partition from the start with
// control records kept: a partition is read to its end when the record at
// end-1 arrives (a transaction always ends with a marker, so the last offset
// is a marker or a non-transactional record, both of which come back), and
// only the data records of committed transactions are counted.
func countCommitted(ctx context.Context, brokers, topic string) (int64, error) {
	adm, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		return 0, err
	}
	ends, err := settledEnds(ctx, kadm.NewClient(adm), topic)
	adm.Close()
	if err != nil {
		return 0, err
	}
	parts := map[int32]kgo.Offset{}
	for p, end := range ends {
		if end > 0 {
			parts[p] = kgo.NewOffset().AtStart()
		}
	}
	if len(parts) == 0 {
		return 0, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords())
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	var n int64
	for len(parts) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return n, fmt.Errorf("reading %s read_committed: %d partitions not read to their end offsets: %w", topic, len(parts), err)
		}
		if err := fs.Err0(); err != nil {
			return n, fmt.Errorf("reading %s read_committed: %w", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsControl() {
				n++
			}
			if r.Offset+1 >= ends[r.Partition] {
				delete(parts, r.Partition)
			}
		})
	}
	return n, nil
}

// settledEnds returns the end offset of every partition of topic once each
// equals the partition's last stable offset (no open transaction).
func settledEnds(ctx context.Context, adm *kadm.Client, topic string) (map[int32]int64, error) {
	for {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err == nil {
			err = ends.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
		}
		stable, err := adm.ListCommittedOffsets(ctx, topic)
		if err == nil {
			err = stable.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("last stable offsets of %s: %w", topic, err)
		}
		out := map[int32]int64{}
		open := ""
		ends.Each(func(o kadm.ListedOffset) {
			out[o.Partition] = o.Offset
			if s, ok := stable.Lookup(topic, o.Partition); !ok || s.Offset != o.Offset {
				open = fmt.Sprintf("partition %d: last stable offset %d, end offset %d", o.Partition, s.Offset, o.Offset)
			}
		})
		if open == "" {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s still has an open transaction (%s): %w", topic, open, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
