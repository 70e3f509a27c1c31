package kafkasource

import (
	"errors"
	"fmt"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/connectd/connectd/internal/kafkaconn"
)

// This file decides what a failure of the source means for the run
// (DESIGN.md contract 9, docs/errors.md): kafkaconn.Classify sorts the
// errors, plus what only the source knows (a configured topic or partition
// confirmed missing, a start that committed_fallback: error refuses). A
// Permanent error ends the run through internal/halt and ends the input
// (service.ErrEndOfInput, which Benthos takes as "closed": it neither logs
// nor retries it); anything else is returned for Benthos to log and retry
// with its back-off (Connect), or to log and read again (ReadBatch).
//
// Where each is met:
//   - Connect: creating the clients (a login never accepted in this run is
//     Permanent: kafkaconn.Connector), and the enumerator's listing (a
//     missing topic, an authorization error, committed_fallback: error);
//   - ReadBatch: a reader's fetch error (TOPIC_AUTHORIZATION_FAILED);
//   - the owner: an offset commit's error (GROUP_AUTHORIZATION_FAILED).

// missingConfirmWait is how long a configured topic or partition must stay
// missing before the run ends: the first listing that misses it is retried
// after this back-off, in case it was created a moment before the input
// started and not every broker knows it yet; the next one that misses it
// ends the run.
const missingConfirmWait = time.Second

// MissingPartitionError is a configured partition that its topic does not
// have: in partitions, start_offsets or stop_offsets.
type MissingPartitionError struct {
	Field     string
	Topic     string
	Partition int32
}

func (e *MissingPartitionError) Error() string {
	return fmt.Sprintf("field %s: topic %q has no partition %d", e.Field, e.Topic, e.Partition)
}

// missingConfigured reports whether err holds a configured topic that does
// not exist or a configured partition its topic does not have.
func missingConfigured(err error) bool {
	var te *TopicError
	var pe *MissingPartitionError
	return errors.As(err, &pe) || (errors.As(err, &te) && errors.Is(te.Err, kerr.UnknownTopicOrPartition))
}

// subscriptionField names the field that says what is read: topics,
// topic_pattern or partitions.
func (c Config) subscriptionField() string {
	switch {
	case c.TopicPattern != nil:
		return fieldTopicPattern
	case c.Partitions != nil:
		return fieldPartitions
	}
	return fieldTopics
}

// connectFailed is Connect's answer to a failed attempt. A configured topic
// or partition missing at two attempts at least missingConfirmWait apart is
// Permanent; at the first it asks for that back-off. A Permanent error ends
// the run; anything else goes back to Benthos, which logs it and calls
// Connect again after its back-off (or the one a service.ErrBackOff asks
// for: a rejected login that worked before). Connect's goroutine only.
func (s *source) connectFailed(err error) error {
	if missingConfigured(err) {
		now := time.Now()
		if s.missingSince.IsZero() {
			s.missingSince = now
		}
		if wait := missingConfirmWait - now.Sub(s.missingSince); wait > 0 {
			return service.NewErrBackOff(fmt.Errorf("%w; checking once more in %v", err, wait.Round(time.Millisecond)), wait)
		}
		err = kafkaconn.WithClass(err, kafkaconn.Permanent)
	}
	var so *StartOffsetError
	if errors.As(err, &so) {
		// committed_fallback: error refuses the start; no retry commits
		// an offset for the partition.
		err = kafkaconn.WithClass(err, kafkaconn.Permanent)
	}
	if kafkaconn.Classify(err) != kafkaconn.Permanent {
		return err
	}
	// A back-off asked for with it (credentials never accepted) would keep
	// Benthos's connect loop sleeping instead of ending.
	var bo *service.ErrBackOff
	if errors.As(err, &bo) {
		err = bo.Err
	}
	return s.endRun(fmt.Errorf("kafka_source: %w%s", err, permanentHint(s.conf, err)))
}

// endRun ends the run on err, a Permanent error: logged once at error level
// here, then printed by the binary as it exits 1. It returns err marked as
// the end of the input, for Connect or ReadBatch to return.
func (s *source) endRun(err error) error {
	if !s.halt.Stopped() {
		s.log.Errorf("%v; the run stops: this error does not clear by retrying", err)
		s.halt.Stop(err)
	}
	return fmt.Errorf("%w: %w", err, service.ErrEndOfInput)
}

// endRun ends the run on err, a Permanent error met on the owner (an offset
// commit): it stops the run, and the next ReadBatch ends the input with it.
func (o *owner) endRun(err error) {
	if o.failed != nil {
		return
	}
	err = fmt.Errorf("kafka_source: %w%s", err, permanentHint(o.conf, err))
	o.failed = err
	if !o.halt.Stopped() {
		o.log.Errorf("%v; the run stops: this error does not clear by retrying", err)
		o.halt.Stop(err)
	}
	o.signalProgress()
}

// permanentHint says what to change for a Permanent error, "" when the error
// names it already (a missing topic names its field, committed_fallback
// names itself, a rejected login names the sasl fields).
func permanentHint(c Config, err error) string {
	switch {
	case missingConfigured(err), kafkaconn.IsAuthError(err):
		return ""
	case errors.Is(err, ErrNoCommittedOffset):
		return fmt.Sprintf(": commit an offset for it, or set %s to %s or %s", fieldCommittedFallback, FallbackEarliest, FallbackLatest)
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		return fmt.Sprintf(": grant the principal READ and DESCRIBE on the topic, or change field %s", c.subscriptionField())
	case errors.Is(err, kerr.GroupAuthorizationFailed):
		return fmt.Sprintf(": grant the principal READ on consumer group %q, or change field %s", c.ConsumerGroup, fieldConsumerGroup)
	case errors.Is(err, kerr.ClusterAuthorizationFailed):
		return ": grant the principal DESCRIBE on the cluster"
	case errors.Is(err, kerr.InvalidGroupID):
		return fmt.Sprintf(": change field %s", fieldConsumerGroup)
	case errors.Is(err, kerr.InvalidTopicException):
		return fmt.Sprintf(": change field %s to legal topic names", c.subscriptionField())
	case errors.Is(err, kerr.UnsupportedVersion):
		return ": the brokers are too old for this request"
	}
	return " (docs/errors.md)"
}
