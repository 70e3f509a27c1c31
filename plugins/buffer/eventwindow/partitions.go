package eventwindow

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/txnoffsets"
)

// This file detects partial windows. A process whose kafka_source reads only
// some partitions of its topics (assignment: group, or a shard of several)
// windows only the records of those partitions. A key whose records sit in
// several partitions then has its windows split over processes, each of
// which emits a partial result, with nothing to tell. Flink shuffles by key
// between its task managers; on Kafka the fix is to repartition through a
// topic keyed by the window key first (docs/event-time.md).
//
// The check is per window: each window remembers the partition of its first
// record (a pointer per open window, within max_open_windows), and a record of another partition joining it means the
// key is split. That is exactly the case whose results are partial: a key
// spread over partitions whose every window is fed by one partition still
// gets whole results. A process sees only the partitions it reads, so one
// that reads a single partition cannot tell.

// DocsRepartition is where the warning sends the user.
const DocsRepartition = "docs/event-time.md#windows-across-processes"

// maxSplitKeys bounds the keys remembered as reported (about 60 bytes each
// plus the key): when full, the set is cleared, and a split key found again
// later is counted again.
const maxSplitKeys = 10_000

// partitionSharer is a kafka_source session as this check sees it: whether
// other processes may read some partitions of its topics.
type partitionSharer interface {
	PartitionsShared() bool
}

// part is the Kafka partition a record was read from.
type part struct {
	topic     string
	partition int32
}

// partOfLocked returns the partition of msg when its kafka_source shares its
// topics' partitions with other processes, else nil. Partitions are
// interned (one per partition read), so that a window keeps a pointer and
// compares partitions by it.
func (b *Buffer) partOfLocked(msg *service.Message) *part {
	o, ok := txnoffsets.FromContext(msg.Context())
	if !ok {
		return nil
	}
	if s, ok := o.Source.(partitionSharer); !ok || !s.PartitionsShared() {
		return nil
	}
	p := part{topic: o.Topic, partition: o.Partition}
	ip := b.mu.parts[p]
	if ip == nil {
		ip = &p
		b.mu.parts[p] = ip
	}
	return ip
}

// notePartLocked records that a record of p joins w, and reports the key as
// split the first time a window of it holds records of two partitions.
func (b *Buffer) notePartLocked(w *window, p *part) {
	switch {
	case p == nil || w.split:
	case w.from == nil:
		w.from = p
	case w.from != p:
		w.split = true
		b.splitKeyLocked(w.key, *w.from, *p)
	}
}

// mergePartsLocked carries the partition check over a session merge of o
// into w.
func (b *Buffer) mergePartsLocked(w, o *window) {
	if o.split {
		w.split = true
		return
	}
	b.notePartLocked(w, o.from)
}

// splitKeyLocked counts a key found in several partitions, once while it is
// remembered, and logs the first one at warn level (later ones at debug).
func (b *Buffer) splitKeyLocked(key string, a, c part) {
	if _, seen := b.mu.splitKeys[key]; seen {
		return
	}
	if len(b.mu.splitKeys) >= maxSplitKeys {
		clear(b.mu.splitKeys)
	}
	b.mu.splitKeys[key] = struct{}{}
	b.met.splitKeys.Incr(1)
	log := b.log.Debugf
	if !b.mu.splitWarned {
		b.mu.splitWarned = true
		log = b.log.Warnf
	}
	log("event_window: window key %q arrives from more than one partition (topic %s partition %d, topic %s partition %d), "+
		"and this process reads only some partitions of its topics (kafka_source assignment: group, or a shard): each process "+
		"emits a partial result for the windows of such keys. Repartition first, by the window key, through a topic keyed by it "+
		"(a kafka_sink with key set to the window key), and window that topic with key: ${! @kafka_key }; see %s. "+
		"Metric event_window_keys_from_several_partitions counts such keys; later ones are logged at debug level",
		key, a.topic, a.partition, c.topic, c.partition, DocsRepartition)
}
