package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// This file is the enumerator's first cut (Flink's split enumerator plus its
// OffsetsInitializer): it lists the partitions of the configured topics and
// resolves each one's start offset. Assignment over readers, partition
// discovery while running and stop offsets extend it.

// ErrNoCommittedOffset is wrapped by a StartOffsetError when a partition has
// no usable committed offset and committed_fallback is error.
var ErrNoCommittedOffset = errors.New("no usable committed offset")

// StartOffsetError says why a partition's start offset could not be resolved.
type StartOffsetError struct {
	Group     string
	Topic     string
	Partition int32
	// Committed is the group's committed offset, -1 if none.
	Committed int64
	// LogStart and LogEnd are the partition's offset range when known.
	LogStart, LogEnd int64
	Err              error
}

func (e *StartOffsetError) Error() string {
	if e.Committed < 0 {
		return fmt.Sprintf("consumer group %q has no committed offset for topic %q partition %d, and %s is %s: %v",
			e.Group, e.Topic, e.Partition, fieldCommittedFallback, FallbackError, e.Err)
	}
	return fmt.Sprintf("committed offset %d of consumer group %q for topic %q partition %d is outside the log [%d, %d], and %s is %s: %v",
		e.Committed, e.Group, e.Topic, e.Partition, e.LogStart, e.LogEnd, fieldCommittedFallback, FallbackError, e.Err)
}

func (e *StartOffsetError) Unwrap() error { return e.Err }

// TopicError is returned when a configured topic cannot be read.
type TopicError struct {
	Topic string
	Err   error
}

func (e *TopicError) Error() string {
	if errors.Is(e.Err, kerr.UnknownTopicOrPartition) {
		return fmt.Sprintf("topic %q does not exist (field %s): %v", e.Topic, fieldTopics, e.Err)
	}
	return fmt.Sprintf("topic %q: %v", e.Topic, e.Err)
}

func (e *TopicError) Unwrap() error { return e.Err }

// split is one partition with its resolved start.
type split struct {
	tp topicPartition
	// start is the concrete offset to read from.
	start int64
	// committed is the group's committed offset, -1 if none.
	committed int64
}

// partitionRange is what the broker says about one partition at connect.
type partitionRange struct {
	// committed by the group, -1 if none.
	committed int64
	// logStart and logEnd (high watermark) bound the valid offsets.
	logStart, logEnd int64
	// latest is where start_from latest begins: the high watermark, or the
	// last stable offset under read_committed.
	latest int64
}

// resolveStart returns the start offset of a partition. It does no I/O.
func resolveStart(mode StartFrom, fallback CommittedFallback, group string, tp topicPartition, r partitionRange) (int64, error) {
	switch mode {
	case StartEarliest:
		return r.logStart, nil
	case StartLatest:
		return r.latest, nil
	}
	if r.committed >= 0 && r.committed >= r.logStart && r.committed <= r.logEnd {
		return r.committed, nil
	}
	switch fallback {
	case FallbackLatest:
		return r.latest, nil
	case FallbackError:
		return 0, &StartOffsetError{
			Group: group, Topic: tp.topic, Partition: tp.partition,
			Committed: r.committed, LogStart: r.logStart, LogEnd: r.logEnd,
			Err: ErrNoCommittedOffset,
		}
	default:
		return r.logStart, nil
	}
}

// enumerate lists the partitions of the configured topics and resolves their
// start offsets. A partition in resume (the position of a previous session
// of this process) starts there instead of where start_from says. All
// partition errors are collected.
func enumerate(ctx context.Context, adm *kadm.Client, c Config, resume map[topicPartition]int64) ([]split, error) {
	topics, err := adm.ListTopics(ctx, c.Topics...)
	if err != nil {
		return nil, fmt.Errorf("listing topics %v: %w", c.Topics, err)
	}
	var errs []error
	var tps []topicPartition
	for _, t := range c.Topics {
		td, ok := topics[t]
		switch {
		case !ok:
			errs = append(errs, &TopicError{Topic: t, Err: kerr.UnknownTopicOrPartition})
			continue
		case td.Err != nil:
			errs = append(errs, &TopicError{Topic: t, Err: td.Err})
			continue
		case len(td.Partitions) == 0:
			errs = append(errs, &TopicError{Topic: t, Err: errors.New("topic has no partitions")})
			continue
		}
		for _, p := range td.Partitions.Numbers() {
			tps = append(tps, topicPartition{topic: t, partition: p})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].topic != tps[j].topic {
			return tps[i].topic < tps[j].topic
		}
		return tps[i].partition < tps[j].partition
	})

	committed, err := fetchCommitted(ctx, adm, c.ConsumerGroup)
	if err != nil {
		return nil, err
	}
	starts, err := listOffsets(ctx, "start", adm.ListStartOffsets, c.Topics)
	if err != nil {
		return nil, err
	}
	ends, err := listOffsets(ctx, "end", adm.ListEndOffsets, c.Topics)
	if err != nil {
		return nil, err
	}
	latest := ends
	if c.IsolationLevel == ReadCommitted {
		if latest, err = listOffsets(ctx, "last stable", adm.ListCommittedOffsets, c.Topics); err != nil {
			return nil, err
		}
	}

	splits := make([]split, 0, len(tps))
	for _, tp := range tps {
		r := partitionRange{committed: -1}
		if o, ok := committed.Lookup(tp.topic, tp.partition); ok {
			if o.Err != nil {
				errs = append(errs, fmt.Errorf("committed offset of consumer group %q for topic %q partition %d: %w",
					c.ConsumerGroup, tp.topic, tp.partition, o.Err))
				continue
			}
			if o.At >= 0 {
				r.committed = o.At
			}
		}
		var ok bool
		if r.logStart, ok = lookupOffset(starts, tp); !ok {
			errs = append(errs, fmt.Errorf("topic %q partition %d: no log start offset listed", tp.topic, tp.partition))
			continue
		}
		if r.logEnd, ok = lookupOffset(ends, tp); !ok {
			errs = append(errs, fmt.Errorf("topic %q partition %d: no end offset listed", tp.topic, tp.partition))
			continue
		}
		if r.latest, ok = lookupOffset(latest, tp); !ok {
			r.latest = r.logEnd
		}
		start, ok := resume[tp]
		if !ok {
			if start, err = resolveStart(c.StartFrom, c.CommittedFallback, c.ConsumerGroup, tp, r); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		splits = append(splits, split{tp: tp, start: start, committed: r.committed})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return splits, nil
}

// fetchCommitted returns the group's committed offsets. A group that never
// committed does not exist yet: no offsets. Retriable coordinator errors (the
// offsets topic is still being created on a fresh cluster, or the
// coordinator is moving) are retried until ctx ends.
func fetchCommitted(ctx context.Context, adm *kadm.Client, group string) (kadm.OffsetResponses, error) {
	wait := 50 * time.Millisecond
	for {
		// Require stable: wait for pending transactional offset commits
		// (the exactly-once sink commits source offsets in its
		// transactions).
		committed, err := adm.FetchOffsets(kadm.RequireStable(ctx), group)
		switch {
		case err == nil:
			return committed, nil
		case errors.Is(err, kerr.GroupIDNotFound):
			return nil, nil
		case !kerr.IsRetriable(err):
			return nil, fmt.Errorf("fetching committed offsets of consumer group %q: %w", group, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("fetching committed offsets of consumer group %q: %w (gave up: %w)", group, err, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

func listOffsets(ctx context.Context, what string, list func(context.Context, ...string) (kadm.ListedOffsets, error), topics []string) (kadm.ListedOffsets, error) {
	l, err := list(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("listing %s offsets of %v: %w", what, topics, err)
	}
	var errs []error
	l.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("listing %s offset of topic %q partition %d: %w", what, o.Topic, o.Partition, o.Err))
		}
	})
	return l, errors.Join(errs...)
}

func lookupOffset(l kadm.ListedOffsets, tp topicPartition) (int64, bool) {
	o, ok := l.Lookup(tp.topic, tp.partition)
	if !ok || o.Offset < 0 {
		return 0, false
	}
	return o.Offset, true
}
