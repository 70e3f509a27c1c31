package kafkasource

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/txnoffsets"
)

// finalCommitTimeout bounds the offset commit made when a session ends (and
// a group member's commit of the partitions it releases then): long enough
// for a healthy broker, short enough that a source whose broker is gone
// still closes in about a second and a half.
const finalCommitTimeout = 1500 * time.Millisecond

// session is one connection's life: its clients, its readers and its owner
// (owner.go), which holds all of its changing state. The session value is
// the handle everyone else holds (ReadBatch, acknowledgements, the readers,
// kgo's group callbacks, an exactly-once sink through txnoffsets): its
// fields are set before it is published and never change after, and its
// methods send requests to the owner.
type session struct {
	conf    Config
	log     *service.Logger
	metrics sourceMetrics
	// assign is how the session gets its splits (assign.go).
	assign assignment

	// clients, adm, clusterID and stops are set by connect before the
	// session is published and its readers start.
	clients []*kgo.Client
	adm     *kadm.Client
	// clusterID is the cluster id read at connect ("" if unknown); see
	// Cluster.
	clusterID string
	// stops are the stop offsets of a bounded read, resolved at the first
	// connect and kept by every later session; nil when unbounded.
	stops map[topicPartition]int64

	// build is how records become messages (reader.go): the configured
	// metadata, and the event time when it is the record timestamp; the
	// table's rows; event times from the messages.
	build messageBuilder
	// wm is the watermark configuration and tracker, nil without a
	// watermark. Only the owner changes the tracker; anyone may read it
	// (Stats, Watermark).
	wm *sessionWatermarks
	// restored is the window state of the committed offsets, nil if none:
	// published by the owner (windows.go) and never changed after, so that
	// Restored, asked for every record, takes no round trip.
	restored atomic.Pointer[restoredWindows]
	// afterPoll is the source's test hook (source.afterPoll).
	afterPoll func(kgo.Fetches)
	// fencesAtStart is txnoffsets.Fences when the session started, before
	// it read any committed offset; startCheck and startErr are
	// checkStart's (fence.go).
	fencesAtStart uint64
	startCheck    sync.Once
	startErr      error
	// holdSeq numbers the holds of sinks (hold.go).
	holdSeq atomic.Uint64

	// reqs carries requests to the owner; done is closed when the owner
	// has returned, quit tells it to.
	reqs chan request
	done chan struct{}
	quit chan struct{}
	// ready carries the readers' prepared batches and fetch errors to
	// ReadBatch.
	ready chan fetchResult
	// redeliverReady is signalled when a batch is nacked, progress when
	// records are acknowledged or splits finish (a bounded ReadBatch then
	// looks for the end of input) or a commit ReadBatch waits for ends.
	redeliverReady chan struct{}
	progress       chan struct{}

	// ctx ends the readers and the owner's network calls.
	ctx    context.Context
	cancel context.CancelFunc
	// readers are the reader goroutines; jobs the goroutines of network
	// calls made for the owner.
	readers sync.WaitGroup
	jobs    sync.WaitGroup

	stopOnce  sync.Once
	stopErr   error
	positions map[topicPartition]int64
}

// reqsBuffer is the room in the owner's request channel: acknowledgements
// from many output goroutines do not wait for each other.
const reqsBuffer = 256

func newSession(conf Config, log *service.Logger, m sourceMetrics) *session {
	ctx, cancel := context.WithCancel(context.Background())
	sess := &session{
		conf:           conf,
		log:            log,
		metrics:        m,
		build:          messageBuilder{meta: conf.Metadata},
		reqs:           make(chan request, reqsBuffer),
		done:           make(chan struct{}),
		quit:           make(chan struct{}),
		ready:          make(chan fetchResult, 1),
		redeliverReady: make(chan struct{}, 1),
		progress:       make(chan struct{}, 1),
		ctx:            ctx,
		cancel:         cancel,
	}
	if conf.Watermark.Enabled {
		w, err := newSessionWatermarks(conf.Watermark, m.wm)
		if err != nil {
			// The constructor validated the config; this cannot happen.
			log.Errorf("kafka_source: watermarks off: %v", err)
		} else {
			sess.wm = w
			if w.fromRecord() {
				// Set by the readers as they build the messages, in
				// parallel: see buildMessages.
				sess.build.meta |= metaBitEventTime
			} else {
				sess.build.times = w
			}
		}
	}
	sess.build.origin = sess.origin()
	return sess
}

// connect creates a session and starts it: its owner, the readers' clients,
// the splits its assignment gives at the start, and the readers. resume are
// the positions of the previous session of this input and stops its stop
// offsets (nil at the first connect).
func connect(ctx context.Context, s *source, resume, stops map[topicPartition]int64) (*session, error) {
	sess := newSession(s.conf, s.log, s.metrics)
	sess.afterPoll = s.afterPoll
	sess.fencesAtStart = txnoffsets.Fences()
	sess.build.rows = s.rows
	a := newAssignment(s.conf, sess)
	sess.assign = a
	o := newOwner(sess, a, s.halt)
	// The owner runs before the clients exist: a group member's
	// callbacks may fire as soon as its client is created.
	go o.run(sess.quit)

	clients := make([]*kgo.Client, 0, s.conf.Readers)
	for i := range s.conf.Readers {
		cl, err := s.conn.Connect(ctx, append(s.conf.clientOpts(), a.clientOpts(i)...)...)
		if err != nil {
			sess.abort(clients)
			return nil, err
		}
		clients = append(clients, cl)
	}
	adm := kadm.NewClient(clients[0])
	splits, err := a.splits(ctx, adm, resume, stops)
	if err != nil {
		sess.abort(clients)
		return nil, err
	}
	sess.clients, sess.adm, sess.stops = clients, adm, stops
	if s.conf.StopAt != StopNone && stops == nil {
		sess.stops = make(map[topicPartition]int64, len(splits))
		for _, sp := range splits {
			sess.stops[sp.tp] = sp.stop
		}
	}
	sess.learnCluster(ctx)
	reply := make(chan startReport, 1)
	rep, ok := call(sess, startReq{clients: clients, adm: adm, splits: splits, reply: reply}, reply)
	if !ok {
		sess.abort(clients)
		return nil, errClosed
	}
	sess.startReaders()
	s.log.Infof("kafka_source: %s", a.connected(rep))
	if s.conf.ConsumerGroup == "" {
		s.log.Infof("kafka_source: no consumer group: no offset is committed, and a restart reads from %s again", fieldStartFrom)
	}
	return sess, nil
}

// abort ends a session that did not start: it closes clients (a group
// member's revocation still reaches the owner) and ends the owner.
func (sess *session) abort(clients []*kgo.Client) {
	sess.cancel()
	closeClients(clients)
	close(sess.quit)
	<-sess.done
	sess.jobs.Wait()
}

// startReaders starts one reader per client, and closes ready once all of
// them returned.
func (sess *session) startReaders() {
	for i, cl := range sess.clients {
		r := &reader{id: i, client: cl, batchSize: sess.conf.BatchSize, sess: sess, reply: make(chan tracked, 1)}
		sess.readers.Add(1)
		go func() {
			defer sess.readers.Done()
			r.run(sess.ctx)
		}()
	}
	sess.jobs.Add(1)
	go func() {
		defer sess.jobs.Done()
		sess.readers.Wait()
		close(sess.ready)
	}()
}

// stop ends the session: the readers stop, the acknowledged offsets are
// committed (bounded by ctx and finalCommitTimeout), and the clients close.
// It returns the positions to resume from and the final commit's error.
// Safe to call more than once and from several goroutines.
func (sess *session) stop(ctx context.Context) (map[topicPartition]int64, error) {
	sess.stopOnce.Do(func() {
		sess.cancel()
		reply := make(chan struct{}, 1)
		call(sess, stopReadingReq{reply: reply}, reply)
		// PollRecords returns at once when its context ends.
		sess.readers.Wait()
		sess.awaitHolds(ctx)
		cctx, cancel := context.WithTimeout(ctx, finalCommitTimeout)
		errc := make(chan error, 1)
		if err, ok := call(sess, finalCommitReq{ctx: cctx, reply: errc}, errc); ok && err != nil {
			sess.stopErr = fmt.Errorf("final offset commit: %w", err)
			sess.log.Errorf("kafka_source: %v", sess.stopErr)
		}
		cancel()
		posc := make(chan map[topicPartition]int64, 1)
		sess.positions, _ = call(sess, endReq{reply: posc}, posc)
		if msg := sess.assign.closing(); msg != "" && len(sess.clients) > 0 {
			sess.log.Infof("kafka_source: %s", msg)
		}
		// A group member releases its partitions as its client closes:
		// the owner still runs to handle that.
		closeClients(sess.clients)
		close(sess.quit)
		<-sess.done
		sess.jobs.Wait()
	})
	return sess.positions, sess.stopErr
}

// closeClients closes clients side by side: a group member waits for its
// leave. The readers have returned: each allowed the rebalances its polls
// blocked (reader.run), and allowing them again here lets the leave's
// revocation run whatever a reader's last poll left.
func closeClients(clients []*kgo.Client) {
	var wg sync.WaitGroup
	for _, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl.CloseAllowingRebalance()
		}()
	}
	wg.Wait()
}

// send hands r to the owner without waiting for it to be handled; false if
// the owner has ended.
func (sess *session) send(r request) bool {
	select {
	case sess.reqs <- r:
		return true
	case <-sess.done:
		return false
	}
}

// call sends r to the owner and waits for its reply on reply (which r
// carries); ok is false if the owner ended without replying.
func call[T any](sess *session, r request, reply <-chan T) (v T, ok bool) {
	if !sess.send(r) {
		return v, false
	}
	select {
	case v = <-reply:
		return v, true
	case <-sess.done:
		select {
		case v = <-reply:
			return v, true
		default:
			return v, false
		}
	}
}

// goJob runs f, a network call made for the owner, on a goroutine of its
// own; f hands its result back with send.
func (sess *session) goJob(f func()) {
	sess.jobs.Add(1)
	go func() {
		defer sess.jobs.Done()
		f()
	}()
}

// learnCluster records the cluster id, for txnoffsets.SameCluster; an error
// leaves it unknown (the seed brokers are compared instead).
func (sess *session) learnCluster(ctx context.Context) {
	if m, err := sess.adm.BrokerMetadata(ctx); err == nil {
		sess.clusterID = m.Cluster
	}
}
