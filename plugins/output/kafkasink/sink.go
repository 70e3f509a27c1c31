package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/halt"
	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/memlimit"
	"github.com/connectd/connectd/internal/txnoffsets"
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

// Back-off bounds for recreating a transactional producer: after one was
// lost (fenced, or failed beyond repair), Connect asks Benthos to wait
// recreateBackoffMin before it creates a new one, doubling per further loss
// without a commit in between up to recreateBackoffMax, so that two writers
// with the same transactional id do not fence each other in a tight loop. (Fencing does
// not always surface as PRODUCER_FENCED: a commit racing the other writer's
// initialisation can fail with INVALID_TXN_STATE instead.)
const (
	recreateBackoffMin = time.Second
	recreateBackoffMax = time.Minute
)

// Sink is the kafka_sink output, a service.BatchOutput.
type Sink struct {
	cfg     Config
	records recordBuilder
	log     *service.Logger
	conn    *kafkaconn.Connector
	m       metrics
	// run is the stream's halt state: a permanent error ends the run
	// through it, and nothing commits once it stops (errors.go).
	run *halt.Run
	// writing counts the WriteBatch calls in flight, for the log line
	// that says what the end of the run waits for.
	writing atomic.Int32
	// closing is closed by Close: it ends the goroutine that logs the
	// end of the run.
	closing chan struct{}
	// flowCtx is the context of records written without waiting
	// (flow.go): it ends when Close gives up flushing them.
	flowCtx    context.Context
	flowCancel context.CancelFunc
	closeOnce  sync.Once
	// gaveUp logs once that the end of the run stops the connection
	// attempts, from logEnding or from Connect, whichever comes first.
	gaveUp sync.Once

	// write is the WriteBatch strategy of the delivery guarantee.
	write func(ctx context.Context, cl *kgo.Client, batch service.MessageBatch) error
	// checkPartitions: records carry a partitionCheck (manual and
	// expression partitioners), so that a partition that cannot be
	// chosen is reported as a PartitionError.
	checkPartitions bool
	// producerOpts are the sink's client options, built once in NewSink
	// (a partition_expression is compiled there). A kgo.Partitioner keeps
	// no state of its own (per-topic state lives in what ForTopic returns,
	// per client), so every client can share it.
	producerOpts []kgo.Opt

	// txnMu serialises transactions: a transactional producer has at
	// most one open transaction. It guards pairing and topicIDCache.
	txnMu sync.Mutex
	// pairing caches, per kafka_source session, whether it reads this
	// sink's cluster (its offsets then commit in the transactions).
	pairing map[txnoffsets.Source]bool
	// rounds are the transactions records flow into (rounds.go).
	rounds roundState
	// idMu guards topicIDCache, which rounds committing on their own
	// goroutine use too.
	idMu sync.Mutex
	// topicIDCache holds the topic ids of the source topics, for
	// TxnOffsetCommit v6.
	topicIDCache map[string][16]byte
	// offsetChunkBytes bounds one TxnOffsetCommit request
	// (commitchunk.Bytes; tests make it small).
	offsetChunkBytes int

	// recreate spaces out new transactional producers after lost ones;
	// a commit resets it.
	recreate *kafkaconn.Backoff
	// releaseMemory takes the producers' buffers off the process's memory
	// limit (internal/memlimit), at Close.
	releaseMemory func()
	// clientOpts are extra client options, for tests (for example a
	// shorter kgo.MetadataMinAge, which the config does not expose).
	clientOpts []kgo.Opt

	mu struct {
		sync.Mutex
		client *kgo.Client // nil before Connect, after Close, and after the producer died
		// spare is the second transactional producer of an exactly_once
		// sink (rounds.go), set and cleared with client.
		spare *kgo.Client
		// clusterID is the cluster id learnt at the first Connect.
		clusterID string
		closed    bool
	}
}

var _ service.BatchOutput = (*Sink)(nil)

// NewSink validates cfg and returns an unconnected sink.
func NewSink(cfg Config, mgr *service.Resources) (*Sink, error) {
	if err := errors.Join(cfg.Conn.Validate(), cfg.validate()); err != nil {
		return nil, err
	}
	// validate succeeded, so the partitioner (and its expression) builds.
	part, err := cfg.kgoPartitioner()
	if err != nil {
		return nil, err
	}
	s := &Sink{
		cfg:             cfg,
		records:         newRecordBuilder(cfg),
		conn:            kafkaconn.NewConnector(cfg.Conn.LogClientTo(mgr.Logger())),
		log:             mgr.Logger(),
		m:               newMetrics(mgr.Metrics()),
		checkPartitions: cfg.Partitioner == PartitionerManual || cfg.Partitioner == PartitionerExpression,
		recreate:        kafkaconn.NewBackoff(recreateBackoffMin, recreateBackoffMax),
		producerOpts:    cfg.producerOpts(part),
		run:             halt.For(mgr),
		closing:         make(chan struct{}),
	}
	s.flowCtx, s.flowCancel = context.WithCancel(context.Background())
	// The producers' buffers are part of the process's memory limit
	// (internal/memlimit); an exactly_once sink has two producers.
	s.releaseMemory = memlimit.Reserve(int64(cfg.MaxBufferedBytes) * int64(cfg.producers()))
	s.write = s.writeIndependent
	if cfg.DeliveryGuarantee == DeliveryExactlyOnce {
		s.write = s.writeTransaction
		go s.tickRounds()
	}
	if cfg.Table != nil && cfg.Table.Upsert() {
		s.write = dropUpdateBefore(s.write)
	}
	if cfg.MaxInFlight > 1 {
		s.log.Warnf("kafka_sink: %s is %d: batches are written in parallel, so records of one partition can reach Kafka "+
			"out of order (a retried batch can land after a later one); set %s: 1, the default, to keep per-partition order",
			FieldMaxInFlight, cfg.MaxInFlight, FieldMaxInFlight)
	}
	go s.logEnding()
	return s, nil
}

// Connect creates the client and checks that a broker answers; with
// exactly_once it also initialises the transactional producer, which fences
// any predecessor with the same transactional id. Called again after
// WriteBatch returned service.ErrNotConnected, it checks that the existing
// client reaches a broker again (the client redials by itself), or, when the
// transactional producer was lost, creates a new one (after a back-off that
// grows with each loss until a commit succeeds, waited by Benthos).
//
// Connect never sleeps: Benthos waits between attempts (its own short
// back-off, or the service.ErrBackOff returned here). An error that cannot
// clear (kafkaconn.Permanent: a transaction timeout above the broker's
// maximum, a missing ACL, credentials never accepted) ends the run. Once the
// run is ending (SIGTERM, or a halt) an attempt in progress is cut short and
// no new one starts, so an output that cannot reach Kafka does not hold the
// shutdown.
func (s *Sink) Connect(ctx context.Context) error {
	s.mu.Lock()
	cl, closed := s.mu.client, s.mu.closed
	s.mu.Unlock()
	if closed {
		return ErrSinkClosed
	}
	if s.run.IsEnding() {
		s.logGaveUp()
		return s.endingError()
	}
	ctx, cancel := s.run.WithEnding(ctx)
	defer cancel()
	if cl != nil {
		if err := cl.Ping(ctx); err != nil {
			return s.connectFailed(ctx, fmt.Errorf("reconnecting to kafka at %v: %w", s.cfg.Conn.SeedBrokers, err))
		}
		return nil
	}
	if wait := s.recreate.Remaining(); wait > 0 {
		return service.NewErrBackOff(fmt.Errorf("kafka_sink: transactional producer %q was lost %d times since the last commit: creating a new one in %v",
			s.cfg.TransactionalID(), s.recreate.Failures(), wait.Round(time.Millisecond)), wait)
	}

	cl, err := s.conn.Connect(ctx, slices.Concat(s.producerOpts, s.clientOpts)...)
	if err != nil {
		return s.connectFailed(ctx, err)
	}
	clusterID := ""
	var spare *kgo.Client
	if s.cfg.DeliveryGuarantee == DeliveryExactlyOnce {
		if err := s.initProducer(ctx, cl, s.cfg.TransactionalID()); err != nil {
			cl.Close()
			return s.connectFailed(ctx, err)
		}
		// The second producer of the pool (rounds.go) is initialised
		// too, whether it is used or not: that fences its predecessor
		// and aborts a transaction it left open.
		spare, err = s.conn.Connect(ctx, slices.Concat(s.producerOpts, s.clientOpts, []kgo.Opt{kgo.TransactionalID(s.cfg.spareTransactionalID())})...)
		if err == nil {
			if err = s.initProducer(ctx, spare, s.cfg.spareTransactionalID()); err != nil {
				spare.Close()
			}
		}
		if err != nil {
			cl.Close()
			return s.connectFailed(ctx, err)
		}
		if m, err := kadm.NewClient(cl).BrokerMetadata(ctx); err == nil {
			clusterID = m.Cluster
		}
		// Both predecessors are fenced: a source that read its
		// committed offsets before now reads them again before its
		// records go into a transaction (txnoffsets.Fenced).
		txnoffsets.Fenced()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if clusterID != "" {
		s.mu.clusterID = clusterID
	}
	if s.mu.closed || s.mu.client != nil {
		cl.Close()
		if spare != nil {
			spare.Close()
		}
		if s.mu.closed {
			return ErrSinkClosed
		}
		return nil
	}
	s.mu.client, s.mu.spare = cl, spare
	return nil
}

// clusterIdentity identifies the sink's cluster, for pairing with sources.
func (s *Sink) clusterIdentity() txnoffsets.ClusterIdentity {
	s.mu.Lock()
	defer s.mu.Unlock()
	return txnoffsets.ClusterIdentity{ID: s.mu.clusterID, SeedBrokers: s.cfg.Conn.SeedBrokers}
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
	if err := s.stoppedError(); err != nil {
		return err
	}
	cl := s.client()
	if cl == nil {
		return service.ErrNotConnected
	}
	s.writing.Add(1)
	defer s.writing.Add(-1)
	return s.nackAtEnd(s.write(ctx, cl, batch))
}

// writeIndependent writes the records of an at_least_once or none batch.
// Records that fail for a reason that can clear (see retryInPlace) are written
// again here, with back-off and a warning per attempt, together with every
// later record of their partition (replaySet), until they are written or ctx
// ends: a partition's records reach Kafka in batch order, possibly with an
// exact replay of a suffix, and never with an older record after a newer one
// that was not replayed. Records that cannot be written (a field error, a
// partition out of range, a refusal Kafka marks final) fail alone in a
// *service.BatchError. When the first attempt lost every record to connection
// errors, WriteBatch returns service.ErrNotConnected instead: Benthos then
// reconnects and retries this same batch before taking the next one.
func (s *Sink) writeIndependent(ctx context.Context, cl *kgo.Client, batch service.MessageBatch) error {
	recs, errs := s.buildRecords(batch)
	if s.cfg.DeliveryGuarantee == DeliveryAtLeastOnce {
		if srcs, ok := s.holdable(batch, errs, false); ok && s.writeFlowing(ctx, cl, batch, recs, srcs) {
			return nil
		}
	}
	s.produce(ctx, cl, recs, errs)
	if s.endRunOnPermanent(ctx, cl, errs) == nil {
		s.writeAgainInPlace(ctx, cl, len(batch), recs, errs)
	}
	s.countSent(recs, errs)
	return s.batchResult(batch, errs)
}

// countFailed counts the set errors.
func countFailed(errs []error) int {
	n := 0
	for _, err := range errs {
		if err != nil {
			n++
		}
	}
	return n
}

// countSent counts the records Kafka acknowledged (with exactly_once: that
// were committed) and returns how many there were. The counters are bumped
// once per run of records of one topic, not per record: a labelled counter
// costs a label lookup per call.
func (s *Sink) countSent(recs []*kgo.Record, errs []error) int64 {
	var (
		total, n, bytes int64
		topic           string
	)
	flush := func() {
		if n > 0 {
			s.m.sent.Incr(n, topic)
			s.m.bytes.Incr(bytes, topic)
		}
		n, bytes = 0, 0
	}
	for i, r := range recs {
		if r == nil || errs[i] != nil {
			continue
		}
		if r.Topic != topic {
			flush()
			topic = r.Topic
		}
		n++
		total++
		bytes += recordBytes(r)
	}
	flush()
	return total
}

// buildRecords returns the records of batch; recs[i] is nil where errs[i] is
// set, and, with ReduceByKey, where a later record of the batch has the same
// topic and key (errs[i] nil: the message counts as written).
func (s *Sink) buildRecords(batch service.MessageBatch) (recs []*kgo.Record, errs []error) {
	recs = make([]*kgo.Record, len(batch))
	errs = make([]error, len(batch))
	rb := s.records.forBatch(batch)
	for i := range batch {
		r, err := rb.build(i)
		if err != nil {
			errs[i] = err
			if kafkaconn.Classify(err) == kafkaconn.Permanent {
				// A record that no retry can build (a schema the
				// registry refuses): every record after it would fail
				// the same way.
				s.endRun(err)
			}
			topic := ""
			if r != nil {
				topic = r.Topic
			}
			s.m.failed.Incr(1, topic)
			continue
		}
		recs[i] = r
	}
	if s.cfg.ReduceByKey {
		if n := reduceToLastPerKey(recs, errs); n > 0 {
			s.log.Tracef("kafka_sink: %d of %d records left out: a later record of the batch has the same key", n, len(batch))
		}
	}
	return recs, errs
}

// produce hands every non-nil record to the client at once and waits for all
// acknowledgements, storing failures in errs: a *PartitionError for a record
// whose partition does not exist (it never left the client), a *ProduceError
// otherwise. Records not acknowledged within the configured timeout fail with
// ErrProduceTimeout.
func (s *Sink) produce(ctx context.Context, cl *kgo.Client, recs []*kgo.Record, errs []error) {
	ctx, cancel := context.WithTimeoutCause(ctx, s.cfg.Timeout, ErrProduceTimeout)
	defer cancel()
	var wg sync.WaitGroup
	// slowest is the latest acknowledgement per topic, written only by the
	// promises (which run serially) and read after wg.Wait.
	slowest := map[string]time.Duration{}
	start := time.Now()
	for i, r := range recs {
		if r == nil {
			continue
		}
		wg.Add(1)
		// Set on every attempt: a record written again must not keep
		// the expired deadline of its previous attempt.
		if s.checkPartitions {
			r.Context, _ = withPartitionCheck(ctx, partitionCheckOf(r))
		} else {
			r.Context = ctx
		}
		// Promises run serially on the client's promise goroutine; each
		// writes only its own slot of errs, and wg.Wait orders those
		// writes before the caller reads them.
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				s.m.failed.Incr(1, r.Topic)
				if pe := partitionErrorOf(r); pe != nil {
					errs[i] = pe
					return
				}
				if errors.Is(err, context.DeadlineExceeded) && errors.Is(context.Cause(ctx), ErrProduceTimeout) {
					err = fmt.Errorf("%w after %v: %w", ErrProduceTimeout, s.cfg.Timeout, err)
				}
				errs[i] = &ProduceError{Topic: r.Topic, Partition: r.Partition, Err: err}
				return
			}
			if d := time.Since(start); d > slowest[r.Topic] {
				slowest[r.Topic] = d
			}
		})
	}
	wg.Wait()
	for topic, d := range slowest {
		s.m.latency.Timing(d.Nanoseconds(), topic)
	}
}

// lostCluster reports whether every record failed in a produce that may mean
// the sink cannot reach the cluster.
func lostCluster(errs []error) bool {
	for _, err := range errs {
		// Only a failed produce can mean a lost cluster: a record that could
		// not be built (a field or encode error) may wrap io.EOF too.
		var pe *ProduceError
		if err == nil || !errors.As(err, &pe) || !isConnectionError(err) {
			return false
		}
	}
	return len(errs) > 0
}

// batchResult turns per-message errors into the WriteBatch result.
func (s *Sink) batchResult(batch service.MessageBatch, errs []error) error {
	var (
		failed int
		first  error
	)
	for _, err := range errs {
		if err == nil {
			continue
		}
		failed++
		if first == nil {
			first = err
		}
	}
	switch {
	case failed == 0:
		return nil
	case lostCluster(errs):
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

// Close flushes buffered records, for at most the sink's timeout (within
// ctx), then closes the client; records still unacknowledged then fail with
// kgo.ErrClientClosed. Benthos calls Close when no WriteBatch is in flight
// any more, so an exactly_once sink has no open transaction by then.
func (s *Sink) Close(ctx context.Context) error {
	s.closeOnce.Do(func() { close(s.closing) })
	defer s.releaseMemory()
	if s.cfg.DeliveryGuarantee == DeliveryExactlyOnce {
		// The open round commits (or aborts) before the producers close.
		s.txnMu.Lock()
		if err := s.finishRounds(ctx); err != nil {
			s.log.Infof("kafka_sink: closing: %v", err)
		}
		s.txnMu.Unlock()
	}
	s.mu.Lock()
	cl, spare := s.mu.client, s.mu.spare
	s.mu.client, s.mu.spare, s.mu.closed = nil, nil, true
	s.mu.Unlock()
	if spare != nil {
		defer spare.Close()
	}
	if cl == nil {
		s.flowCancel()
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	if n := cl.BufferedProduceRecords(); n > 0 {
		s.log.Infof("kafka_sink: closing: waiting for %d buffered records to be acknowledged by kafka at %v (at most %v, field %s)",
			n, s.cfg.Conn.SeedBrokers, s.cfg.Timeout, FieldTimeout)
	}
	err := cl.Flush(ctx)
	s.flowCancel()
	cl.Close()
	if err != nil {
		return fmt.Errorf("kafka_sink: flushing before close: %w", err)
	}
	return nil
}

// closed reports whether Close was called.
func (s *Sink) closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.closed
}

// logEnding logs (info), when the run starts to end, what the sink still
// waits for.
func (s *Sink) logEnding() {
	select {
	case <-s.closing:
		return
	case <-s.run.Ending():
	}
	n := s.writing.Load()
	eos := s.cfg.DeliveryGuarantee == DeliveryExactlyOnce
	switch {
	case n > 0 && eos && s.run.Stopped():
		s.log.Infof("kafka_sink: the run is stopping on an error: the open transaction of transactional id %q is aborted, not committed (each step at most %v, field %s)",
			s.cfg.TransactionalID(), s.cfg.Timeout, FieldTimeout)
	case n > 0 && eos:
		s.log.Infof("kafka_sink: the run is ending: waiting for the transaction in flight (transactional id %q) to commit or abort (each step at most %v, field %s)",
			s.cfg.TransactionalID(), s.cfg.Timeout, FieldTimeout)
	case n > 0:
		s.log.Infof("kafka_sink: the run is ending: waiting for %d batches in flight to be acknowledged by kafka at %v (at most %v, field %s)",
			n, s.cfg.Conn.SeedBrokers, s.cfg.Timeout, FieldTimeout)
	case s.client() == nil:
		s.logGaveUp()
	case s.cfg.Batching.Period != "" || s.cfg.Batching.Count > 1 || s.cfg.Batching.ByteSize > 0:
		// Benthos's batcher holds what it has not handed over yet, and the
		// input waits for those messages until the shutdown times out.
		s.log.Infof("kafka_sink: the run is ending: no batch in the sink; the input waits for the messages its %s policy "+
			"(count %d, byte_size %d, period %q) still holds, at most three quarters of shutdown_timeout; "+
			"then the run stops, and what was not committed is read again on the next run",
			FieldBatching, s.cfg.Batching.Count, s.cfg.Batching.ByteSize, s.cfg.Batching.Period)
	default:
		s.log.Infof("kafka_sink: the run is ending: no batch in flight, nothing to wait for")
	}
}

// logGaveUp logs, once, that the sink stops connecting because the run is
// ending.
func (s *Sink) logGaveUp() {
	s.gaveUp.Do(func() {
		s.log.Infof("kafka_sink: the run is ending while not connected to kafka at %v: no further connection attempt", s.cfg.Conn.SeedBrokers)
	})
}
