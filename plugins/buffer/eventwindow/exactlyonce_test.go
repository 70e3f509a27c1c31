package eventwindow

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/txnoffsets"
)

// fakeWindowSource is a kafka_source as the buffer sees it: it restores a
// cutoff for records below readEnd and records the cutoffs it prepares.
type fakeWindowSource struct {
	txnoffsets.Source
	restored *txnoffsets.Cutoff
	readEnd  int64
	ended    bool

	mu       sync.Mutex
	prepared []txnoffsets.Cutoff
}

func (f *fakeWindowSource) GroupID() string { return "g" }

func (f *fakeWindowSource) Restored(_ txnoffsets.TopicPartition, offset int64) (txnoffsets.Restored, bool) {
	if f.restored == nil {
		return txnoffsets.Restored{}, false
	}
	return txnoffsets.Restored{Cutoff: *f.restored, Replay: offset < f.readEnd}, true
}

func (f *fakeWindowSource) PrepareWindows(cut txnoffsets.Cutoff) ([]txnoffsets.Commit, error) {
	if f.ended {
		return nil, txnoffsets.ErrSourceEnded
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prepared = append(f.prepared, cut)
	return []txnoffsets.Commit{{Member: txnoffsets.NoMember, Offsets: map[txnoffsets.TopicPartition]int64{{Topic: "t"}: 7}}}, nil
}

// fromSource makes r a record of src at offset of partition t/0.
func fromSource(src txnoffsets.Source, offset int64, r in) *service.Message {
	m := msgOf(r)
	return m.WithContext(txnoffsets.WithOrigin(context.Background(), txnoffsets.Origin{Source: src, Topic: "t", Offset: offset}))
}

func readResults(t *testing.T, b *Buffer) (service.MessageBatch, service.AckFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	batch, ack, err := b.ReadBatch(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return batch, ack
}

func seqsOf(t *testing.T, batch service.MessageBatch) []uint64 {
	t.Helper()
	var out []uint64
	for i, m := range batch {
		r, ok := txnoffsets.ResultFromContext(m.Context())
		if !ok {
			t.Fatalf("result %d carries no token", i)
		}
		if _, ok := txnoffsets.FromContext(m.Context()); ok {
			t.Fatalf("result %d carries an origin", i)
		}
		out = append(out, r.Seq)
	}
	return out
}

const eosTumbling = `
type: tumbling
size: 10s
key: ${! json("user") }
aggregates: { n: count }
`

// Window results carry tokens in window order; PrepareResults asks every
// upstream source for its commits with the cutoff of the last result, and
// the input is acknowledged only after the result.
func TestResultsCommitWithCutoff(t *testing.T) {
	t.Parallel()
	b := newTestBuffer(t, eosTumbling)
	src := &fakeWindowSource{}
	var acks ackRecorder
	for i, r := range []in{
		{`{"user":"b"}`, 1000, 0},
		{`{"user":"a"}`, 2000, 0},
		{`{"user":"a"}`, 12000, 10000}, // fires a and b of [0,10s)
	} {
		if err := b.WriteBatch(context.Background(), service.MessageBatch{fromSource(src, int64(i), r)}, acks.fn(i)); err != nil {
			t.Fatal(err)
		}
	}
	batch, ack := readResults(t, b)
	seqs := seqsOf(t, batch)
	if !slices.Equal(seqs, []uint64{1, 2}) {
		t.Fatalf("seqs %v, want [1 2]", seqs)
	}
	if k, _ := batch[0].MetaGet(MetaWindowKey); k != "a" {
		t.Fatalf("first result is key %q: results must come in (fire time, key, start) order", k)
	}
	scs, err := b.PrepareResults(seqs)
	if err != nil {
		t.Fatal(err)
	}
	if len(scs) != 1 || scs[0].Source != src || len(scs[0].Commits) != 1 {
		t.Fatalf("PrepareResults = %+v, want the source's commit", scs)
	}
	want := txnoffsets.Cutoff{FireAt: 9999, Key: "b", Start: 0}
	if !reflect.DeepEqual(src.prepared, []txnoffsets.Cutoff{want}) {
		t.Fatalf("source prepared %+v, want cutoff %+v", src.prepared, want)
	}
	if got := acks.get(0); len(got) != 0 {
		t.Fatal("input acknowledged before its result")
	}
	b.ResultsCommitted(seqs)
	_ = ack(context.Background(), nil)
	acks.waitAcked(t, 0)
	acks.waitAcked(t, 1)
	if got := acks.get(2); len(got) != 0 {
		t.Fatal("the input of an open window was acknowledged")
	}
}

// With a transactional output, results go out one batch at a time, and a
// refused batch is handed out again before any later result: a transaction
// of later results while an earlier one waits is refused.
func TestResultsInOrderOneBatchAtATime(t *testing.T) {
	t.Parallel()
	b := newTestBuffer(t, eosTumbling)
	src := &fakeWindowSource{}
	write := func(i int, r in) {
		t.Helper()
		if err := b.WriteBatch(context.Background(), service.MessageBatch{fromSource(src, int64(i), r)}, func(context.Context, error) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	write(0, in{`{"user":"a"}`, 1000, 0})
	write(1, in{`{"user":"a"}`, 12000, 10000}) // fires [0,10s)
	first, ack1 := readResults(t, b)
	// A transactional output prepares it (and so shows itself).
	if _, err := b.PrepareResults(seqsOf(t, first)); err != nil {
		t.Fatal(err)
	}
	write(2, in{`{"user":"a"}`, 22000, 20000}) // fires [10s,20s)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := b.ReadBatch(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second batch handed out while the first is in flight (err %v)", err)
	}
	_ = ack1(context.Background(), errors.New("transaction aborted"))
	// The refused result waits for its retry: a later one cannot commit.
	if _, err := b.PrepareResults([]uint64{2}); !errors.Is(err, ErrResultOrder) {
		t.Fatalf("PrepareResults of a later result = %v, want ErrResultOrder", err)
	}
	// The retry hands out the refused result first, the later one with it.
	again, ack2 := readResults(t, b)
	if got := seqsOf(t, again); !slices.Equal(got, []uint64{1, 2}) {
		t.Fatalf("retried batch %v, want [1 2]", got)
	}
	if _, err := b.PrepareResults(seqsOf(t, again)); err != nil {
		t.Fatal(err)
	}
	b.ResultsCommitted(seqsOf(t, again))
	_ = ack2(context.Background(), nil)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.mu.results) != 0 {
		t.Fatalf("%d results still pending after their commit", len(b.mu.results))
	}
}

// After a restart, replayed records of windows at or before the restored
// cutoff are dropped (their results are in the output), new records of
// those windows are late, and every other window is computed as usual.
func TestRestoredCutoffSkipsReplays(t *testing.T) {
	t.Parallel()
	b := newTestBuffer(t, eosTumbling+"late: error\n")
	// The previous run committed [0,10s) of key a; b's [0,10s) comes after
	// it in window order and was not committed.
	src := &fakeWindowSource{restored: &txnoffsets.Cutoff{FireAt: 9999, Key: "a", Start: 0}, readEnd: 3}
	var acks ackRecorder
	for i, r := range []in{
		{`{"user":"a"}`, 1000, 0},  // replay, committed window: skipped
		{`{"user":"b"}`, 2000, 0},  // replay, window not committed: counted
		{`{"user":"a"}`, 11000, 0}, // replay, later window: counted
		{`{"user":"a"}`, 3000, 0},  // new record of a committed window: late
		{`{"user":"b"}`, 4000, 0},  // new: counted
	} {
		if err := b.WriteBatch(context.Background(), service.MessageBatch{fromSource(src, int64(i), r)}, acks.fn(i)); err != nil {
			t.Fatal(err)
		}
	}
	res, errs := drain(t, b)
	got := decode(t, res)
	want := []result{
		{"key": "a", "window_start_ms": 10000.0, "window_end_ms": 20000.0, "n": 1.0},
		{"key": "b", "window_start_ms": 0.0, "window_end_ms": 10000.0, "n": 2.0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("results:\n got %v\nwant %v", got, want)
	}
	if len(errs) != 1 || !errors.Is(errs[0], ErrLate) {
		t.Fatalf("errors %v, want one late record", errs)
	}
	acks.waitAcked(t, 0) // a skipped replay is acknowledged at once
}

// Errored passthrough records hide their origin: their offsets are not
// the transaction's.
func TestPassthroughHidesOrigin(t *testing.T) {
	t.Parallel()
	src := &fakeWindowSource{}
	b := newTestBuffer(t, eosTumbling+"late: error\n")
	for i, r := range []in{{`{"user":"a"}`, 12000, 12000}, {`{"user":"a"}`, 1000, 12000}} {
		if err := b.WriteBatch(context.Background(), service.MessageBatch{fromSource(src, int64(i), r)}, func(context.Context, error) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	batch, _ := readResults(t, b)
	if len(batch) != 1 || !errors.Is(batch[0].GetError(), ErrLate) {
		t.Fatalf("batch %v, want the late record", batch)
	}
	if _, ok := txnoffsets.FromContext(batch[0].Context()); ok {
		t.Fatal("a passthrough record carries its origin")
	}
}

// Sessions after a restart: the replay rebuilds them, and a session that
// fires at or before the restored cutoff (by fire time and key) is part of
// one in the output already: it is dropped. The others are emitted, with
// tokens.
func TestRestoredCutoffDropsReplayedSessions(t *testing.T) {
	t.Parallel()
	b := newTestBuffer(t, "type: session\ngap: 3s\nkey: ${! json(\"user\") }\naggregates: { n: count }\n")
	// The previous run committed a's session [1s,6s) (fire time 5999) and
	// everything before it.
	src := &fakeWindowSource{restored: &txnoffsets.Cutoff{FireAt: 5999, Key: "a", Start: 1000}, readEnd: 100}
	var acks ackRecorder
	for i, r := range []in{
		{`{"user":"a"}`, 3000, 0},  // the rest of a's committed session: [3s,6s), dropped
		{`{"user":"b"}`, 2000, 0},  // b's [2s,5s) fires before the cutoff: dropped
		{`{"user":"c"}`, 3000, 0},  // c's [3s,6s) fires with a's, after it by key: emitted
		{`{"user":"b"}`, 12000, 0}, // later: emitted
		{`{"user":"a"}`, 20000, 20000},
	} {
		if err := b.WriteBatch(context.Background(), service.MessageBatch{fromSource(src, int64(i), r)}, acks.fn(i)); err != nil {
			t.Fatal(err)
		}
	}
	batch, ack := readResults(t, b)
	seqsOf(t, batch) // every result carries a token
	var got []string
	for _, m := range batch {
		raw, _ := m.AsBytes()
		got = append(got, string(raw))
	}
	want := []string{
		`{"key":"c","n":1,"window_end_ms":6000,"window_start_ms":3000}`,
		`{"key":"b","n":1,"window_end_ms":15000,"window_start_ms":12000}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("results %v, want %v", got, want)
	}
	acks.waitAcked(t, 0) // the dropped sessions' input is acknowledged
	acks.waitAcked(t, 1)
	_ = ack(context.Background(), nil)
	acks.waitAcked(t, 2)
}

// Results made from the records of a source session that ended are refused:
// committing them without that session's offsets and window state would
// let its successor, which reads the records again, count them twice. The
// session stays registered, so that its successor's first record resets
// the buffer (TestSourceReconnectRecomputes).
func TestEndedSourceRefusesResults(t *testing.T) {
	t.Parallel()
	b := newTestBuffer(t, eosTumbling)
	src := &fakeWindowSource{ended: true}
	for i, r := range []in{{`{"user":"a"}`, 1000, 0}, {`{"user":"a"}`, 12000, 10000}} {
		if err := b.WriteBatch(context.Background(), service.MessageBatch{fromSource(src, int64(i), r)}, func(context.Context, error) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	batch, _ := readResults(t, b)
	scs, err := b.PrepareResults(seqsOf(t, batch))
	if !errors.Is(err, ErrSourceReconnected) || len(scs) != 0 {
		t.Fatalf("PrepareResults = %v, %v; want ErrSourceReconnected for an ended source", scs, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.mu.sources[src]; !ok {
		t.Fatal("the ended source is no longer registered: its successor would not reset the buffer")
	}
}

// An output that splits a batch of results over two transactions, the first
// committed and the second aborted, gets only the uncommitted results again;
// the committed ones are done and their inputs acknowledged.
func TestCommittedPartOfRefusedBatchNotRetried(t *testing.T) {
	t.Parallel()
	b := newTestBuffer(t, eosTumbling)
	src := &fakeWindowSource{}
	var acks ackRecorder
	for i, r := range []in{{`{"user":"a"}`, 1000, 0}, {`{"user":"b"}`, 1000, 0}, {`{"user":"a"}`, 12000, 10000}} {
		if err := b.WriteBatch(context.Background(), service.MessageBatch{fromSource(src, int64(i), r)}, acks.fn(i)); err != nil {
			t.Fatal(err)
		}
	}
	batch, ack := readResults(t, b)
	if got := seqsOf(t, batch); !slices.Equal(got, []uint64{1, 2}) {
		t.Fatalf("batch %v, want [1 2]", got)
	}
	if _, err := b.PrepareResults([]uint64{1}); err != nil {
		t.Fatal(err)
	}
	b.ResultsCommitted([]uint64{1})
	_ = ack(context.Background(), errors.New("second transaction aborted"))
	again, _ := readResults(t, b)
	if got := seqsOf(t, again); !slices.Equal(got, []uint64{2}) {
		t.Fatalf("retried %v, want only the uncommitted [2]", got)
	}
	acks.waitAcked(t, 0) // a's [0,10s) is in the output
	if got := acks.get(1); len(got) != 0 {
		t.Fatal("the input of the uncommitted result was acknowledged")
	}
}

// When the kafka_source reconnects (a new session of the same group), it
// reads again from the held-back offsets: the buffer drops what the old
// session's records built (open windows, unsent and in-flight results),
// nacks their input, and computes the windows from the new session alone.
func TestSourceReconnectRecomputes(t *testing.T) {
	t.Parallel()
	b := newTestBuffer(t, eosTumbling)
	old, renewed := &fakeWindowSource{}, &fakeWindowSource{}
	var acks ackRecorder
	write := func(i int, src *fakeWindowSource, r in) {
		t.Helper()
		if err := b.WriteBatch(context.Background(), service.MessageBatch{fromSource(src, int64(i), r)}, acks.fn(i)); err != nil {
			t.Fatal(err)
		}
	}
	write(0, old, in{`{"user":"a"}`, 1000, 0})
	write(1, old, in{`{"user":"a"}`, 12000, 10000}) // fires a [0,10s)
	inflight, ack := readResults(t, b)
	write(2, old, in{`{"user":"b"}`, 13000, 10000}) // open [10s,20s)

	// The new session reads everything again, from offset 0.
	write(10, renewed, in{`{"user":"a"}`, 1000, 0})
	for _, i := range []int{1, 2} {
		if got := acks.get(i); len(got) != 1 || !errors.Is(got[0], ErrSourceReconnected) {
			t.Fatalf("old input %d: acks %v, want one ErrSourceReconnected nack", i, got)
		}
	}
	if _, err := b.PrepareResults(seqsOf(t, inflight)); !errors.Is(err, ErrSourceReconnected) {
		t.Fatalf("PrepareResults of the old session's result = %v, want ErrSourceReconnected", err)
	}
	_ = ack(context.Background(), errors.New("transaction aborted"))
	write(11, renewed, in{`{"user":"a"}`, 12000, 10000})
	write(12, renewed, in{`{"user":"b"}`, 13000, 10000})
	res, errs := drain(t, b)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := []result{
		{"key": "a", "window_start_ms": 0.0, "window_end_ms": 10000.0, "n": 1.0},
		{"key": "a", "window_start_ms": 10000.0, "window_end_ms": 20000.0, "n": 1.0},
		{"key": "b", "window_start_ms": 10000.0, "window_end_ms": 20000.0, "n": 1.0},
	}
	if got := decode(t, res); !reflect.DeepEqual(got, want) {
		t.Fatalf("results:\n got %v\nwant %v (each record once)", got, want)
	}
	if got := acks.get(0); len(got) != 1 || !errors.Is(got[0], ErrSourceReconnected) {
		t.Fatalf("old input 0: acks %v, want the nack of its dropped result", got)
	}
}

// partitionCutSource restores a cutoff for partition 0 only, as a
// partition that another process of the group committed and that moved to
// this one.
type partitionCutSource struct {
	fakeWindowSource
	cut txnoffsets.Cutoff
}

func (f *partitionCutSource) Restored(tp txnoffsets.TopicPartition, offset int64) (txnoffsets.Restored, bool) {
	if tp.Partition != 0 {
		return txnoffsets.Restored{}, false
	}
	return txnoffsets.Restored{Cutoff: f.cut, Replay: offset < 1}, true
}

// A partition's restored cutoff applies to its own records only: of
// processes that share the partitions, another one's cutoff says nothing of
// this one's windows.
func TestRestoredCutoffPerPartition(t *testing.T) {
	b := newTestBuffer(t, eosTumbling)
	defer b.Close(context.Background())
	src := &partitionCutSource{cut: txnoffsets.Cutoff{FireAt: 19_999, Key: "zz", Start: 10_000}}
	rec := func(p int32, offset int64, user string, ts, wm int64) *service.Message {
		m := msgOf(in{content: `{"user":"` + user + `"}`, ts: ts, wm: wm})
		return m.WithContext(txnoffsets.WithOrigin(context.Background(), txnoffsets.Origin{Source: src, Topic: "t", Partition: p, Offset: offset}))
	}
	batch := service.MessageBatch{
		rec(0, 0, "a", 15_000, -1), // a replay of a window in the output
		rec(1, 0, "b", 15_000, -1), // partition 1's window [10s, 20s) is not
		rec(1, 1, "b", 25_000, 21_000),
	}
	if err := b.WriteBatch(context.Background(), batch, func(context.Context, error) error { return nil }); err != nil {
		t.Fatal(err)
	}
	out, ack := readResults(t, b)
	defer func() { _ = ack(context.Background(), nil) }()
	if len(out) != 1 {
		t.Fatalf("%d results, want 1", len(out))
	}
	raw, _ := out[0].AsBytes()
	if string(raw) != `{"key":"b","n":1,"window_end_ms":20000,"window_start_ms":10000}` {
		t.Errorf("result %s, want b's window [10s, 20s) with 1 record", raw)
	}
}
