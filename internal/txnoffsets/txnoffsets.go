// Package txnoffsets pairs kafka_source with an exactly-once kafka_sink: the
// source attaches the origin of every message it emits (which source, which
// topic, partition and offset) to the message's context, and the sink, which
// writes a batch in one Kafka transaction, commits the source consumer
// group's offsets for the batch inside that transaction (KIP-98 / KIP-447:
// AddOffsetsToTxn + TxnOffsetCommit).
//
// The origin travels in the message context rather than in metadata: it is
// not user data, processors cannot rewrite it by accident, and a message
// created by a processor (which has no origin) simply does not pair. A
// message that a processor copies keeps the context and so the origin.
package txnoffsets

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Origin is where a message was read: the source that emitted it and the
// record's topic, partition and offset.
type Origin struct {
	Source    Source
	Topic     string
	Partition int32
	Offset    int64
}

// Member is the consumer group member that a transactional offset commit is
// made as (KIP-447): in group mode the live member id and generation of the
// reader that owns the partition, so that the broker refuses the commit of a
// zombie whose partition moved; without group membership "" and -1.
type Member struct {
	ID         string
	Generation int32
}

// NoMember is the member of a source that is not a group member
// (assignment: enumerator).
var NoMember = Member{Generation: -1}

// Commit is what a source asks the sink to commit in its transaction, for
// one group member.
type Commit struct {
	Member Member
	// Offsets are the next offsets to read (one past the last record
	// written), per partition.
	Offsets map[TopicPartition]int64
	// Metadata is the offset-commit metadata per partition, "" (none)
	// where missing: window state for window results (EncodeWindowMeta).
	Metadata map[TopicPartition]string
}

// Source is a kafka_source as the sink sees it.
//
// The sink calls Prepare with the origins of the records it has written in
// its open transaction, sends the returned offsets in the transaction, and,
// only once the transaction committed, calls Committed with what it
// committed (then acknowledges the messages). Calls are serialised by the
// sink.
type Source interface {
	// GroupID is the consumer group whose offsets are committed.
	GroupID() string
	// Cluster identifies the cluster the source reads: its cluster id
	// when known, else its sorted seed brokers (see SameCluster).
	Cluster() ClusterIdentity
	// Prepare returns the offsets to commit if the given origins were
	// acknowledged, per group member: for each partition, the lowest
	// offset that would still be unacknowledged (so an earlier record
	// still in flight holds the offset back, exactly as the source's own
	// commits do). Partitions whose offset would not move past what is
	// committed already are left out. From then on the source does not
	// commit these partitions itself. An error means the origins no
	// longer belong to this source (a revoked partition, a retired
	// session): the transaction must abort.
	Prepare(origins []Origin) ([]Commit, error)
	// Committed tells the source that offsets were committed in a
	// transaction.
	Committed(offsets map[TopicPartition]int64)
}

// ClusterIdentity is what two clients compare to know whether they talk to
// the same cluster.
type ClusterIdentity struct {
	// ID is the cluster id from metadata, "" when unknown.
	ID string
	// SeedBrokers are the configured seed brokers.
	SeedBrokers []string
}

// SameCluster reports whether a and b name the same cluster: by cluster id
// when both know it, else by equal sets of seed brokers.
func SameCluster(a, b ClusterIdentity) bool {
	if a.ID != "" && b.ID != "" {
		return a.ID == b.ID
	}
	return slices.Equal(normalise(a.SeedBrokers), normalise(b.SeedBrokers))
}

func normalise(brokers []string) []string {
	out := make([]string, len(brokers))
	for i, b := range brokers {
		out[i] = strings.ToLower(strings.TrimSpace(b))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// originKey is the context key of an Origin.
type originKey struct{}

// OriginContext is a context carrying an Origin. It is one allocation: a
// source can allocate the contexts of a whole batch in one slice.
type OriginContext struct {
	context.Context
	origin Origin
}

// Set makes c carry o on top of parent.
func (c *OriginContext) Set(parent context.Context, o Origin) {
	c.Context, c.origin = parent, o
}

// Value returns the Origin for the origin key, else what the parent holds.
func (c *OriginContext) Value(key any) any {
	if key == (originKey{}) {
		return &c.origin
	}
	return c.Context.Value(key)
}

// Origins are the origins of a batch of messages, kept once by their
// source: Origin(i) is the i-th message's. It must not change once the
// batch's contexts are handed out, and is read from any goroutine.
type Origins interface {
	Origin(i int) Origin
}

// IndexContext is the context of the i-th message of a batch whose origins
// are Origins: FromContext finds its origin there, so that a source does not
// copy each message's origin into its context. It has no parent: its
// deadline, cancellation and every other value are context.Background's.
type IndexContext struct {
	batch Origins
	i     int
}

// BatchContexts returns the contexts of a batch of n messages whose origins
// are batch, the i-th for message i: one allocation for the batch.
func BatchContexts(batch Origins, n int) []IndexContext {
	cs := make([]IndexContext, n)
	for i := range cs {
		cs[i] = IndexContext{batch: batch, i: i}
	}
	return cs
}

// Deadline is context.Background's: none.
func (c *IndexContext) Deadline() (time.Time, bool) { return time.Time{}, false }

// Done is context.Background's: never closed.
func (c *IndexContext) Done() <-chan struct{} { return nil }

// Err is context.Background's: nil.
func (c *IndexContext) Err() error { return nil }

// Value returns c for the origin key (FromContext asks c's batch), nil for
// any other.
func (c *IndexContext) Value(key any) any {
	if key == (originKey{}) {
		return c
	}
	return nil
}

// WithOrigin returns a context carrying o.
func WithOrigin(parent context.Context, o Origin) context.Context {
	c := &OriginContext{}
	c.Set(parent, o)
	return c
}

// FromContext returns the origin ctx carries, if any.
func FromContext(ctx context.Context) (Origin, bool) {
	if ctx == nil {
		return Origin{}, false
	}
	var o Origin
	switch v := ctx.Value(originKey{}).(type) {
	case *Origin:
		o = *v
	case *IndexContext:
		o = v.batch.Origin(v.i)
	}
	if o.Source == nil {
		return Origin{}, false
	}
	return o, true
}

// NotOwnedError is returned by Prepare for partitions the source no longer
// reads (revoked or lost in group mode, or read by a session that ended):
// their records must not commit here; their new owner reads them again from
// the committed offset.
type NotOwnedError struct {
	Group      string
	Partitions []TopicPartition
	Reason     string
}

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("consumer group %q: partitions %v are no longer read by this input (%s)", e.Group, e.Partitions, e.Reason)
}
