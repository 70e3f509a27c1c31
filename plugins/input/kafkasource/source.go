package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/halt"
	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/memlimit"
)

// errClosed is returned by Connect after Close.
var errClosed = errors.New("kafka_source: input is closed")

// CommitError is a refused offset commit for one partition.
type CommitError struct {
	Group     string
	Topic     string
	Partition int32
	Offset    int64
	Err       error
}

func (e *CommitError) Error() string {
	hint := ""
	if errors.Is(e.Err, kerr.UnknownMemberID) || errors.Is(e.Err, kerr.IllegalGeneration) || errors.Is(e.Err, kerr.RebalanceInProgress) {
		hint = " (the group has live members; give this input a group of its own)"
	}
	return fmt.Sprintf("committing offset %d of topic %q partition %d to consumer group %q: %v%s",
		e.Offset, e.Topic, e.Partition, e.Group, e.Err, hint)
}

func (e *CommitError) Unwrap() error { return e.Err }

type sourceMetrics struct {
	received       *service.MetricCounter
	bytes          *service.MetricCounter
	redelivered    *service.MetricCounter
	commits        *service.MetricCounter
	commitFailures *service.MetricCounter
	unackedBytes   *service.MetricGauge
	commitLatency  *service.MetricTimer
	readerSplits   *service.MetricGauge
	// parts are the metrics of single partitions (partmetrics.go).
	parts    partitionMetrics
	wm       wmMetrics
	progress progressMetrics
}

func newSourceMetrics(m *service.Metrics, mode PartitionMetrics) sourceMetrics {
	return sourceMetrics{
		received:       m.NewCounter("kafka_source_records_received", "topic"),
		bytes:          m.NewCounter("kafka_source_bytes_received", "topic"),
		redelivered:    m.NewCounter("kafka_source_records_redelivered", "topic"),
		commits:        m.NewCounter("kafka_source_commits", "topic"),
		commitFailures: m.NewCounter(metricCommitFailures, byCommitFailure...),
		unackedBytes:   m.NewGauge("kafka_source_unacked_bytes"),
		commitLatency:  m.NewTimer("kafka_source_commit_latency_ns"),
		readerSplits:   m.NewGauge(metricReaderPartitions, labelReader),
		parts:          newPartitionMetrics(m, mode),
		wm:             newWMMetrics(m),
		progress:       newProgressMetrics(m, mode),
	}
}

// source is the kafka_source service.BatchInput. It holds the current
// session (session.go) and the last one that ended, whose positions and
// stop offsets the next Connect continues from. Benthos calls Connect and
// ReadBatch from one goroutine and Close from another; the session handles
// are swapped atomically, so nothing here is locked.
type source struct {
	conf    Config
	conn    *kafkaconn.Connector
	log     *service.Logger
	metrics sourceMetrics
	// halt is the run's halt state: once it stops, nothing is committed.
	halt *halt.Run

	// cur is the current session, nil between sessions.
	cur atomic.Pointer[session]
	// prev is the last session that ended by a reconnect: the next
	// Connect resumes from its positions instead of applying start_from
	// again, and keeps its stop offsets.
	prev   atomic.Pointer[session]
	closed atomic.Bool
	// halted is set once a record that does not decode stopped the run
	// (on_error fail): ReadBatch hands out nothing more.
	halted atomic.Bool
	// rows decodes the records into rows of the table, nil without one;
	// made once, so that its bad-record counters and log span sessions.
	rows *tableRows
	// releaseMemory takes max_unacknowledged_bytes off the process's
	// memory limit, at Close.
	releaseMemory func()
	// afterPoll, for tests, is called by a reader between a poll that
	// returned records and handing them to the owner; nil in a run.
	afterPoll func(kgo.Fetches)
	// missingSince is when a Connect first found a configured topic or
	// partition missing, zero if the last one did not (errors.go); Connect's
	// goroutine only.
	missingSince time.Time
}

var _ service.BatchInput = (*source)(nil)

func newSource(conf Config, mgr *service.Resources) *source {
	return &source{
		conf:    conf,
		conn:    kafkaconn.NewConnector(conf.Conn.LogClientTo(mgr.Logger())),
		log:     mgr.Logger(),
		metrics: newSourceMetrics(mgr.Metrics(), conf.PartitionMetrics),
		halt:    halt.For(mgr),
		rows:    newTableRows(conf, mgr),
		// The bound is part of the process's memory limit
		// (internal/memlimit) while the input lives.
		releaseMemory: memlimit.Reserve(conf.MaxUnackedBytes),
	}
}

// Connect creates the clients, resolves partitions and start offsets, and
// starts the session.
func (s *source) Connect(ctx context.Context) error {
	if s.closed.Load() {
		return errClosed
	}
	if old := s.cur.Load(); old != nil {
		s.retire(ctx, old)
	}
	var resume, stops map[topicPartition]int64
	if prev := s.prev.Load(); prev != nil {
		resume, stops = prev.positions, prev.stops
	}
	sess, err := connect(ctx, s, resume, stops)
	if err != nil {
		return s.connectFailed(err)
	}
	s.missingSince = time.Time{}
	s.cur.Store(sess)
	if s.closed.Load() {
		// Close ran meanwhile and may not have seen sess.
		s.cur.CompareAndSwap(sess, nil)
		_, _ = sess.stop(ctx)
		return errClosed
	}
	return nil
}

// ReadBatch returns nacked batches again before new data.
func (s *source) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	sess := s.cur.Load()
	if sess == nil {
		return nil, nil, service.ErrNotConnected
	}
	if s.halted.Load() {
		return s.holdHalted(ctx)
	}
	var carry *fetchedBatch
	for {
		fresh := carry
		carry = nil
		if fresh == nil {
			select {
			case res, open := <-sess.ready:
				b, err := s.received(ctx, sess, res, open)
				if err != nil {
					return nil, nil, err
				}
				fresh = b
			default:
			}
		}
		req := nextReq{fresh: fresh, reply: make(chan delivery, 1)}
		if fresh != nil {
			// Event times from the messages, computed by the reader;
			// the owner observes them.
			req.times, req.ok = fresh.prepared.times, fresh.prepared.ok
		}
		d, ok := call(sess, req, req.reply)
		switch {
		case !ok || d.closed:
			s.retire(ctx, sess)
			return nil, nil, service.ErrNotConnected
		case d.batch != nil:
			batch, ack, err := sess.deliver(ctx, d)
			switch {
			case errors.Is(err, errHalted):
				s.halted.Store(true)
				return s.holdHalted(ctx)
			case err == nil && len(batch) == 0:
				continue // every record was skipped: acknowledged already
			}
			return batch, ack, err
		case d.err != nil:
			return nil, nil, d.err
		case d.end:
			return nil, nil, service.ErrEndOfInput
		}
		select {
		case res, open := <-sess.ready:
			b, err := s.received(ctx, sess, res, open)
			if err != nil {
				return nil, nil, err
			}
			carry = b
		case <-sess.redeliverReady:
		case <-sess.progress:
		case <-sess.done:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// received takes what a reader sent: a batch, or the error ReadBatch
// returns. A closed channel or a fatal error ends the session.
func (s *source) received(ctx context.Context, sess *session, res fetchResult, open bool) (*fetchedBatch, error) {
	switch {
	case !open:
		s.retire(ctx, sess)
		return nil, service.ErrNotConnected
	case kafkaconn.Classify(res.err) == kafkaconn.Permanent:
		return nil, s.endRun(fmt.Errorf("kafka_source: %w%s", res.err, permanentHint(s.conf, res.err)))
	case res.fatal:
		s.log.Errorf("kafka_source: reconnecting after fatal fetch error: %v", res.err)
		s.retire(ctx, sess)
		return nil, service.ErrNotConnected
	case res.err != nil:
		return nil, res.err
	case res.batch.prepared.halted:
		// A bad record stopped the run: the batch is never handed
		// out, so no offset at or after it is acknowledged.
		s.halted.Store(true)
		_, _, err := s.holdHalted(ctx)
		return nil, err
	}
	return res.batch, nil
}

// holdHalted is ReadBatch once a record that does not decode stopped the
// run (on_error fail): it hands out nothing more and waits for the
// shutdown that the stop starts (ctx ends).
func (s *source) holdHalted(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	<-ctx.Done()
	return nil, nil, ctx.Err()
}

// Close stops fetching, commits the acknowledged offsets (bounded by ctx and
// finalCommitTimeout) and closes the clients.
func (s *source) Close(ctx context.Context) error {
	s.closed.Store(true)
	s.releaseMemory()
	sess := s.cur.Swap(nil)
	if sess == nil {
		return nil
	}
	_, err := sess.stop(ctx)
	return err
}

// retire ends sess if it is still current, keeping it as the one the next
// Connect continues from.
func (s *source) retire(ctx context.Context, sess *session) {
	if !s.cur.CompareAndSwap(sess, nil) {
		return
	}
	_, _ = sess.stop(ctx)
	s.prev.Store(sess)
}

func partitionMap(tps []topicPartition) map[string][]int32 {
	m := make(map[string][]int32, len(tps))
	for _, tp := range tps {
		m[tp.topic] = append(m[tp.topic], tp.partition)
	}
	return m
}

// endOfInputWatermark puts the end-of-input watermark (math.MaxInt64,
// Flink's Long.MAX_VALUE) on the last message of the batch that ends a
// bounded read, so that event-time windows downstream (event_window) fire.
// Only the last: a watermark applies after the record that carries it, so
// on an earlier message it would make the rest of the batch late.
func endOfInputWatermark(batch service.MessageBatch) {
	if n := len(batch); n > 0 {
		batch[n-1].MetaSetMut(metaWatermarkMs, int64(math.MaxInt64))
	}
}
