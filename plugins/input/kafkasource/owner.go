package kafkasource

import (
	"context"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/halt"
)

// This file is a session's owner: the one goroutine that owns the session's
// state, as kfake's run loop owns a fake cluster's. It holds the splits and
// which reader fetches each, the offset tracker, the watermark partitions,
// the pauses (checkpoint_limit, max_unacknowledged_bytes and alignment), the
// redelivery queue, the window state restored from the committed offsets and
// the commit state.
// Nothing else touches them, so none of it is locked.
//
// Everyone else sends the owner a request (a type with a handle method, run
// on the owner's goroutine) and, where it needs an answer, waits for the
// reply on a channel of its own:
//
//   - readers hand over each poll's records (fetchReq, delivery.go) and get
//     back the batch to build messages for (and, with a table, decode into
//     rows: reader.go);
//   - ReadBatch asks for the next batch to hand out (nextReq), redeliveries
//     first, with the event times the reader read from its messages (a
//     table column or the watermark expression), if any; the owner observes
//     its event times on the watermark partitions as it leaves and returns
//     the stamps (watermark, late) that ReadBatch puts on the messages;
//   - acknowledgements send ackReq and nackReq without waiting;
//   - the exactly-once sink and the event_window buffer ask for offsets
//     (prepareReq, txn.go; prepareWindowsReq, windows.go) and report
//     commits (committedReq);
//   - kgo's group callbacks report assignments and revocations (assignedReq,
//     revokeReq, assign_group.go) and block until the owner has handled
//     them; a revocation waits there for the revoked partitions' records in
//     flight;
//   - the session's stop (stopReadingReq, finalCommitReq, endReq, here).
//
// The periodic work (offset commits, partition discovery, the quiet-partition
// check and progress of bounded reads, the watermark tick and alignment) runs on the
// owner's tickers. Network calls (offset commits, listing partitions and
// offsets) run off the loop on a goroutine of their own and hand their result
// back as a request (commitDone, discovered, quietChecked), so that acks are
// never held up by the broker; commits still run one at a time, in order
// (commit.go).
//
// The owner never blocks: replies go to channels with room for them, and
// signals to ReadBatch are dropped when one is pending already.

// request is a message to a session's owner: handle runs on the owner's
// goroutine.
type request interface {
	handle(o *owner)
}

// owner is the state of a session that its owner goroutine (run) owns.
type owner struct {
	sess    *session
	conf    Config
	log     *service.Logger
	metrics sourceMetrics
	assign  assignment
	halt    *halt.Run

	// clients are the readers' clients and adm the admin client on the
	// first, set by startReq.
	clients []*kgo.Client
	adm     *kadm.Client
	// stopping: the session is stopping; nothing new is read or started
	// but the final commit. stopped: the session ended; its positions
	// are taken, it asks no client to pause or resume, and its offsets
	// no longer pair with a transaction.
	stopping bool
	stopped  bool
	// rewinding is why the session ends to read again from the offsets
	// not yet durable (a sink's transaction aborted, hold.go), nil if it
	// does not: ReadBatch then reconnects, and holds are refused.
	rewinding error

	tracker *offsetTracker
	// readerOf maps each split to the index of the reader (and client)
	// that fetches it.
	readerOf map[topicPartition]int
	// batches is the state of each batch from its fetch until it is
	// acknowledged (see batchState).
	batches map[*fetchedBatch]*batchState
	// undelivered counts the batches in batches not yet handed out once,
	// so that the batch ending a bounded read is known.
	undelivered int
	// redeliver are nacked batches, handed out again before anything new;
	// held are fresh batches that ReadBatch brought while a redelivery
	// went first.
	redeliver []*fetchedBatch
	held      []heldBatch
	// finishErr is the failed final commit of a bounded read, reported
	// once by ReadBatch (which then tries again).
	finishErr error
	// failed is the Permanent error the owner ended the run on (an offset
	// commit refused for good, errors.go), nil if none: ReadBatch then
	// ends the input with it.
	failed error

	// wm is the watermark state, nil without a watermark (eventtime.go).
	wm *watermarkState
	// restored is the window state of the committed offsets, nil if none
	// (windows.go); published to readers through session.restored.
	restored *restoredWindows

	// budget is the weight of the records not yet acknowledged against
	// max_unacknowledged_bytes (budget.go).
	budget byteBudget
	// fetchSize keeps the clients' fetch size to the budget (budget.go).
	fetchSize fetchSizer

	commits   commitState
	finished  finishState
	discovery discoveryState
	quiet     quietState
	// progress is a bounded read's progress (progress.go).
	progress progressState
	// revokes are revocations waiting for their records in flight.
	revokes []*pendingRevoke
	// releasedInFlight are the partitions a revocation released with
	// records still in flight (revokeExpired): were one assigned to this
	// session again, the acknowledgements and transactions of those
	// records would count for the new assignment (see assignedReq).
	releasedInFlight map[topicPartition]bool
	// manyLogged: setReaderSplits said that partition_metrics: topic
	// exists.
	manyLogged bool

	timers struct {
		commit, discovery, quiet, emit, align *time.Ticker
	}
}

func newOwner(sess *session, a assignment, h *halt.Run) *owner {
	o := &owner{
		sess:      sess,
		conf:      sess.conf,
		log:       sess.log,
		metrics:   sess.metrics,
		assign:    a,
		halt:      h,
		tracker:   newOffsetTracker(sess.conf.CheckpointLimit),
		readerOf:  map[topicPartition]int{},
		batches:   map[*fetchedBatch]*batchState{},
		budget:    byteBudget{limit: sess.conf.MaxUnackedBytes},
		fetchSize: newFetchSizer(sess.conf),
	}
	o.commits.lastRefresh = time.Now()
	if sess.wm != nil {
		o.wm = newWatermarkState(sess.wm)
	}
	return o
}

// run is the owner's loop: it handles requests and ticks until quit is
// closed, then closes the session's done channel.
func (o *owner) run(quit <-chan struct{}) {
	defer close(o.sess.done)
	defer o.stopTimers()
	for {
		select {
		case r := <-o.sess.reqs:
			r.handle(o)
		case <-tickC(o.timers.commit):
			o.periodicCommit()
		case <-tickC(o.timers.discovery):
			o.assign.discover(o)
		case <-tickC(o.timers.quiet):
			o.checkQuiet()
			o.progressTick(time.Now())
		case <-tickC(o.timers.emit):
			o.watermarkTick()
		case <-tickC(o.timers.align):
			o.align()
		case <-quit:
			o.leaveAlignment()
			return
		}
	}
}

func tickC(t *time.Ticker) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C
}

// startTimers starts the periodic work once the session has its clients.
func (o *owner) startTimers() {
	o.timers.commit = time.NewTicker(o.conf.CommitPeriod)
	if d := o.assign.discoveryInterval(); d > 0 {
		o.timers.discovery = time.NewTicker(d)
	}
	if o.bounded() {
		o.timers.quiet = time.NewTicker(2 * o.conf.FetchMaxWait)
	}
	if w := o.wm; w != nil {
		o.timers.emit = time.NewTicker(w.tracker.Config().EmitInterval)
		if w.aligner != nil {
			o.timers.align = time.NewTicker(w.aligner.Config().UpdateInterval)
		}
	}
}

func (o *owner) stopTimers() {
	for _, t := range []**time.Ticker{&o.timers.commit, &o.timers.discovery, &o.timers.quiet, &o.timers.emit, &o.timers.align} {
		if *t != nil {
			(*t).Stop()
			*t = nil
		}
	}
}

// bounded reports whether the read has stop offsets (stop_at is not none).
func (o *owner) bounded() bool { return o.conf.StopAt != StopNone }

// startReq gives the owner the session's clients and the splits to read
// from the start (none in group mode), and starts the periodic work.
type startReq struct {
	clients []*kgo.Client
	adm     *kadm.Client
	splits  []split
	reply   chan startReport
}

// startReport is what Connect logs.
type startReport struct {
	splits, finished int
	perReader        []int
}

func (r startReq) handle(o *owner) {
	o.clients, o.adm = r.clients, r.adm
	consume := make([]map[string]map[int32]kgo.Offset, len(r.clients))
	rep := startReport{splits: len(r.splits), perReader: make([]int, len(r.clients))}
	for _, sp := range r.splits {
		o.readerOf[sp.tp] = sp.reader
		finishedAlready := o.tracker.addPartition(sp.tp, sp.start, sp.committed, sp.stop)
		o.restoreWindows(sp.tp, sp.meta)
		if finishedAlready {
			rep.finished++
			o.log.Debugf("kafka_source: topic %s partition %d has nothing to read before its stop offset %d (start %d)", sp.tp.topic, sp.tp.partition, sp.stop, sp.start)
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
		o.wmAdd(sp.tp)
		rep.perReader[sp.reader]++
		o.log.Debugf("kafka_source: reader %d reads topic %s partition %d from offset %d to %d (committed %d)", sp.reader, sp.tp.topic, sp.tp.partition, sp.start, sp.stop, sp.committed)
	}
	for i, c := range consume {
		if len(c) > 0 {
			o.clients[i].AddConsumePartitions(c)
		}
	}
	o.setReaderSplits()
	o.startTimers()
	if o.wm != nil {
		// The watermark gauges are exported from the start.
		o.watermarkTick()
	}
	r.reply <- rep
}

// stopReadingReq starts the stop: the periodic work ends, ReadBatch gets
// nothing more, and a revocation no longer waits for batches that will never
// be handed out.
type stopReadingReq struct{ reply chan struct{} }

func (r stopReadingReq) handle(o *owner) {
	o.stopping = true
	o.stopTimers()
	o.checkRevokes()
	r.reply <- struct{}{}
}

// finalCommitReq makes the final commit of a stopping session, after the
// one in flight, if any.
type finalCommitReq struct {
	ctx   context.Context
	reply chan error
}

func (r finalCommitReq) handle(o *owner) {
	o.commit(&commitJob{kind: commitFinal, ctx: r.ctx, done: func(err error) { r.reply <- err }})
}

// endReq ends the session: it returns the positions to resume from, and
// from then on the session asks no client to pause, resume or stop a
// partition, and pairs no offsets with a transaction.
type endReq struct{ reply chan map[topicPartition]int64 }

func (r endReq) handle(o *owner) {
	o.stopped = true
	o.redeliver, o.held = nil, nil
	r.reply <- o.tracker.positions()
}

// eachClient calls f with each reader's client and its partitions of tps.
func (o *owner) eachClient(tps []topicPartition, f func(*kgo.Client, map[string][]int32)) {
	by := make(map[int][]topicPartition)
	for _, tp := range tps {
		by[o.readerOf[tp]] = append(by[o.readerOf[tp]], tp)
	}
	for i, tps := range by {
		f(o.clients[i], partitionMap(tps))
	}
}

// setReaderSplits publishes how many partitions each reader has, and says
// once when they are many for per-partition metrics.
func (o *owner) setReaderSplits() {
	n := make([]int64, o.conf.Readers)
	for _, r := range o.readerOf {
		n[r]++
	}
	for r, c := range n {
		o.metrics.readerSplits.Set(c, readerLabel(r))
	}
	if len(o.readerOf) > manyPartitions && o.conf.PartitionMetrics == PartitionMetricsPartition && !o.manyLogged {
		o.manyLogged = true
		o.log.Infof("kafka_source: reading %d partitions with %s: %s, each with its own series of %d metrics; "+
			"set %s: %s for one series per topic (sums and minimums over its partitions)",
			len(o.readerOf), fieldPartitionMetrics, PartitionMetricsPartition, seriesPerPartition(o.conf), fieldPartitionMetrics, PartitionMetricsTopic)
	}
}

// seriesPerPartition is how many series each partition gets with
// per-partition metrics: lag, offset, committed offset, unacknowledged
// records, the records and bytes handed out, and a watermark with one; the
// error counters only once they count.
func seriesPerPartition(c Config) int {
	n := 6
	if c.Watermark.Enabled {
		n++
	}
	return n
}

func (o *owner) signalProgress() { signal(o.sess.progress) }

// signal wakes the one waiting on ch, if none is pending already.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
