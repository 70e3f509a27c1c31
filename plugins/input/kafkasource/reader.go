package kafkasource

import (
	"context"
	"errors"
	"fmt"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/txnoffsets"
	"github.com/connectd/connectd/internal/watermark"
)

// FetchError is a failed fetch of one partition.
type FetchError struct {
	Topic     string
	Partition int32
	Err       error
}

func (e *FetchError) Error() string {
	return fmt.Sprintf("fetching topic %q partition %d: %v", e.Topic, e.Partition, e.Err)
}

func (e *FetchError) Unwrap() error { return e.Err }

// fetchedBatch is the records of one poll, in fetch order, with their
// positions for the offset tracker. A batch is handed out again unchanged
// when it is nacked.
type fetchedBatch struct {
	records   []*kgo.Record
	positions []position
	// lags[i] is the lag of records[i] when it was fetched: the
	// partition's high watermark minus the offset after the record.
	lags []int64
	// messages are built by the reader goroutine (prepare), so that with
	// several readers the per-record work runs in parallel rather than in
	// ReadBatch. They are handed out once; a redelivered batch is built
	// afresh from records, since processors may have changed the first
	// messages.
	messages service.MessageBatch
	// meta selects the metadata of the messages.
	meta metaSet
	// origin is the source named in each message's txnoffsets.Origin (so
	// that an exactly-once kafka_sink commits the offsets in its
	// transaction); nil attaches none.
	origin txnoffsets.Source
	// wm is the session's watermark state, nil without a watermark. With
	// it, wmParts[i] is the watermark partition of records[i] (nil if
	// untracked), and stamps are computed by the first delivery and reused
	// by redeliveries (see session.stampDelivery).
	wm      *sessionWatermarks
	wmParts []*watermark.Partition
	stamps  []wmStamp
	// release removes the watermark partitions that this batch finished
	// (stop offset reached), once their last records are observed.
	release func()
	// delivered is set by the first delivery; final marks the batch that
	// ends a bounded read (its messages carry the end-of-input watermark).
	// Both are guarded by the session mutex.
	delivered bool
	final     bool
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
	// With event time from the record timestamp, it is set here, on the
	// reader goroutine: the metadata map grows past its small form with
	// it, and that cost is better paid in parallel than at delivery.
	eventTime := b.wm != nil && b.wm.fromRecord()
	for i, r := range b.records {
		msg := recordMessage(r, b.lags[i], b.meta, &boxes)
		if eventTime {
			msg.MetaSetMut(metaEventTimeMs, r.Timestamp.UnixMilli())
		}
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
// polls it. Each poll's records are registered with the tracker (track, which
// drops transaction markers and records past the stop offset, and may pause
// or finish partitions) before they are handed out, so records waiting in
// out already count against checkpoint_limit and hold the commit position.
// A partition belongs to one reader, and a reader sends its batches in
// order, so each partition's records reach out in offset order.
type reader struct {
	client    *kgo.Client
	batchSize int
	log       *service.Logger
	track     func(kgo.Fetches) *fetchedBatch
	// dataLoss is told of each offset reset (out of range, truncation).
	dataLoss func(*kgo.ErrDataLoss)
	// fetchFailed is told of each other failed fetch of a partition.
	fetchFailed func(topic string, partition int32)
	out         chan<- fetchResult
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
		if b := r.track(fetches); b != nil {
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
				// The client has already moved on (to the reset offset);
				// nothing to retry, but an operator must hear of it.
				r.dataLoss(dataLoss)
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

func (r *reader) send(ctx context.Context, res fetchResult) bool {
	select {
	case r.out <- res:
		return true
	case <-ctx.Done():
		return false
	}
}
