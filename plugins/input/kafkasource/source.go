package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkaconn"
)

const (
	// finalCommitTimeout bounds the offset commit made when a session ends.
	finalCommitTimeout = 5 * time.Second
	// offsetRefreshPeriod is how often offsets that did not move are
	// committed again, so that an idle partition's committed offset does
	// not expire (broker `offsets.retention.minutes`).
	offsetRefreshPeriod = time.Minute
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
	redelivered    *service.MetricCounter
	commits        *service.MetricCounter
	commitFailures *service.MetricCounter
	unacked        *service.MetricGauge
}

func newSourceMetrics(m *service.Metrics) sourceMetrics {
	return sourceMetrics{
		received:       m.NewCounter("kafka_source_records_received", "topic"),
		redelivered:    m.NewCounter("kafka_source_records_redelivered", "topic"),
		commits:        m.NewCounter("kafka_source_commits", "topic"),
		commitFailures: m.NewCounter("kafka_source_commit_failures", "topic"),
		unacked:        m.NewGauge("kafka_source_unacked_records", "topic", "partition"),
	}
}

// source is the kafka_source service.BatchInput. It holds the current
// session (one client with its fetch loop and commit loop) and, between
// sessions, the positions to resume from.
type source struct {
	conf    Config
	conn    *kafkaconn.Connector
	log     *service.Logger
	metrics sourceMetrics

	mu struct {
		sync.Mutex
		sess *session
		// resume holds the commit positions of the last session, so that
		// a reconnect continues where it stopped instead of applying
		// start_from again.
		resume map[topicPartition]int64
		closed bool
	}
}

var _ service.BatchInput = (*source)(nil)

func newSource(conf Config, mgr *service.Resources) *source {
	return &source{
		conf:    conf,
		conn:    kafkaconn.NewConnector(conf.Conn),
		log:     mgr.Logger(),
		metrics: newSourceMetrics(mgr.Metrics()),
	}
}

// Connect creates the client, resolves partitions and start offsets, and
// starts the fetch and commit loops.
func (s *source) Connect(ctx context.Context) error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return errClosed
	}
	old := s.mu.sess
	s.mu.Unlock()
	if old != nil {
		s.retire(ctx, old)
	}

	client, err := s.conn.Connect(ctx, s.conf.clientOpts()...)
	if err != nil {
		return err
	}
	adm := kadm.NewClient(client)
	s.mu.Lock()
	resume := s.mu.resume
	s.mu.Unlock()
	splits, err := enumerate(ctx, adm, s.conf, resume)
	if err != nil {
		client.Close()
		return err
	}

	sess := newSession(s.conf, client, adm, s.log, s.metrics)
	consume := map[string]map[int32]kgo.Offset{}
	for _, sp := range splits {
		sess.mu.tracker.addPartition(sp.tp, sp.start, sp.committed)
		if consume[sp.tp.topic] == nil {
			consume[sp.tp.topic] = map[int32]kgo.Offset{}
		}
		consume[sp.tp.topic][sp.tp.partition] = kgo.NewOffset().At(sp.start)
		s.log.Debugf("kafka_source: reading topic %s partition %d from offset %d (committed %d)", sp.tp.topic, sp.tp.partition, sp.start, sp.committed)
	}
	client.AddConsumePartitions(consume)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		sess.cancel()
		client.Close()
		return errClosed
	}
	s.mu.sess = sess
	sess.start()
	s.log.Infof("kafka_source: reading %d partitions of %v for consumer group %q", len(splits), s.conf.Topics, s.conf.ConsumerGroup)
	return nil
}

// ReadBatch returns nacked batches again before new data.
func (s *source) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	s.mu.Lock()
	sess := s.mu.sess
	s.mu.Unlock()
	if sess == nil {
		return nil, nil, service.ErrNotConnected
	}
	for {
		if b := sess.takeRedelivery(); b != nil {
			return sess.deliver(b)
		}
		select {
		case res, ok := <-sess.fetched:
			switch {
			case !ok:
				s.retire(ctx, sess)
				return nil, nil, service.ErrNotConnected
			case res.fatal:
				s.log.Errorf("kafka_source: reconnecting after fatal fetch error: %v", res.err)
				s.retire(ctx, sess)
				return nil, nil, service.ErrNotConnected
			case res.err != nil:
				return nil, nil, res.err
			}
			return sess.deliver(res.batch)
		case <-sess.redeliverReady:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// Close stops fetching, commits the acknowledged offsets (bounded by ctx and
// finalCommitTimeout) and closes the client.
func (s *source) Close(ctx context.Context) error {
	s.mu.Lock()
	s.mu.closed = true
	sess := s.mu.sess
	s.mu.sess = nil
	s.mu.Unlock()
	if sess == nil {
		return nil
	}
	_, err := sess.stop(ctx)
	return err
}

// retire ends sess if it is still current, keeping its positions for the
// next Connect.
func (s *source) retire(ctx context.Context, sess *session) {
	s.mu.Lock()
	if s.mu.sess != sess {
		s.mu.Unlock()
		return
	}
	s.mu.sess = nil
	s.mu.Unlock()
	positions, _ := sess.stop(ctx)
	s.mu.Lock()
	s.mu.resume = positions
	s.mu.Unlock()
}

// session is one client's life: a fetch loop (reader), a commit loop, and
// the offset tracker that acks update from any goroutine.
type session struct {
	conf    Config
	client  *kgo.Client
	adm     *kadm.Client
	log     *service.Logger
	metrics sourceMetrics

	fetched        chan fetchResult
	redeliverReady chan struct{}
	cancel         context.CancelFunc
	ctx            context.Context
	wg             sync.WaitGroup
	stopOnce       sync.Once
	stopErr        error
	positions      map[topicPartition]int64

	// commitMu serializes commits so that an older commit never lands
	// after a newer one. It guards lastRefresh.
	commitMu    sync.Mutex
	lastRefresh time.Time

	mu struct {
		sync.Mutex
		tracker   *offsetTracker
		redeliver []*fetchedBatch
		stopped   bool
	}
}

func newSession(conf Config, client *kgo.Client, adm *kadm.Client, log *service.Logger, m sourceMetrics) *session {
	ctx, cancel := context.WithCancel(context.Background())
	sess := &session{
		conf:           conf,
		client:         client,
		adm:            adm,
		log:            log,
		metrics:        m,
		fetched:        make(chan fetchResult, 1),
		redeliverReady: make(chan struct{}, 1),
		ctx:            ctx,
		cancel:         cancel,
		lastRefresh:    time.Now(),
	}
	sess.mu.tracker = newOffsetTracker(conf.CheckpointLimit)
	return sess
}

func (sess *session) start() {
	r := &reader{
		client:    sess.client,
		batchSize: sess.conf.BatchSize,
		log:       sess.log,
		track:     sess.track,
		out:       sess.fetched,
	}
	sess.wg.Add(2)
	go func() {
		defer sess.wg.Done()
		r.run(sess.ctx)
	}()
	go func() {
		defer sess.wg.Done()
		sess.commitLoop(sess.ctx)
	}()
}

// stop ends the loops, makes the final commit and closes the client. It
// returns the commit positions reached and the final commit's error. Safe to
// call more than once.
func (sess *session) stop(ctx context.Context) (map[topicPartition]int64, error) {
	sess.stopOnce.Do(func() {
		sess.cancel()
		sess.wg.Wait()
		cctx, cancel := context.WithTimeout(ctx, finalCommitTimeout)
		defer cancel()
		if err := sess.commit(cctx); err != nil {
			sess.stopErr = fmt.Errorf("final offset commit: %w", err)
			sess.log.Errorf("kafka_source: %v", sess.stopErr)
		}
		sess.mu.Lock()
		sess.mu.stopped = true
		sess.mu.redeliver = nil
		sess.positions = sess.mu.tracker.positions()
		sess.mu.Unlock()
		sess.client.Close()
	})
	return sess.positions, sess.stopErr
}

// track registers a fetched batch, before it is handed out, and pauses the
// partitions that reached checkpoint_limit. Called by the reader goroutine.
func (sess *session) track(b *fetchedBatch) {
	for i := 0; i < len(b.records); {
		j := i + 1
		for j < len(b.records) && b.records[j].Topic == b.records[i].Topic {
			j++
		}
		sess.metrics.received.Incr(int64(j-i), b.records[i].Topic)
		i = j
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if pause := sess.mu.tracker.fetched(b.positions); len(pause) > 0 && !sess.mu.stopped {
		sess.client.PauseFetchPartitions(partitionMap(pause))
	}
}

// deliver turns a batch into messages with an ack func. An ack releases the
// batch's offsets; a nack queues the batch to be delivered again.
func (sess *session) deliver(b *fetchedBatch) (service.MessageBatch, service.AckFunc, error) {
	batch := make(service.MessageBatch, len(b.records))
	for i, r := range b.records {
		batch[i] = recordMessage(r)
	}
	var done atomic.Bool
	return batch, func(_ context.Context, err error) error {
		if !done.CompareAndSwap(false, true) {
			return nil
		}
		if err != nil {
			sess.nack(b)
			return nil
		}
		sess.ack(b)
		return nil
	}, nil
}

func (sess *session) ack(b *fetchedBatch) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	// Resume under the lock that paused, so a pause decided by track cannot
	// land after the resume that should follow it.
	if resume := sess.mu.tracker.acked(b.positions); len(resume) > 0 && !sess.mu.stopped {
		sess.client.ResumeFetchPartitions(partitionMap(resume))
	}
}

func (sess *session) nack(b *fetchedBatch) {
	sess.mu.Lock()
	if sess.mu.stopped {
		sess.mu.Unlock()
		return
	}
	sess.mu.redeliver = append(sess.mu.redeliver, b)
	sess.mu.Unlock()
	for _, r := range b.records {
		sess.metrics.redelivered.Incr(1, r.Topic)
	}
	select {
	case sess.redeliverReady <- struct{}{}:
	default:
	}
}

func (sess *session) takeRedelivery() *fetchedBatch {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if len(sess.mu.redeliver) == 0 {
		return nil
	}
	b := sess.mu.redeliver[0]
	sess.mu.redeliver[0] = nil
	sess.mu.redeliver = sess.mu.redeliver[1:]
	return b
}

func (sess *session) commitLoop(ctx context.Context) {
	t := time.NewTicker(sess.conf.CommitPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := sess.commit(ctx); err != nil && ctx.Err() == nil {
				sess.log.Warnf("kafka_source: %v", err)
			}
		}
	}
}

// commit commits the positions that moved since the last commit, and every
// position once per offsetRefreshPeriod.
func (sess *session) commit(ctx context.Context) error {
	sess.commitMu.Lock()
	defer sess.commitMu.Unlock()

	now := time.Now()
	refresh := now.Sub(sess.lastRefresh) >= max(offsetRefreshPeriod, sess.conf.CommitPeriod)
	sess.mu.Lock()
	pos := sess.mu.tracker.uncommitted()
	if refresh {
		pos = sess.mu.tracker.positions()
	}
	sess.mu.Unlock()
	if len(pos) == 0 {
		return nil
	}
	offsets := make(kadm.Offsets)
	for tp, o := range pos {
		offsets.Add(kadm.Offset{Topic: tp.topic, Partition: tp.partition, At: o, LeaderEpoch: -1})
	}
	group := sess.conf.ConsumerGroup
	resp, err := sess.adm.CommitOffsets(ctx, group, offsets)
	if err != nil {
		topics := map[string]bool{}
		for tp := range pos {
			if !topics[tp.topic] {
				topics[tp.topic] = true
				sess.metrics.commitFailures.Incr(1, tp.topic)
			}
		}
		return fmt.Errorf("committing offsets to consumer group %q: %w", group, err)
	}
	if refresh {
		sess.lastRefresh = now
	}
	var errs []error
	sess.mu.Lock()
	defer sess.mu.Unlock()
	resp.Each(func(o kadm.OffsetResponse) {
		tp := topicPartition{topic: o.Topic, partition: o.Partition}
		if o.Err != nil {
			sess.metrics.commitFailures.Incr(1, o.Topic)
			errs = append(errs, &CommitError{Group: group, Topic: o.Topic, Partition: o.Partition, Offset: o.At, Err: o.Err})
			return
		}
		sess.metrics.commits.Incr(1, o.Topic)
		sess.mu.tracker.markCommitted(tp, o.At)
		sess.metrics.unacked.Set(int64(sess.mu.tracker.unacked(tp)), o.Topic, strconv.Itoa(int(o.Partition)))
	})
	return errors.Join(errs...)
}

func partitionMap(tps []topicPartition) map[string][]int32 {
	m := make(map[string][]int32, len(tps))
	for _, tp := range tps {
		m[tp.topic] = append(m[tp.topic], tp.partition)
	}
	return m
}
