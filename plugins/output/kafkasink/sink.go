package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkaconn"
)

// Metric names; every metric carries a `topic` label.
const (
	metricRecordsSent    = "kafka_sink_records_sent"
	metricRecordsFailed  = "kafka_sink_records_failed"
	metricProduceLatency = "kafka_sink_produce_latency_ns"
	metricLabelTopic     = "topic"
)

var (
	// ErrSinkClosed is returned by Connect after Close.
	ErrSinkClosed = errors.New("kafka_sink: closed")
	// ErrProduceTimeout is the cause of a record that Kafka did not
	// acknowledge within the configured timeout.
	ErrProduceTimeout = errors.New("record not acknowledged within timeout")
)

// ProduceError is a record that the client or Kafka did not accept.
type ProduceError struct {
	Topic string
	// Partition is -1 when the record failed before a partition was
	// chosen (for example an unknown topic).
	Partition int32
	Err       error
}

func (e *ProduceError) Error() string {
	if e.Partition == partitionUnassigned {
		return fmt.Sprintf("producing to topic %q: %v", e.Topic, e.Err)
	}
	return fmt.Sprintf("producing to topic %q partition %d: %v", e.Topic, e.Partition, e.Err)
}

func (e *ProduceError) Unwrap() error { return e.Err }

// Sink is the kafka_sink output, a service.BatchOutput.
type Sink struct {
	cfg     Config
	records recordBuilder
	log     *service.Logger

	conn    *kafkaconn.Connector
	sent    *service.MetricCounter
	failed  *service.MetricCounter
	latency *service.MetricTimer

	mu struct {
		sync.Mutex
		client *kgo.Client // nil before Connect and after Close
		closed bool
	}
}

var _ service.BatchOutput = (*Sink)(nil)

// NewSink validates cfg and returns an unconnected sink.
func NewSink(cfg Config, mgr *service.Resources) (*Sink, error) {
	if err := errors.Join(cfg.Conn.Validate(), cfg.validate()); err != nil {
		return nil, err
	}
	m := mgr.Metrics()
	return &Sink{
		cfg:     cfg,
		records: newRecordBuilder(cfg),
		conn:    kafkaconn.NewConnector(cfg.Conn),
		log:     mgr.Logger(),
		sent:    m.NewCounter(metricRecordsSent, metricLabelTopic),
		failed:  m.NewCounter(metricRecordsFailed, metricLabelTopic),
		latency: m.NewTimer(metricProduceLatency, metricLabelTopic),
	}, nil
}

// Connect creates the client and checks that a broker answers. Called again
// after WriteBatch returned service.ErrNotConnected, it checks that the
// existing client reaches a broker again (the client redials by itself);
// Benthos backs off between failed attempts.
func (s *Sink) Connect(ctx context.Context) error {
	s.mu.Lock()
	cl, closed := s.mu.client, s.mu.closed
	s.mu.Unlock()
	if closed {
		return ErrSinkClosed
	}
	if cl != nil {
		if err := cl.Ping(ctx); err != nil {
			return fmt.Errorf("reconnecting to kafka at %v: %w", s.cfg.Conn.SeedBrokers, err)
		}
		return nil
	}

	cl, err := s.conn.Connect(ctx, s.cfg.producerOpts()...)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed || s.mu.client != nil {
		cl.Close()
		if s.mu.closed {
			return ErrSinkClosed
		}
		return nil
	}
	s.mu.client = cl
	return nil
}

func (s *Sink) client() *kgo.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.client
}

// WriteBatch writes every message of batch as one record and waits for all of
// them. It returns nil when all were written; a *service.BatchError naming
// exactly the messages that failed (each with a *ProduceError or a field
// error); or service.ErrNotConnected when no message could reach Kafka for
// connection reasons, so that Benthos reconnects and retries the batch.
func (s *Sink) WriteBatch(ctx context.Context, batch service.MessageBatch) error {
	cl := s.client()
	if cl == nil {
		return service.ErrNotConnected
	}
	recs, errs := s.buildRecords(batch)
	s.produce(ctx, cl, recs, errs)
	return s.batchResult(batch, errs)
}

// buildRecords returns the records of batch; recs[i] is nil where errs[i] is
// set.
func (s *Sink) buildRecords(batch service.MessageBatch) (recs []*kgo.Record, errs []error) {
	recs = make([]*kgo.Record, len(batch))
	errs = make([]error, len(batch))
	for i := range batch {
		r, err := s.records.build(batch, i)
		if err != nil {
			errs[i] = err
			topic := ""
			if r != nil {
				topic = r.Topic
			}
			s.failed.Incr(1, topic)
			continue
		}
		recs[i] = r
	}
	return recs, errs
}

// produce hands every non-nil record to the client at once and waits for all
// acknowledgements, storing failures in errs. Records not acknowledged within
// the configured timeout fail with ErrProduceTimeout.
func (s *Sink) produce(ctx context.Context, cl *kgo.Client, recs []*kgo.Record, errs []error) {
	ctx, cancel := context.WithTimeoutCause(ctx, s.cfg.Timeout, ErrProduceTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for i, r := range recs {
		if r == nil {
			continue
		}
		wg.Add(1)
		start := time.Now()
		// Promises run serially on the client's promise goroutine; each
		// writes only its own slot of errs, and wg.Wait orders those
		// writes before the caller reads them.
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				if errors.Is(err, context.DeadlineExceeded) && errors.Is(context.Cause(ctx), ErrProduceTimeout) {
					err = fmt.Errorf("%w after %v: %w", ErrProduceTimeout, s.cfg.Timeout, err)
				}
				errs[i] = &ProduceError{Topic: r.Topic, Partition: r.Partition, Err: err}
				s.failed.Incr(1, r.Topic)
				return
			}
			s.sent.Incr(1, r.Topic)
			s.latency.Timing(time.Since(start).Nanoseconds(), r.Topic)
		})
	}
	wg.Wait()
}

// batchResult turns per-message errors into the WriteBatch result.
func (s *Sink) batchResult(batch service.MessageBatch, errs []error) error {
	var (
		failed, conn int
		first        error
	)
	for _, err := range errs {
		if err == nil {
			continue
		}
		failed++
		if first == nil {
			first = err
		}
		if isConnectionError(err) {
			conn++
		}
	}
	switch {
	case failed == 0:
		return nil
	case failed == len(batch) && conn == failed:
		// Benthos keeps only the sentinel of this error, so log the cause.
		s.log.Warnf("kafka_sink: no record of a batch of %d reached kafka at %v, reconnecting: %v",
			len(batch), s.cfg.Conn.SeedBrokers, first)
		return fmt.Errorf("%w: no record of a batch of %d reached kafka at %v: %w",
			service.ErrNotConnected, len(batch), s.cfg.Conn.SeedBrokers, first)
	}
	berr := service.NewBatchError(batch, fmt.Errorf("kafka_sink: %d of %d messages failed, first: %w", failed, len(batch), first))
	for i, err := range errs {
		if err != nil {
			berr = berr.Failed(i, err)
		}
	}
	return berr
}

// isConnectionError reports whether err may mean that the sink cannot talk to
// the cluster, as opposed to Kafka refusing a record. A timeout counts: when a
// whole batch times out, Connect's ping tells a lost cluster (Benthos backs
// off) from a slow one (the batch is retried at once).
func isConnectionError(err error) bool {
	if errors.Is(err, ErrProduceTimeout) || errors.Is(err, kgo.ErrClientClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	// Not net.Error: context.DeadlineExceeded implements it.
	var opErr *net.OpError
	return errors.As(err, &opErr)
}

// Close flushes buffered records until ctx is done, then closes the client;
// records still unacknowledged then fail with kgo.ErrClientClosed.
func (s *Sink) Close(ctx context.Context) error {
	s.mu.Lock()
	cl := s.mu.client
	s.mu.client, s.mu.closed = nil, true
	s.mu.Unlock()
	if cl == nil {
		return nil
	}
	err := cl.Flush(ctx)
	cl.Close()
	if err != nil {
		return fmt.Errorf("kafka_sink: flushing before close: %w", err)
	}
	return nil
}
