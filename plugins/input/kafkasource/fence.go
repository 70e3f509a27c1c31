package kafkasource

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/connectd/connectd/internal/txnoffsets"
)

// A restarted exactly-once pipeline reads its committed offsets while its
// sink fences the killed predecessor's transactional producers, side by
// side: Benthos starts input and output together. A commit of the
// predecessor's last transaction whose requests were still on their way to
// the broker can land after the source's fetch (require-stable sees no
// pending offsets yet) and before the fence; the source then starts below
// that transaction's offsets and writes its records again. So the first
// time a sink hands the session records (Hold, Prepare, PrepareWindows), if
// a sink of this process fenced after the session read its offsets
// (txnoffsets.Fences), the session reads them again; if they moved past
// what it started from, it rewinds (a new session starts from them) and its
// records go into no transaction.

// checkStart is run before a session's records first go into a
// transaction; nil if they may. Only the first call checks.
func (sess *session) checkStart() error {
	sess.startCheck.Do(func() {
		if sess.conf.ConsumerGroup == "" || txnoffsets.Fences() == sess.fencesAtStart {
			return
		}
		ctx, cancel := context.WithTimeout(sess.ctx, stableOffsetsWait)
		committed, err := fetchCommitted(ctx, sess.adm, sess.conf.ConsumerGroup)
		cancel()
		if err != nil {
			err = fmt.Errorf("reading the committed offsets again after an exactly-once sink fenced its predecessors: %w", err)
		}
		reply := make(chan error, 1)
		res, ok := call(sess, startCheckReq{committed: committed, err: err, reply: reply}, reply)
		if !ok {
			res = notOwned(sess.conf.ConsumerGroup, nil, errSessionEnded)
		}
		sess.startErr = res
	})
	return sess.startErr
}

// startCheckReq compares the committed offsets read again (or the error of
// reading them) with what the session started from.
type startCheckReq struct {
	committed kadm.OffsetResponses
	err       error
	reply     chan error
}

func (r startCheckReq) handle(o *owner) {
	if r.err != nil {
		rewindReq{cause: r.err}.handle(o)
		r.reply <- notOwned(o.conf.ConsumerGroup, nil, r.err.Error())
		return
	}
	var moved []topicPartition
	for tp, po := range o.tracker.parts {
		if c, ok := r.committed.Lookup(tp.topic, tp.partition); ok && c.Err == nil && c.At > po.committed {
			moved = append(moved, tp)
			// A transaction committed it: the next session resumes
			// from there (offsetTracker.positions).
			o.tracker.markTxn(tp)
			o.tracker.markCommitted(tp, c.At)
		}
	}
	if len(moved) == 0 {
		r.reply <- nil
		return
	}
	sortPartitions(moved)
	cause := fmt.Errorf("the committed offsets of %s moved after this session read them (a transaction of a killed predecessor committed late)",
		describePartitions(moved))
	rewindReq{cause: cause}.handle(o)
	r.reply <- notOwned(o.conf.ConsumerGroup, moved, cause.Error())
}
