package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/txnoffsets"
)

// brokerTxnMaxTimeout is the broker setting that bounds transaction_timeout.
const brokerTxnMaxTimeout = "transaction.max.timeout.ms"

// ErrFenced is the cause of a batch whose transactional producer was fenced:
// another producer with the same transactional id took over, or the broker
// aborted a transaction that outlived transaction_timeout.
var ErrFenced = errors.New("transactional producer fenced")

// isFenced reports whether err means that the broker will not accept this
// producer again: a newer producer holds its transactional id (or its epoch
// was bumped by a timeout abort). A new producer clears it. (A producer
// that may not use its id at all, TRANSACTIONAL_ID_AUTHORIZATION_FAILED, is
// a permanent error: it ends the run.)
func isFenced(err error) bool {
	return errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch)
}

// initProducer initialises the transactional producer (InitProducerID) before
// the first batch, so that a refused transaction timeout or a missing ACL fails
// Connect, and so that the broker fences any predecessor with the same
// transactional id and aborts its open transaction now.
func (s *Sink) initProducer(ctx context.Context, cl *kgo.Client, id string) error {
	pid, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		return s.describeInitError(ctx, cl, id, err)
	}
	s.log.Infof("kafka_sink: transactional producer %q ready (producer id %d, epoch %d, transaction timeout %v)",
		id, pid, epoch, s.cfg.TransactionTimeout)
	return nil
}

func (s *Sink) describeInitError(ctx context.Context, cl *kgo.Client, id string, err error) error {
	switch {
	case errors.Is(err, kerr.InvalidTransactionTimeout):
		var limit string
		if ms, lerr := brokerMaxTimeout(ctx, cl); lerr != nil {
			limit = fmt.Sprintf("unknown (%v)", lerr)
		} else {
			limit = fmt.Sprintf("%d ms (%v)", ms, time.Duration(ms)*time.Millisecond)
		}
		return fmt.Errorf("field %s: the broker refused a transaction timeout of %v (%d ms) for transactional id %q: "+
			"the broker setting %s is %s; lower %s or raise %s on the brokers: %w",
			FieldTransactionTimeout, s.cfg.TransactionTimeout, s.cfg.TransactionTimeout.Milliseconds(), id,
			brokerTxnMaxTimeout, limit, FieldTransactionTimeout, brokerTxnMaxTimeout, err)
	case errors.Is(err, kerr.TransactionalIDAuthorizationFailed):
		return fmt.Errorf("initialising transactional producer %q: the principal may not use this transactional id "+
			"(grant WRITE and DESCRIBE on TransactionalId %q, or change field %s): %w", id, id, FieldTransactionalIDPrefix, err)
	case kafkaconn.Classify(err) == kafkaconn.Permanent:
		return fmt.Errorf("initialising transactional producer %q at %v: %w: %s", id, s.cfg.Conn.SeedBrokers, err, permanentHint(err))
	}
	return fmt.Errorf("initialising transactional producer %q at %v: %w", id, s.cfg.Conn.SeedBrokers, err)
}

// brokerMaxTimeout reads transaction.max.timeout.ms from a broker (without a
// broker id, DescribeConfigs answers only the dynamic cluster-wide configs,
// which do not hold a static setting).
func brokerMaxTimeout(ctx context.Context, cl *kgo.Client) (int64, error) {
	adm := kadm.NewClient(cl)
	brokers, err := adm.ListBrokers(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", brokerTxnMaxTimeout, err)
	}
	rcs, err := adm.DescribeBrokerConfigs(ctx, brokers.NodeIDs()...)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", brokerTxnMaxTimeout, err)
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			continue
		}
		for _, c := range rc.Configs {
			if c.Key == brokerTxnMaxTimeout && c.Value != nil {
				return strconv.ParseInt(*c.Value, 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("the brokers did not report %s", brokerTxnMaxTimeout)
}

// writeTransaction writes an exactly_once batch in one transaction and
// returns nil only after the commit. Any record Kafka refused, and any
// failure to commit, aborts the transaction and fails the whole batch (a
// plain error, so that Benthos nacks every message). A message that could not
// become a record (a field error, a partition out of range) never joins the
// transaction: it fails alone, in a *service.BatchError, and the rest
// commits.
//
// Failures that can clear are handled here instead, because a nacked batch
// comes back after later batches of the same partitions and would break
// per-partition order: a transaction aborted because a record was not
// written, or its commit failed, for a reason retryInPlace accepts (a record
// not acknowledged within the timeout, a moving coordinator), or because the
// source offsets were refused transiently (a rebalance under way, a
// generation that changed while the partition stayed with this member), is
// retried as a whole in place, with a back-off and a warning per attempt,
// until it commits or ctx ends. The messages of partitions the source no
// longer owns (revoked or lost, see txnoffsets.NotOwnedError) are failed
// alone, for their new owner reads them again, and the rest is retried. A
// lost producer returns service.ErrNotConnected, after which Benthos
// reconnects and retries this same batch.
//
// The producer id and epoch are never cached here: franz-go reads them for
// each transaction (Kafka 4 bumps the epoch at every commit).
func (s *Sink) writeTransaction(ctx context.Context, cl *kgo.Client, batch service.MessageBatch) error {
	s.txnMu.Lock()
	defer s.txnMu.Unlock()
	if srcs, ok := s.holdable(batch, nil, true); ok {
		recs, errs := s.buildRecords(batch)
		if countFailed(errs) == 0 {
			return s.writeRound(ctx, batch, recs, srcs)
		}
	}
	// One transaction for this batch, after every round before it.
	if err := s.finishRounds(ctx); err != nil {
		return err
	}

	var (
		notOwned map[txnoffsets.TopicPartition]error
		refused  map[int]error
		backoff  inPlaceBackoff
	)
	for attempt := 2; ; attempt++ {
		err := s.transact(ctx, cl, batch, notOwned, refused)
		var (
			moved *txnoffsets.NotOwnedError
			bad   *refusedRecordsError
		)
		switch {
		case errors.As(err, &bad):
			// Each round fails at least one more message alone, so
			// this ends within len(batch) rounds.
			if refused == nil {
				refused = map[int]error{}
			}
			maps.Copy(refused, bad.refused)
			s.log.Warnf("kafka_sink: %v; those messages fail alone, the rest of the batch is retried", bad)
			continue
		case errors.Is(err, errPartitionsMoved) && errors.As(err, &moved):
			if notOwned == nil {
				notOwned = map[txnoffsets.TopicPartition]error{}
			}
			for _, tp := range moved.Partitions {
				notOwned[tp] = moved
			}
			s.log.Infof("kafka_sink: %v; their messages are dropped here (their new owner reads them again), the rest of the batch is retried", moved)
			continue
		case errors.Is(err, errRetryInPlace):
			s.log.Warnf("kafka_sink: %v; writing the batch of %d messages again in %v (attempt %d), in its order: later batches wait",
				err, len(batch), backoff.delay(), attempt)
			wctx, cancel := s.run.WithEnding(ctx)
			_, werr := backoff.wait(wctx)
			cancel()
			if werr != nil {
				return fmt.Errorf("%w (gave up retrying: %w)", err, werr)
			}
			continue
		}
		return err
	}
}

// retryAborted marks the error of an aborted transaction (aerr, from abort)
// for a retry in place when its cause can clear (retryInPlace). A lost
// producer (service.ErrNotConnected) is left as it is: Benthos reconnects and
// retries the batch itself.
func retryAborted(aerr, cause error) error {
	if errors.Is(aerr, service.ErrNotConnected) || !retryInPlace(cause) {
		return aerr
	}
	return fmt.Errorf("%w: %w", errRetryInPlace, aerr)
}

// errPartitionsMoved marks an aborted transaction some of whose source
// partitions moved to another owner (see writeTransaction).
var errPartitionsMoved = errors.New("transaction aborted: source partitions moved")

// errRetryInPlace marks an aborted transaction whose batch is retried in
// place (see writeTransaction).
var errRetryInPlace = errors.New("transaction aborted for a transient reason")

// transact writes batch in one transaction, leaving out (failing) the
// messages whose origin is in notOwned and the messages in refused (by
// index: their records were refused for what they hold).
func (s *Sink) transact(ctx context.Context, cl *kgo.Client, batch service.MessageBatch,
	notOwned map[txnoffsets.TopicPartition]error, refused map[int]error) error {
	recs, errs := s.buildRecords(batch)
	for i, err := range refused {
		recs[i], errs[i] = nil, err
	}
	if len(notOwned) > 0 {
		for i, m := range batch {
			if o, ok := txnoffsets.FromContext(m.Context()); ok && recs[i] != nil {
				if err := notOwned[txnoffsets.TopicPartition{Topic: o.Topic, Partition: o.Partition}]; err != nil {
					recs[i], errs[i] = nil, err
				}
			}
		}
	}
	if !slices.ContainsFunc(recs, func(r *kgo.Record) bool { return r != nil }) {
		return s.batchResult(batch, errs) // nothing to write, no transaction
	}
	if err := cl.BeginTransaction(); err != nil {
		return s.producerLost(cl, "beginning a transaction", err)
	}
	s.m.txnBegun.Incr(1)
	begun := time.Now()
	s.rounds.batchBegun = begun
	s.produce(ctx, cl, recs, errs)
	if err := firstProduceError(recs, errs); err != nil {
		ferr := s.produceFailed(ctx, cl, batch, recs, errs, err)
		var bad *refusedRecordsError
		if errors.As(ferr, &bad) || s.run.Stopped() {
			return ferr
		}
		return retryAborted(ferr, err)
	}

	// A cancelled EndTxn leaves the outcome unknown, so it is bounded by
	// the timeout only, not by the caller's context.
	endCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Timeout)
	defer cancel()
	if !anyAcknowledged(recs, errs) {
		// Every record failed before reaching Kafka: end the empty
		// transaction rather than commit it.
		err := cl.EndTransaction(endCtx, kgo.TryAbort)
		s.m.txnAbortedAt(abortFailure, begun)
		if err != nil {
			return s.producerLost(cl, "ending an empty transaction", err)
		}
		return s.batchResult(batch, errs)
	}
	// The source offsets of the written records join the transaction
	// only now that records are in it: franz-go sends no EndTxn for a
	// transaction without records, which would leave offsets-only
	// transactions open on the broker.
	sources := s.pairedOrigins(batch, recs, errs)
	if err := s.commitOffsetsInTxn(endCtx, cl, sources); err != nil {
		if kafkaconn.Classify(err) == kafkaconn.Permanent {
			s.endRun(fmt.Errorf("kafka_sink: %w: %s", err, permanentHint(err)))
		}
		aerr := s.abort(ctx, cl, batch, err)
		var moved *txnoffsets.NotOwnedError
		switch {
		case errors.Is(aerr, service.ErrNotConnected):
			return aerr
		case errors.As(err, &moved):
			return fmt.Errorf("%w: %w", errPartitionsMoved, moved)
		case retriableOffsetsError(err):
			return fmt.Errorf("%w: %w", errRetryInPlace, aerr)
		}
		return aerr
	}
	// Once the run stops on an error (a bad record elsewhere under
	// on_error: fail), nothing after it may commit.
	if err := s.stoppedError(); err != nil {
		s.log.Infof("kafka_sink: the run is stopping on an error: aborting the open transaction of %d messages (transactional id %q) instead of committing it",
			len(batch), s.cfg.TransactionalID())
		return s.abort(ctx, cl, batch, err)
	}
	start := time.Now()
	if err := cl.EndTransaction(endCtx, kgo.TryCommit); err != nil {
		// Whatever the error, the transaction is not committed.
		return retryAborted(s.abort(ctx, cl, batch, fmt.Errorf("committing: %w", err)), err)
	}
	offsetsCommitted(sources)
	s.m.txnCommittedAt(begun, start, s.countSent(recs, errs))
	s.recreate.Reset()
	return s.batchResult(batch, errs) // only messages that never joined the transaction can have failed
}

// anyAcknowledged reports whether Kafka acknowledged any record.
func anyAcknowledged(recs []*kgo.Record, errs []error) bool {
	for i, r := range recs {
		if r != nil && errs[i] == nil {
			return true
		}
	}
	return false
}

// firstProduceError returns the first error of a record that was handed to
// the client and may have reached Kafka, or nil.
func firstProduceError(recs []*kgo.Record, errs []error) error {
	for i, err := range errs {
		var pe *PartitionError
		if recs[i] != nil && err != nil && !errors.As(err, &pe) {
			return err
		}
	}
	return nil
}

// abort aborts the open transaction after cause and returns the whole-batch
// error. A fenced producer, or one that cannot abort, is closed so that
// Connect creates a new one; its open transaction is aborted by the broker
// when the new producer initialises (or at the transaction timeout). Either
// way the transaction is counted aborted, with its cause. Called with txnMu
// held, from transact.
func (s *Sink) abort(ctx context.Context, cl *kgo.Client, batch service.MessageBatch, cause error) error {
	begun := s.rounds.batchBegun
	why := abortCauseOf(cause, time.Since(begun), s.cfg.TransactionTimeout)
	defer s.m.txnAbortedAt(why, begun)
	if isFenced(cause) {
		return s.producerLost(cl, "writing a transaction", cause)
	}
	endCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Timeout)
	defer cancel()
	// Records still buffered must not leak into the next transaction.
	if err := cl.AbortBufferedRecords(endCtx); err != nil {
		return s.producerLost(cl, "aborting a transaction", fmt.Errorf("%w (while aborting after: %w)", err, cause))
	}
	if err := cl.EndTransaction(endCtx, kgo.TryAbort); err != nil {
		return s.producerLost(cl, "aborting a transaction", fmt.Errorf("%w (while aborting after: %w)", err, cause))
	}
	// An EndTxn error can leave the producer id failed for good (the
	// abort itself then still succeeds): find out now, not at the next
	// batch, and replace such a producer.
	if _, _, err := cl.ProducerID(endCtx); err != nil {
		return s.producerLost(cl, "recovering from an aborted transaction", fmt.Errorf("%w (after aborting because of: %w)", err, cause))
	}
	if errors.Is(cause, ErrRunStopped) {
		return fmt.Errorf("kafka_sink: transaction of %d messages aborted, not committed (transactional id %q): %w",
			len(batch), s.cfg.TransactionalID(), cause)
	}
	return fmt.Errorf("kafka_sink: transaction of %d messages aborted (transactional id %q), the whole batch is retried: %w",
		len(batch), s.cfg.TransactionalID(), cause)
}

// producerLost closes a transactional producer that cannot go on, logs it at
// error level naming the transactional id, and returns an error wrapping
// service.ErrNotConnected, so that Benthos calls Connect (which creates a
// new producer) and then retries the whole batch. A fencing is counted in
// kafka_sink_txn_fenced. Every loss delays the next Connect by a back-off
// that doubles per loss without a commit in between: two writers with the
// same transactional id fence each other visibly and slowly, never silently
// in a tight loop. A cause that cannot clear (kafkaconn.Permanent, for
// example a transactional id the principal may no longer use) ends the run
// instead.
func (s *Sink) producerLost(cl *kgo.Client, during string, cause error) error {
	id := s.cfg.TransactionalID()
	s.mu.Lock()
	var spare *kgo.Client
	if s.mu.client == cl || s.mu.spare == cl {
		// The pool is replaced as a whole (Connect initialises both).
		if s.mu.client != cl {
			spare = s.mu.client
		} else {
			spare = s.mu.spare
		}
		s.mu.client, s.mu.spare = nil, nil
	}
	s.mu.Unlock()
	cl.Close()
	if spare != nil {
		spare.Close()
	}
	if kafkaconn.Classify(cause) == kafkaconn.Permanent {
		err := fmt.Errorf("transactional producer %q failed while %s: %w: %s", id, during, cause, permanentHint(cause))
		s.endRun(err)
		return fmt.Errorf("%w: %w", service.ErrNotConnected, err)
	}
	losses, wait := s.recreate.Fail()

	if isFenced(cause) {
		s.m.txnFenced.Incr(1)
		s.log.Errorf("kafka_sink: transactional producer %q was FENCED while %s (producer %d lost since the last commit): "+
			"another writer with the same transactional id (%s + %s) has taken over, or a transaction outlived %s (%v) "+
			"and the broker aborted it. The batch was not committed; a new producer is created in %v and the batch retried. "+
			"Two live writers with the same transactional id fence each other forever: give each its own %s. Cause: %v",
			id, during, losses, FieldTransactionalIDPrefix, FieldTransactionalIDSuffix, FieldTransactionTimeout,
			s.cfg.TransactionTimeout, wait, FieldTransactionalIDSuffix, cause)
		return fmt.Errorf("%w: %w: transactional id %q, while %s: %w", service.ErrNotConnected, ErrFenced, id, during, cause)
	}
	s.log.Errorf("kafka_sink: transactional producer %q failed while %s (producer %d lost since the last commit); "+
		"the batch was not committed, a new producer is created in %v and the batch retried. If this repeats, check that no "+
		"other writer uses the same transactional id. Cause: %v", id, during, losses, wait, cause)
	return fmt.Errorf("%w: transactional producer %q failed while %s: %w", service.ErrNotConnected, id, during, cause)
}
