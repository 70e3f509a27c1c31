package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"strconv"

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
	// messages are built by the reader goroutine (prepare), so that with
	// several readers the per-record work runs in parallel rather than in
	// ReadBatch or on the owner. They are handed out once; a redelivered
	// batch is built afresh from records, since processors may have
	// changed the first messages.
	messages service.MessageBatch
	// meta selects the metadata of the messages.
	meta metaSet
	// origin is the source named in each message's txnoffsets.Origin (so
	// that an exactly-once kafka_sink commits the offsets in its
	// transaction); nil attaches none.
	origin txnoffsets.Source
}

// prepare builds the batch's messages.
func (b *fetchedBatch) prepare() {
	b.messages = b.buildMessages()
}

func (b *fetchedBatch) buildMessages() service.MessageBatch {
	batch := make(service.MessageBatch, len(b.records))
	var boxes partitionBoxes
	var ctxs []txnoffsets.OriginContext
	if b.origin != nil {
		// One allocation for the origins of the whole batch.
		ctxs = make([]txnoffsets.OriginContext, len(b.records))
	}
	for i, r := range b.records {
		msg := recordMessage(r, b.lags[i], b.meta, &boxes)
		if ctxs != nil {
			ctxs[i].Set(context.Background(), txnoffsets.Origin{Source: b.origin, Topic: r.Topic, Partition: r.Partition, Offset: r.Offset})
			msg = msg.WithContext(&ctxs[i])
		}
		batch[i] = msg
	}
	return batch
}

// takeMessages returns the prepared messages the first time and freshly
// built ones after that.
func (b *fetchedBatch) takeMessages() service.MessageBatch {
	if m := b.messages; m != nil {
		b.messages = nil
		return m
	}
	return b.buildMessages()
}

// newFetchedBatch takes ownership of records and lags.
func newFetchedBatch(records []*kgo.Record, lags []int64, meta metaSet, origin txnoffsets.Source) *fetchedBatch {
	b := &fetchedBatch{records: records, lags: lags, meta: meta, origin: origin, positions: make([]position, len(records))}
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
	reply chan *fetchedBatch
}

// run polls until ctx is cancelled or the client fails for good.
func (r *reader) run(ctx context.Context) {
	for {
		fetches := r.client.PollRecords(ctx, r.batchSize)
		if ctx.Err() != nil {
			return
		}
		if fetches.IsClientClosed() {
			r.send(ctx, fetchResult{err: kgo.ErrClientClosed, fatal: true})
			return
		}
		b, ok := r.fetched(fetches)
		if !ok {
			return
		}
		if b != nil {
			b.prepare()
			if !r.send(ctx, fetchResult{batch: b}) {
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
	r.sess.metrics.fetchErrors.Incr(1, topic, strconv.Itoa(int(partition)))
}

func (r *reader) send(ctx context.Context, res fetchResult) bool {
	select {
	case r.sess.ready <- res:
		return true
	case <-ctx.Done():
		return false
	}
}
