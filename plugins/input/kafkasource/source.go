package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/halt"
	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/watermark"
)

const (
	// finalCommitTimeout bounds the offset commit made when a session ends.
	finalCommitTimeout = 5 * time.Second
	// limitStallWarning is how long a partition stays paused for
	// checkpoint_limit, with nothing acknowledged, before a warning.
	limitStallWarning = 30 * time.Second
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
	bytes          *service.MetricCounter
	redelivered    *service.MetricCounter
	commits        *service.MetricCounter
	commitFailures *service.MetricCounter
	unacked        *service.MetricGauge
	lag            *service.MetricGauge
	offset         *service.MetricGauge
	committed      *service.MetricGauge
	readerSplits   *service.MetricGauge
	fetchErrors    *service.MetricCounter
	offsetResets   *service.MetricCounter
	wm             wmMetrics
}

func newSourceMetrics(m *service.Metrics) sourceMetrics {
	return sourceMetrics{
		received:       m.NewCounter("kafka_source_records_received", "topic"),
		bytes:          m.NewCounter("kafka_source_bytes_received", "topic"),
		redelivered:    m.NewCounter("kafka_source_records_redelivered", "topic"),
		commits:        m.NewCounter("kafka_source_commits", "topic"),
		commitFailures: m.NewCounter("kafka_source_commit_failures", "topic"),
		unacked:        m.NewGauge("kafka_source_unacked_records", "topic", "partition"),
		lag:            m.NewGauge("kafka_source_lag", "topic", "partition"),
		offset:         m.NewGauge("kafka_source_offset", "topic", "partition"),
		committed:      m.NewGauge("kafka_source_committed_offset", "topic", "partition"),
		readerSplits:   m.NewGauge("kafka_source_reader_partitions", "reader"),
		fetchErrors:    m.NewCounter("kafka_source_fetch_errors", "topic", "partition"),
		offsetResets:   m.NewCounter("kafka_source_offset_resets", "topic", "partition"),
		wm:             newWMMetrics(m),
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
	// run is the stream's halt state: once it stops on an error, nothing is
	// committed any more.
	run *halt.Run

	mu struct {
		sync.Mutex
		sess *session
		// resume holds the commit positions of the last session, so that
		// a reconnect continues where it stopped instead of applying
		// start_from again.
		resume map[topicPartition]int64
		// stops holds the stop offsets resolved at the first connect of a
		// bounded read, kept for reconnects.
		stops  map[topicPartition]int64
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
		run:     halt.For(mgr),
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

	if s.conf.Assignment == AssignmentGroup {
		return s.connectGroup(ctx)
	}
	clients := make([]*kgo.Client, 0, s.conf.Readers)
	closeAll := func() {
		for _, cl := range clients {
			cl.Close()
		}
	}
	for range s.conf.Readers {
		client, err := s.conn.Connect(ctx, s.conf.clientOpts()...)
		if err != nil {
			closeAll()
			return err
		}
		clients = append(clients, client)
	}
	adm := kadm.NewClient(clients[0])
	s.mu.Lock()
	resume, stops := s.mu.resume, s.mu.stops
	s.mu.Unlock()
	splits, err := enumerate(ctx, adm, s.conf, resume, stops, s.log)
	if err != nil {
		closeAll()
		return err
	}

	sess := newSession(s.conf, clients, adm, s.log, s.metrics)
	sess.run = s.run
	consume := make([]map[string]map[int32]kgo.Offset, len(clients))
	perReader := make([]int, len(clients))
	finished := 0
	sess.mu.Lock() // not started yet: uncontended
	for _, sp := range splits {
		sess.owner[sp.tp] = sp.reader
		finishedAlready := sess.mu.tracker.addPartition(sp.tp, sp.start, sp.committed, sp.stop)
		sess.restoreWindowsLocked(sp.tp, sp.meta)
		if finishedAlready {
			finished++
			s.log.Debugf("kafka_source: topic %s partition %d has nothing to read before its stop offset %d (start %d)", sp.tp.topic, sp.tp.partition, sp.stop, sp.start)
			continue
		}
		c := consume[sp.reader]
		if c == nil {
			c = map[string]map[int32]kgo.Offset{}
			consume[sp.reader] = c
		}
		if c[sp.tp.topic] == nil {
			c[sp.tp.topic] = map[int32]kgo.Offset{}
		}
		c[sp.tp.topic][sp.tp.partition] = kgo.NewOffset().At(sp.start)
		sess.wmAddLocked(sp.tp)
		perReader[sp.reader]++
		s.log.Debugf("kafka_source: reader %d reads topic %s partition %d from offset %d to %d (committed %d)", sp.reader, sp.tp.topic, sp.tp.partition, sp.start, sp.stop, sp.committed)
	}
	sess.mu.Unlock()
	for i, c := range consume {
		if len(c) > 0 {
			clients[i].AddConsumePartitions(c)
		}
	}

	sess.learnCluster(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		sess.cancel()
		sess.leaveAlignment()
		closeAll()
		return errClosed
	}
	if s.conf.StopAt != StopNone && s.mu.stops == nil {
		s.mu.stops = make(map[topicPartition]int64, len(splits))
		for _, sp := range splits {
			s.mu.stops[sp.tp] = sp.stop
		}
	}
	s.mu.sess = sess
	sess.mu.Lock()
	sess.setReaderSplitsLocked()
	sess.mu.Unlock()
	sess.start()
	s.log.Infof("kafka_source: reading %d partitions (%d finished already) for consumer group %q, per reader %v",
		len(splits), finished, s.conf.ConsumerGroup, perReader)
	return nil
}

// connectGroup starts a group-mode session: each reader joins the consumer
// group, and partitions are tracked as the coordinator assigns them.
func (s *source) connectGroup(ctx context.Context) error {
	sess := newSession(s.conf, nil, nil, s.log, s.metrics)
	sess.run = s.run
	for i := range s.conf.Readers {
		client, err := s.conn.Connect(ctx, append(s.conf.clientOpts(), sess.groupOpts(i)...)...)
		if err != nil {
			for _, cl := range sess.clients {
				cl.Close()
			}
			sess.leaveAlignment()
			return err
		}
		sess.clients = append(sess.clients, client)
	}
	sess.adm = kadm.NewClient(sess.clients[0])
	sess.learnCluster(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		sess.cancel()
		sess.leaveAlignment()
		for _, cl := range sess.clients {
			cl.Close()
		}
		return errClosed
	}
	s.mu.sess = sess
	sess.start()
	s.log.Infof("kafka_source: %d readers joined consumer group %q", len(sess.clients), s.conf.ConsumerGroup)
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
		if sess.bounded() {
			done, err := sess.finish(ctx)
			if err != nil {
				return nil, nil, err
			}
			if done {
				return nil, nil, service.ErrEndOfInput
			}
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
		case <-sess.progress:
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
	clients []*kgo.Client
	adm     *kadm.Client
	log     *service.Logger
	metrics sourceMetrics
	// run is the stream's halt state (nil in unit tests of a bare session).
	run *halt.Run
	// clusterID is the cluster id read at connect ("" if unknown); see
	// Cluster.
	clusterID string
	// owner maps each split to the index of its reader (and client). After
	// start it is guarded by mu (partition discovery changes it).
	owner map[topicPartition]int

	fetched        chan fetchResult
	redeliverReady chan struct{}
	// progress is signalled when records are acknowledged or splits
	// finish, so that a bounded ReadBatch can see the end of input.
	progress  chan struct{}
	cancel    context.CancelFunc
	ctx       context.Context
	wg        sync.WaitGroup
	stopOnce  sync.Once
	stopErr   error
	positions map[topicPartition]int64

	// commitMu serializes commits so that an older commit never lands
	// after a newer one. It guards lastRefresh.
	commitMu    sync.Mutex
	lastRefresh time.Time

	// wm is the watermark state, nil without a watermark.
	wm *sessionWatermarks

	// restored is the window state read from the committed offsets'
	// metadata (see windows.go), nil if none; replaced, never changed.
	restored atomic.Pointer[restoredWindows]

	mu struct {
		sync.Mutex
		tracker   *offsetTracker
		redeliver []*fetchedBatch
		stopped   bool
		// wmParts are the watermark partitions of the partitions being
		// read (with a watermark).
		wmParts map[topicPartition]*watermark.Partition
		// alignPaused are the partitions paused by watermark alignment;
		// offsetTracker knows those paused by checkpoint_limit. A
		// partition is resumed only when neither holds it.
		alignPaused map[topicPartition]bool
		// undelivered counts batches tracked and not yet delivered, so
		// that the batch ending a bounded read is known.
		undelivered int
		// wmRelease are the releases (see fetchedBatch.release) of
		// delivered batches waiting for stampRows, in column mode.
		wmRelease []func()
	}
}

// halted reports whether the run is ending on an error (internal/halt): from
// then on nothing is committed, so no offset at or after the failing record
// is marked done.
func (sess *session) halted() bool { return sess.run != nil && sess.run.Stopped() }

// bounded reports whether the read has stop offsets (stop_at is not none).
func (sess *session) bounded() bool { return sess.conf.StopAt != StopNone }

func newSession(conf Config, clients []*kgo.Client, adm *kadm.Client, log *service.Logger, m sourceMetrics) *session {
	ctx, cancel := context.WithCancel(context.Background())
	sess := &session{
		conf:           conf,
		clients:        clients,
		owner:          map[topicPartition]int{},
		progress:       make(chan struct{}, 1),
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
	if conf.Watermark.Enabled {
		w, err := newSessionWatermarks(conf.Watermark, m.wm)
		if err != nil {
			// The constructor validated the config; this cannot happen.
			log.Errorf("kafka_source: watermarks off: %v", err)
		} else {
			sess.wm = w
			sess.mu.wmParts = map[topicPartition]*watermark.Partition{}
			sess.mu.alignPaused = map[topicPartition]bool{}
		}
	}
	return sess
}

func (sess *session) start() {
	var readers sync.WaitGroup
	for _, cl := range sess.clients {
		r := &reader{
			client:      cl,
			batchSize:   sess.conf.BatchSize,
			log:         sess.log,
			track:       sess.track,
			dataLoss:    sess.dataLoss,
			fetchFailed: sess.fetchFailed,
			out:         sess.fetched,
		}
		readers.Add(1)
		sess.wg.Add(1)
		go func() {
			defer sess.wg.Done()
			defer readers.Done()
			r.run(sess.ctx)
		}()
	}
	if sess.bounded() {
		sess.wg.Add(1)
		go func() {
			defer sess.wg.Done()
			sess.quietLoop(sess.ctx)
		}()
	}
	if sess.wm != nil {
		sess.wg.Add(1)
		go func() {
			defer sess.wg.Done()
			sess.watermarkLoop(sess.ctx.Done())
		}()
	}
	if sess.conf.discovers() {
		sess.wg.Add(1)
		go func() {
			defer sess.wg.Done()
			sess.discoveryLoop(sess.ctx)
		}()
	}
	sess.wg.Add(2)
	go func() {
		defer sess.wg.Done()
		readers.Wait()
		close(sess.fetched)
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
		sess.leaveAlignment()
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
		for _, cl := range sess.clients {
			cl.Close()
		}
	})
	return sess.positions, sess.stopErr
}

// track registers fetched records before they are handed out: it drops
// transaction markers and records at or past their partition's stop offset
// (moving the partition's position past them), pauses the partitions that
// reached checkpoint_limit, stops fetching the partitions that reached
// their stop offset, and updates the lag and offset gauges. It returns the
// records to deliver, nil if none. Called by reader goroutines.
func (sess *session) track(fetches kgo.Fetches) *fetchedBatch {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	t := sess.mu.tracker
	var (
		keep    []*kgo.Record
		lags    []int64
		pause   []topicPartition
		wmParts []*watermark.Partition
	)
	fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
		if len(fp.Records) == 0 {
			return
		}
		tp := topicPartition{topic: fp.Topic, partition: fp.Partition}
		if next, ok := t.next(tp); ok && next >= 0 && fp.LogStartOffset > next && fp.Records[0].Offset > next {
			// The position fell below the log start (retention deleted
			// what was not read yet) and the client reset per
			// committed_fallback; it does not report that as an error.
			sess.offsetResetLocked(tp, next, fp.Records[0].Offset)
		}
		var n, size int64
		var wp *watermark.Partition
		if sess.wm != nil {
			wp = sess.mu.wmParts[tp]
		}
		// Entries are registered in fetch order, so that a record and a
		// marker after it move the position in the order the log has them.
		for _, r := range fp.Records {
			if r.Attrs.IsControl() || !t.wanted(tp, r.Offset) {
				t.skipped(tp, r.Offset)
				continue
			}
			keep = append(keep, r)
			lags = append(lags, max(0, fp.HighWatermark-r.Offset-1))
			if sess.wm != nil {
				wmParts = append(wmParts, wp)
			}
			n++
			size += recordBytes(r)
			if t.fetchedOne(position{tp: tp, offset: r.Offset}) {
				pause = append(pause, tp)
			}
		}
		if n > 0 {
			sess.metrics.received.Incr(n, tp.topic)
			sess.metrics.bytes.Incr(size, tp.topic)
		}
		if next, ok := t.next(tp); ok {
			p := strconv.Itoa(int(tp.partition))
			sess.metrics.offset.Set(next, tp.topic, p)
			sess.metrics.lag.Set(max(0, fp.HighWatermark-next), tp.topic, p)
		}
	})
	if len(pause) > 0 && !sess.mu.stopped {
		sess.eachClientLocked(pause, func(cl *kgo.Client, m map[string][]int32) { cl.PauseFetchPartitions(m) })
	}
	var b *fetchedBatch
	if len(keep) > 0 {
		b = newFetchedBatch(keep, lags, sess.conf.Metadata, sess)
		if sess.wm != nil {
			b.wm, b.wmParts = sess.wm, wmParts
			sess.mu.undelivered++
		}
	}
	if done := t.takeFinished(); len(done) > 0 {
		for _, tp := range done {
			sess.log.Debugf("kafka_source: topic %s partition %d reached its stop offset", tp.topic, tp.partition)
		}
		if sess.wm != nil {
			// A finished partition no longer holds the watermark back,
			// once its last records are observed (after prepare).
			if b != nil {
				b.release = func() {
					sess.mu.Lock()
					defer sess.mu.Unlock()
					for _, tp := range done {
						sess.wmRemoveLocked(tp)
					}
				}
			} else {
				for _, tp := range done {
					sess.wmRemoveLocked(tp)
				}
			}
		}
		if !sess.mu.stopped {
			sess.eachClientLocked(done, (*kgo.Client).RemoveConsumePartitions)
		}
		sess.signalProgress()
	}
	return b
}

// eachClientLocked calls f with each reader's client and its partitions of
// tps.
func (sess *session) eachClientLocked(tps []topicPartition, f func(*kgo.Client, map[string][]int32)) {
	by := make(map[int][]topicPartition)
	for _, tp := range tps {
		by[sess.owner[tp]] = append(by[sess.owner[tp]], tp)
	}
	for i, tps := range by {
		f(sess.clients[i], partitionMap(tps))
	}
}

// dataLoss reports an offset reset that the client detected: the log was
// truncated, or the fetch position fell out of range after consuming, and
// the client moved to ResetTo per committed_fallback.
func (sess *session) dataLoss(e *kgo.ErrDataLoss) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	tp := topicPartition{topic: e.Topic, partition: e.Partition}
	if e.ResetTo > e.ConsumedTo {
		sess.offsetResetLocked(tp, e.ConsumedTo, e.ResetTo)
		return
	}
	sess.metrics.offsetResets.Incr(1, e.Topic, strconv.Itoa(int(e.Partition)))
	sess.log.Errorf("kafka_source: topic %s partition %d: %v; reading on from offset %d (%s: %s)",
		e.Topic, e.Partition, e, e.ResetTo, fieldCommittedFallback, sess.conf.CommittedFallback)
}

// offsetResetLocked reports that offsets [from, to) of tp were skipped
// because they are no longer in the log, counts it, and moves the
// partition's position to to, so that commits and stop_at follow.
func (sess *session) offsetResetLocked(tp topicPartition, from, to int64) {
	sess.metrics.offsetResets.Incr(1, tp.topic, strconv.Itoa(int(tp.partition)))
	sess.log.Errorf("kafka_source: topic %s partition %d: offsets %d to %d are no longer in the log (deleted by retention?); "+
		"%d records skipped, reading on from offset %d (%s: %s)", tp.topic, tp.partition, from, to-1,
		to-from, to, fieldCommittedFallback, sess.conf.CommittedFallback)
	sess.mu.tracker.skipped(tp, to-1)
	if done := sess.mu.tracker.takeFinished(); len(done) > 0 {
		for _, tp := range done {
			sess.wmRemoveLocked(tp)
		}
		if !sess.mu.stopped {
			sess.eachClientLocked(done, (*kgo.Client).RemoveConsumePartitions)
		}
		sess.signalProgress()
	}
}

// fetchFailed counts a failed fetch of a partition.
func (sess *session) fetchFailed(topic string, partition int32) {
	sess.metrics.fetchErrors.Incr(1, topic, strconv.Itoa(int(partition)))
}

// setReaderSplitsLocked publishes how many partitions each reader has.
func (sess *session) setReaderSplitsLocked() {
	n := make([]int64, sess.conf.Readers)
	for _, r := range sess.owner {
		n[r]++
	}
	for r, c := range n {
		sess.metrics.readerSplits.Set(c, strconv.Itoa(r))
	}
}

func (sess *session) signalProgress() {
	select {
	case sess.progress <- struct{}{}:
	default:
	}
}

// finish reports whether a bounded read is over: every split reached its
// stop offset and every record was acknowledged. It then commits, and
// reports true once every position is committed.
func (sess *session) finish(ctx context.Context) (bool, error) {
	sess.mu.Lock()
	drained, committed := sess.mu.tracker.drained()
	sess.mu.Unlock()
	if !drained {
		return false, nil
	}
	if !committed {
		if err := sess.commit(ctx); err != nil {
			return false, fmt.Errorf("committing the final offsets of a bounded read: %w", err)
		}
		sess.mu.Lock()
		_, committed = sess.mu.tracker.drained()
		sess.mu.Unlock()
	}
	return committed, nil
}

// deliver turns a batch into messages with an ack func. An ack releases the
// batch's offsets; a nack queues the batch to be delivered again.
func (sess *session) deliver(b *fetchedBatch) (service.MessageBatch, service.AckFunc, error) {
	batch := b.takeMessages()
	if sess.wm != nil {
		sess.stampDelivery(b, batch)
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
		// A partition that alignment paused stays paused.
		resume = slices.DeleteFunc(resume, func(tp topicPartition) bool { return sess.mu.alignPaused[tp] })
		if len(resume) > 0 {
			sess.eachClientLocked(resume, (*kgo.Client).ResumeFetchPartitions)
		}
	}
	if sess.bounded() {
		sess.signalProgress()
	}
}

func (sess *session) nack(b *fetchedBatch) {
	sess.mu.Lock()
	if sess.mu.stopped {
		sess.mu.Unlock()
		return
	}
	if b = sess.stillOwnedLocked(b); b == nil {
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

// stillOwnedLocked returns b without the records of partitions the session
// no longer tracks (revoked in group mode: their new owner reads them from
// the committed offset), nil if none is left.
func (sess *session) stillOwnedLocked(b *fetchedBatch) *fetchedBatch {
	keep := 0
	for _, p := range b.positions {
		if sess.mu.tracker.has(p.tp) {
			keep++
		}
	}
	switch keep {
	case len(b.records):
		return b
	case 0:
		return nil
	}
	records := make([]*kgo.Record, 0, keep)
	lags := make([]int64, 0, keep)
	var stamps []wmStamp
	for i, p := range b.positions {
		if sess.mu.tracker.has(p.tp) {
			records = append(records, b.records[i])
			lags = append(lags, b.lags[i])
			if b.stamps != nil {
				stamps = append(stamps, b.stamps[i])
			}
		}
	}
	nb := newFetchedBatch(records, lags, b.meta, b.origin)
	nb.wm, nb.stamps, nb.delivered, nb.final = b.wm, stamps, b.delivered, b.final
	if stamps != nil {
		nb.wmParts = make([]*watermark.Partition, len(records)) // stamped already
	}
	return nb
}

func (sess *session) takeRedelivery() *fetchedBatch {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if len(sess.mu.redeliver) == 0 {
		return nil
	}
	for len(sess.mu.redeliver) > 0 {
		b := sess.mu.redeliver[0]
		sess.mu.redeliver[0] = nil
		sess.mu.redeliver = sess.mu.redeliver[1:]
		if b = sess.stillOwnedLocked(b); b != nil {
			return b
		}
	}
	return nil
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
	if sess.conf.ConsumerGroup == "" {
		// No group: nothing to commit to. The positions count as
		// committed, so that a bounded read ends.
		sess.mu.Lock()
		for tp, o := range sess.mu.tracker.selfCommits(false) {
			sess.mu.tracker.markCommitted(tp, o)
		}
		sess.mu.Unlock()
		return nil
	}

	now := time.Now()
	refresh := now.Sub(sess.lastRefresh) >= max(offsetRefreshPeriod, sess.conf.CommitPeriod)
	sess.mu.Lock()
	pos := sess.mu.tracker.selfCommits(refresh)
	stalls := sess.mu.tracker.stalled(limitStallWarning)
	sess.mu.Unlock()
	for _, st := range stalls {
		sess.log.Warnf("kafka_source: topic %q partition %d has been paused for %v: its %d unacknowledged records reached %s (%d) "+
			"and have not dropped below it since. If a buffer holds records until later ones arrive (event_window holds a window's "+
			"records until the watermark passes its end), raise %s above the records one partition delivers in a window's span "+
			"(size + allowed lateness + max_out_of_orderness): a paused partition holds the watermark back, and the windows never fire",
			st.tp.topic, st.tp.partition, st.since.Round(time.Second), st.unacked, fieldCheckpointLimit, sess.conf.CheckpointLimit, fieldCheckpointLimit)
	}
	for tp, o := range pos {
		if o < 0 {
			// Group mode: nothing fetched yet from a partition without a
			// committed offset; its start is not known.
			delete(pos, tp)
		}
	}
	if len(pos) == 0 {
		return nil
	}
	// Checked after the positions were chosen: an ack that lands just after
	// the run stopped cannot slip into this commit.
	if sess.halted() {
		return nil
	}
	group := sess.conf.ConsumerGroup
	var (
		resp kadm.OffsetResponses
		err  error
	)
	if sess.conf.Assignment == AssignmentGroup {
		resp, err = sess.commitAsMembers(ctx, pos)
	} else {
		offsets := make(kadm.Offsets)
		for tp, o := range pos {
			offsets.Add(kadm.Offset{Topic: tp.topic, Partition: tp.partition, At: o, LeaderEpoch: -1})
		}
		resp, err = sess.adm.CommitOffsets(ctx, group, offsets)
	}
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
		sess.metrics.committed.Set(o.At, o.Topic, strconv.Itoa(int(o.Partition)))
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
