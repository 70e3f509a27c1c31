package txnoffsets

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// This file extends the pairing to results that an operator derives from
// many source records: the event_window buffer's window results. A window
// result cannot carry the origins of its inputs (a one-minute window can
// hold millions of records), so the pairing works by watermark instead, as
// Flink's checkpoints of window state would:
//
//   - The buffer emits results in a total order, by (fire time, key, start):
//     the watermark only grows, and a window is created only when its fire
//     time is above it, so every window fires after every window before it
//     in that order. That makes "every window up to W is in the output" one
//     value, the Cutoff W.
//   - Each result carries a Result token (Emitter and emission sequence). A
//     sink that commits results in a transaction asks the emitter to
//     prepare them: the emitter checks that every earlier result is already
//     committed or in this transaction (else the transaction aborts and the
//     results are retried in order), and asks each upstream source for the
//     offsets of all its partitions, with the cutoff and the source's read
//     position as the partition's offset-commit metadata.
//   - The offsets committed are the sources' own held-back positions (the
//     lowest offset not yet acknowledged), which never skip a record of a
//     window that is not in the output. After a crash the source restores
//     the cutoff and the read positions from the metadata; the buffer drops
//     replayed records of windows at or before the cutoff, which are in the
//     output already, and recomputes the others.

// Cutoff names the last window result committed: windows are emitted in
// (FireAt, Key, Start) order, and every window at or before the cutoff is in
// the output.
type Cutoff struct {
	FireAt int64  `json:"f"`
	Key    string `json:"k"`
	Start  int64  `json:"s"`
}

// CompareWindow orders the window (fireAt, key, start) against c: -1 before
// it, 0 the same window, +1 after it.
func CompareWindow(fireAt int64, key string, start int64, c Cutoff) int {
	if r := cmp.Compare(fireAt, c.FireAt); r != 0 {
		return r
	}
	if r := strings.Compare(key, c.Key); r != 0 {
		return r
	}
	return cmp.Compare(start, c.Start)
}

// After reports whether c is later than o in window order.
func (c Cutoff) After(o Cutoff) bool { return CompareWindow(c.FireAt, c.Key, c.Start, o) > 0 }

// windowMetaPrefix starts the offset-commit metadata of a window commit;
// metadata without it (Kafka clients put their member id there) is not
// window state.
const windowMetaPrefix = "connectd-window/1 "

// MaxWindowMeta is the longest metadata a window commit writes: Kafka
// brokers refuse longer metadata by default (offset.metadata.max.bytes,
// 4096 bytes).
const MaxWindowMeta = 4096

// ErrWindowKeyTooLong is returned by EncodeWindowMeta when a window key does
// not fit in the offset-commit metadata.
var ErrWindowKeyTooLong = errors.New("window key too long for the offset-commit metadata")

type windowMeta struct {
	Cutoff
	// ReadEnd is the source's fetch position when the commit was
	// prepared: records below it were read before, so on a restart they
	// are replays.
	ReadEnd int64 `json:"r"`
}

// EncodeWindowMeta is the offset-commit metadata of a partition committed
// with window results: the cutoff and the partition's read position.
func EncodeWindowMeta(c Cutoff, readEnd int64) (string, error) {
	raw, err := json.Marshal(windowMeta{Cutoff: c, ReadEnd: readEnd})
	if err != nil {
		return "", err
	}
	if len(windowMetaPrefix)+len(raw) > MaxWindowMeta {
		return "", fmt.Errorf("%w: key %.64q... is %d bytes; offset-commit metadata holds at most %d bytes (broker offset.metadata.max.bytes)",
			ErrWindowKeyTooLong, c.Key, len(c.Key), MaxWindowMeta)
	}
	return windowMetaPrefix + string(raw), nil
}

// ParseWindowMeta reads metadata written by EncodeWindowMeta. ok is false
// for other metadata (none, or a client's member id); an error means the
// metadata has the window prefix and cannot be read.
func ParseWindowMeta(s string) (c Cutoff, readEnd int64, ok bool, err error) {
	rest, found := strings.CutPrefix(s, windowMetaPrefix)
	if !found {
		return Cutoff{}, 0, false, nil
	}
	var m windowMeta
	if err := json.Unmarshal([]byte(rest), &m); err != nil {
		return Cutoff{}, 0, false, fmt.Errorf("reading window state from offset-commit metadata %q: %w", s, err)
	}
	return m.Cutoff, m.ReadEnd, true, nil
}

// Restored is what a source read from its committed window state.
type Restored struct {
	// Cutoff is the latest cutoff over the source's partitions.
	Cutoff Cutoff
	// Replay is true when the record was read by the run that committed
	// the cutoff (below its read position): a replay, not a new record.
	Replay bool
}

// WindowSource is a Source that also commits offsets for window results.
type WindowSource interface {
	Source
	// Restored returns the window state committed for the partition of a
	// record (ok false when none was).
	Restored(tp TopicPartition, offset int64) (r Restored, ok bool)
	// PrepareWindows returns the offsets to commit with window results up
	// to cut, for every partition the source reads, each with metadata
	// (EncodeWindowMeta) naming cut and the partition's read position.
	// The offsets are the source's own commit positions (an unacknowledged
	// record holds its partition back) and never move backwards. From then
	// on the source commits these partitions itself only while none of
	// their records is in flight. ErrSourceEnded means the source's session
	// ended: the results made from its records must not commit, since
	// the session that replaces it reads those records again.
	PrepareWindows(cut Cutoff) ([]Commit, error)
}

// ErrSourceEnded is returned by WindowSource.PrepareWindows once the session
// ended (the input reconnected or closed).
var ErrSourceEnded = errors.New("the kafka_source session ended")

// SourceCommit is one source's part of a transaction of window results.
type SourceCommit struct {
	Source  Source
	Commits []Commit
}

// Emitter is an operator whose results a transactional sink commits
// together with its sources' offsets (the event_window buffer).
//
// The sink calls PrepareResults with the sequence numbers of the results in
// its open transaction; only once the transaction committed, it calls
// ResultsCommitted with them, then Committed on each source, then
// acknowledges the messages. Calls are serialised by the sink.
type Emitter interface {
	// PrepareResults returns the offsets to commit with the results seqs.
	// An error means they cannot commit now (an earlier result is not
	// committed): the transaction must abort and the results be retried.
	PrepareResults(seqs []uint64) ([]SourceCommit, error)
	// ResultsCommitted tells the emitter that results were committed.
	ResultsCommitted(seqs []uint64)
}

// Result identifies a result message of an Emitter.
type Result struct {
	Emitter Emitter
	Seq     uint64
}

type resultKey struct{}

type resultContext struct {
	context.Context
	r Result
}

func (c *resultContext) Value(key any) any {
	switch key {
	case resultKey{}:
		return &c.r
	case originKey{}:
		return nil // a result is not the record it came from
	}
	return c.Context.Value(key)
}

// WithResult returns a context carrying r and no Origin.
func WithResult(parent context.Context, r Result) context.Context {
	return &resultContext{Context: parent, r: r}
}

// ResultFromContext returns the Result ctx carries, if any.
func ResultFromContext(ctx context.Context) (Result, bool) {
	if ctx == nil {
		return Result{}, false
	}
	r, ok := ctx.Value(resultKey{}).(*Result)
	if !ok || r.Emitter == nil {
		return Result{}, false
	}
	return *r, true
}

type noOriginContext struct{ context.Context }

func (c noOriginContext) Value(key any) any {
	if key == (originKey{}) {
		return nil
	}
	return c.Context.Value(key)
}

// WithoutOrigin returns a context that hides the Origin of parent: for a
// message passed on by an operator that holds its acknowledgement, whose
// offset must not be committed by its own transaction.
func WithoutOrigin(parent context.Context) context.Context {
	return noOriginContext{parent}
}
