package kafkasource

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// This file stops fetching the partitions of a bounded read that reached
// their stop offset: it pauses them on their readers' clients.
//
// Not by removing them: kgo's RemoveConsumePartitions restarts the client's
// fetch session and drops the buffered fetches of every partition, each
// time it is called. Partitions finish a few at a time, one poll after
// another, so over 10,000 partitions removal fetched the same data again
// and again, and a bounded read of 1M records did not end in 15 minutes
// (see docs/benchmarks.md, "10,000 partitions"). A pause only leaves the
// partitions out of the next fetch and drops their own buffered records
// (past the stop offset: track drops those anyway). Nothing resumes a
// finished partition (offsetTracker.acked, align).
//
// A pause copies the client's set of paused partitions, so pausing a few
// partitions at a time is quadratic too; finished partitions are paused at
// most every pausePeriod, together, and track drops what they fetch
// meanwhile.

// pausePeriod is the least time between two pauses of finished partitions.
const pausePeriod = 250 * time.Millisecond

// finishState is the owner's bookkeeping of finished partitions to pause.
type finishState struct {
	// pending are finished partitions not paused yet.
	pending []topicPartition
	// last is when finished partitions were last paused.
	last time.Time
	// flushing: a pauseFinishedReq is on its way.
	flushing bool
}

// stopFetching stops fetching tps, finished partitions: now if none were
// paused in the last pausePeriod, else with those that finish until then.
func (o *owner) stopFetching(tps []topicPartition) {
	if len(tps) == 0 || o.stopped {
		return
	}
	f := &o.finished
	f.pending = append(f.pending, tps...)
	if wait := pausePeriod - time.Since(f.last); wait > 0 {
		if !f.flushing {
			f.flushing = true
			time.AfterFunc(wait, func() { o.sess.send(pauseFinishedReq{}) })
		}
		return
	}
	o.pauseFinished()
}

// pauseFinished pauses the pending finished partitions.
func (o *owner) pauseFinished() {
	f := &o.finished
	if len(f.pending) == 0 || o.stopped {
		f.pending = nil
		return
	}
	o.eachClient(f.pending, func(cl *kgo.Client, m map[string][]int32) { cl.PauseFetchPartitions(m) })
	f.pending, f.last = nil, time.Now()
}

// pauseFinishedReq pauses the finished partitions that waited for
// pausePeriod.
type pauseFinishedReq struct{}

func (pauseFinishedReq) handle(o *owner) {
	o.finished.flushing = false
	o.pauseFinished()
}
