package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/txnoffsets"
)

// This file lets records flow from a kafka_source through an at_least_once
// sink without waiting for Kafka inside WriteBatch (the durability
// handshake, txnoffsets.Holder): when every message of a batch comes from a
// kafka_source with a consumer group, the sink holds the records with their
// sources, hands them to the producer in batch order and returns. Benthos
// acknowledges the batch at once, the source frees its messages, and the
// next batch is produced while this one is on the wire: several produce
// requests are in flight, in order (the idempotent producer keeps a
// partition's order across its own retries). The source commits no offset
// at or past a held record; the sink releases the holds once Kafka
// acknowledged every record of the batch.
//
// A record that fails for good (the idempotent producer retries what can
// clear) ends the run: its hold is never released, so nothing at or past it
// is committed, and the next run reads it again. Batches with any other
// message (stdin, generate, a window result, a source without a consumer
// group) are written as before: WriteBatch waits for Kafka.

// heldSource is one source's part of a batch: its origins, and the hold it
// gave for them.
type heldSource struct {
	h       txnoffsets.Holder
	origins []txnoffsets.Origin
	id      txnoffsets.HoldID
}

// holdable returns the batch's origins per source, in order of first
// appearance, when every message has a built record (errs[i] nil) and comes
// from a Holder with a consumer group, and, with sameCluster, reads this
// sink's cluster; ok is false otherwise.
func (s *Sink) holdable(batch service.MessageBatch, errs []error, sameCluster bool) (srcs []*heldSource, ok bool) {
	var last *heldSource
	for i, m := range batch {
		if errs != nil && errs[i] != nil {
			return nil, false
		}
		o, ok := txnoffsets.FromContext(m.Context())
		if !ok {
			return nil, false
		}
		if last == nil || last.h != o.Source {
			last = nil
			for _, hs := range srcs {
				if hs.h == o.Source {
					last = hs
					break
				}
			}
			if last == nil {
				h, ok := txnoffsets.HolderOf(o)
				if !ok || h.GroupID() == "" || (sameCluster && !s.paired(h)) {
					return nil, false
				}
				// Room for the rest of the batch: most batches come
				// from one source.
				last = &heldSource{h: h, origins: make([]txnoffsets.Origin, 0, len(batch)-i)}
				srcs = append(srcs, last)
			}
		}
		last.origins = append(last.origins, o)
	}
	return srcs, len(srcs) > 0
}

// hold holds each source's origins. It returns false, with every hold it
// made released, when a source refused (the session that read them ended or
// rewinds: the records are read again, so they are not written here).
func hold(srcs []*heldSource) (refused error) {
	for i, hs := range srcs {
		id, err := hs.h.Hold(hs.origins)
		if err != nil {
			for _, done := range srcs[:i] {
				done.h.Release([]txnoffsets.HoldID{done.id})
			}
			return err
		}
		hs.id = id
	}
	return nil
}

// flowing is a batch handed to the producer: the promises count its records
// down and end its holds once Kafka acknowledged all of them.
type flowing struct {
	s    *Sink
	cl   *kgo.Client
	srcs []*heldSource
	recs []*kgo.Record
	// origins[i] is where recs[i] was read, to name it if it fails. The
	// batch's messages are not kept: Benthos acknowledges the batch when
	// writeFlowing returns, and its source frees them then, so that what
	// waits for Kafka is the records alone (max_buffered_bytes).
	origins []txnoffsets.Origin
	left    int
	start   time.Time
	failed  error
	slowest map[string]time.Duration
}

// writeFlowing writes an at_least_once batch whose messages all come from
// holders (srcs): it holds them, hands every record to the producer and
// returns nil without waiting for Kafka. ok is false when a source refused
// the hold: the caller writes the batch the synchronous way then (its
// messages' acknowledgements reach a session that ended, which ignores
// them).
func (s *Sink) writeFlowing(ctx context.Context, cl *kgo.Client, batch service.MessageBatch, recs []*kgo.Record, srcs []*heldSource) (ok bool) {
	if err := hold(srcs); err != nil {
		s.log.Debugf("kafka_sink: writing a batch of %d messages synchronously: %v", len(batch), err)
		return false
	}
	var origins []txnoffsets.Origin
	if len(srcs) == 1 && len(srcs[0].origins) == len(batch) {
		// One source (the usual case): holdable collected every
		// message's origin in batch order already.
		origins = srcs[0].origins
	} else {
		origins = make([]txnoffsets.Origin, len(batch))
		for i, m := range batch {
			origins[i], _ = txnoffsets.FromContext(m.Context())
		}
	}
	left := 0
	for _, r := range recs {
		if r != nil {
			left++
		}
	}
	f := &flowing{s: s, cl: cl, srcs: srcs, recs: recs, origins: origins, left: left, start: time.Now(), slowest: map[string]time.Duration{}}
	promise := f.done // one function value for the batch, not a closure per record
	for _, r := range recs {
		if r == nil { // left out by ReduceByKey
			continue
		}
		// No deadline: the idempotent producer retries what can clear,
		// in order; the sink's context ends only when it closes.
		if s.checkPartitions {
			r.Context, _ = withPartitionCheck(s.flowCtx, partitionCheckOf(r))
		} else {
			r.Context = s.flowCtx
		}
		cl.Produce(ctx, r, promise)
	}
	return true
}

// done is the promise of each record of f. Promises run serially on the
// client's promise goroutine, so f needs no lock.
func (f *flowing) done(r *kgo.Record, err error) {
	s := f.s
	if err != nil {
		s.m.failed.Incr(1, r.Topic)
		if f.failed == nil {
			f.failed = f.recordError(slices.Index(f.recs, r), r, err)
		}
	} else if d := time.Since(f.start); d > f.slowest[r.Topic] {
		f.slowest[r.Topic] = d
	}
	if f.left--; f.left > 0 {
		return
	}
	if f.failed != nil {
		if s.closed() || s.run.IsEnding() {
			// The sink closes with records not yet acknowledged: they
			// stay held, so their offsets are not committed and the
			// next run reads them again.
			s.log.Infof("kafka_sink: closing: %v; its offsets are not committed, the next run reads it again", f.failed)
			return
		}
		// Off the client's promise goroutine: naming a missing topic
		// asks the cluster once more (permanentProduceError).
		go s.endRun(f.runEndingError())
		return
	}
	for _, hs := range f.srcs {
		hs.h.Release([]txnoffsets.HoldID{hs.id})
	}
	s.countSent(f.recs, make([]error, len(f.recs)))
	for topic, d := range f.slowest {
		s.m.latency.Timing(d.Nanoseconds(), topic)
	}
}

// runEndingError is f.failed with what the sink knows of a permanent
// produce error (an unknown topic confirmed missing names the fields to
// change), as the synchronous path reports it.
func (f *flowing) runEndingError() error {
	var pe *ProduceError
	if !errors.As(f.failed, &pe) {
		return f.failed
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.s.cfg.Timeout)
	defer cancel()
	if perr := f.s.permanentProduceError(ctx, f.cl, pe, map[string]bool{}); perr != nil {
		return fmt.Errorf("%w (%w)", f.failed, perr)
	}
	return f.failed
}

// recordError is the run-ending error of record i, naming where it was
// going and where it was read.
func (f *flowing) recordError(i int, r *kgo.Record, err error) error {
	if pe := partitionErrorOf(r); pe != nil {
		err = pe
	} else {
		err = &ProduceError{Topic: r.Topic, Partition: r.Partition, Err: err}
	}
	from := ""
	if i >= 0 && f.origins[i].Source != nil {
		o := f.origins[i]
		from = fmt.Sprintf(" (read from topic %q partition %d offset %d)", o.Topic, o.Partition, o.Offset)
	}
	hint := ""
	if kafkaconn.Classify(err) == kafkaconn.Permanent {
		hint = " (" + permanentHint(err) + ")"
	}
	return fmt.Errorf("kafka_sink: a record%s was not written, after the batch was acknowledged to the input: %w%s; "+
		"the run stops so that no offset at or past it is committed, and the next run reads it again", from, err, hint)
}
