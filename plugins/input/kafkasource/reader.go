package kafkasource

import (
	"context"
	"errors"
	"fmt"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/txnoffsets"
)

// FetchError is a failed fetch of one partition.
type FetchError struct {
	Topic     string
	Partition int32
	Err       error
}

func (e *FetchError) Error() string {
	if e.Topic == "" {
		// An error of the client as a whole: a group member that
		// cannot join its group.
		return fmt.Sprintf("consuming: %v", e.Err)
	}
	return fmt.Sprintf("fetching topic %q partition %d: %v", e.Topic, e.Partition, e.Err)
}

func (e *FetchError) Unwrap() error { return e.Err }

// fetchedBatch is the records of one poll that the owner keeps to deliver,
// in fetch order, with their positions for the offset tracker. A batch is
// handed out again unchanged when it is nacked. What the owner knows of a
// batch (delivered, its watermark stamps) is the owner's (batchState), not
// the batch's.
type fetchedBatch struct {
	records   []*kgo.Record
	positions []position
	// lags[i] is the lag of records[i] when it was fetched: the
	// partition's high watermark minus the offset after the record.
	lags []int64
	// prepared is built by the reader goroutine (prepare), so that with
	// several readers the per-record work (metadata, table rows, event
	// times) runs in parallel rather than in ReadBatch or on the owner.
	// It is taken once, by ReadBatch; a redelivered batch is built afresh
	// from records, since processors may have changed the first messages.
	prepared *preparedBatch
	// build says how its messages are made: the session's.
	build *messageBuilder
}

// preparedBatch is what the reader made of a batch for its first delivery.
type preparedBatch struct {
	built
	// times[i] is the event time of records[i] where ok[i], when event
	// times come from the messages (watermark column or expression); nil
	// otherwise. ReadBatch hands them to the owner (nextReq).
	times []int64
	ok    []bool
}

// built are a batch's messages: msgs[i] is that of records[i], nil for a
// record that gives none (a table row skipped by the format or on_error
// skip), which is not delivered but acknowledged with its batch.
type built struct {
	msgs service.MessageBatch
	// earlier[i] are the rows of records[i] before msgs[i] (a changelog
	// record gives several rows, msgs[i] is its last); nil when no record
	// of the batch gives more than one.
	earlier [][]*service.Message
	// halted: a record that does not decode stopped the run (on_error
	// fail); nothing of the batch may be delivered, and msgs is nil.
	halted bool
}

// messageBuilder is how a session turns records into messages. It is set
// before the session's readers start and read-only after, so the readers
// share it.
type messageBuilder struct {
	// meta selects the metadata of the messages.
	meta metaSet
	// origin is the source named in each message's txnoffsets.Origin (so
	// that an exactly-once kafka_sink commits the offsets in its
	// transaction); nil attaches none.
	origin txnoffsets.Source
	// rows decodes each record into a row of the table; nil without one.
	rows *tableRows
	// times gives event times from the messages (watermark column or
	// expression); nil without a watermark or when they are the record
	// timestamps (set by recordMessage).
	times *sessionWatermarks
}

// prepare builds the batch's messages for its first delivery, and their
// event times. false: ctx ended while decoding; the batch is not to be
// handed out (its session is stopping).
func (b *fetchedBatch) prepare(ctx context.Context) bool {
	bt, err := b.buildRows(ctx)
	if err != nil {
		return false
	}
	p := &preparedBatch{built: bt}
	if w := b.build.times; w != nil && !bt.halted {
		p.times, p.ok = w.eventTimes(bt.msgs)
	}
	b.prepared = p
	return true
}

// buildRows builds the batch's messages and, with a table, decodes their
// rows. err is ctx's error if it ended while decoding.
func (b *fetchedBatch) buildRows(ctx context.Context) (built, error) {
	msgs := b.buildMessages()
	if b.build.rows == nil {
		return built{msgs: msgs}, nil
	}
	var earlier [][]*service.Message
	for i, r := range b.records {
		msg, more, stop, err := b.build.rows.decode(ctx, r, msgs[i])
		if err != nil {
			return built{}, err
		}
		if stop {
			return built{halted: true}, nil
		}
		msgs[i] = msg
		if len(more) > 0 {
			if earlier == nil {
				earlier = make([][]*service.Message, len(b.records))
			}
			earlier[i] = more
		}
	}
	return built{msgs: msgs, earlier: earlier}, nil
}

// buildMessages builds a message for each record, with its metadata and
// origin.
func (b *fetchedBatch) buildMessages() service.MessageBatch {
	batch := make(service.MessageBatch, len(b.records))
	var boxes valueBoxes
	var ctxs []txnoffsets.IndexContext
	if b.build.origin != nil {
		// One allocation for the contexts of the whole batch; each
		// names its record's index in origins.
		ctxs = txnoffsets.BatchContexts(&batchOrigins{source: b.build.origin, positions: b.positions}, len(b.records))
	}
	for i, r := range b.records {
		msg := recordMessage(r, b.lags[i], b.build.meta, &boxes)
		if ctxs != nil {
			msg = msg.WithContext(&ctxs[i])
		}
		batch[i] = msg
	}
	return batch
}

// batchOrigins are the txnoffsets origins of a batch's messages: the
// positions of its records, named with their source. It holds no record, so
// that a message kept downstream (an event_window) does not keep its fetch.
type batchOrigins struct {
	source    txnoffsets.Source
	positions []position
}

// Origin returns the origin of the batch's i-th record.
func (o *batchOrigins) Origin(i int) txnoffsets.Origin {
	p := o.positions[i]
	return txnoffsets.Origin{Source: o.source, Topic: p.tp.topic, Partition: p.tp.partition, Offset: p.offset}
}

// takePrepared returns what prepare made the first time, nil after that.
func (b *fetchedBatch) takePrepared() *preparedBatch {
	p := b.prepared
	b.prepared = nil
	return p
}

// newFetchedBatch takes ownership of records and lags.
func newFetchedBatch(records []*kgo.Record, lags []int64, build *messageBuilder) *fetchedBatch {
	b := &fetchedBatch{records: records, lags: lags, build: build, positions: make([]position, len(records))}
	for i, r := range records {
		b.positions[i] = position{tp: topicPartition{topic: r.Topic, partition: r.Partition}, offset: r.Offset}
	}
	return b
}

// fetchResult is what the reader hands to ReadBatch: a batch or an error.
type fetchResult struct {
	batch *fetchedBatch
	err   error
	// fatal means the client cannot go on: the source must reconnect.
	fatal bool
}

// reader owns the fetch loop of one client: it is the only goroutine that
// polls it. Each poll's records go to the owner (fetched), which registers
// them with the offset tracker (dropping transaction markers and records
// past the stop offset, and pausing or finishing partitions) before the
// reader builds their messages and hands them out, so records waiting in
// ready already count against checkpoint_limit and hold the commit
// position. A partition belongs to one reader, and a reader sends its
// batches in order, so each partition's records reach ready in offset order.
type reader struct {
	id        int
	client    *kgo.Client
	batchSize int
	sess      *session
	// reply receives the owner's answers to this reader's fetchReq.
	reply chan tracked
}

// run polls until ctx is cancelled or the client fails for good.
func (r *reader) run(ctx context.Context) {
	// pollMax is the most records a poll takes: the owner's bound, so
	// that no partition passes checkpoint_limit (by more than a batch).
	pollMax := r.batchSize
	for {
		// All the client has buffered where the checkpoint limit allows,
		// split into batches of batchSize by the owner: a client fetches
		// again only once its buffered fetch is drained, so taking it
		// whole lets the next fetch overlap with building and handing
		// out this one.
		fetches := r.client.PollRecords(ctx, pollMax)
		if ctx.Err() != nil {
			r.client.AllowRebalance()
			return
		}
		if fetches.IsClientClosed() {
			r.client.AllowRebalance()
			r.send(ctx, fetchResult{err: kgo.ErrClientClosed, fatal: true})
			return
		}
		if r.sess.afterPoll != nil && fetches.NumRecords() > 0 {
			r.sess.afterPoll(fetches)
		}
		tr, ok := r.fetched(fetches)
		// A group member's client blocks rebalances from a poll until
		// here (kgo.BlockRebalanceOnPoll): the owner now tracks the
		// poll's records, so a revocation of their partitions waits for
		// them (revokeReq). Without the block, a revocation and a
		// reassignment to this process could land between the poll and
		// the owner, which would then take the old assignment's records
		// as the new one's and deliver them twice.
		r.client.AllowRebalance()
		if !ok {
			return
		}
		pollMax = tr.pollMax
		for _, b := range tr.batches {
			if !b.prepare(ctx) || !r.send(ctx, fetchResult{batch: b}) {
				return
			}
		}
		var results []fetchResult
		fetches.EachError(func(topic string, partition int32, err error) {
			var dataLoss *kgo.ErrDataLoss
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return
			}
			fe := &FetchError{Topic: topic, Partition: partition, Err: err}
			switch {
			case errors.As(err, &dataLoss):
				// The client has already moved on (to the reset
				// offset), and the owner reported it; nothing to retry.
			case errors.Is(err, kgo.ErrClientClosed) || kafkaconn.IsAuthError(err):
				r.fetchFailed(topic, partition)
				results = append(results, fetchResult{err: fe, fatal: true})
			default:
				r.fetchFailed(topic, partition)
				results = append(results, fetchResult{err: fe})
			}
		})
		for _, res := range results {
			if !r.send(ctx, res) {
				return
			}
			if res.fatal {
				return
			}
		}
	}
}

// fetchFailed counts a failed fetch of a partition.
func (r *reader) fetchFailed(topic string, partition int32) {
	r.sess.metrics.parts.fetchError(topicPartition{topic: topic, partition: partition})
}

func (r *reader) send(ctx context.Context, res fetchResult) bool {
	select {
	case r.sess.ready <- res:
		return true
	case <-ctx.Done():
		return false
	}
}
