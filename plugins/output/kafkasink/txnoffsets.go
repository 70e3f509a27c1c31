package kafkasink

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connectd/connectd/internal/commitchunk"
	"github.com/connectd/connectd/internal/txnoffsets"
)

// This file commits source offsets inside the sink's transaction
// (KIP-98/KIP-447): the messages of a kafka_source on the same cluster carry
// their origin (internal/txnoffsets); after the batch's records were
// produced, the sink asks each source for the offsets to commit, adds its
// consumer group to the transaction (AddOffsetsToTxn) and commits the
// offsets in it (TxnOffsetCommit), both as raw requests through the
// producer client, with the producer id and epoch read for this
// transaction. Only after EndTxn committed does it tell the source
// (Committed) and acknowledge the batch.
//
// Requests are built by hand rather than with kgo.GroupTransactSession,
// because the consumer here is another component (and may be several
// clients in group mode), and franz-go's own transactional offset commit
// needs the group consumer in the same client.

// ErrOffsetsNotCommitted is the cause of a transaction aborted because the
// source offsets could not be committed in it.
var ErrOffsetsNotCommitted = errors.New("source offsets not committed in the transaction")

// ErrSourceWithoutGroup is the cause of a transaction aborted because a
// kafka_source on the sink's cluster has no consumer_group: its offsets
// cannot be committed in the transaction, and since nothing else commits
// them, a restart would read (and write) every record again. Only a config
// change clears it (connectd lint reports the pairing).
var ErrSourceWithoutGroup = errors.New("the kafka_source feeding an exactly_once kafka_sink has no consumer_group: " +
	"its offsets cannot be committed in the sink's transactions, and a restart would write every record again; " +
	"set consumer_group on the kafka_source (or option 'properties.group.id' of its table)")

// OffsetCommitError is a partition whose offset TxnOffsetCommit refused.
type OffsetCommitError struct {
	Group     string
	Topic     string
	Partition int32
	Offset    int64
	Err       error
}

func (e *OffsetCommitError) Error() string {
	hint := ""
	if isMemberMoved(e.Err) {
		hint = " (the partition moved to another group member: this batch is dropped here and read again by its new owner)"
	}
	return fmt.Sprintf("committing offset %d of topic %q partition %d to consumer group %q in the transaction: %v%s",
		e.Offset, e.Topic, e.Partition, e.Group, e.Err, hint)
}

func (e *OffsetCommitError) Unwrap() error { return e.Err }

// isMemberMoved reports whether err means that the group member the
// offsets were committed as is no longer the partition's owner.
func isMemberMoved(err error) bool {
	return errors.Is(err, kerr.IllegalGeneration) || errors.Is(err, kerr.UnknownMemberID) ||
		errors.Is(err, kerr.FencedInstanceID)
}

// retriableOffsetsError reports whether a refused offset commit may succeed
// when the batch is tried again: a retriable Kafka error (coordinator
// moving or loading, concurrent transactions), a rebalance under way, or a
// member id or generation that changed (if the partition really moved, the
// source says so at the next Prepare with a txnoffsets.NotOwnedError).
func retriableOffsetsError(err error) bool {
	return errors.Is(err, ErrOffsetsNotCommitted) && (kerr.IsRetriable(err) || isMemberMoved(err) ||
		errors.Is(err, kerr.RebalanceInProgress) || errors.Is(err, kerr.ConcurrentTransactions))
}

// txnSource is one source's part of a transaction.
type txnSource struct {
	src     txnoffsets.Source
	origins []txnoffsets.Origin
	commits []txnoffsets.Commit
}

// txnEmitter is one emitter's part of a transaction: the sequence numbers of
// its results, and the commits its sources prepared for them.
type txnEmitter struct {
	em      txnoffsets.Emitter
	seqs    []uint64
	sources []*txnSource
}

// txnPairing is what a transaction commits besides its records.
type txnPairing struct {
	sources  []*txnSource
	emitters []*txnEmitter
}

// pairedOrigins returns the origins of the written messages of batch (those
// with a record and no error), per source on the same cluster as the sink,
// in order of first appearance, and the results of emitters (window
// results, see txnoffsets.Emitter). A source on another cluster is not
// paired: the batch is committed without its offsets (the source commits
// them after the acknowledgement), which is logged once per source.
func (s *Sink) pairedOrigins(batch service.MessageBatch, recs []*kgo.Record, errs []error) *txnPairing {
	var (
		out  txnPairing
		by   map[txnoffsets.Source]*txnSource
		byEm map[txnoffsets.Emitter]*txnEmitter
	)
	for i, m := range batch {
		if recs[i] == nil || errs[i] != nil {
			continue
		}
		if r, ok := txnoffsets.ResultFromContext(m.Context()); ok {
			te := byEm[r.Emitter]
			if te == nil {
				if byEm == nil {
					byEm = map[txnoffsets.Emitter]*txnEmitter{}
				}
				te = &txnEmitter{em: r.Emitter}
				byEm[r.Emitter] = te
				out.emitters = append(out.emitters, te)
			}
			te.seqs = append(te.seqs, r.Seq)
			continue
		}
		o, ok := txnoffsets.FromContext(m.Context())
		if !ok || !s.paired(o.Source) {
			continue
		}
		ts := by[o.Source]
		if ts == nil {
			if by == nil {
				by = map[txnoffsets.Source]*txnSource{}
			}
			ts = &txnSource{src: o.Source}
			by[o.Source] = ts
			out.sources = append(out.sources, ts)
		}
		ts.origins = append(ts.origins, o)
	}
	return &out
}

// paired reports whether src reads the sink's cluster; the answer is kept
// per source (a source session), and a refusal is logged once. Called with
// txnMu held.
func (s *Sink) paired(src txnoffsets.Source) bool {
	if ok, known := s.pairing[src]; known {
		return ok
	}
	mine := s.clusterIdentity()
	theirs := src.Cluster()
	ok := txnoffsets.SameCluster(mine, theirs)
	if !ok {
		s.log.Infof("kafka_sink: the kafka_source of consumer group %q reads another cluster (id %q, brokers %v) than this sink "+
			"(id %q, brokers %v): its offsets are not committed in this sink's transactions, so that pipeline is "+
			"at-least-once with atomic batches, not exactly-once", src.GroupID(), theirs.ID, theirs.SeedBrokers, mine.ID, mine.SeedBrokers)
	}
	if s.pairing == nil {
		s.pairing = map[txnoffsets.Source]bool{}
	}
	s.pairing[src] = ok
	return ok
}

// commitOffsetsInTxn adds each source's offsets for the written records,
// and each emitter's sources' offsets for its results, to the open
// transaction. Any error means the transaction must abort: a refused
// TxnOffsetCommit does not fail the client, and committing the records
// without their offsets would duplicate them after a restart.
func (s *Sink) commitOffsetsInTxn(ctx context.Context, cl *kgo.Client, p *txnPairing) error {
	if len(p.sources) == 0 && len(p.emitters) == 0 {
		return nil
	}
	for _, ts := range p.sources {
		commits, err := ts.src.Prepare(ts.origins)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrOffsetsNotCommitted, err)
		}
		ts.commits = commits
	}
	for _, te := range p.emitters {
		scs, err := te.em.PrepareResults(te.seqs)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrOffsetsNotCommitted, err)
		}
		for _, sc := range scs {
			if s.paired(sc.Source) {
				te.sources = append(te.sources, &txnSource{src: sc.Source, commits: sc.Commits})
			}
		}
	}
	all := p.sources
	for _, te := range p.emitters {
		all = append(all, te.sources...)
	}
	if len(all) == 0 {
		return nil
	}
	for _, ts := range all {
		if ts.src.GroupID() == "" {
			// Refuse to pair rather than commit offsets to group "".
			return fmt.Errorf("%w: %w", ErrOffsetsNotCommitted, ErrSourceWithoutGroup)
		}
	}
	id := s.cfg.TransactionalID()
	// Kafka 4 (transaction protocol v2) bumps the epoch at every commit:
	// read the id and epoch of this transaction.
	pid, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		return fmt.Errorf("%w: reading the producer id: %w", ErrOffsetsNotCommitted, err)
	}
	added := map[string]bool{}
	for _, ts := range all {
		group := ts.src.GroupID()
		for _, c := range ts.commits {
			if len(c.Offsets) == 0 {
				continue
			}
			if !added[group] {
				if err := addOffsetsToTxn(ctx, cl, id, pid, epoch, group); err != nil {
					return err
				}
				added[group] = true
			}
			if err := s.txnOffsetCommit(ctx, cl, id, pid, epoch, group, c); err != nil {
				return err
			}
		}
	}
	return nil
}

func addOffsetsToTxn(ctx context.Context, cl *kgo.Client, id string, pid int64, epoch int16, group string) error {
	req := kmsg.NewPtrAddOffsetsToTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = id, pid, epoch, group
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		return fmt.Errorf("%w: adding consumer group %q to the transaction (AddOffsetsToTxn): %w", ErrOffsetsNotCommitted, group, err)
	}
	return nil
}

// txnOffsetCommit adds c's offsets to the open transaction. A commit of
// many partitions goes in several TxnOffsetCommit requests (package
// commitchunk: the coordinator writes each request as one record batch,
// which the broker refuses past message.max.bytes); the offsets of all of
// them commit or abort together with the transaction.
func (s *Sink) txnOffsetCommit(ctx context.Context, cl *kgo.Client, id string, pid int64, epoch int16, group string, c txnoffsets.Commit) error {
	tps := slices.SortedFunc(maps.Keys(c.Offsets), func(a, b txnoffsets.TopicPartition) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	size := func(tp txnoffsets.TopicPartition) int {
		return commitchunk.RecordBytes(group, tp.Topic, len(c.Metadata[tp]))
	}
	budget := cmp.Or(s.offsetChunkBytes, commitchunk.Bytes)
	for _, run := range commitchunk.Split(tps, size, budget) {
		if err := s.txnOffsetCommitRequest(ctx, cl, id, pid, epoch, group, c, run); err != nil {
			return err
		}
	}
	return nil
}

// txnOffsetCommitRequest sends the offsets of c's partitions tps, in
// topic and partition order, in one TxnOffsetCommit. Topics carry both their
// name and their topic id, so the request is right whatever version the
// broker negotiates (v6, KIP-1319, identifies topics by id only).
func (s *Sink) txnOffsetCommitRequest(ctx context.Context, cl *kgo.Client, id string, pid int64, epoch int16, group string,
	c txnoffsets.Commit, tps []txnoffsets.TopicPartition,
) error {
	var topics []string
	for _, tp := range tps {
		if len(topics) == 0 || topics[len(topics)-1] != tp.Topic {
			topics = append(topics, tp.Topic)
		}
	}
	ids, err := s.topicIDs(ctx, cl, topics)
	if err != nil {
		return fmt.Errorf("%w: consumer group %q: %w", ErrOffsetsNotCommitted, group, err)
	}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = id, pid, epoch, group
	req.MemberID, req.Generation = c.Member.ID, c.Member.Generation
	for _, tp := range tps {
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != tp.Topic {
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic, rt.TopicID = tp.Topic, ids[tp.Topic]
			req.Topics = append(req.Topics, rt)
		}
		p := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		p.Partition, p.Offset, p.LeaderEpoch = tp.Partition, c.Offsets[tp], -1
		if m, ok := c.Metadata[tp]; ok {
			p.Metadata = kmsg.StringPtr(m)
		}
		rt := &req.Topics[len(req.Topics)-1]
		rt.Partitions = append(rt.Partitions, p)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("%w: consumer group %q (TxnOffsetCommit): %w", ErrOffsetsNotCommitted, group, err)
	}
	names := map[[16]byte]string{}
	for t, tid := range ids {
		names[tid] = t
	}
	var errs []error
	for _, rt := range resp.Topics {
		topic := rt.Topic
		if topic == "" {
			topic = names[rt.TopicID]
		}
		for _, rp := range rt.Partitions {
			if perr := kerr.ErrorForCode(rp.ErrorCode); perr != nil {
				if errors.Is(perr, kerr.UnknownTopicID) {
					s.forgetTopicID(topic)
				}
				e := &OffsetCommitError{Group: group, Topic: topic, Partition: rp.Partition,
					Offset: c.Offsets[txnoffsets.TopicPartition{Topic: topic, Partition: rp.Partition}], Err: perr}
				if isMemberMoved(perr) {
					s.log.Warnf("kafka_sink: %v (member %q, generation %d)", e, c.Member.ID, c.Member.Generation)
				}
				errs = append(errs, e)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrOffsetsNotCommitted, errors.Join(errs...))
	}
	return nil
}

// topicIDs returns the topic id of each topic, from a cache filled by
// metadata requests.
func (s *Sink) topicIDs(ctx context.Context, cl *kgo.Client, topics []string) (map[string][16]byte, error) {
	s.idMu.Lock()
	defer s.idMu.Unlock()
	out := make(map[string][16]byte, len(topics))
	var missing []string
	for _, t := range topics {
		if tid, ok := s.topicIDCache[t]; ok {
			out[t] = tid
		} else {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	details, err := kadm.NewClient(cl).ListTopics(ctx, missing...)
	if err != nil {
		return nil, fmt.Errorf("reading the topic ids of %s: %w", strings.Join(missing, ", "), err)
	}
	if s.topicIDCache == nil {
		s.topicIDCache = map[string][16]byte{}
	}
	for _, t := range missing {
		d, ok := details[t]
		if !ok {
			return nil, fmt.Errorf("reading the topic id of %q: the broker returned no metadata for it", t)
		}
		if d.Err != nil {
			return nil, fmt.Errorf("reading the topic id of %q: %w", t, d.Err)
		}
		s.topicIDCache[t] = d.ID
		out[t] = d.ID
	}
	return out, nil
}

func (s *Sink) forgetTopicID(topic string) {
	s.idMu.Lock()
	defer s.idMu.Unlock()
	delete(s.topicIDCache, topic)
}

// offsetsCommitted tells each emitter and each source what its
// transaction committed.
func offsetsCommitted(p *txnPairing) {
	for _, te := range p.emitters {
		te.em.ResultsCommitted(te.seqs)
		sourcesCommitted(te.sources)
	}
	sourcesCommitted(p.sources)
}

func sourcesCommitted(sources []*txnSource) {
	for _, ts := range sources {
		all := map[txnoffsets.TopicPartition]int64{}
		for _, c := range ts.commits {
			maps.Copy(all, c.Offsets)
		}
		if len(all) > 0 {
			ts.src.Committed(all)
		}
	}
}
