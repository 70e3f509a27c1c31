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

	"github.com/connectd/connectd/internal/txnoffsets"
)

// groupAssignment is assignment: group: each reader is a member of the
// consumer group, the coordinator assigns partitions to the members of
// every process (cooperative-sticky), and offsets are committed by the
// member that owns the partition, within its generation. On revoke, the
// acknowledged position of each revoked partition is committed and its
// records still in flight are abandoned: the new owner reads them again
// from the committed offset, so nothing is lost.
//
// kgo calls the assignment callbacks on its own goroutines; each hands the
// change to the session's owner and blocks until the owner has handled it,
// as kgo expects: a partition is fetched only once its tracking started, and
// a revoked one goes to another member only once its records in flight were
// acknowledged (or revokeWait passed) and its offset committed.
type groupAssignment struct {
	conf Config
	sess *session
}

func (a *groupAssignment) clientOpts(i int) []kgo.Opt {
	c := a.conf
	opts := []kgo.Opt{
		kgo.ConsumerGroup(c.ConsumerGroup),
		kgo.DisableAutoCommit(),
		kgo.SessionTimeout(c.SessionTimeout),
		kgo.HeartbeatInterval(c.heartbeatInterval()),
		kgo.OnPartitionsAssigned(a.onAssigned(i)),
		kgo.OnPartitionsRevoked(a.onRevoked(i, true)),
		kgo.OnPartitionsLost(a.onRevoked(i, false)),
		// The callbacks above run only between a reader's polls, once
		// the owner tracks what the last poll returned (reader.run).
		kgo.BlockRebalanceOnPoll(),
		// No kgo.RequireStableFetchOffsets: since franz-go v1.2x a group
		// consumer always fetches its offsets with require-stable (the
		// option is a deprecated no-op), so an assigned partition waits
		// for an open transaction of an exactly-once sink to end.
	}
	if c.GroupInstanceID != "" {
		id := c.GroupInstanceID
		if i > 0 {
			id = fmt.Sprintf("%s-%d", id, i)
		}
		opts = append(opts, kgo.InstanceID(id))
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

// splits is none: the coordinator assigns them (onAssigned).
func (a *groupAssignment) splits(context.Context, *kadm.Client, map[topicPartition]int64, map[topicPartition]int64) ([]split, error) {
	return nil, nil
}

// discoveryInterval is 0: members see new partitions and topics when their
// metadata is refreshed (every discovery_interval, see Config.clientOpts),
// and the coordinator rebalances.
func (a *groupAssignment) discoveryInterval() time.Duration { return 0 }

func (a *groupAssignment) discover(*owner) {}

func (a *groupAssignment) connected(startReport) string {
	return fmt.Sprintf("%d readers joined consumer group %q", a.conf.Readers, a.conf.ConsumerGroup)
}

func (a *groupAssignment) closing() string {
	return fmt.Sprintf("leaving consumer group %q", a.conf.ConsumerGroup)
}

// onAssigned starts tracking the partitions the coordinator gave reader i.
// A partition starts at the group's committed offset; without one, the
// client starts at committed_fallback, and the partition's position is
// unknown (-1, never committed) until its first record arrives.
func (a *groupAssignment) onAssigned(i int) func(context.Context, *kgo.Client, map[string][]int32) {
	return func(ctx context.Context, cl *kgo.Client, assigned map[string][]int32) {
		committed, err := fetchCommitted(ctx, kadm.NewClient(cl), a.conf.ConsumerGroup)
		if err != nil {
			a.sess.log.Warnf("kafka_source: reader %d: %v; assigned partitions start unknown until their first record", i, err)
		}
		reply := make(chan struct{}, 1)
		call(a.sess, assignedReq{reader: i, assigned: assigned, committed: committed, reply: reply}, reply)
	}
}

// assignedReq starts tracking the partitions the coordinator gave a reader.
type assignedReq struct {
	reader    int
	assigned  map[string][]int32
	committed kadm.OffsetResponses
	reply     chan struct{}
}

func (r assignedReq) handle(o *owner) {
	var tps []topicPartition
	for t, ps := range r.assigned {
		for _, p := range ps {
			tp := topicPartition{topic: t, partition: p}
			start, meta := int64(-1), ""
			if c, ok := r.committed.Lookup(t, p); ok && c.Err == nil && c.At >= 0 {
				start, meta = c.At, c.Metadata
			}
			o.tracker.addPartition(tp, start, start, noStop)
			o.restoreWindows(tp, meta)
			o.wmAdd(tp)
			o.readerOf[tp] = r.reader
			tps = append(tps, tp)
		}
	}
	sortPartitions(tps)
	o.setReaderSplits()
	if len(tps) > 0 {
		o.log.Infof("kafka_source: reader %d was assigned %s by consumer group %q", r.reader, describePartitions(tps), o.conf.ConsumerGroup)
	}
	var again []topicPartition
	for _, tp := range tps {
		if o.releasedInFlight[tp] {
			again = append(again, tp)
		}
	}
	if len(again) > 0 {
		// Records read before a revocation that gave up waiting for
		// them are still in flight: their acknowledgements and
		// transactions would count for this assignment, which reads
		// them again from the committed offset. A new session keeps
		// the two apart: the old one's records then belong to a session
		// that ended, whose offsets pair with no transaction.
		rewindReq{cause: fmt.Errorf("%s assigned again while records read before their revocation are still in flight", describePartitions(again))}.handle(o)
	}
	r.reply <- struct{}{}
}

// onRevoked stops tracking the partitions reader i lost. With commit (a
// revoke, not a loss), their records in flight are awaited and their
// acknowledged positions committed first.
func (a *groupAssignment) onRevoked(i int, commit bool) func(context.Context, *kgo.Client, map[string][]int32) {
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
		reply := make(chan struct{}, 1)
		call(a.sess, revokeReq{reader: i, client: cl, tps: tps, commit: commit, ctx: ctx, reply: reply}, reply)
	}
}

// revokeWait bounds how long a revoke waits for the records of the revoked
// partitions that are in flight: below franz-go's default rebalance timeout
// (60s), so that the member does not miss the rebalance. A variable for
// tests.
var revokeWait = 45 * time.Second

// revokeReq releases partitions a reader lost: with commit, once no record
// of theirs is in flight (each was acknowledged or nacked; at most
// revokeWait, or until ctx ends), so that an exactly-once sink's
// transaction that carries their offsets ends before the partitions go to
// another member, and the new owner starts from what that transaction
// committed.
type revokeReq struct {
	reader int
	client *kgo.Client
	tps    []topicPartition
	commit bool
	ctx    context.Context
	reply  chan struct{}
}

// pendingRevoke is a revocation waiting for its records in flight.
type pendingRevoke struct {
	req  revokeReq
	stop func()
}

func (r revokeReq) handle(o *owner) {
	if r.commit {
		if n := o.inFlight(r.tps); n > 0 {
			p := &pendingRevoke{req: r}
			o.log.Infof("kafka_source: reader %d: waiting for %d unacknowledged records of %s before releasing them to consumer group %q",
				r.reader, n, describePartitions(r.tps), o.conf.ConsumerGroup)
			expire := func() { o.sess.send(revokeExpired{p: p}) }
			t := time.AfterFunc(revokeWait, expire)
			stopCtx := context.AfterFunc(r.ctx, expire)
			p.stop = func() { t.Stop(); stopCtx() }
			o.revokes = append(o.revokes, p)
			return
		}
	}
	o.release(r)
}

// revokeExpired ends the wait of a revocation: revokeWait passed, or kgo
// gave up on it.
type revokeExpired struct{ p *pendingRevoke }

func (r revokeExpired) handle(o *owner) {
	for i, p := range o.revokes {
		if p != r.p {
			continue
		}
		o.revokes = append(o.revokes[:i], o.revokes[i+1:]...)
		p.stop()
		n := o.inFlight(p.req.tps)
		if n > 0 {
			if o.releasedInFlight == nil {
				o.releasedInFlight = map[topicPartition]bool{}
			}
			for _, tp := range p.req.tps {
				o.releasedInFlight[tp] = true
			}
		}
		o.log.Warnf("kafka_source: reader %d: releasing %s with %d records still in flight after %v; "+
			"their transactions cannot commit offsets any more and the new owner reads them again", p.req.reader, describePartitions(p.req.tps), n, revokeWait)
		o.release(p.req)
		return
	}
}

// checkRevokes releases the revocations whose records in flight are all
// acknowledged or nacked.
func (o *owner) checkRevokes() {
	if len(o.revokes) == 0 {
		return
	}
	waiting := o.revokes[:0]
	var ready []*pendingRevoke
	for _, p := range o.revokes {
		if o.inFlight(p.req.tps) == 0 {
			ready = append(ready, p)
		} else {
			waiting = append(waiting, p)
		}
	}
	o.revokes = waiting
	for _, p := range ready {
		p.stop()
		o.release(p.req)
	}
}

// inFlight counts the records of tps that were fetched and neither
// acknowledged nor nacked (nacked ones wait in the redelivery queue). Once
// the session stops, records never handed out are not waited for: they will
// not be.
func (o *owner) inFlight(tps []topicPartition) int {
	if o.rewinding != nil {
		// The next session reads them again from the committed
		// offsets, and none of their transactions can commit any more
		// (holds and Prepare are refused): nothing to wait for.
		return 0
	}
	want := make(map[topicPartition]bool, len(tps))
	for _, tp := range tps {
		want[tp] = true
	}
	n := 0
	if o.stopping {
		for b, st := range o.batches {
			if st.outstanding {
				for _, p := range b.positions {
					if want[p.tp] {
						n++
					}
				}
			}
		}
		return n
	}
	for _, tp := range tps {
		// A held record is acknowledged but not durable: its
		// transaction must commit before the partition moves.
		n += o.tracker.unacked(tp) + o.tracker.holds(tp)
	}
	for _, b := range o.redeliver {
		for _, p := range b.positions {
			if want[p.tp] {
				n--
			}
		}
	}
	return n
}

// release stops tracking revoked partitions and, for a revoke, commits
// their acknowledged positions as the member that held them, then answers
// the callback.
func (o *owner) release(r revokeReq) {
	pos := map[topicPartition]int64{}
	self := o.tracker.selfCommits(true)
	for _, tp := range r.tps {
		if off, ok := self[tp]; ok && off >= 0 {
			pos[tp] = off
		}
		o.tracker.removePartition(tp)
		o.wmResumeRemoved(r.client, tp)
		o.metrics.parts.remove(tp)
		delete(o.readerOf, tp)
	}
	o.wmRemoveAll(r.tps)
	o.setReaderSplits()
	if !r.commit {
		o.log.Warnf("kafka_source: reader %d lost %s (fatal group error); records in flight will be read again", r.reader, describePartitions(r.tps))
		r.reply <- struct{}{}
		return
	}
	done := func(err error) {
		if err != nil {
			o.log.Warnf("kafka_source: reader %d: committing revoked partitions to consumer group %q: %v", r.reader, o.conf.ConsumerGroup, err)
		}
		o.log.Infof("kafka_source: reader %d released %s to consumer group %q", r.reader, describePartitions(r.tps), o.conf.ConsumerGroup)
		r.reply <- struct{}{}
	}
	if len(pos) == 0 {
		done(nil)
		return
	}
	ctx, cl := r.ctx, r.client
	if o.stopping {
		// The session is closing: the commit must not hold Close up
		// when the broker does not answer.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, finalCommitTimeout)
		next := done
		done = func(err error) { cancel(); next(err) }
	}
	o.commit(&commitJob{kind: commitRevoke, ctx: ctx, pos: pos, done: done,
		call: func(ctx context.Context) (kadm.OffsetResponses, error) {
			return commitMember(ctx, cl, o.conf.ConsumerGroup, pos)
		}})
}

// commitCall commits pos, each partition by the member that owns it. A
// partition that is no longer owned is left out.
func (a *groupAssignment) commitCall(o *owner, pos map[topicPartition]int64) func(context.Context) (kadm.OffsetResponses, error) {
	by := map[int]map[topicPartition]int64{}
	for tp, off := range pos {
		r, ok := o.readerOf[tp]
		if !ok {
			continue
		}
		if by[r] == nil {
			by[r] = map[topicPartition]int64{}
		}
		by[r][tp] = off
	}
	readers := make([]int, 0, len(by))
	for r := range by {
		readers = append(readers, r)
	}
	sort.Ints(readers)
	clients, group := o.clients, o.conf.ConsumerGroup
	return func(ctx context.Context) (kadm.OffsetResponses, error) {
		out := kadm.OffsetResponses{}
		var errs []error
		for _, r := range readers {
			resp, err := commitMember(ctx, clients[r], group, by[r])
			if err != nil {
				errs = append(errs, err)
				continue
			}
			resp.Each(func(o kadm.OffsetResponse) { out.Add(o) })
		}
		return out, errors.Join(errs...)
	}
}

// txnCommits groups pos into one commit per reader that owns a partition, as
// that reader's live member id and generation.
func (a *groupAssignment) txnCommits(o *owner, pos map[topicPartition]int64, meta map[topicPartition]string) ([]txnoffsets.Commit, error) {
	by := map[int]*txnoffsets.Commit{}
	for tp, off := range pos {
		r, ok := o.readerOf[tp]
		if !ok {
			return nil, notOwned(o.conf.ConsumerGroup, []topicPartition{tp}, "no reader owns it")
		}
		c := by[r]
		if c == nil {
			id, gen := o.clients[r].GroupMetadata()
			c = newTxnCommit(txnoffsets.Member{ID: id, Generation: gen}, meta != nil)
			by[r] = c
		}
		addToTxnCommit(c, tp, off, meta)
	}
	return sortedCommits(by), nil
}

// commitMember commits pos with a member client, within its generation,
// in requests of commitChunkBytes.
func commitMember(ctx context.Context, cl *kgo.Client, group string, pos map[topicPartition]int64) (kadm.OffsetResponses, error) {
	return commitChunked(ctx, group, pos, func(ctx context.Context, pos map[topicPartition]int64) (kadm.OffsetResponses, error) {
		return commitMemberOnce(ctx, cl, pos)
	})
}

// commitMemberOnce commits pos with a member client in one request.
func commitMemberOnce(ctx context.Context, cl *kgo.Client, pos map[topicPartition]int64) (kadm.OffsetResponses, error) {
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
