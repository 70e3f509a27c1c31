package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkaconn"
)

// Records that fail for a reason that can clear are written again inside the
// same WriteBatch ("in place"), never failed back to Benthos: Benthos hands a
// failed message back to its input, which delivers it again only after the
// messages it read in the meantime, so an older value of a key would land
// after a newer one. This file holds the one decision (retryInPlace), which
// records go again (replaySet), and the back-off between attempts.

// Back-off between two attempts of the same batch: it doubles from
// retryInPlaceMin up to retryInPlaceMax. A timed-out attempt has already
// waited for the configured timeout.
const (
	retryInPlaceMin = 50 * time.Millisecond
	retryInPlaceMax = 2 * time.Second
)

// retryInPlace reports whether a write that failed with err is tried again in
// place, or given up (failed back to Benthos). It is the single place that
// tells an error that can clear from one that cannot, for records (see
// recordRetriable) and for transactions.
//
// Given up: a topic the broker does not know after the client's own retries
// (auto-creation off, or refused); an error Kafka marks as not retriable (a
// record too large, an invalid record, an authorization failure); a closed
// client (the sink is closing).
//
// Retried: everything else, which is what a broker outage, a leader move or a
// slow cluster produce: a record not acknowledged within the timeout,
// connection errors, retriable Kafka errors, and the sequence errors after
// which the client takes a new producer epoch.
func retryInPlace(err error) bool {
	if kafkaconn.Classify(err) == kafkaconn.Permanent {
		// A config or cluster change is needed (docs/errors.md).
		return false
	}
	switch {
	case errors.Is(err, kgo.ErrClientClosed),
		errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
		return false
	case errors.Is(err, kerr.OutOfOrderSequenceNumber), errors.Is(err, kerr.UnknownProducerID),
		errors.Is(err, kerr.InvalidProducerIDMapping):
		// Not retriable for Kafka, but the client has failed its producer
		// id over them and takes a new epoch (an aborted transaction
		// recovers it): the records can be written under that.
		return true
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Retriable
	}
	return true
}

// recordRetriable reports whether a record that failed with err is written
// again in place: it reached the client (a *ProduceError) and retryInPlace
// accepts the cause. A message that never became a record (a field or encode
// error) or whose partition does not exist (*PartitionError) would fail again
// the same way.
func recordRetriable(err error) bool {
	var pe *ProduceError
	return errors.As(err, &pe) && retryInPlace(err)
}

// replaySet returns the indices of the records to write again after an
// attempt, in batch order: in every partition where a record failed with an
// error that recordRetriable accepts, that record and every later record of the
// batch in the same partition that did not fail for good, acknowledged or
// not. Writing only the failed record again would put it after a later
// record of its partition that was written; writing the whole suffix again
// keeps the partition's order at the price of repeating what was written (an
// exact replay). A record that failed before it had a partition stands for
// its whole topic: every later record of the topic goes again.
func replaySet(recs []*kgo.Record, errs []error) []int {
	type tp struct {
		topic     string
		partition int32
	}
	var (
		out        []int
		partitions map[tp]bool
		topics     map[string]bool
	)
	for i, r := range recs {
		if r == nil {
			continue
		}
		err := errs[i]
		again := err != nil && recordRetriable(err)
		if again {
			if partitions == nil {
				partitions, topics = map[tp]bool{}, map[string]bool{}
			}
			if r.Partition == partitionUnassigned {
				topics[r.Topic] = true
			} else {
				partitions[tp{r.Topic, r.Partition}] = true
			}
		} else if err == nil && partitions != nil {
			again = topics[r.Topic] || partitions[tp{r.Topic, r.Partition}]
		}
		if again {
			out = append(out, i)
		}
	}
	return out
}

// describeReplay names the partitions of the records at idx, for a log line:
// "topic/0, topic/3" (at most a handful, then how many more).
func describeReplay(recs []*kgo.Record, idx []int) string {
	const most = 8
	var names []string
	for _, i := range idx {
		r := recs[i]
		name := fmt.Sprintf("%s/%d", r.Topic, r.Partition)
		if r.Partition == partitionUnassigned {
			name = r.Topic + "/(no partition yet)"
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if len(names) > most {
		return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
	}
	return strings.Join(names, ", ")
}

// firstRetriable returns the first error of errs that recordRetriable
// accepts.
func firstRetriable(errs []error) error {
	for _, err := range errs {
		if err != nil && recordRetriable(err) {
			return err
		}
	}
	return nil
}

// inPlaceBackoff is the wait before the next attempt of one batch.
type inPlaceBackoff struct{ next time.Duration }

// wait sleeps for the next back-off, or until ctx is done; it returns how
// long it waited and ctx's error if it ended early.
func (b *inPlaceBackoff) wait(ctx context.Context) (time.Duration, error) {
	d := max(b.next, retryInPlaceMin)
	b.next = min(2*d, retryInPlaceMax)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return d, ctx.Err()
	case <-t.C:
		return d, nil
	}
}

// delay is the back-off the next wait will sleep.
func (b *inPlaceBackoff) delay() time.Duration { return max(b.next, retryInPlaceMin) }

// writeAgainInPlace writes again, in place and in order, the records of an
// independent (not transactional) batch that failed for a reason that can
// clear (replaySet), with back-off and a warning per attempt, until none is
// left, the write's context ends, or the run ends (a shutdown, or another
// component stopping it): a record still failed then fails its message,
// which Benthos delivers again on the next run.
func (s *Sink) writeAgainInPlace(ctx context.Context, cl *kgo.Client, batchLen int, recs []*kgo.Record, errs []error) {
	wctx, cancel := s.run.WithEnding(ctx)
	defer cancel()
	var backoff inPlaceBackoff
	for attempt := 2; ; attempt++ {
		again := replaySet(recs, errs)
		if len(again) == 0 || wctx.Err() != nil || (attempt == 2 && lostCluster(errs)) {
			return
		}
		s.log.Warnf("kafka_sink: %d records of a batch of %d were not written, first: %v; writing %d records of %s "+
			"again in %v (attempt %d), in their order: later records of these partitions wait",
			countFailed(errs), batchLen, firstRetriable(errs), len(again), describeReplay(recs, again), backoff.delay(), attempt)
		if _, err := backoff.wait(wctx); err != nil {
			return
		}
		pending := make([]*kgo.Record, len(recs))
		for _, i := range again {
			pending[i], errs[i] = recs[i], nil
		}
		s.produce(ctx, cl, pending, errs)
		if s.endRunOnPermanent(ctx, cl, errs) != nil {
			return
		}
	}
}
