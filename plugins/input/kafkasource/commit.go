package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/connectd/connectd/internal/commitchunk"
	"github.com/connectd/connectd/internal/kafkaconn"
)

// This file is the owner's offset commits. The positions to commit are
// taken from the offset tracker on the owner; the commit itself (a network
// call) runs on a goroutine of its own and hands its response back
// (commitDone), so acknowledgements keep flowing while the broker answers.
// Commits run one at a time and in the order they were asked for, so an
// older commit never lands after a newer one. An exactly-once sink's
// Prepare (and PrepareWindows) waits until no commit is in flight: a commit
// of the source's own that started before is on the broker before the
// sink's transaction commits, and none that starts after touches the
// sink's partitions while their records are in flight (selfCommits).
//
// Nothing is committed without a consumer group, or once the run is
// stopping on an error (internal/halt): not periodically, not at the end of
// a bounded read, not when the session ends, not when a group member
// releases its partitions.

const (
	// limitStallWarning is how long a partition stays paused for
	// checkpoint_limit, with nothing acknowledged, before a warning.
	limitStallWarning = 30 * time.Second
	// offsetRefreshPeriod is how often offsets that did not move are
	// committed again, so that an idle partition's committed offset does
	// not expire (broker `offsets.retention.minutes`).
	offsetRefreshPeriod = time.Minute
)

// commitKind says why a commit is made.
type commitKind int

const (
	commitPeriodic commitKind = iota // every commit_period
	commitEnd                        // the end of a bounded read
	commitFinal                      // the session ends
	commitRevoke                     // a group member releases partitions
)

// commitJob is one commit. Its positions are taken from the tracker when it
// starts, unless it carries its own.
type commitJob struct {
	kind commitKind
	ctx  context.Context
	// pos and call are a revocation's: the positions of the revoked
	// partitions and the commit as the member that held them.
	pos  map[topicPartition]int64
	call func(context.Context) (kadm.OffsetResponses, error)
	// done runs on the owner once the commit is over (err nil when there
	// was nothing to commit, or committing is off).
	done func(error)
}

// commitState is the owner's commit bookkeeping.
type commitState struct {
	// inFlight: a commit's network call runs.
	inFlight bool
	// queue are the commits waiting for the one in flight.
	queue []*commitJob
	// idle are the requests waiting for no commit to be in flight
	// (Prepare, PrepareWindows): they run before the next queued commit.
	idle []func()
	// lastRefresh is when every position was last committed.
	lastRefresh time.Time
	// ending: the final commit of a bounded read is queued or in flight.
	ending bool
	// haltLogged: the refusal to commit on a halted run was logged.
	haltLogged bool
}

// commitsOffsets reports whether the source commits offsets at all: it has
// a consumer group, and the run is not stopping on an error.
func (o *owner) commitsOffsets() bool {
	if o.conf.ConsumerGroup == "" {
		return false
	}
	if err := o.halt.Err(); err != nil {
		if !o.commits.haltLogged {
			o.commits.haltLogged = true
			o.log.Infof("kafka_source: committing no more offsets to consumer group %q: the run is stopping: %v", o.conf.ConsumerGroup, err)
		}
		return false
	}
	return true
}

// whenCommitIdle reports whether no commit is in flight; if one is, f runs
// once it is over (and before any commit queued behind it starts).
func (o *owner) whenCommitIdle(f func()) bool {
	if !o.commits.inFlight {
		return true
	}
	o.commits.idle = append(o.commits.idle, f)
	return false
}

// periodicCommit runs every commit_period: it warns of partitions stalled at
// checkpoint_limit and commits the positions that moved (all of them once
// per offsetRefreshPeriod). A tick while a commit is in flight or waiting
// is skipped.
func (o *owner) periodicCommit() {
	for _, st := range o.tracker.stalled(limitStallWarning) {
		o.log.Warnf("kafka_source: topic %q partition %d has been paused for %v: its %d unacknowledged records reached %s (%d) "+
			"and have not dropped below it since. If a buffer holds records until later ones arrive (event_window holds a window's "+
			"records until the watermark passes its end), raise %s above the records one partition delivers in a window's span "+
			"(size + allowed lateness + max_out_of_orderness): a paused partition holds the watermark back, and the windows never fire",
			st.tp.topic, st.tp.partition, st.since.Round(time.Second), st.unacked, fieldCheckpointLimit, o.conf.CheckpointLimit, fieldCheckpointLimit)
	}
	// kafka_source_unacked_records of every partition, whether or not
	// the source commits it: an exactly-once sink commits its partitions
	// in transactions, and no commit of the source's own reports them.
	for tp, po := range o.tracker.parts {
		o.metrics.parts.unacked(tp, int64(po.unacked))
	}
	if o.commits.inFlight || len(o.commits.queue) > 0 || o.stopping {
		return
	}
	o.commit(&commitJob{kind: commitPeriodic, ctx: o.sess.ctx, done: func(err error) {
		if err != nil && o.sess.ctx.Err() == nil && o.failed == nil {
			o.log.Warnf("kafka_source: %v", err)
		}
	}})
}

// commit starts j, or queues it behind the commit in flight.
func (o *owner) commit(j *commitJob) {
	if o.commits.inFlight {
		o.commits.queue = append(o.commits.queue, j)
		return
	}
	o.startCommit(j)
	o.commitIdle()
}

// startCommit takes j's positions and starts its network call; with nothing
// to commit (or committing off) it is done at once.
func (o *owner) startCommit(j *commitJob) {
	if !o.commitsOffsets() {
		j.done(nil)
		return
	}
	now := time.Now()
	refresh := false
	pos := j.pos
	if pos == nil {
		refresh = now.Sub(o.commits.lastRefresh) >= max(offsetRefreshPeriod, o.conf.CommitPeriod)
		pos = o.tracker.selfCommits(refresh)
	}
	for tp, off := range pos {
		if off < 0 {
			// Group mode: nothing fetched yet from a partition without a
			// committed offset; its start is not known.
			delete(pos, tp)
		}
	}
	if len(pos) == 0 {
		j.done(nil)
		return
	}
	call := j.call
	if call == nil {
		call = o.assign.commitCall(o, pos)
	}
	if j.kind == commitFinal {
		o.log.Infof("kafka_source: closing: committing the offsets of %d partitions to consumer group %q", len(pos), o.conf.ConsumerGroup)
	}
	o.commits.inFlight = true
	ctx := j.ctx
	o.sess.goJob(func() {
		resp, err := call(ctx)
		o.sess.send(commitDone{job: j, pos: pos, refresh: refresh, at: now, resp: resp, err: err})
	})
}

// commitIdle runs, while no commit is in flight, the requests that waited
// for that, then the queued commits.
func (o *owner) commitIdle() {
	for !o.commits.inFlight {
		if idle := o.commits.idle; len(idle) > 0 {
			o.commits.idle = nil
			for _, f := range idle {
				f()
			}
			continue
		}
		if len(o.commits.queue) == 0 {
			return
		}
		j := o.commits.queue[0]
		o.commits.queue[0] = nil
		o.commits.queue = o.commits.queue[1:]
		o.startCommit(j)
	}
}

// commitDone is the response of a commit's network call.
type commitDone struct {
	job     *commitJob
	pos     map[topicPartition]int64
	refresh bool
	at      time.Time
	resp    kadm.OffsetResponses
	err     error
}

func (r commitDone) handle(o *owner) {
	o.commits.inFlight = false
	o.metrics.commitLatency.Timing(time.Since(r.at).Nanoseconds())
	err := o.applyCommit(r)
	if kafkaconn.Classify(err) == kafkaconn.Permanent {
		// GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED: no
		// retry commits these offsets.
		o.endRun(firstPermanent(err))
	}
	r.job.done(err)
	o.commitIdle()
}

// applyCommit records what a commit committed: the tracker's committed
// offsets and the metrics. It returns the commit's error, one per refused
// partition.
func (o *owner) applyCommit(r commitDone) error {
	group := o.conf.ConsumerGroup
	if r.err != nil {
		topics := map[string]bool{}
		cause := commitFailureCause(r.err)
		for tp := range r.pos {
			if !topics[tp.topic] {
				topics[tp.topic] = true
				o.metrics.commitFailures.Incr(1, tp.topic, cause)
			}
		}
		return fmt.Errorf("committing offsets to consumer group %q: %w", group, r.err)
	}
	if r.refresh {
		o.commits.lastRefresh = r.at
	}
	var errs []error
	r.resp.Each(func(resp kadm.OffsetResponse) {
		tp := topicPartition{topic: resp.Topic, partition: resp.Partition}
		if resp.Err != nil {
			o.metrics.commitFailures.Incr(1, resp.Topic, commitFailureCause(resp.Err))
			errs = append(errs, &CommitError{Group: group, Topic: resp.Topic, Partition: resp.Partition, Offset: resp.At, Err: resp.Err})
			return
		}
		o.metrics.commits.Incr(1, resp.Topic)
		o.metrics.parts.committed(tp, resp.At)
		o.tracker.markCommitted(tp, resp.At)
		o.metrics.parts.unacked(tp, int64(o.tracker.unacked(tp)))
	})
	return errors.Join(errs...)
}

// firstPermanent returns the first Permanent error of a commit's errors (one
// per refused partition), saying how many more partitions were refused.
func firstPermanent(err error) error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return err
	}
	errs := joined.Unwrap()
	for _, e := range errs {
		if kafkaconn.Classify(e) == kafkaconn.Permanent {
			if len(errs) > 1 {
				return fmt.Errorf("%w (and %d more partitions refused)", e, len(errs)-1)
			}
			return e
		}
	}
	return err
}

// commitChunkBytes bounds the estimated size of the records of one offset
// commit request (package commitchunk says why): a commit of many
// partitions goes in several requests, one after the other; each
// partition's offset is committed on its own, and the commits of the
// source still run one at a time.
const commitChunkBytes = commitchunk.Bytes

// commitRecordBytes estimates the size of the record the coordinator
// writes for one partition's offset.
func commitRecordBytes(group, topic string, metadata int) int {
	return commitchunk.RecordBytes(group, topic, metadata)
}

// chunkPositions splits pos into commits whose records stay within
// commitChunkBytes, in topic and partition order; a single partition over
// it is a commit of its own.
func chunkPositions(group string, pos map[topicPartition]int64) []map[topicPartition]int64 {
	size := func(tp topicPartition) int { return commitRecordBytes(group, tp.topic, 0) }
	var out []map[topicPartition]int64
	for _, run := range commitchunk.Split(sortedPartitions(pos), size, commitChunkBytes) {
		c := make(map[topicPartition]int64, len(run))
		for _, tp := range run {
			c[tp] = pos[tp]
		}
		out = append(out, c)
	}
	return out
}

// commitChunked makes commit's requests for each chunk of pos in turn and
// gathers their answers. It stops at the first request that fails: the
// answers so far are returned with its error.
func commitChunked(ctx context.Context, group string, pos map[topicPartition]int64,
	commit func(context.Context, map[topicPartition]int64) (kadm.OffsetResponses, error),
) (kadm.OffsetResponses, error) {
	chunks := chunkPositions(group, pos)
	if len(chunks) == 1 {
		return commit(ctx, chunks[0])
	}
	out := kadm.OffsetResponses{}
	for _, c := range chunks {
		resp, err := commit(ctx, c)
		resp.Each(func(o kadm.OffsetResponse) { out.Add(o) })
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// positionOffsets is pos as kadm offsets, without leader epochs.
func positionOffsets(pos map[topicPartition]int64) kadm.Offsets {
	offsets := make(kadm.Offsets)
	for tp, off := range pos {
		offsets.Add(kadm.Offset{Topic: tp.topic, Partition: tp.partition, At: off, LeaderEpoch: -1})
	}
	return offsets
}
