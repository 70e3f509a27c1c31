package txnoffsets

// This file is the durability handshake that lets records flow: a sink that
// writes a kafka_source's records hands them to its producer, tells the
// source they are written but not yet durable (Hold), and returns, so that
// Benthos acknowledges the messages at once and the source frees them. The
// source then commits no offset at or past a held record until the sink
// reports it durable: Release when Kafka acknowledged the records
// (at-least-once), CommittedHeld when the transaction that holds them
// committed (exactly-once). If they are lost instead (a transaction aborted),
// the sink asks the source to Rewind: it reads again from its committed
// offsets, as a Flink job recovers from its last checkpoint.
//
// Nothing is kept in memory for redelivery: a Kafka source can always read a
// record again. A held record costs the source one entry per partition and
// hold, not the record.

// HoldID names one Hold of a source.
type HoldID uint64

// Holder is a Source whose messages a sink may let Benthos acknowledge
// before their records are durable in Kafka.
//
// Order of calls: the sink calls Hold before it returns from WriteBatch (so
// before the messages are acknowledged), and the source sees the hold before
// the acknowledgements. A hold ends exactly one way: Release,
// CommittedHeld, or never (after Rewind, or when the run stops: nothing past
// it is committed).
type Holder interface {
	Source
	// Hold registers the records at origins (all of this source) as
	// written and not yet durable: until the hold ends, the source
	// commits no offset at or past the lowest of them in each partition.
	// An error (a *NotOwnedError: a revoked partition, a session that
	// ended or rewinds) means the origins no longer belong to this
	// source: the sink must not write them (they are read again).
	Hold(origins []Origin) (HoldID, error)
	// Release ends holds whose records Kafka acknowledged.
	Release(ids []HoldID)
	// PrepareHeld returns the offsets a transaction that holds exactly
	// the records of ids commits, per group member: for each partition
	// of those holds, the offset it would have once they end (an earlier
	// record still unacknowledged or held by a later transaction holds it
	// back). Partitions whose offset would not move past what is
	// committed are left out. An error means the transaction must abort.
	PrepareHeld(ids []HoldID) ([]Commit, error)
	// CommittedHeld tells the source that offsets were committed in a
	// transaction and ends the holds ids.
	CommittedHeld(offsets map[TopicPartition]int64, ids []HoldID)
	// Rewind tells the source that held records were lost (their
	// transaction aborted): it stops handing out what it read and reads
	// again from the lowest offset not yet durable, in a new session,
	// refusing holds of the old one meanwhile. cause is logged.
	Rewind(cause error)
}

// HolderOf returns the origin's source as a Holder, if it is one.
func HolderOf(o Origin) (Holder, bool) {
	h, ok := o.Source.(Holder)
	return h, ok
}
