package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// This file is the enumerator (Flink's split enumerator plus its
// OffsetsInitializers): it lists the partitions of the configured topics,
// keeps this process's shard of them, resolves each one's start and stop
// offsets, and places each on a reader with Flink's owner function.

// ErrNoCommittedOffset is wrapped by a StartOffsetError when a partition has
// no usable committed offset and committed_fallback is error.
var ErrNoCommittedOffset = errors.New("no usable committed offset")

// StartOffsetError says why a partition's start offset could not be resolved.
type StartOffsetError struct {
	Group     string
	Topic     string
	Partition int32
	// Committed is the group's committed offset, -1 if none; or, when
	// Specified, the offset given in start_offsets.
	Committed int64
	// Specified is true when the offset came from start_offsets.
	Specified bool
	// LogStart and LogEnd are the partition's offset range when known.
	LogStart, LogEnd int64
	Err              error
}

func (e *StartOffsetError) Error() string {
	if e.Specified {
		return fmt.Sprintf("offset %d of topic %q partition %d in %s is outside the log [%d, %d], and %s is %s: %v",
			e.Committed, e.Topic, e.Partition, fieldStartOffsets, e.LogStart, e.LogEnd, fieldCommittedFallback, FallbackError, e.Err)
	}
	if e.Committed < 0 {
		return fmt.Sprintf("consumer group %q has no committed offset for topic %q partition %d, and %s is %s: %v",
			e.Group, e.Topic, e.Partition, fieldCommittedFallback, FallbackError, e.Err)
	}
	return fmt.Sprintf("committed offset %d of consumer group %q for topic %q partition %d is outside the log [%d, %d], and %s is %s: %v",
		e.Committed, e.Group, e.Topic, e.Partition, e.LogStart, e.LogEnd, fieldCommittedFallback, FallbackError, e.Err)
}

func (e *StartOffsetError) Unwrap() error { return e.Err }

// TopicError is returned when a configured topic cannot be read.
type TopicError struct {
	// Field is the field that names the topic: topics or partitions.
	Field string
	Topic string
	Err   error
}

func (e *TopicError) Error() string {
	if errors.Is(e.Err, kerr.UnknownTopicOrPartition) {
		return fmt.Sprintf("topic %q does not exist (field %s): %v", e.Topic, e.Field, e.Err)
	}
	return fmt.Sprintf("topic %q: %v", e.Topic, e.Err)
}

func (e *TopicError) Unwrap() error { return e.Err }

// split is one partition with its resolved start.
type split struct {
	tp topicPartition
	// start is the concrete offset to read from.
	start int64
	// committed is the group's committed offset, -1 if none.
	committed int64
	// stop is the exclusive stop offset, noStop for none.
	stop int64
	// reader is the index of the reader that fetches the split.
	reader int
	// meta is the metadata of the committed offset ("" if none): window
	// state when an exactly-once event_window pipeline committed it.
	meta string
}

// noStop is the stop offset of an unbounded split.
const noStop = -1

// partitionRange is what the broker says about one partition at connect.
type partitionRange struct {
	// committed by the group, -1 if none.
	committed int64
	// logStart and logEnd (high watermark) bound the valid offsets.
	logStart, logEnd int64
	// latest is where start_from latest begins: the high watermark, or the
	// last stable offset under read_committed.
	latest int64
	// specified is the offset given in start_offsets, -1 if none.
	specified int64
	// atTimestamp is the first offset at or after start_timestamp.
	atTimestamp int64
}

// resolveStart returns the start offset of a partition. It does no I/O.
//
// The group's committed offset is the pipeline's state (Flink's checkpoint):
// a partition that has one starts there, whatever mode says. mode places
// only partitions without a committed offset, as Flink's `scan.startup.mode`
// applies only to a job started without state. A committed (or specified)
// offset outside the log goes to committed_fallback. reset_offsets ignores
// the committed offsets by resolving with r.committed = -1 (see enumerate).
func resolveStart(mode StartFrom, fallback CommittedFallback, group string, tp topicPartition, r partitionRange) (int64, error) {
	if r.committed >= 0 {
		if r.committed >= r.logStart && r.committed <= r.logEnd {
			return r.committed, nil
		}
		return fallbackStart(fallback, group, tp, r, r.committed, false)
	}
	switch mode {
	case StartEarliest:
		return r.logStart, nil
	case StartLatest:
		return r.latest, nil
	case StartTimestamp:
		return r.atTimestamp, nil
	case StartOffsets:
		if r.specified >= 0 {
			if r.specified >= r.logStart && r.specified <= r.logEnd {
				return r.specified, nil
			}
			return fallbackStart(fallback, group, tp, r, r.specified, true)
		}
	}
	return fallbackStart(fallback, group, tp, r, -1, false)
}

// fallbackStart applies committed_fallback to a partition whose committed
// (or specified) offset is missing or outside the log.
func fallbackStart(fallback CommittedFallback, group string, tp topicPartition, r partitionRange, offset int64, specified bool) (int64, error) {
	switch fallback {
	case FallbackLatest:
		return r.latest, nil
	case FallbackError:
		return 0, &StartOffsetError{
			Group: group, Topic: tp.topic, Partition: tp.partition,
			Committed: offset, Specified: specified, LogStart: r.logStart, LogEnd: r.logEnd,
			Err: ErrNoCommittedOffset,
		}
	default:
		return r.logStart, nil
	}
}

// enumerate lists the partitions of the configured topics, keeps the ones
// of this process's shard, and resolves their start and stop offsets. A
// partition in resume (the position of a previous session of this process)
// starts there; any other starts at the group's committed offset, else
// where start_from says (resolveStart). With reset_offsets the committed
// offsets are ignored, and those that start_from moves are committed at
// their new start and logged (resetOffsets). A partition in stops keeps that
// stop offset (stop offsets are resolved once, at the first connect). All
// partition errors are collected.
func enumerate(ctx context.Context, adm *kadm.Client, c Config, resume, stops map[topicPartition]int64, log *service.Logger) ([]split, error) {
	tps, topics, err := listSubscribed(ctx, adm, c, true)
	if err != nil {
		return nil, err
	}
	if len(tps) == 0 {
		return nil, nil
	}

	// reset_offsets applies when the process starts, not when a session of
	// it reconnects (resume then holds its positions).
	reset := c.ResetOffsets && resume == nil
	// The listings are independent: they run side by side, so that
	// start-up takes one round trip of the slowest, not the sum (each
	// covers every partition: 10,000 of them take a while).
	var (
		committed, stopCommitted              kadm.OffsetResponses
		starts, ends, latest, startTs, stopTs kadm.ListedOffsets
		listErrs                              [7]error
		wg                                    sync.WaitGroup
	)
	list := func(i int, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			listErrs[i] = f()
		}()
	}
	if c.ConsumerGroup != "" {
		// Without a group nothing was committed: start_from places every
		// partition.
		list(0, func() (err error) { committed, err = fetchCommitted(ctx, adm, c.ConsumerGroup); return err })
	}
	list(1, func() (err error) { starts, err = listOffsets(ctx, "start", adm.ListStartOffsets, topics); return err })
	list(2, func() (err error) { ends, err = listOffsets(ctx, "end", adm.ListEndOffsets, topics); return err })
	if c.IsolationLevel == ReadCommitted {
		list(3, func() (err error) {
			latest, err = listOffsets(ctx, "last stable", adm.ListCommittedOffsets, topics)
			return err
		})
	}
	if c.StartFrom == StartTimestamp {
		list(4, func() (err error) { startTs, err = listOffsetsAfter(ctx, adm, c.StartTimestamp, topics); return err })
	}
	if c.StopAt == StopTimestamp && stops == nil {
		list(5, func() (err error) { stopTs, err = listOffsetsAfter(ctx, adm, c.StopTimestamp, topics); return err })
	}
	if c.StopAt == StopCommitted && stops == nil {
		list(6, func() (err error) { stopCommitted, err = fetchCommitted(ctx, adm, c.StopGroup); return err })
	}
	wg.Wait()
	for _, err := range listErrs {
		if err != nil {
			return nil, err
		}
	}
	if c.IsolationLevel != ReadCommitted {
		latest = ends
	}

	var errs []error
	splits := make([]split, 0, len(tps))
	for _, tp := range tps {
		r := partitionRange{committed: -1, specified: -1}
		meta := ""
		if o, ok := committed.Lookup(tp.topic, tp.partition); ok {
			if o.Err != nil {
				errs = append(errs, fmt.Errorf("committed offset of consumer group %q for topic %q partition %d: %w",
					c.ConsumerGroup, tp.topic, tp.partition, o.Err))
				continue
			}
			if o.At >= 0 {
				r.committed = o.At
			}
			meta = o.Metadata
		}
		var ok bool
		if r.logStart, ok = lookupOffset(starts, tp); !ok {
			errs = append(errs, fmt.Errorf("topic %q partition %d: no log start offset listed", tp.topic, tp.partition))
			continue
		}
		if r.logEnd, ok = lookupOffset(ends, tp); !ok {
			errs = append(errs, fmt.Errorf("topic %q partition %d: no end offset listed", tp.topic, tp.partition))
			continue
		}
		if r.latest, ok = lookupOffset(latest, tp); !ok {
			r.latest = r.logEnd
		}
		if o, ok := c.StartOffsets[tp]; ok {
			r.specified = o
		}
		if r.atTimestamp, ok = lookupOffset(startTs, tp); !ok {
			r.atTimestamp = r.latest
		}
		start, ok := resume[tp]
		if !ok {
			at := r
			if reset {
				at.committed = -1
			}
			if start, err = resolveStart(c.StartFrom, c.CommittedFallback, c.ConsumerGroup, tp, at); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		stop, ok := stops[tp]
		if !ok && c.StopAt == StopCommitted {
			if stop, err = committedStop(c.StopGroup, tp, r, stopCommitted); err != nil {
				errs = append(errs, err)
				continue
			}
		} else if !ok {
			stop = resolveStop(c, tp, r, stopTs)
		}
		splits = append(splits, split{tp: tp, start: start, committed: r.committed, stop: stop, reader: c.readerOf(tp), meta: meta})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if reset {
		if err := resetOffsets(ctx, adm, c, splits, log); err != nil {
			return nil, err
		}
	}
	return splits, nil
}

// resetOffsets commits, for reset_offsets, the start of every split whose
// committed offset it differs from (with no metadata: window state of the
// old position no longer applies), so that the group's offsets move as
// `kafka-consumer-groups --reset-offsets` would move them, and logs each
// move at warn level. The splits then count as committed at their start.
// Partitions without a committed offset have nothing to reset.
func resetOffsets(ctx context.Context, adm *kadm.Client, c Config, splits []split, log *service.Logger) error {
	pos := map[topicPartition]int64{}
	for _, sp := range splits {
		if sp.committed >= 0 && sp.start != sp.committed {
			pos[sp.tp] = sp.start
		}
	}
	moved := positionOffsets(pos)
	if len(moved) == 0 {
		log.Warnf("kafka_source: %s: consumer group %q has no committed offset that %s: %s moves; nothing was reset. "+
			"Remove %s: it applies at every start", fieldResetOffsets, c.ConsumerGroup, fieldStartFrom, c.StartFrom, fieldResetOffsets)
		return nil
	}
	resp, err := commitChunked(ctx, c.ConsumerGroup, pos, func(ctx context.Context, pos map[topicPartition]int64) (kadm.OffsetResponses, error) {
		return adm.CommitOffsets(ctx, c.ConsumerGroup, positionOffsets(pos))
	})
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("field %s: committing the reset offsets to consumer group %q: %w", fieldResetOffsets, c.ConsumerGroup, err)
	}
	for i := range splits {
		sp := &splits[i]
		if o, ok := moved.Lookup(sp.tp.topic, sp.tp.partition); ok {
			log.Warnf("kafka_source: %s: consumer group %q topic %q partition %d moved from committed %d to %d (%s: %s)",
				fieldResetOffsets, c.ConsumerGroup, sp.tp.topic, sp.tp.partition, sp.committed, o.At, fieldStartFrom, c.StartFrom)
			sp.committed, sp.meta = o.At, ""
		}
	}
	log.Warnf("kafka_source: %s: moved %d partitions of consumer group %q; remove %s now: it applies at every start, "+
		"and the next start would read them again", fieldResetOffsets, len(pos), c.ConsumerGroup, fieldResetOffsets)
	return nil
}

// listSubscribed lists the partitions this process reads (its shard of the
// subscribed ones), sorted, and the topics they belong to. With strict, a
// configured topic or partition that does not exist is an error; without
// (partition discovery), it is left out.
func listSubscribed(ctx context.Context, adm *kadm.Client, c Config, strict bool) ([]topicPartition, []string, error) {
	var names []string
	switch {
	case c.TopicPattern != nil:
	case c.Partitions != nil:
		names = slices.Sorted(maps.Keys(c.Partitions))
	default:
		names = c.Topics
	}
	details, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return nil, nil, fmt.Errorf("listing topics %v: %w", names, err)
	}
	if c.TopicPattern != nil {
		names = nil
		for _, t := range details.Names() {
			if td := details[t]; !td.IsInternal && c.subscribed(t) {
				names = append(names, t)
			}
		}
	}
	var (
		errs   []error
		tps    []topicPartition
		topics []string
		field  = c.subscriptionField()
	)
	for _, t := range names {
		td, ok := details[t]
		var terr error
		switch {
		case !ok:
			terr = &TopicError{Field: field, Topic: t, Err: kerr.UnknownTopicOrPartition}
		case td.Err != nil:
			terr = &TopicError{Field: field, Topic: t, Err: td.Err}
		case len(td.Partitions) == 0:
			terr = &TopicError{Field: field, Topic: t, Err: errors.New("topic has no partitions")}
		}
		if terr != nil {
			if strict {
				errs = append(errs, terr)
			}
			continue
		}
		parts := td.Partitions.Numbers()
		if c.Partitions != nil {
			parts = nil
			for _, p := range c.Partitions[t] {
				if _, ok := td.Partitions[p]; ok {
					parts = append(parts, p)
				} else if strict {
					errs = append(errs, &MissingPartitionError{Field: fieldPartitions, Topic: t, Partition: p})
				}
			}
		}
		owned := false
		for _, p := range parts {
			tp := topicPartition{topic: t, partition: p}
			if c.owns(tp) {
				tps = append(tps, tp)
				owned = true
			}
		}
		if owned {
			topics = append(topics, t)
		}
	}
	if strict {
		for _, f := range []struct {
			name string
			m    map[topicPartition]int64
		}{{fieldStartOffsets, c.StartOffsets}, {fieldStopOffsets, c.StopOffsets}} {
			for _, tp := range sortedPartitions(f.m) {
				if td, ok := details[tp.topic]; ok && td.Err == nil {
					if _, ok := td.Partitions[tp.partition]; !ok {
						errs = append(errs, &MissingPartitionError{Field: f.name, Topic: tp.topic, Partition: tp.partition})
					}
				}
			}
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	sortPartitions(tps)
	return tps, topics, nil
}

// owns reports whether tp is in this process's shard: its owner slot over
// Shard.Count x Readers slots is one of this process's readers.
func (c Config) owns(tp topicPartition) bool {
	return ownerSlot(tp.topic, tp.partition, c.Shard.Count*c.Readers)/c.Readers == c.Shard.Index
}

// readerOf is the reader (of Readers) that fetches tp.
func (c Config) readerOf(tp topicPartition) int {
	return ownerSlot(tp.topic, tp.partition, c.Shard.Count*c.Readers) % c.Readers
}

// resolveStop returns the exclusive stop offset of a partition, noStop for
// an unbounded read. A stop that no record can reach before the stable end
// (no record at or after stop_timestamp) is the stable end: latest.
func resolveStop(c Config, tp topicPartition, r partitionRange, atStopTs kadm.ListedOffsets) int64 {
	switch c.StopAt {
	case StopLatest:
		return r.latest
	case StopTimestamp:
		if o, ok := lookupOffset(atStopTs, tp); ok && o < r.logEnd {
			return o
		}
		return r.latest
	case StopOffsets:
		if o, ok := c.StopOffsets[tp]; ok {
			return o
		}
		return r.latest
	default:
		return noStop
	}
}

// committedStop returns the stop offset of a partition under stop_at:
// committed: the offset committed in group, at most the stable end. A
// partition without one is an error, as Flink's
// OffsetsInitializer.committedOffsets() without a reset strategy.
func committedStop(group string, tp topicPartition, r partitionRange, committed kadm.OffsetResponses) (int64, error) {
	o, ok := committed.Lookup(tp.topic, tp.partition)
	switch {
	case ok && o.Err != nil:
		return 0, fmt.Errorf("field %s: committed offset of consumer group %q for topic %q partition %d: %w", fieldStopGroup, group, tp.topic, tp.partition, o.Err)
	case !ok || o.At < 0:
		return 0, fmt.Errorf("field %s: consumer group %q has no offset committed for topic %q partition %d, so stop_at: %s cannot place its end "+
			"(Flink's scan.bounded.mode = 'group-offsets' fails the same way)", fieldStopGroup, group, tp.topic, tp.partition, StopCommitted)
	}
	return min(o.At, r.latest), nil
}

// listOffsetsAfter lists, per partition, the first offset whose record
// timestamp is at or after ms (Kafka ListOffsets by timestamp); partitions
// without such a record list their end offset.
func listOffsetsAfter(ctx context.Context, adm *kadm.Client, ms int64, topics []string) (kadm.ListedOffsets, error) {
	return listOffsets(ctx, fmt.Sprintf("timestamp %d", ms), func(ctx context.Context, topics ...string) (kadm.ListedOffsets, error) {
		return adm.ListOffsetsAfterMilli(ctx, ms, topics...)
	}, topics)
}

// javaStringHash is Java's String.hashCode: s as UTF-16 code units,
// h = 31*h + unit, in wrapping 32-bit arithmetic.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// ownerSlot is Flink's KafkaSourceEnumerator.getSplitOwner: the reader (of
// n) that owns a partition. Consecutive partitions of a topic go to
// consecutive readers, starting at a reader chosen by the topic's hash.
func ownerSlot(topic string, partition int32, n int) int {
	start := int((javaStringHash(topic)*31)&0x7FFFFFFF) % n
	return (start + int(partition)) % n
}

// fetchCommitted returns the group's committed offsets. A group that never
// committed does not exist yet: no offsets. Retriable coordinator errors (the
// offsets topic is still being created on a fresh cluster, or the
// coordinator is moving) are retried until ctx ends.
//
// The fetch requires stable offsets: while a transaction that commits
// offsets of the group is open (an exactly-once kafka_sink that was killed
// mid-transaction), the broker answers UNSTABLE_OFFSET_COMMIT, and the fetch
// is retried until the transaction ends: when the restarted sink fences it,
// or at the latest when the broker aborts it at its transaction timeout. It
// gives up after stableOffsetsWait with an error that says so.
//
// Known gap: fetching all of a group's offsets, the broker reports
// UNSTABLE_OFFSET_COMMIT only for partitions that already have a committed
// offset (Kafka's OffsetMetadataManager.fetchAllOffsets iterates the
// committed ones). A partition whose only offset is in an open transaction
// reads as uncommitted. That transaction is the killed predecessor's: the
// restarted sink's producer aborts it (the offsets go with it, so the
// answer was right), unless it was already committing, which the broker
// finishes within milliseconds of the EndTxn, long before a restarted
// process reads offsets.
func fetchCommitted(ctx context.Context, adm *kadm.Client, group string) (kadm.OffsetResponses, error) {
	wait := 50 * time.Millisecond
	unstableSince := time.Time{}
	for {
		committed, err := adm.FetchOffsets(kadm.RequireStable(ctx), group)
		if err == nil {
			err = unstable(committed)
			if err == nil {
				return committed, nil
			}
			if unstableSince.IsZero() {
				unstableSince = time.Now()
			}
			if time.Since(unstableSince) >= stableOffsetsWait {
				return nil, fmt.Errorf("fetching committed offsets of consumer group %q: a transaction that commits its offsets "+
					"has been open for more than %v (kafka_sink transaction_timeout, broker transaction.max.timeout.ms): %w",
					group, stableOffsetsWait, err)
			}
		}
		switch {
		case err == nil:
			return committed, nil
		case errors.Is(err, kerr.GroupIDNotFound):
			return nil, nil
		case !kerr.IsRetriable(err):
			return nil, fmt.Errorf("fetching committed offsets of consumer group %q: %w", group, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("fetching committed offsets of consumer group %q: %w (gave up: %w)", group, err, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// stableOffsetsWait bounds how long fetchCommitted waits for a transaction
// that holds the group's offsets to end: Kafka's largest default transaction
// timeout (transaction.max.timeout.ms, 15m) would be too long to hang
// silently; kafka_sink's default transaction_timeout is 1m.
const stableOffsetsWait = 2 * time.Minute

// unstable returns the first UNSTABLE_OFFSET_COMMIT of offsets, naming its
// partition, or nil.
func unstable(offsets kadm.OffsetResponses) error {
	var err error
	offsets.Each(func(o kadm.OffsetResponse) {
		if err == nil && errors.Is(o.Err, kerr.UnstableOffsetCommit) {
			err = fmt.Errorf("topic %q partition %d: %w", o.Topic, o.Partition, o.Err)
		}
	})
	return err
}

func listOffsets(ctx context.Context, what string, list func(context.Context, ...string) (kadm.ListedOffsets, error), topics []string) (kadm.ListedOffsets, error) {
	l, err := list(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("listing %s offsets of %v: %w", what, topics, err)
	}
	var errs []error
	l.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("listing %s offset of topic %q partition %d: %w", what, o.Topic, o.Partition, o.Err))
		}
	})
	return l, errors.Join(errs...)
}

func lookupOffset(l kadm.ListedOffsets, tp topicPartition) (int64, bool) {
	o, ok := l.Lookup(tp.topic, tp.partition)
	if !ok || o.Offset < 0 {
		return 0, false
	}
	return o.Offset, true
}
