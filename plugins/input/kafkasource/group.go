package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// This file is group mode (assignment: group): each reader is a member of
// the consumer group, the coordinator assigns partitions to the members of
// every process (cooperative-sticky), and offsets are committed by the
// member that owns the partition, within its generation. On revoke, the
// acknowledged position of each revoked partition is committed and its
// records still in flight are abandoned: the new owner reads them again
// from the committed offset, so nothing is lost.

// groupOpts makes reader i of sess a group member.
func (sess *session) groupOpts(i int) []kgo.Opt {
	c := sess.conf
	opts := []kgo.Opt{
		kgo.ConsumerGroup(c.ConsumerGroup),
		kgo.DisableAutoCommit(),
		kgo.SessionTimeout(c.SessionTimeout),
		// Three heartbeats per session timeout, as the Java client.
		kgo.HeartbeatInterval(min(3*time.Second, c.SessionTimeout/3)),
		kgo.OnPartitionsAssigned(sess.onAssigned(i)),
		kgo.OnPartitionsRevoked(sess.onRevoked(i, true)),
		kgo.OnPartitionsLost(sess.onRevoked(i, false)),
		// No kgo.RequireStableFetchOffsets: since franz-go v1.2x a group
		// consumer always fetches its offsets with require-stable (the
		// option is a deprecated no-op), so an assigned partition waits
		// for an open transaction of an exactly-once sink to end.
	}
	if c.GroupProtocol == GroupProtocolConsumer {
		// KIP-848: the coordinator assigns; franz-go takes the sticky
		// balancer as the server-side "uniform" assignor.
		opts = append(opts, kgo.Balancers(kgo.StickyBalancer()), kgo.ServerSideBalancer())
	} else {
		opts = append(opts, kgo.Balancers(kgo.CooperativeStickyBalancer()))
	}
	if c.TopicPattern != nil {
		opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(c.TopicPattern.String()))
		if c.TopicExclude != nil {
			opts = append(opts, kgo.ConsumeExcludeTopics(c.TopicExclude.String()))
		}
	} else {
		opts = append(opts, kgo.ConsumeTopics(c.Topics...))
	}
	return opts
}

// onAssigned starts tracking the partitions the coordinator gave reader i.
// A partition starts at the group's committed offset; without one, the
// client starts at committed_fallback, and the partition's position is
// unknown (-1, never committed) until its first record arrives.
func (sess *session) onAssigned(i int) func(context.Context, *kgo.Client, map[string][]int32) {
	return func(ctx context.Context, cl *kgo.Client, assigned map[string][]int32) {
		committed, err := fetchCommitted(ctx, kadm.NewClient(cl), sess.conf.ConsumerGroup)
		if err != nil {
			sess.log.Warnf("kafka_source: reader %d: %v; assigned partitions start unknown until their first record", i, err)
		}
		sess.mu.Lock()
		defer sess.mu.Unlock()
		var tps []topicPartition
		for t, ps := range assigned {
			for _, p := range ps {
				tp := topicPartition{topic: t, partition: p}
				start, meta := int64(-1), ""
				if o, ok := committed.Lookup(t, p); ok && o.Err == nil && o.At >= 0 {
					start, meta = o.At, o.Metadata
				}
				sess.mu.tracker.addPartition(tp, start, start, noStop)
				sess.restoreWindowsLocked(tp, meta)
				sess.wmAddLocked(tp)
				sess.owner[tp] = i
				tps = append(tps, tp)
			}
		}
		sortPartitions(tps)
		sess.setReaderSplitsLocked()
		if len(tps) > 0 {
			sess.log.Infof("kafka_source: reader %d was assigned %v by consumer group %q", i, tps, sess.conf.ConsumerGroup)
		}
	}
}

// onRevoked stops tracking the partitions reader i lost. With commit (a
// revoke, not a loss), their acknowledged positions are committed first.
func (sess *session) onRevoked(i int, commit bool) func(context.Context, *kgo.Client, map[string][]int32) {
	return func(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
		var tps []topicPartition
		for t, ps := range revoked {
			for _, p := range ps {
				tps = append(tps, topicPartition{topic: t, partition: p})
			}
		}
		if len(tps) == 0 {
			return
		}
		sortPartitions(tps)
		if commit {
			sess.awaitInFlight(ctx, i, tps)
		}
		sess.mu.Lock()
		pos := map[topicPartition]int64{}
		self := sess.mu.tracker.selfCommits(true)
		for _, tp := range tps {
			if o, ok := self[tp]; ok && o >= 0 {
				pos[tp] = o
			}
			sess.mu.tracker.removePartition(tp)
			sess.wmResumeRemovedLocked(cl, tp)
			sess.wmRemoveLocked(tp)
			delete(sess.owner, tp)
		}
		sess.setReaderSplitsLocked()
		sess.mu.Unlock()
		if !commit {
			sess.log.Warnf("kafka_source: reader %d lost %v (fatal group error); records in flight will be read again", i, tps)
			return
		}
		if len(pos) > 0 {
			resp, err := commitMember(ctx, cl, pos)
			if err == nil {
				err = resp.Error()
			}
			if err != nil {
				sess.log.Warnf("kafka_source: reader %d: committing revoked partitions to consumer group %q: %v", i, sess.conf.ConsumerGroup, err)
			}
		}
		sess.log.Infof("kafka_source: reader %d released %v to consumer group %q", i, tps, sess.conf.ConsumerGroup)
	}
}

// revokeWait bounds how long a revoke waits for the records of the revoked
// partitions that are in flight: below franz-go's default rebalance timeout
// (60s), so that the member does not miss the rebalance.
const revokeWait = 45 * time.Second

// awaitInFlight waits (at most revokeWait, or until ctx ends) until no
// record of tps is in flight: each was acknowledged or nacked. An
// exactly-once sink's transaction that carries their offsets then ends
// before the partitions go to another member, so that the new owner starts
// from what that transaction committed.
func (sess *session) awaitInFlight(ctx context.Context, i int, tps []topicPartition) {
	ctx, cancel := context.WithTimeout(ctx, revokeWait)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		sess.mu.Lock()
		n := sess.inFlightLocked(tps)
		sess.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			sess.log.Warnf("kafka_source: reader %d: releasing %v with %d records still in flight after %v; "+
				"their transactions cannot commit offsets any more and the new owner reads them again", i, tps, n, revokeWait)
			return
		case <-tick.C:
		}
	}
}

// inFlightLocked counts the records of tps that were handed out and neither
// acknowledged nor nacked (nacked ones wait in the redelivery queue).
func (sess *session) inFlightLocked(tps []topicPartition) int {
	n := 0
	want := make(map[topicPartition]bool, len(tps))
	for _, tp := range tps {
		n += sess.mu.tracker.unacked(tp)
		want[tp] = true
	}
	for _, b := range sess.mu.redeliver {
		for _, p := range b.positions {
			if want[p.tp] {
				n--
			}
		}
	}
	return n
}

// commitAsMembers commits pos, each partition by the member that owns it.
// A partition that is no longer owned is left out.
func (sess *session) commitAsMembers(ctx context.Context, pos map[topicPartition]int64) (kadm.OffsetResponses, error) {
	sess.mu.Lock()
	by := map[int]map[topicPartition]int64{}
	for tp, o := range pos {
		r, ok := sess.owner[tp]
		if !ok {
			continue
		}
		if by[r] == nil {
			by[r] = map[topicPartition]int64{}
		}
		by[r][tp] = o
	}
	sess.mu.Unlock()
	out := kadm.OffsetResponses{}
	var errs []error
	readers := make([]int, 0, len(by))
	for r := range by {
		readers = append(readers, r)
	}
	sort.Ints(readers)
	for _, r := range readers {
		resp, err := commitMember(ctx, sess.clients[r], by[r])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		resp.Each(func(o kadm.OffsetResponse) { out.Add(o) })
	}
	return out, errors.Join(errs...)
}

// commitMember commits pos with a member client, within its generation.
func commitMember(ctx context.Context, cl *kgo.Client, pos map[topicPartition]int64) (kadm.OffsetResponses, error) {
	offsets := map[string]map[int32]kgo.EpochOffset{}
	for tp, o := range pos {
		if offsets[tp.topic] == nil {
			offsets[tp.topic] = map[int32]kgo.EpochOffset{}
		}
		offsets[tp.topic][tp.partition] = kgo.EpochOffset{Epoch: -1, Offset: o}
	}
	var (
		out  = kadm.OffsetResponses{}
		rerr error
	)
	cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			rerr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				o := kadm.OffsetResponse{Offset: kadm.Offset{Topic: t.Topic, Partition: p.Partition, At: pos[topicPartition{t.Topic, p.Partition}], LeaderEpoch: -1}}
				o.Err = kerr.ErrorForCode(p.ErrorCode)
				out.Add(o)
			}
		}
	})
	if rerr != nil {
		return nil, fmt.Errorf("committing as a group member: %w", rerr)
	}
	return out, nil
}
