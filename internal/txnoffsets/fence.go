package txnoffsets

import "sync/atomic"

// fences counts the times an exactly-once sink of this process finished
// fencing the predecessors of its transactional producers (InitProducerID of
// every producer it will use).
var fences atomic.Uint64

// Fenced records that an exactly-once sink finished fencing its
// predecessors: from now on a transaction that a killed predecessor left
// open, or whose requests were still on their way to the broker, can no
// longer commit, and the consumer group's committed offsets only move by
// this process's transactions.
//
// Before that, committed offsets read by a source may be stale: a request
// to commit the predecessor's last transaction (TxnOffsetCommit, EndTxn)
// can reach the broker after the source's OffsetFetch, even with
// require-stable, since the transaction had no pending offsets yet when the
// fetch was answered. A source compares Fences before its fetch with
// Fences when the sink first hands it records, and reads the offsets again
// if a fence came between.
func Fenced() { fences.Add(1) }

// Fences returns how many times an exactly-once sink of this process
// finished fencing its predecessors (Fenced).
func Fences() uint64 { return fences.Load() }
