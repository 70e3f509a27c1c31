package kafkasource

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// This file is partition discovery (Flink's periodic partition discovery in
// the split enumerator): every discovery_interval the enumerator lists the
// subscribed partitions again, assigns new ones, read from the earliest
// offset, and releases the partitions of topics that were deleted or no
// longer match. It also holds the quiet-partition check of bounded reads.
// Both list on a goroutine of their own and hand the result to the owner.

// discoveryState is the owner's discovery bookkeeping.
type discoveryState struct {
	// running: a round's listing is under way.
	running bool
}

// discover starts a round of partition discovery, unless one runs.
func (a *enumeratorAssignment) discover(o *owner) {
	if o.discovery.running || o.stopping {
		return
	}
	o.discovery.running = true
	tracked := map[topicPartition]bool{}
	for _, tp := range o.tracker.partitions() {
		tracked[tp] = true
	}
	ctx, adm, conf := o.sess.ctx, o.adm, a.conf
	o.sess.goJob(func() {
		var res discovered
		res.err = func() error {
			tps, topics, err := listSubscribed(ctx, adm, conf, false)
			if err != nil {
				return err
			}
			now := make(map[topicPartition]bool, len(tps))
			for _, tp := range tps {
				now[tp] = true
				if !tracked[tp] {
					res.added = append(res.added, tp)
				}
			}
			for tp := range tracked {
				if !now[tp] {
					res.removed = append(res.removed, tp)
				}
			}
			sortPartitions(res.removed)
			if len(res.added) == 0 {
				return nil
			}
			// New partitions start at the earliest offset: whatever was
			// written before they were seen is read.
			var addedTopics []string
			for _, t := range topics {
				if slices.ContainsFunc(res.added, func(tp topicPartition) bool { return tp.topic == t }) {
					addedTopics = append(addedTopics, t)
				}
			}
			if res.starts, err = adm.ListStartOffsets(ctx, addedTopics...); err != nil {
				return fmt.Errorf("listing start offsets of %v: %w", addedTopics, err)
			}
			return nil
		}()
		o.sess.send(res)
	})
}

// discovered is a discovery round's listing: the partitions found that the
// owner did not track, with their start offsets, and those it tracked that
// are gone.
type discovered struct {
	added, removed []topicPartition
	starts         kadm.ListedOffsets
	err            error
}

func (r discovered) handle(o *owner) {
	o.discovery.running = false
	if o.stopping {
		return
	}
	if r.err != nil {
		if o.sess.ctx.Err() == nil {
			o.log.Warnf("kafka_source: partition discovery: %v", r.err)
		}
		return
	}
	var removed []topicPartition
	for _, tp := range r.removed {
		if o.tracker.has(tp) {
			removed = append(removed, tp)
		}
	}
	if len(removed) > 0 {
		o.releaseGone(removed)
	}
	consume := make(map[int]map[string]map[int32]kgo.Offset)
	for _, tp := range r.added {
		start, ok := r.starts.Lookup(tp.topic, tp.partition)
		if !ok || start.Err != nil || start.Offset < 0 || o.tracker.has(tp) {
			// Not ready yet (a new partition without a leader): the next
			// round picks it up.
			continue
		}
		rd := o.conf.readerOf(tp)
		o.readerOf[tp] = rd
		o.tracker.addPartition(tp, start.Offset, -1, noStop)
		o.wmAdd(tp)
		if consume[rd] == nil {
			consume[rd] = map[string]map[int32]kgo.Offset{}
		}
		if consume[rd][tp.topic] == nil {
			consume[rd][tp.topic] = map[int32]kgo.Offset{}
		}
		consume[rd][tp.topic][tp.partition] = kgo.NewOffset().At(start.Offset)
		o.log.Infof("kafka_source: discovered topic %s partition %d; reader %d reads it from offset %d (earliest)", tp.topic, tp.partition, rd, start.Offset)
	}
	for rd, c := range consume {
		o.clients[rd].AddConsumePartitions(c)
	}
	if len(removed) > 0 || len(consume) > 0 {
		o.setReaderSplits()
	}
}

// releaseGone stops reading partitions whose topic was deleted or no longer
// matches. Their records still in flight are delivered, but their offsets
// are no longer committed.
func (o *owner) releaseGone(tps []topicPartition) {
	o.eachClient(tps, (*kgo.Client).RemoveConsumePartitions)
	byTopic := map[string][]int32{}
	for _, tp := range tps {
		o.tracker.removePartition(tp)
		o.metrics.parts.remove(tp)
		delete(o.readerOf, tp)
		byTopic[tp.topic] = append(byTopic[tp.topic], tp.partition)
	}
	o.wmRemoveAll(tps)
	for t, ps := range byTopic {
		o.log.Infof("kafka_source: released topic %s partitions %v: the topic was deleted or is no longer subscribed", t, ps)
	}
}

// quietState is the owner's quiet-partition check of bounded reads.
type quietState struct {
	// last is each unfinished partition's position at the last check.
	last map[topicPartition]int64
	// running: a check's listing is under way.
	running bool
}

// checkQuiet runs every two fetch waits of a bounded read: a partition
// below its stop offset whose position did not move since the last check is
// checked against its log start offset. If retention deleted everything
// from its position up to the end of the log, no record will ever arrive to
// show it, so the position is moved to the log start (as the client's own
// out-of-range reset does), and the partition can finish.
func (o *owner) checkQuiet() {
	if o.quiet.last == nil {
		o.quiet.last = map[topicPartition]int64{}
	}
	quiet := map[topicPartition]int64{}
	var topics []string
	for tp, next := range o.tracker.unfinished() {
		if prev, ok := o.quiet.last[tp]; ok && prev == next {
			quiet[tp] = next
			if !slices.Contains(topics, tp.topic) {
				topics = append(topics, tp.topic)
			}
		}
		o.quiet.last[tp] = next
	}
	if len(quiet) == 0 || o.quiet.running || o.stopping {
		return
	}
	o.quiet.running = true
	ctx, adm := o.sess.ctx, o.adm
	o.sess.goJob(func() {
		starts, err := adm.ListStartOffsets(ctx, topics...)
		o.sess.send(quietChecked{quiet: quiet, starts: starts, err: err})
	})
}

// quietChecked is the log start offsets of a quiet check's partitions.
type quietChecked struct {
	quiet  map[topicPartition]int64
	starts kadm.ListedOffsets
	err    error
}

func (r quietChecked) handle(o *owner) {
	o.quiet.running = false
	if r.err != nil || o.stopping {
		return
	}
	for tp, next := range r.quiet {
		s, ok := r.starts.Lookup(tp.topic, tp.partition)
		if cur, tracked := o.tracker.next(tp); ok && s.Err == nil && tracked && cur == next && s.Offset > next {
			o.offsetReset(tp, next, s.Offset)
		}
	}
}
