package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/txnoffsets"
)

// This file is exactly-once at the speed of records flowing, as Flink's
// KafkaSink commits at checkpoints: records read from a kafka_source on the
// sink's cluster are written into a transaction that stays open for
// commit_interval (a round), not one transaction per Benthos batch.
//
//   - WriteBatch holds the batch's origins with their sources
//     (txnoffsets.Holder), hands the records to the open round's producer and
//     returns: Benthos acknowledges the batch and the source frees it. The
//     source commits no offset at or past a held record.
//   - At the interval (the next WriteBatch, or the ticker when none comes),
//     the round's records are flushed, so that each partition's log holds
//     them before anything of the next round, and the round commits on a
//     goroutine of its own: PrepareHeld with each source, AddOffsetsToTxn and
//     TxnOffsetCommit, EndTxn, then CommittedHeld, which ends the holds. The
//     next round fills meanwhile on the other producer of a pool of two
//     (transactional ids `<prefix>-<suffix>` and `<prefix>-<suffix>-1`); at
//     most one round commits at a time, in order.
//   - Any failure aborts the failing round and the open one after it, and
//     every source with records in them rewinds: it reads again from the
//     lowest offset not yet committed (its records were freed, so it
//     re-fetches them, as a Flink job restarts from its last checkpoint).
//     Until its new session starts, its holds are refused, and the messages
//     of the old session still on their way are failed here, not written.
//
// Batches with any other message (another input, a source on another
// cluster, event_window results) keep one transaction per batch
// (writeTransaction), on the pool's first producer, after every round before
// them has committed.

// round is one transaction of records that flowed in.
type round struct {
	cl     *kgo.Client
	id     string // transactional id
	opened time.Time
	srcs   []*roundSource
	// recs and bytes count the records produced per topic, for the
	// metrics at commit.
	recs, bytes map[string]int64
	total       int64
	// done receives the outcome of the commit, once.
	done chan error

	mu     sync.Mutex
	failed error // the first record error, from a promise
}

// roundSource is one source's part of a round: the holds of its records.
type roundSource struct {
	h       txnoffsets.Holder
	ids     []txnoffsets.HoldID
	commits []txnoffsets.Commit
}

// roundState is the sink's rounds, guarded by txnMu.
type roundState struct {
	open       *round
	committing *round
	// spare: the next round uses the pool's second producer.
	spare bool
	// batchBegun is when the open one-batch transaction
	// (writeTransaction) began, for its duration metric.
	batchBegun time.Time
}

func (r *round) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed == nil {
		r.failed = err
	}
}

func (r *round) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

// source returns r's part for h, adding it.
func (r *round) source(h txnoffsets.Holder) *roundSource {
	for _, rs := range r.srcs {
		if rs.h == h {
			return rs
		}
	}
	rs := &roundSource{h: h}
	r.srcs = append(r.srcs, rs)
	return rs
}

// writeRound writes a batch whose messages all come from holders on this
// cluster (srcs) into the open round and returns without waiting for Kafka.
// The messages of a source that refuses the hold fail alone: that source is
// reading them again. Called with txnMu held.
func (s *Sink) writeRound(ctx context.Context, batch service.MessageBatch, recs []*kgo.Record, srcs []*heldSource) error {
	if err := s.settleRounds(ctx, false); err != nil {
		return err
	}
	if r := s.rounds.open; r != nil && time.Since(r.opened) >= s.cfg.CommitInterval {
		if err := s.rotate(ctx); err != nil {
			return err
		}
	}
	var refused map[txnoffsets.Holder]error
	for _, hs := range srcs {
		id, err := hs.h.Hold(hs.origins)
		if err != nil {
			if refused == nil {
				refused = map[txnoffsets.Holder]error{}
			}
			refused[hs.h] = err
			continue
		}
		hs.id = id
	}
	errs := make([]error, len(batch))
	if refused != nil {
		for i, m := range batch {
			o, _ := txnoffsets.FromContext(m.Context())
			if h, _ := txnoffsets.HolderOf(o); refused[h] != nil {
				recs[i], errs[i] = nil, refused[h]
			}
		}
	}
	if len(refused) < len(srcs) {
		r := s.rounds.open
		if r == nil {
			var err error
			if r, err = s.openRound(); err != nil {
				s.rewindHeld(srcs, refused, err)
				return err
			}
		}
		for _, hs := range srcs {
			if refused[hs.h] == nil {
				rs := r.source(hs.h)
				rs.ids = append(rs.ids, hs.id)
			}
		}
		for _, rec := range recs {
			if rec == nil {
				continue
			}
			r.recs[rec.Topic]++
			r.bytes[rec.Topic] += recordBytes(rec)
			r.total++
			rec.Context = s.flowCtx
			r.cl.Produce(ctx, rec, func(rec *kgo.Record, err error) {
				if err != nil {
					s.m.failed.Incr(1, rec.Topic)
					r.fail(&ProduceError{Topic: rec.Topic, Partition: rec.Partition, Err: err})
				}
			})
		}
	}
	return s.batchResult(batch, errs)
}

// rewindHeld asks the sources of srcs that gave a hold to read again: their
// records were not written.
func (s *Sink) rewindHeld(srcs []*heldSource, refused map[txnoffsets.Holder]error, cause error) {
	for _, hs := range srcs {
		if refused[hs.h] == nil {
			hs.h.Rewind(cause)
		}
	}
}

// openRound begins a transaction on the producer whose turn it is.
func (s *Sink) openRound() (*round, error) {
	s.mu.Lock()
	cl, id := s.mu.client, s.cfg.TransactionalID()
	if s.rounds.spare {
		cl, id = s.mu.spare, s.cfg.spareTransactionalID()
	}
	s.mu.Unlock()
	if cl == nil {
		return nil, service.ErrNotConnected
	}
	if err := cl.BeginTransaction(); err != nil {
		return nil, s.producerLost(cl, "beginning a transaction", err)
	}
	s.m.txnBegun.Incr(1)
	r := &round{cl: cl, id: id, opened: time.Now(), recs: map[string]int64{}, bytes: map[string]int64{}, done: make(chan error, 1)}
	s.rounds.open = r
	return r, nil
}

// rotate ends the open round: its records are flushed (so that the next
// round's records of a partition land after them), the round before it
// must have committed, and it commits on a goroutine of its own while the
// next round fills on the other producer. Called with txnMu held.
func (s *Sink) rotate(ctx context.Context) error {
	r := s.rounds.open
	if r == nil {
		return nil
	}
	s.rounds.spare = !s.rounds.spare
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Timeout)
	if err := r.cl.Flush(fctx); err != nil {
		r.fail(fmt.Errorf("%w after %v: flushing the transaction's records: %w", ErrProduceTimeout, s.cfg.Timeout, err))
	}
	cancel()
	// r is still the open round here: if the round before failed,
	// settleRounds aborts r with it (cause rewind), and r never commits.
	err := s.settleRounds(ctx, true)
	if s.rounds.open != r {
		return err
	}
	s.rounds.open = nil
	s.rounds.committing = r
	go func() { r.done <- s.commitRound(r) }()
	return nil
}

// settleRounds takes the outcome of the round in commit, if it is over (or,
// with wait, once it is). After a failure the open round is aborted too and
// every source of both rewinds; the error is returned only when the sink
// cannot go on as it is (its producers were lost: Benthos reconnects), else
// nil. Called with txnMu held.
func (s *Sink) settleRounds(ctx context.Context, wait bool) error {
	c := s.rounds.committing
	if c == nil {
		return nil
	}
	var err error
	if wait {
		err = <-c.done
	} else {
		select {
		case err = <-c.done:
		default:
			return nil
		}
	}
	s.rounds.committing = nil
	if err == nil {
		return nil
	}
	s.rewindRound(c, err)
	if o := s.rounds.open; o != nil {
		s.rounds.open = nil
		s.failRound(o, fmt.Errorf("%w (transactional id %q): %w", errEarlierFailed, c.id, err))
	}
	if errors.Is(err, service.ErrNotConnected) {
		return err
	}
	return nil
}

// failRound aborts r after cause and rewinds its sources.
func (s *Sink) failRound(r *round, cause error) {
	_ = s.abortRound(r, cause)
	s.rewindRound(r, cause)
}

// rewindRound asks every source of r to read again from its committed
// offsets (not once the run is stopping: nothing is read any more).
func (s *Sink) rewindRound(r *round, cause error) {
	if s.run.Stopped() {
		return
	}
	s.log.Errorf("kafka_sink: transaction of %d records (transactional id %q) aborted; every later transaction is aborted too and "+
		"the kafka_source inputs read again from their committed offsets: %v", r.total, r.id, cause)
	for _, rs := range r.srcs {
		rs.h.Rewind(cause)
	}
}

// finishRounds commits the open round and waits for every round in commit.
// Called with txnMu held.
func (s *Sink) finishRounds(ctx context.Context) error {
	if err := s.rotate(ctx); err != nil {
		return err
	}
	return s.settleRounds(ctx, true)
}

// commitRound commits r: the offsets of its sources join it, then EndTxn.
// Any failure aborts it.
func (s *Sink) commitRound(r *round) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timeout)
	defer cancel()
	if err := r.err(); err != nil {
		return s.abortRound(r, err)
	}
	if r.total == 0 {
		return nil
	}
	if err := s.commitHeldOffsets(ctx, r); err != nil {
		if kafkaconn.Classify(err) == kafkaconn.Permanent {
			s.endRun(fmt.Errorf("kafka_sink: %w: %s", err, permanentHint(err)))
		}
		return s.abortRound(r, err)
	}
	if err := s.stoppedError(); err != nil {
		s.log.Infof("kafka_sink: the run is stopping on an error: aborting the open transaction of %d records (transactional id %q) instead of committing it",
			r.total, r.id)
		return s.abortRound(r, err)
	}
	start := time.Now()
	if err := r.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return s.abortRound(r, fmt.Errorf("committing: %w", err))
	}
	for _, rs := range r.srcs {
		all := map[txnoffsets.TopicPartition]int64{}
		for _, c := range rs.commits {
			maps.Copy(all, c.Offsets)
		}
		rs.h.CommittedHeld(all, rs.ids)
	}
	s.m.txnCommittedAt(r.opened, start, r.total)
	for topic, n := range r.recs {
		s.m.sent.Incr(n, topic)
		s.m.bytes.Incr(r.bytes[topic], topic)
	}
	s.recreate.Reset()
	return nil
}

// commitHeldOffsets adds each source's offsets for r's holds to r's
// transaction.
func (s *Sink) commitHeldOffsets(ctx context.Context, r *round) error {
	for _, rs := range r.srcs {
		commits, err := rs.h.PrepareHeld(rs.ids)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrOffsetsNotCommitted, err)
		}
		rs.commits = commits
	}
	pid, epoch, err := r.cl.ProducerID(ctx)
	if err != nil {
		return fmt.Errorf("%w: reading the producer id: %w", ErrOffsetsNotCommitted, err)
	}
	added := map[string]bool{}
	for _, rs := range r.srcs {
		group := rs.h.GroupID()
		for _, c := range rs.commits {
			if len(c.Offsets) == 0 {
				continue
			}
			if !added[group] {
				if err := addOffsetsToTxn(ctx, r.cl, r.id, pid, epoch, group); err != nil {
					return err
				}
				added[group] = true
			}
			if err := s.txnOffsetCommit(ctx, r.cl, r.id, pid, epoch, group, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// abortRound aborts r's transaction after cause and returns the error of
// the round. A producer that is fenced or cannot abort is lost: the pool is
// closed, and the error wraps service.ErrNotConnected. Either way the
// transaction is counted aborted, with its cause.
func (s *Sink) abortRound(r *round, cause error) error {
	why := abortCauseOf(cause, time.Since(r.opened), s.cfg.TransactionTimeout)
	defer s.m.txnAbortedAt(why, r.opened)
	if isFenced(cause) {
		return s.producerLost(r.cl, "writing a transaction", cause)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timeout)
	defer cancel()
	if err := r.cl.AbortBufferedRecords(ctx); err != nil {
		return s.producerLost(r.cl, "aborting a transaction", fmt.Errorf("%w (while aborting after: %w)", err, cause))
	}
	if err := r.cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		return s.producerLost(r.cl, "aborting a transaction", fmt.Errorf("%w (while aborting after: %w)", err, cause))
	}
	if _, _, err := r.cl.ProducerID(ctx); err != nil {
		return s.producerLost(r.cl, "recovering from an aborted transaction", fmt.Errorf("%w (after aborting because of: %w)", err, cause))
	}
	return fmt.Errorf("kafka_sink: transaction of %d records aborted (transactional id %q): %w", r.total, r.id, cause)
}

// tickRounds commits the open round once it is commit_interval old when no
// WriteBatch comes to do it, and takes the outcome of commits, until Close.
func (s *Sink) tickRounds() {
	t := time.NewTicker(max(s.cfg.CommitInterval/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C:
		}
		s.txnMu.Lock()
		_ = s.settleRounds(context.Background(), false)
		if r := s.rounds.open; r != nil && time.Since(r.opened) >= s.cfg.CommitInterval {
			_ = s.rotate(context.Background())
		}
		s.txnMu.Unlock()
	}
}
