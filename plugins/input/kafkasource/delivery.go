package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/watermark"
)

// This file is a record's way through the owner: a reader hands over a
// poll's records (fetchReq), the owner registers them with the offset
// tracker and gives back the batch to deliver; ReadBatch asks for the next
// batch to hand out (nextReq), redeliveries first, and the owner stamps its
// watermarks as it leaves; the acknowledgement releases its offsets (ackReq)
// or queues it to be delivered again (nackReq).

// batchState is the owner's state of one batch, from its fetch until it is
// acknowledged.
type batchState struct {
	// delivered: handed out at least once; outstanding: handed out and
	// neither acknowledged nor nacked since.
	delivered, outstanding bool
	// marks is its watermark state, nil without a watermark.
	marks *batchMarks
	// weight is what its records count against max_unacknowledged_bytes
	// (budget.go).
	weight int64
}

// heldBatch is a fresh batch ReadBatch brought while a redelivery went
// first, with the event times its reader computed from its messages
// (watermark column or expression), if any.
type heldBatch struct {
	batch *fetchedBatch
	times []int64
	ok    []bool
}

// fetchReq hands the owner a reader's poll. The reply is the batches of
// records to deliver, in order, each of at most batchSize records (none if
// nothing is to be delivered), and the most records the reader's next poll
// may take.
type fetchReq struct {
	fetches   kgo.Fetches
	batchSize int
	reply     chan tracked
}

// tracked is the owner's answer to a fetchReq.
type tracked struct {
	batches []*fetchedBatch
	// pollMax bounds the reader's next poll (offsetTracker.pollMax).
	pollMax int
}

func (r fetchReq) handle(o *owner) {
	bs := o.track(r.fetches, r.batchSize)
	r.reply <- tracked{batches: bs, pollMax: o.tracker.pollMax(r.batchSize)}
	r.fetches.EachError(func(_ string, _ int32, err error) {
		var e *kgo.ErrDataLoss
		if errors.As(err, &e) {
			o.dataLoss(e)
		}
	})
}

// fetched hands the poll fetches of reader r to the owner and returns the
// batches to deliver (none if none) and the bound of the next poll; ok is
// false once the session ended.
func (r *reader) fetched(fetches kgo.Fetches) (tr tracked, ok bool) {
	return call(r.sess, fetchReq{fetches: fetches, batchSize: r.batchSize, reply: r.reply}, r.reply)
}

// track registers fetched records before they are handed out: it drops
// transaction markers and records at or past their partition's stop offset
// (moving the partition's position past them), pauses the partitions that
// reached checkpoint_limit, stops fetching the partitions that reached
// their stop offset, and updates the lag and offset gauges. It returns the
// records to deliver in batches of at most batchSize records, in fetch
// order; none if none. A reader polls everything its client has buffered
// at once, so that the client starts its next fetch while these batches
// are built and handed out, and splits it here.
func (o *owner) track(fetches kgo.Fetches, batchSize int) []*fetchedBatch {
	t := o.tracker
	var (
		bs    []*fetchedBatch
		b     *fetchedBatch // the batch being filled: the last of bs
		st    *batchState   // b's
		pause []topicPartition
		// weighs is the weight of every batch, charged at once;
		// records and bytes count the records kept and their payload.
		weighs, records, bytes int64
		// left counts the poll's records not yet looked at, to size
		// each batch once: most of them are kept.
		left = fetches.NumRecords()
	)
	fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
		if len(fp.Records) == 0 {
			return
		}
		tp := topicPartition{topic: fp.Topic, partition: fp.Partition}
		// Looked up once for the partition's records; untracked (revoked,
		// removed): none of them is delivered, nothing moves.
		po := t.partition(tp)
		if po == nil {
			return
		}
		if next := po.next; next >= 0 && fp.LogStartOffset > next && fp.Records[0].Offset > next {
			// The position fell below the log start (retention deleted
			// what was not read yet) and the client reset per
			// committed_fallback; it does not report that as an error.
			o.offsetReset(tp, next, fp.Records[0].Offset)
		}
		var n, size int64
		var wp *watermark.Partition
		if o.wm != nil {
			wp = o.wm.parts[tp]
		}
		// Entries are registered in fetch order, so that a record and a
		// marker after it move the position in the order the log has them.
		for _, r := range fp.Records {
			left--
			if r.Attrs.IsControl() || !po.wanted(r.Offset) {
				t.skippedIn(tp, po, r.Offset)
				continue
			}
			if b == nil || len(b.records) == batchSize {
				// Batches are allocated at their size, not as one
				// array for the poll: a poll holds thousands of
				// records, and large allocations cost more.
				b, st = o.newBatch(min(batchSize, left+1))
				bs = append(bs, b)
			}
			b.records = append(b.records, r)
			b.positions = append(b.positions, position{tp: tp, offset: r.Offset})
			b.lags = append(b.lags, max(0, fp.HighWatermark-r.Offset-1))
			if st.marks != nil {
				st.marks.parts = append(st.marks.parts, wp)
			}
			n++
			size += recordBytes(r)
			w := weight(r)
			st.weight += w
			weighs += w
			if t.fetchedIn(tp, po, r.Offset) {
				pause = append(pause, tp)
			}
		}
		records += n
		bytes += size
		if n > 0 {
			o.metrics.received.Incr(n, tp.topic)
			o.metrics.bytes.Incr(size, tp.topic)
			o.metrics.parts.delivered(tp, o.readerOf[tp], n, size)
		}
		o.metrics.parts.position(tp, po.next, max(0, fp.HighWatermark-po.next))
	})
	if len(pause) > 0 && !o.stopped {
		o.eachClient(pause, func(cl *kgo.Client, m map[string][]int32) { cl.PauseFetchPartitions(m) })
	}
	if weighs > 0 {
		o.charge(weighs)
		o.sizeFetches(records, bytes)
	}
	if done := t.takeFinished(); len(done) > 0 {
		o.progressFinished(done)
		if o.wm != nil {
			// A finished partition no longer holds the watermark back,
			// once its last records are observed (as the batch is
			// delivered).
			if st != nil {
				st.marks.release = done
			} else {
				o.wmRemoveAll(done)
			}
		}
		o.stopFetching(done)
		o.signalProgress()
	}
	return bs
}

// newBatch registers a new batch of fetched records, with room for n.
func (o *owner) newBatch(n int) (*fetchedBatch, *batchState) {
	b := &fetchedBatch{
		records:   make([]*kgo.Record, 0, n),
		positions: make([]position, 0, n),
		lags:      make([]int64, 0, n),
		build:     &o.sess.build,
	}
	st := &batchState{}
	if o.wm != nil {
		st.marks = &batchMarks{parts: make([]*watermark.Partition, 0, n)}
	}
	o.batches[b] = st
	o.undelivered++
	return b, st
}

// dataLoss reports an offset reset that the client detected: the log was
// truncated, or the fetch position fell out of range after consuming, and
// the client moved to ResetTo per committed_fallback.
func (o *owner) dataLoss(e *kgo.ErrDataLoss) {
	tp := topicPartition{topic: e.Topic, partition: e.Partition}
	if e.ResetTo > e.ConsumedTo {
		o.offsetReset(tp, e.ConsumedTo, e.ResetTo)
		return
	}
	o.metrics.parts.offsetReset(tp)
	o.log.Errorf("kafka_source: topic %s partition %d: %v; reading on from offset %d (%s: %s)",
		e.Topic, e.Partition, e, e.ResetTo, fieldCommittedFallback, o.conf.CommittedFallback)
}

// offsetReset reports that offsets [from, to) of tp were skipped because
// they are no longer in the log, counts it, and moves the partition's
// position to to, so that commits and stop_at follow.
func (o *owner) offsetReset(tp topicPartition, from, to int64) {
	o.metrics.parts.offsetReset(tp)
	o.log.Errorf("kafka_source: topic %s partition %d: offsets %d to %d are no longer in the log (deleted by retention?); "+
		"%d records skipped, reading on from offset %d (%s: %s)", tp.topic, tp.partition, from, to-1,
		to-from, to, fieldCommittedFallback, o.conf.CommittedFallback)
	o.tracker.skipped(tp, to-1)
	if done := o.tracker.takeFinished(); len(done) > 0 {
		o.progressFinished(done)
		o.wmRemoveAll(done)
		o.stopFetching(done)
		o.signalProgress()
	}
}

// nextReq asks for the next batch to hand out. fresh is a batch ReadBatch
// took from the readers (nil if none): it is handed out now unless a
// redelivery goes first, then it waits in held. times and ok are its event
// times from its messages (watermark column or expression), if any.
type nextReq struct {
	fresh *fetchedBatch
	times []int64
	ok    []bool
	reply chan delivery
}

// delivery is the owner's answer to nextReq: a batch to hand out with its
// watermark stamps, or why there is none.
type delivery struct {
	batch *fetchedBatch
	// stamps are the event-time metadata of batch's messages, nil for
	// none; final marks the batch that ends a bounded read. The stamps
	// are the owner's and read-only.
	stamps []wmStamp
	final  bool
	// end: a bounded read is over (everything read, acknowledged and
	// committed); err: its final commit failed (ReadBatch is called
	// again, and the commit tried again); closed: the session stopped.
	end    bool
	err    error
	closed bool
}

func (r nextReq) handle(o *owner) {
	if o.failed != nil {
		r.reply <- delivery{err: fmt.Errorf("%w: %w", o.failed, service.ErrEndOfInput)}
		return
	}
	if o.stopping || o.rewinding != nil {
		r.reply <- delivery{closed: true}
		return
	}
	if r.fresh != nil {
		o.held = append(o.held, heldBatch{batch: r.fresh, times: r.times, ok: r.ok})
	}
	if b := o.takeRedelivery(); b != nil {
		r.reply <- o.deliver(b, nil, nil)
		return
	}
	if len(o.held) > 0 {
		h := o.held[0]
		o.held[0] = heldBatch{}
		o.held = o.held[1:]
		r.reply <- o.deliver(h.batch, h.times, h.ok)
		return
	}
	if o.bounded() {
		r.reply <- o.finish()
		return
	}
	r.reply <- delivery{}
}

// deliver hands out b: it counts its first delivery and stamps its
// watermarks.
func (o *owner) deliver(b *fetchedBatch, times []int64, ok []bool) delivery {
	d := delivery{batch: b}
	st := o.batches[b]
	if st == nil {
		return d
	}
	first := !st.delivered
	if first {
		st.delivered = true
		o.undelivered--
	}
	st.outstanding = true
	if st.marks != nil {
		if first {
			// The last batch of a bounded read: every split reached
			// its stop offset and no other batch waits to be
			// delivered.
			st.marks.final = o.bounded() && o.undelivered == 0 && o.tracker.allFinished()
		}
		d.stamps, d.final = o.stampDelivery(b, st.marks, times, ok)
	}
	return d
}

// finish answers nextReq for a bounded read with nothing to hand out: the
// end once every split reached its stop offset, every record was
// acknowledged and every position committed; else nothing yet, after
// starting the final commit when only that is missing.
func (o *owner) finish() delivery {
	if err := o.finishErr; err != nil {
		o.finishErr = nil
		return delivery{err: err}
	}
	drained, committed := o.tracker.drained()
	if !drained {
		return delivery{}
	}
	if committed || !o.commitsOffsets() {
		return delivery{end: true}
	}
	if !o.commits.ending {
		o.commits.ending = true
		o.commit(&commitJob{kind: commitEnd, ctx: o.sess.ctx, done: func(err error) {
			o.commits.ending = false
			if err != nil {
				o.finishErr = fmt.Errorf("committing the final offsets of a bounded read: %w", err)
			}
			o.signalProgress()
		}})
	}
	return delivery{}
}

// ackReq releases the offsets of an acknowledged batch.
type ackReq struct{ b *fetchedBatch }

func (r ackReq) handle(o *owner) {
	o.dropBatch(r.b)
	// Resume on the goroutine that paused, so a pause decided by track
	// cannot land after the resume that should follow it.
	if resume := o.tracker.acked(r.b.positions); len(resume) > 0 && !o.stopped {
		// A partition that alignment paused stays paused.
		if o.wm != nil {
			resume = slices.DeleteFunc(resume, func(tp topicPartition) bool { return o.wm.alignPaused[tp] })
		}
		if len(resume) > 0 {
			o.eachClient(resume, (*kgo.Client).ResumeFetchPartitions)
		}
	}
	if o.bounded() {
		o.signalProgress()
	}
	o.checkRevokes()
}

// nackReq queues a nacked batch to be delivered again.
type nackReq struct{ b *fetchedBatch }

func (r nackReq) handle(o *owner) {
	if o.stopped {
		o.dropBatch(r.b)
		return
	}
	if st := o.batches[r.b]; st != nil {
		st.outstanding = false
	}
	b := o.stillOwned(r.b)
	if b != nil {
		o.redeliver = append(o.redeliver, b)
		for _, rec := range b.records {
			o.metrics.redelivered.Incr(1, rec.Topic)
		}
		signal(o.sess.redeliverReady)
	}
	o.checkRevokes()
}

// stillOwned returns b without the records of partitions the session no
// longer tracks (revoked in group mode: their new owner reads them from the
// committed offset), nil if none is left. The batch's state follows it.
func (o *owner) stillOwned(b *fetchedBatch) *fetchedBatch {
	keep := 0
	for _, p := range b.positions {
		if o.tracker.has(p.tp) {
			keep++
		}
	}
	switch keep {
	case len(b.records):
		return b
	case 0:
		o.dropBatch(b)
		return nil
	}
	records := make([]*kgo.Record, 0, keep)
	lags := make([]int64, 0, keep)
	st := o.batches[b]
	var stamps []wmStamp
	var kept int64
	for i, p := range b.positions {
		if o.tracker.has(p.tp) {
			kept += weight(b.records[i])
			records = append(records, b.records[i])
			lags = append(lags, b.lags[i])
			if st != nil && st.marks != nil && st.marks.stamps != nil {
				stamps = append(stamps, st.marks.stamps[i])
			}
		}
	}
	nb := newFetchedBatch(records, lags, b.build)
	delete(o.batches, b)
	if st != nil {
		if st.marks != nil {
			// Stamped already: the partitions are only for stamping.
			st.marks.stamps, st.marks.parts = stamps, make([]*watermark.Partition, len(records))
		}
		o.refund(st.weight - kept)
		st.weight = kept
		o.batches[nb] = st
	}
	return nb
}

func (o *owner) takeRedelivery() *fetchedBatch {
	for len(o.redeliver) > 0 {
		b := o.redeliver[0]
		o.redeliver[0] = nil
		o.redeliver = o.redeliver[1:]
		if b = o.stillOwned(b); b != nil {
			return b
		}
	}
	return nil
}

// errHalted is deliver's answer for a batch holding a record that does not
// decode under on_error fail: the run is stopping, nothing is handed out.
var errHalted = errors.New("kafka_source: a bad record stopped the run")

// deliver turns the owner's delivery into messages with an ack func. An ack
// releases the batch's offsets; a nack queues the batch to be delivered
// again. The messages are those the reader prepared the first time, and
// built afresh (rows decoded again) for a redelivery. Records that give no
// message (skipped rows) are acknowledged with their batch; a batch of
// none is acknowledged at once, and deliver returns no messages and no
// error. errHalted: a record of the batch stopped the run.
func (sess *session) deliver(ctx context.Context, d delivery) (service.MessageBatch, service.AckFunc, error) {
	b := d.batch
	var bt built
	if p := b.takePrepared(); p != nil {
		bt = p.built
	} else {
		var err error
		if bt, err = b.buildRows(ctx); err != nil {
			sess.nack(b)
			return nil, nil, err
		}
	}
	if bt.halted {
		return nil, nil, errHalted
	}
	batch := bt.msgs
	if d.stamps != nil && len(d.stamps) == len(batch) {
		setStamps(batch, d.stamps, !sess.wm.fromRecord())
	}
	if bt.earlier != nil {
		batch = withEarlierRows(batch, bt.earlier)
	}
	batch = slices.DeleteFunc(batch, func(m *service.Message) bool { return m == nil })
	if len(batch) == 0 {
		sess.ack(b)
		return nil, nil, nil
	}
	if d.final {
		endOfInputWatermark(batch)
	}
	var done atomic.Bool
	return batch, func(_ context.Context, err error) error {
		if !done.CompareAndSwap(false, true) {
			return nil
		}
		if err != nil {
			sess.nack(b)
			return nil
		}
		sess.ack(b)
		return nil
	}, nil
}

// ack releases b's offsets; after the session ended it does nothing.
func (sess *session) ack(b *fetchedBatch) { sess.send(ackReq{b: b}) }

// nack queues b to be delivered again; after the session ended it does
// nothing.
func (sess *session) nack(b *fetchedBatch) { sess.send(nackReq{b: b}) }
