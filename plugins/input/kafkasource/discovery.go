package kafkasource

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// This file is partition discovery (Flink's periodic partition discovery in
// the split enumerator): every discovery_interval the session lists the
// subscribed partitions again, assigns new ones, read from the earliest
// offset, and releases the partitions of topics that were deleted or no
// longer match. It also holds the quiet-partition check of bounded reads.

// discoveryLoop runs discover every DiscoveryInterval until ctx ends. It is
// the only goroutine that adds or removes splits while the session runs.
func (sess *session) discoveryLoop(ctx context.Context) {
	t := time.NewTicker(sess.conf.DiscoveryInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := sess.discover(ctx); err != nil && ctx.Err() == nil {
				sess.log.Warnf("kafka_source: partition discovery: %v", err)
			}
		}
	}
}

// discover assigns new partitions and releases removed ones.
func (sess *session) discover(ctx context.Context) error {
	tps, topics, err := listSubscribed(ctx, sess.adm, sess.conf, false)
	if err != nil {
		return err
	}
	now := make(map[topicPartition]bool, len(tps))
	for _, tp := range tps {
		now[tp] = true
	}
	sess.mu.Lock()
	var added []topicPartition
	for _, tp := range tps {
		if !sess.mu.tracker.has(tp) {
			added = append(added, tp)
		}
	}
	var removed []topicPartition
	for _, tp := range sess.mu.tracker.partitions() {
		if !now[tp] {
			removed = append(removed, tp)
		}
	}
	sess.mu.Unlock()

	if len(removed) > 0 {
		sess.release(removed)
	}
	if len(added) == 0 {
		return nil
	}
	// New partitions start at the earliest offset: whatever was written
	// before they were seen is read.
	var addedTopics []string
	for _, t := range topics {
		for _, tp := range added {
			if tp.topic == t {
				addedTopics = append(addedTopics, t)
				break
			}
		}
	}
	starts, err := sess.adm.ListStartOffsets(ctx, addedTopics...)
	if err != nil {
		return fmt.Errorf("listing start offsets of %v: %w", addedTopics, err)
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.mu.stopped {
		return nil
	}
	consume := make(map[int]map[string]map[int32]kgo.Offset)
	for _, tp := range added {
		o, ok := starts.Lookup(tp.topic, tp.partition)
		if !ok || o.Err != nil || o.Offset < 0 {
			// Not ready yet (a new partition without a leader): the next
			// round picks it up.
			continue
		}
		r := sess.conf.readerOf(tp)
		sess.owner[tp] = r
		sess.mu.tracker.addPartition(tp, o.Offset, -1, noStop)
		sess.wmAddLocked(tp)
		if consume[r] == nil {
			consume[r] = map[string]map[int32]kgo.Offset{}
		}
		if consume[r][tp.topic] == nil {
			consume[r][tp.topic] = map[int32]kgo.Offset{}
		}
		consume[r][tp.topic][tp.partition] = kgo.NewOffset().At(o.Offset)
		sess.log.Infof("kafka_source: discovered topic %s partition %d; reader %d reads it from offset %d (earliest)", tp.topic, tp.partition, r, o.Offset)
	}
	for r, c := range consume {
		sess.clients[r].AddConsumePartitions(c)
	}
	sess.setReaderSplitsLocked()
	return nil
}

// release stops reading partitions whose topic was deleted or no longer
// matches. Their records still in flight are delivered, but their offsets
// are no longer committed.
func (sess *session) release(tps []topicPartition) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.mu.stopped {
		return
	}
	sess.eachClientLocked(tps, (*kgo.Client).RemoveConsumePartitions)
	byTopic := map[string][]int32{}
	for _, tp := range tps {
		sess.mu.tracker.removePartition(tp)
		sess.wmRemoveLocked(tp)
		delete(sess.owner, tp)
		byTopic[tp.topic] = append(byTopic[tp.topic], tp.partition)
	}
	sess.setReaderSplitsLocked()
	for t, ps := range byTopic {
		sess.log.Infof("kafka_source: released topic %s partitions %v: the topic was deleted or is no longer subscribed", t, ps)
	}
}

// quietLoop is for bounded reads: a partition below its stop offset whose
// position did not move for two fetch waits is checked against its log
// start offset. If retention deleted everything from its position up to the
// end of the log, no record will ever arrive to show it, so the position is
// moved to the log start here (as the client's own out-of-range reset does),
// and the partition can finish.
func (sess *session) quietLoop(ctx context.Context) {
	t := time.NewTicker(2 * sess.conf.FetchMaxWait)
	defer t.Stop()
	last := map[topicPartition]int64{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sess.mu.Lock()
		quiet := map[topicPartition]int64{}
		var topics []string
		for tp, next := range sess.mu.tracker.unfinished() {
			if prev, ok := last[tp]; ok && prev == next {
				quiet[tp] = next
				if !slices.Contains(topics, tp.topic) {
					topics = append(topics, tp.topic)
				}
			}
			last[tp] = next
		}
		sess.mu.Unlock()
		if len(quiet) == 0 {
			continue
		}
		starts, err := sess.adm.ListStartOffsets(ctx, topics...)
		if err != nil {
			continue
		}
		sess.mu.Lock()
		for tp, next := range quiet {
			o, ok := starts.Lookup(tp.topic, tp.partition)
			if cur, tracked := sess.mu.tracker.next(tp); ok && o.Err == nil && tracked && cur == next && o.Offset > next {
				sess.offsetResetLocked(tp, next, o.Offset)
			}
		}
		sess.mu.Unlock()
	}
}
