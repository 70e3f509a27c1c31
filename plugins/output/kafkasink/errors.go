package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connectd/connectd/internal/halt"
	"github.com/connectd/connectd/internal/kafkaconn"
)

// This file decides what a failure means for the run (DESIGN.md contract 9,
// docs/errors.md): kafkaconn.Classify sorts the errors; a Permanent one ends
// the run through internal/halt with a message naming what to change; a
// Transient one is retried (Benthos calls Connect again with its back-off,
// or retries the batch), each attempt logged; a Record one fails its
// message alone.

// errRunEnding is Connect's answer once the run is ending: Benthos maps
// service.ErrEndOfInput to its "closed" error, which ends the output's
// connect loop at once instead of retrying until the shutdown times out.
var errRunEnding = fmt.Errorf("kafka_sink: the run is ending, not connecting: %w", service.ErrEndOfInput)

// ErrRunStopped is the cause of a batch refused, or a transaction aborted
// instead of committed, because the run is stopping on an error (a bad
// record under `on_error: fail` elsewhere, or a permanent error here).
var ErrRunStopped = errors.New("kafka_sink: the run is stopping on an error")

// stoppedError returns a whole-batch error if the run stops on an error:
// nothing may be written or committed any more.
func (s *Sink) stoppedError() error {
	if err := s.run.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrRunStopped, err)
	}
	return nil
}

// endingError is Connect's answer once the run is ending.
func (s *Sink) endingError() error {
	if err := s.run.Err(); err != nil {
		return fmt.Errorf("%w: %w", errRunEnding, err)
	}
	return errRunEnding
}

// endRun ends the run on err, a Permanent error: logged once at error level
// here, then printed by the binary as it exits 1.
func (s *Sink) endRun(err error) {
	if s.run.Stopped() {
		return
	}
	s.log.Errorf("kafka_sink: the run stops, this error does not clear by retrying: %v", err)
	s.run.Stop(err)
}

// nackAtEnd turns a WriteBatch result of service.ErrNotConnected into a
// plain error once the run is ending. Benthos answers ErrNotConnected by
// reconnecting, which the end of the run refuses: its connect loop then
// ends without acknowledging the batch, and the input waits for that
// acknowledgement until the shutdown times out. A nack lets it stop now;
// the records are read again on the next run.
func (s *Sink) nackAtEnd(err error) error {
	if err == nil || !s.run.IsEnding() || !errors.Is(err, service.ErrNotConnected) {
		return err
	}
	return &endedWriteError{cause: err}
}

// endedWriteError is a batch that could not reach Kafka when the run was
// ending. It keeps its cause's text but not its chain on purpose: Benthos
// must not see the service.ErrNotConnected in it.
type endedWriteError struct{ cause error }

func (e *endedWriteError) Error() string {
	return "kafka_sink: the run is ending and the batch did not reach kafka, it is not written: " + e.cause.Error()
}

// connectFailed is Connect's answer to a failed attempt: an attempt cut
// short because the run is ending gives up; a Permanent error ends the run
// and the output's connect loop; anything else is returned for Benthos to
// log and retry (after its back-off, or the one a service.ErrBackOff asks
// for).
func (s *Sink) connectFailed(ctx context.Context, err error) error {
	if halt.IsEndingCause(ctx) || (s.run.IsEnding() && ctx.Err() != nil) {
		s.logGaveUp()
		return s.endingError()
	}
	if kafkaconn.Classify(err) == kafkaconn.Permanent {
		// A back-off asked for with it (credentials never accepted)
		// would keep Benthos's connect loop sleeping instead of ending.
		var bo *service.ErrBackOff
		if errors.As(err, &bo) {
			err = bo.Err
		}
		s.endRun(err)
		return fmt.Errorf("%w: %w", err, service.ErrEndOfInput)
	}
	return err
}

// endRunOnPermanent looks at the errors of a written batch (errs[i] for
// recs[i], as produce leaves them) and ends the run on the first that
// cannot clear: a Permanent error, or an unknown topic that a fresh
// metadata request confirms does not exist. It returns that error, nil if
// there is none; the batch's result is left to the caller.
func (s *Sink) endRunOnPermanent(ctx context.Context, cl *kgo.Client, errs []error) error {
	checked := map[string]bool{}
	for _, err := range errs {
		var pe *ProduceError
		if err == nil || !errors.As(err, &pe) {
			continue
		}
		perr := s.permanentProduceError(ctx, cl, pe, checked)
		if perr != nil {
			s.endRun(perr)
			return perr
		}
	}
	return nil
}

// permanentProduceError returns the run-ending form of a failed record's
// error, nil if it may clear. checked holds the topics already confirmed to
// exist.
func (s *Sink) permanentProduceError(ctx context.Context, cl *kgo.Client, pe *ProduceError, checked map[string]bool) error {
	switch kafkaconn.Classify(pe) {
	case kafkaconn.Permanent:
		return fmt.Errorf("%w: %s", pe, permanentHint(pe))
	case kafkaconn.Transient:
		if !errors.Is(pe, kerr.UnknownTopicOrPartition) || checked[pe.Topic] {
			return nil
		}
		checked[pe.Topic] = true
		// franz-go failed the record after UnknownTopicRetries (4)
		// metadata loads without the topic: ask once more.
		exists, err := topicExists(ctx, cl, pe.Topic)
		if err != nil || exists {
			return nil
		}
		why := fmt.Sprintf("field %s is false", FieldAutoCreateTopics)
		if s.cfg.AllowAutoTopicCreation {
			why = "the brokers do not create topics on demand (auto.create.topics.enable=false, or a create policy refused it)"
		}
		return kafkaconn.WithClass(fmt.Errorf("field %s: topic %q does not exist and was not created (%s): create the topic, or change field %s: %w",
			FieldTopic, pe.Topic, why, FieldTopic, pe), kafkaconn.Permanent)
	}
	return nil
}

// topicExists asks the cluster whether topic exists, without asking it to
// create the topic.
func topicExists(ctx context.Context, cl *kgo.Client, topic string) (bool, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = false
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return false, err
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		err := kerr.ErrorForCode(t.ErrorCode)
		switch {
		case errors.Is(err, kerr.UnknownTopicOrPartition):
			return false, nil
		case err != nil:
			return false, err
		}
		return true, nil
	}
	return false, nil
}

// permanentHint says what to change for a Permanent Kafka error.
func permanentHint(err error) string {
	switch {
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		return fmt.Sprintf("grant the principal WRITE and DESCRIBE on the topic (READ on a source topic whose offsets the transaction commits), or change field %s", FieldTopic)
	case errors.Is(err, kerr.GroupAuthorizationFailed):
		return "grant the principal READ on the consumer group (the kafka_source's consumer_group) to commit its offsets in the transaction"
	case errors.Is(err, kerr.TransactionalIDAuthorizationFailed):
		return fmt.Sprintf("grant WRITE and DESCRIBE on the transactional id, or change field %s", FieldTransactionalIDPrefix)
	case errors.Is(err, kerr.ClusterAuthorizationFailed):
		return fmt.Sprintf("grant IDEMPOTENT_WRITE on the cluster (needed by brokers before Kafka 2.8), or change field %s", FieldDeliveryGuarantee)
	case errors.Is(err, kerr.UnsupportedCompressionType):
		return fmt.Sprintf("the brokers do not support this codec: change field %s", FieldCompression)
	case errors.Is(err, kerr.InvalidTopicException):
		return fmt.Sprintf("change field %s to a legal topic name", FieldTopic)
	case errors.Is(err, kerr.InvalidTransactionTimeout):
		return fmt.Sprintf("lower field %s", FieldTransactionTimeout)
	case errors.Is(err, kerr.UnsupportedVersion), errors.Is(err, kerr.UnsupportedForMessageFormat):
		return fmt.Sprintf("the brokers are too old for this request: upgrade them, or change field %s", FieldDeliveryGuarantee)
	}
	return "this error does not clear by retrying (docs/errors.md)"
}

// refusedRecordsError is a transaction aborted because Kafka refused some of
// its records for what they hold (kafkaconn.Record), each alone: their
// messages are failed alone and the rest of the batch is retried in place
// (see writeTransaction).
type refusedRecordsError struct {
	refused map[int]error // by message index
	err     error         // the abort's result
}

func (e *refusedRecordsError) Error() string {
	first := e.refused[slices.Min(slices.Collect(maps.Keys(e.refused)))]
	return fmt.Sprintf("kafka refused %d records of the transaction for what they hold (first: %v)", len(e.refused), first)
}

func (e *refusedRecordsError) Unwrap() error { return e.err }

// produceFailed handles a transaction some of whose records failed: it ends
// the run on an error that cannot clear, and aborts. When every failure is a
// record Kafka refused alone (kafkaconn.Record with an error no other record
// shares: franz-go fails a record over max_message_bytes before sending it,
// and a broker batch of one record fails alone), the result is a
// *refusedRecordsError, so that those messages fail alone and the rest is
// committed. A Record error shared by several records of a partition is the
// broker refusing a whole batch of them: the bad record cannot be told
// apart, the transaction can never commit, and the run ends.
func (s *Sink) produceFailed(ctx context.Context, cl *kgo.Client, batch service.MessageBatch, recs []*kgo.Record, errs []error, first error) error {
	s.endRunOnPermanent(ctx, cl, errs)
	alone, onlyAlone, shared := refusedAlone(recs, errs)
	if shared != nil {
		s.endRun(shared)
	}
	aerr := s.abort(ctx, cl, batch, first)
	if !onlyAlone || len(alone) == 0 || s.run.Stopped() || errors.Is(aerr, service.ErrNotConnected) {
		return aerr
	}
	return &refusedRecordsError{refused: alone, err: aerr}
}

// refusedAlone sorts the failed records of a transaction (PartitionErrors
// aside: those never left the client). alone holds the messages refused for
// what they hold, each with an error no other failed record of its
// partition shares; onlyAlone reports that nothing else failed; shared is
// the run-ending error for a Record error shared by several records of a
// partition (nil if none).
func refusedAlone(recs []*kgo.Record, errs []error) (alone map[int]error, onlyAlone bool, shared error) {
	type key struct {
		topic     string
		partition int32
		err       error
	}
	count := map[key]int{}
	keyOf := func(i int) (key, bool) {
		var pe *ProduceError
		if recs[i] == nil || errs[i] == nil || !errors.As(errs[i], &pe) {
			return key{}, false
		}
		return key{pe.Topic, pe.Partition, pe.Err}, true
	}
	for i := range errs {
		if k, ok := keyOf(i); ok {
			count[k]++
		}
	}
	onlyAlone = true
	for i, err := range errs {
		k, ok := keyOf(i)
		switch {
		case !ok:
			var part *PartitionError
			if recs[i] != nil && err != nil && !errors.As(err, &part) {
				onlyAlone = false
			}
		case kafkaconn.Classify(err) != kafkaconn.Record:
			onlyAlone = false
		case count[k] == 1:
			if alone == nil {
				alone = map[int]error{}
			}
			alone[i] = err
		default:
			onlyAlone = false
			if shared == nil {
				shared = fmt.Errorf("kafka_sink: topic %q partition %d refused a batch of %d records of the transaction: %w; "+
					"an error shared by a whole batch does not say which record is bad, so this batch can never commit: %s",
					k.topic, k.partition, count[k], err, recordHint(err))
			}
		}
	}
	return alone, onlyAlone, shared
}

// recordHint says what to change when the broker refuses a whole batch for
// a Record error.
func recordHint(err error) string {
	switch {
	case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge):
		return fmt.Sprintf("lower field %s to at most the topic's max.message.bytes, so that an oversized record fails alone", FieldMaxMessageBytes)
	case errors.Is(err, kerr.InvalidTimestamp):
		return fmt.Sprintf("the topic refuses the records' timestamps (message.timestamp.before.max.ms / after.max.ms): check field %s", FieldTimestampMs)
	case errors.Is(err, kerr.InvalidRecord):
		return fmt.Sprintf("the topic refuses these records (for example a null key on a compacted topic): check field %s", FieldKey)
	}
	return "route the bad records before the sink (docs/errors.md)"
}
