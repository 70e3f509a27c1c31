package eventwindow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/eventually"
)

func TestMain(m *testing.M) {
	retryDelay = 5 * time.Millisecond
	os.Exit(m.Run())
}

func newTestBuffer(t testing.TB, yaml string) *Buffer {
	t.Helper()
	conf, err := Spec().ParseYAML(yaml, nil)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	c, err := ConfigFromParsed(conf)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return New(c, service.MockResources())
}

// rec is a crafted record: content, event time and the watermark it carries
// (-1: none).
type in struct {
	content string
	ts, wm  int64
}

func msgOf(r in) *service.Message {
	m := service.NewMessage([]byte(r.content))
	m.MetaSetMut("kafka_event_time_ms", r.ts)
	if r.wm >= 0 {
		m.MetaSetMut("kafka_watermark_ms", r.wm)
	}
	return m
}

// ackRecorder counts the acks of input batches.
type ackRecorder struct {
	mu   sync.Mutex
	acks map[int][]error
}

func (a *ackRecorder) fn(i int) service.AckFunc {
	return func(_ context.Context, err error) error {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.acks == nil {
			a.acks = map[int][]error{}
		}
		a.acks[i] = append(a.acks[i], err)
		return nil
	}
}

func (a *ackRecorder) get(i int) []error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]error(nil), a.acks[i]...)
}

// waitAcks waits until batch i is acked and returns its acks.
func (a *ackRecorder) waitAcks(t *testing.T, i int) []error {
	t.Helper()
	var got []error
	eventually.True(t, 5*time.Second, fmt.Sprintf("an ack of batch %d", i), func() bool {
		got = a.get(i)
		return len(got) > 0
	})
	return got
}

// waitAcked waits until batch i is acked, and fails unless once with nil.
func (a *ackRecorder) waitAcked(t *testing.T, i int) {
	t.Helper()
	if got := a.waitAcks(t, i); len(got) != 1 || got[0] != nil {
		t.Fatalf("batch %d acked %v, want one nil", i, got)
	}
}

// waitWriteBlocked waits until a write is blocked waiting for space in b,
// failing the test if the write, whose result done receives, returned.
func waitWriteBlocked(t *testing.T, b *Buffer, done <-chan error) {
	t.Helper()
	eventually.True(t, 5*time.Second, "the write to wait for space", func() bool {
		select {
		case err := <-done:
			t.Fatalf("write did not wait: %v", err)
		default:
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.mu.waiting > 0
	})
}

// writeEach writes every record as its own batch (batch i = record i).
func writeEach(t testing.TB, b *Buffer, acks *ackRecorder, recs []in) {
	t.Helper()
	for i, r := range recs {
		if err := b.WriteBatch(context.Background(), service.MessageBatch{msgOf(r)}, acks.fn(i)); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
}

// drain ends the input and reads and acks every message until the end of
// the buffer; it returns the results as JSON strings and the errored
// messages' errors.
func drain(t testing.TB, b *Buffer) (results []string, errs []error) {
	t.Helper()
	b.EndOfInput()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		batch, ack, err := b.ReadBatch(ctx)
		if errors.Is(err, service.ErrEndOfBuffer) {
			return results, errs
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		for _, m := range batch {
			if err := m.GetError(); err != nil {
				errs = append(errs, err)
				continue
			}
			raw, err := m.AsBytes()
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, string(raw))
		}
		_ = ack(ctx, nil)
	}
}

// row is a result decoded for comparison.
type result map[string]any

func decode(t testing.TB, raw []string) []result {
	t.Helper()
	out := make([]result, len(raw))
	for i, s := range raw {
		if err := json.Unmarshal([]byte(s), &out[i]); err != nil {
			t.Fatalf("result %q: %v", s, err)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i]["key"] != out[j]["key"] {
			return fmt.Sprint(out[i]["key"]) < fmt.Sprint(out[j]["key"])
		}
		return out[i]["window_start_ms"].(float64) < out[j]["window_start_ms"].(float64)
	})
	return out
}

func TestTumblingCountsPerKey(t *testing.T) {
	t.Parallel()
	b := newTestBuffer(t, `
type: tumbling
size: 10s
key: ${! json("user") }
aggregates: { n: count, total: sum(amount), lo: min(amount), hi: max(amount), first: first(amount), last: last(amount) }
`)
	// Out of order within windows; the watermark lags event time by 2s.
	recs := []in{
		{`{"user":"a","amount":1}`, 1000, -1},
		{`{"user":"b","amount":10}`, 2000, 0},
		{`{"user":"a","amount":2}`, 9999, 7999},
		{`{"user":"a","amount":3}`, 500, 7999}, // out of order, same window
		{`{"user":"b","amount":2.5}`, 10000, 8000},
		{`{"user":"a","amount":4}`, 15000, 13000}, // fires [0,10s)
		{`{"user":"c","amount":null}`, 19999, 17999},
		{`{"user":"a","amount":5}`, 25000, 23000}, // fires [10s,20s)
	}
	var acks ackRecorder
	writeEach(t, b, &acks, recs)
	res, errs := drain(t, b)
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	got := decode(t, res)
	want := []result{
		{"key": "a", "window_start_ms": 0.0, "window_end_ms": 10000.0, "n": 3.0, "total": 6.0, "lo": 1.0, "hi": 3.0, "first": 3.0, "last": 2.0},
		{"key": "a", "window_start_ms": 10000.0, "window_end_ms": 20000.0, "n": 1.0, "total": 4.0, "lo": 4.0, "hi": 4.0, "first": 4.0, "last": 4.0},
		{"key": "a", "window_start_ms": 20000.0, "window_end_ms": 30000.0, "n": 1.0, "total": 5.0, "lo": 5.0, "hi": 5.0, "first": 5.0, "last": 5.0},
		{"key": "b", "window_start_ms": 0.0, "window_end_ms": 10000.0, "n": 1.0, "total": 10.0, "lo": 10.0, "hi": 10.0, "first": 10.0, "last": 10.0},
		{"key": "b", "window_start_ms": 10000.0, "window_end_ms": 20000.0, "n": 1.0, "total": 2.5, "lo": 2.5, "hi": 2.5, "first": 2.5, "last": 2.5},
		{"key": "c", "window_start_ms": 10000.0, "window_end_ms": 20000.0, "n": 1.0, "total": nil, "lo": nil, "hi": nil, "first": nil, "last": nil},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("results:\n got %v\nwant %v", got, want)
	}
	for i := range recs {
		acks.waitAcked(t, i)
	}
}

func TestFiringOrderAndRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		lateness string
		wm       int64
		fired    bool
	}{
		{"watermark one before end-1", "0s", 9998, false},
		{"watermark at end-1 fires (Flink maxTimestamp <= watermark)", "0s", 9999, true},
		{"lateness holds the window", "2s", 11998, false},
		{"lateness: fires at end-1+lateness", "2s", 11999, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newTestBuffer(t, "size: 10s\nallowed_lateness: "+tc.lateness+"\naggregates: {n: count}\n")
			var acks ackRecorder
			writeEach(t, b, &acks, []in{{`{}`, 5000, -1}, {`{}`, 10500, tc.wm}})
			b.mu.Lock()
			n := len(b.mu.ready)
			b.mu.Unlock()
			if fired := n == 1; fired != tc.fired {
				t.Fatalf("fired = %v, want %v", fired, tc.fired)
			}
		})
	}
}

func TestSlidingAssignsSizeOverSlideWindows(t *testing.T) {
	t.Parallel()
	b := newTestBuffer(t, "type: sliding\nsize: 30s\nslide: 10s\naggregates: {n: count}\n")
	var acks ackRecorder
	writeEach(t, b, &acks, []in{{`{}`, 25000, -1}, {`{}`, 30000, -1}})
	got := decode(t, must(drain(t, b)))
	want := []result{
		{"key": "", "window_start_ms": 0.0, "window_end_ms": 30000.0, "n": 1.0},
		{"key": "", "window_start_ms": 10000.0, "window_end_ms": 40000.0, "n": 2.0},
		{"key": "", "window_start_ms": 20000.0, "window_end_ms": 50000.0, "n": 2.0},
		{"key": "", "window_start_ms": 30000.0, "window_end_ms": 60000.0, "n": 1.0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("results:\n got %v\nwant %v", got, want)
	}
}

func must(res []string, errs []error) []string {
	if len(errs) > 0 {
		panic(fmt.Sprint(errs))
	}
	return res
}

func TestSessionWindows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		recs []in
		want []result
	}{{
		name: "two sessions apart",
		recs: []in{{`{"u":"a","v":1}`, 0, -1}, {`{"u":"a","v":2}`, 18000, -1}},
		want: []result{
			{"key": "a", "window_start_ms": 0.0, "window_end_ms": 10000.0, "n": 1.0, "s": 1.0},
			{"key": "a", "window_start_ms": 18000.0, "window_end_ms": 28000.0, "n": 1.0, "s": 2.0},
		},
	}, {
		name: "a record bridging two sessions merges them",
		recs: []in{{`{"u":"a","v":1}`, 0, -1}, {`{"u":"a","v":2}`, 18000, -1}, {`{"u":"a","v":4}`, 9000, -1}, {`{"u":"b","v":8}`, 9000, -1}},
		want: []result{
			{"key": "a", "window_start_ms": 0.0, "window_end_ms": 28000.0, "n": 3.0, "s": 7.0},
			{"key": "b", "window_start_ms": 9000.0, "window_end_ms": 19000.0, "n": 1.0, "s": 8.0},
		},
	}, {
		name: "touching sessions merge (Flink intersects: start <= other.end)",
		recs: []in{{`{"u":"a","v":1}`, 0, -1}, {`{"u":"a","v":2}`, 10000, -1}},
		want: []result{{"key": "a", "window_start_ms": 0.0, "window_end_ms": 20000.0, "n": 2.0, "s": 3.0}},
	}, {
		name: "the watermark closes a session; a later record starts a new one",
		recs: []in{{`{"u":"a","v":1}`, 0, -1}, {`{"u":"a","v":2}`, 12000, 9999}, {`{"u":"a","v":4}`, 9500, -1}},
		want: []result{
			{"key": "a", "window_start_ms": 0.0, "window_end_ms": 10000.0, "n": 1.0, "s": 1.0},
			{"key": "a", "window_start_ms": 9500.0, "window_end_ms": 22000.0, "n": 2.0, "s": 6.0},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newTestBuffer(t, "type: session\ngap: 10s\nkey: ${! json(\"u\") }\naggregates: {n: count, s: sum(v)}\n")
			var acks ackRecorder
			writeEach(t, b, &acks, tc.recs)
			if got := decode(t, must(drain(t, b))); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("results:\n got %v\nwant %v", got, tc.want)
			}
			for i := range tc.recs {
				acks.waitAcked(t, i)
			}
		})
	}
}

func TestLateRecords(t *testing.T) {
	t.Parallel()
	recs := []in{
		{`{"id":1}`, 5000, -1},
		{`{"id":2}`, 12000, 10000}, // fires [0,10s)
		{`{"id":3}`, 3000, -1},     // late
	}
	for _, tc := range []struct {
		policy      string
		lateness    string
		wantCounts  []float64
		wantLateErr bool
	}{
		{"drop", "0s", []float64{1, 1}, false},
		{"error", "0s", []float64{1, 1}, true},
		{"drop", "1s", []float64{2, 1}, false}, // lateness keeps [0,10s) open
	} {
		t.Run(tc.policy+"/"+tc.lateness, func(t *testing.T) {
			t.Parallel()
			b := newTestBuffer(t, "size: 10s\nlate: "+tc.policy+"\nallowed_lateness: "+tc.lateness+"\naggregates: {n: count}\n")
			var acks ackRecorder
			writeEach(t, b, &acks, recs)
			res, errs := drain(t, b)
			var counts []float64
			for _, r := range decode(t, res) {
				counts = append(counts, r["n"].(float64))
			}
			if !reflect.DeepEqual(counts, tc.wantCounts) {
				t.Fatalf("counts %v, want %v", counts, tc.wantCounts)
			}
			if tc.wantLateErr {
				if len(errs) != 1 || !errors.Is(errs[0], ErrLate) || !strings.Contains(errs[0].Error(), "event time 3000 ms, watermark 10000 ms") {
					t.Fatalf("errors %v, want one ErrLate", errs)
				}
			} else if len(errs) != 0 {
				t.Fatalf("errors %v, want none", errs)
			}
			for i := range recs {
				acks.waitAcked(t, i)
			}
		})
	}
}

func TestBadRecordsPassThroughErrored(t *testing.T) {
	t.Parallel()
	b := newTestBuffer(t, "size: 10s\naggregates: {s: sum(v)}\n")
	var acks ackRecorder
	noTime := service.NewMessage([]byte(`{"v":1}`))
	for i, m := range []*service.Message{noTime, msgOf(in{`{"v":"x"}`, 1, -1}), msgOf(in{`not json`, 1, -1}), msgOf(in{`{"v":2}`, 1, -1})} {
		if err := b.WriteBatch(context.Background(), service.MessageBatch{m}, acks.fn(i)); err != nil {
			t.Fatal(err)
		}
	}
	res, errs := drain(t, b)
	if len(res) != 1 || len(errs) != 3 {
		t.Fatalf("results %v errors %v", res, errs)
	}
	if !errors.Is(errs[0], ErrEventTime) || !errors.Is(errs[1], ErrRecord) || !errors.Is(errs[2], ErrRecord) {
		t.Fatalf("errors %v", errs)
	}
	for i := 0; i < 4; i++ {
		acks.waitAcked(t, i)
	}
}

// An input batch is acked only once every window it went into has fired and
// the result has been acked; a nacked result is handed out again.
func TestInputAckedOnlyAfterResultAcked(t *testing.T) {
	t.Parallel()
	b := newTestBuffer(t, "size: 10s\naggregates: {n: count}\n")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var acks ackRecorder
	// Batch 0: two records in [0,10s) and one in [10s,20s).
	if err := b.WriteBatch(ctx, service.MessageBatch{msgOf(in{`{}`, 1000, -1}), msgOf(in{`{}`, 2000, -1}), msgOf(in{`{}`, 11000, -1})}, acks.fn(0)); err != nil {
		t.Fatal(err)
	}
	// Batch 1 moves the watermark past [0,10s).
	if err := b.WriteBatch(ctx, service.MessageBatch{msgOf(in{`{}`, 12000, 10000})}, acks.fn(1)); err != nil {
		t.Fatal(err)
	}
	read := func() (string, service.AckFunc) {
		t.Helper()
		batch, ack, err := b.ReadBatch(ctx)
		if err != nil || len(batch) != 1 {
			t.Fatalf("read: %v %d", err, len(batch))
		}
		raw, _ := batch[0].AsBytes()
		return string(raw), ack
	}
	first, ack := read()
	if !strings.Contains(first, `"window_start_ms":0`) || !strings.Contains(first, `"n":2`) {
		t.Fatalf("first result %s", first)
	}
	if len(acks.get(0)) != 0 {
		t.Fatal("batch 0 acked before its window result was delivered")
	}
	_ = ack(ctx, errors.New("output down"))
	again, ack := read()
	if again != first {
		t.Fatalf("redelivered %s, want %s", again, first)
	}
	_ = ack(ctx, nil)
	if len(acks.get(0)) != 0 {
		t.Fatal("batch 0 acked while its [10s,20s) window is open")
	}
	b.EndOfInput()
	second, ack := read()
	if !strings.Contains(second, `"window_start_ms":10000`) || !strings.Contains(second, `"n":2`) {
		t.Fatalf("second result %s", second)
	}
	if len(acks.get(0))+len(acks.get(1)) != 0 {
		t.Fatal("inputs acked before the last result was acked")
	}
	_ = ack(ctx, nil)
	acks.waitAcked(t, 0)
	acks.waitAcked(t, 1)
	if _, _, err := b.ReadBatch(ctx); !errors.Is(err, service.ErrEndOfBuffer) {
		t.Fatalf("read after the end: %v", err)
	}
}

func TestAggregateMapping(t *testing.T) {
	t.Parallel()
	b := newTestBuffer(t, `
key: ${! json("u") }
size: 10s
aggregates: { n: count }
aggregate: |
  root = if this.n < 2 { deleted() } else {
    {"user": this.key, "n": this.n, "amounts": this.rows.map_each(r -> r.a), "total": this.rows.map_each(r -> r.a).sum()}
  }
`)
	var acks ackRecorder
	recs := []in{{`{"u":"x","a":1}`, 1, -1}, {`{"u":"y","a":5}`, 2, -1}, {`{"u":"x","a":2}`, 3, -1}}
	writeEach(t, b, &acks, recs)
	res := must(drain(t, b))
	if want := []string{`{"amounts":[1,2],"n":2,"total":3,"user":"x"}`}; !reflect.DeepEqual(res, want) {
		t.Fatalf("results %v, want %v", res, want)
	}
	for i := range recs {
		acks.waitAcked(t, i) // y's window emitted nothing: its input is still acked
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	b := newTestBuffer(t, "size: 10s\nkey: ${! json(\"k\") }\naggregates: {n: count}\nmax_open_windows: 2\n")
	var acks ackRecorder
	writeEach(t, b, &acks, []in{{`{"k":1}`, 1, -1}, {`{"k":2}`, 1, -1}})
	err := b.WriteBatch(context.Background(), service.MessageBatch{msgOf(in{`{"k":3}`, 1, -1})}, acks.fn(2))
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), FieldMaxOpenWindows) {
		t.Fatalf("write over the limit: %v", err)
	}
	// Fired results awaiting their ack hold the limit: the writer waits
	// (back-pressure) until they are acked.
	b2 := newTestBuffer(t, "size: 10s\nkey: ${! json(\"k\") }\naggregates: {n: count}\nmax_open_windows: 1\n")
	writeEach(t, b2, &acks, []in{{`{"k":1}`, 1, 10000}}) // fires at once
	done := make(chan error, 1)
	go func() {
		done <- b2.WriteBatch(context.Background(), service.MessageBatch{msgOf(in{`{"k":2}`, 20000, -1})}, acks.fn(9))
	}()
	waitWriteBlocked(t, b2, done)
	_, ack, err := b2.ReadBatch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_ = ack(context.Background(), nil)
	if err := <-done; err != nil {
		t.Fatalf("write after the ack: %v", err)
	}
}

func TestCloseNacksHeldInputs(t *testing.T) {
	t.Parallel()
	b := newTestBuffer(t, "size: 10s\naggregates: {n: count}\n")
	var acks ackRecorder
	writeEach(t, b, &acks, []in{{`{}`, 1, -1}})
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := acks.get(0); len(got) != 1 || !errors.Is(got[0], ErrClosed) {
		t.Fatalf("acks %v, want one ErrClosed", got)
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		yaml string
		want []string // substrings; nil: valid
	}{
		{"size: 1m\naggregates: {n: count}", nil},
		{"type: sliding\nsize: 1m\nslide: 10s\naggregates: {n: count}", nil},
		{"type: session\ngap: 5m\naggregate: root = this", nil},
		{"aggregates: {n: count}", []string{"field size: required for tumbling"}},
		{"size: 1m", []string{"field aggregates: set aggregates"}},
		{"type: sliding\nsize: 10s\nslide: 1m\naggregates: {n: count}", []string{"field slide: 1m is longer than size"}},
		{"type: session\nsize: 1m\naggregates: {n: count}", []string{"field gap: required", "field size: not used by session"}},
		{"size: 1m\naggregates: {n: avg(x), m: sum}", []string{`field aggregates.m: "sum": sum needs a path`, `field aggregates.n: "avg(x)": unknown function "avg"`}},
		{"size: 1m\naggregates: {key: count}", []string{"field aggregates.key: the name is reserved"}},
		{"size: 1.5ms\naggregates: {n: count}", []string{"whole number of milliseconds"}},
		{"size: 1m\nallowed_lateness: -1s\naggregates: {n: count}\nmax_rows: 0", []string{"field allowed_lateness", "field max_rows: must be positive"}},
	} {
		conf, err := Spec().ParseYAML(tc.yaml, nil)
		if err != nil {
			t.Fatalf("%q: parse: %v", tc.yaml, err)
		}
		_, err = ConfigFromParsed(conf)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%q: %v", tc.yaml, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%q: no error, want %q", tc.yaml, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q does not contain %q", tc.yaml, err, w)
			}
		}
		// The lint rule runs the same validation.
		lint := service.NewStreamBuilder()
		if err := lint.SetYAML("buffer:\n  event_window:\n" + indent(tc.yaml, "    ") + "\n"); err == nil || !strings.Contains(err.Error(), tc.want[0]) {
			t.Errorf("%q: lint error %v, want %q", tc.yaml, err, tc.want[0])
		}
	}
}

func indent(s, by string) string {
	return by + strings.ReplaceAll(s, "\n", "\n"+by)
}

func TestTimestampMapping(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mapping, content string
		wantStart        float64
	}{
		{"root = this.ms", `{"ms":61000}`, 60000},
		{`root = this.at.ts_parse("2006-01-02T15:04:05Z07:00")`, `{"at":"1970-01-01T00:02:30Z"}`, 120000},
		{"root = this.at", `{"at":"1970-01-01T00:03:30Z"}`, 180000},
	} {
		b := newTestBuffer(t, "size: 1m\naggregates: {n: count}\ntimestamp_mapping: |\n  "+tc.mapping+"\n")
		var acks ackRecorder
		if err := b.WriteBatch(context.Background(), service.MessageBatch{service.NewMessage([]byte(tc.content))}, acks.fn(0)); err != nil {
			t.Fatal(err)
		}
		got := decode(t, must(drain(t, b)))
		if len(got) != 1 || got[0]["window_start_ms"] != tc.wantStart {
			t.Errorf("%s: results %v, want one window at %v", tc.mapping, got, tc.wantStart)
		}
	}
}

// flush_after_idle fires the open windows of a bounded input that carries no
// end-of-input watermark, and records arriving afterwards for those windows
// are late.
func TestFlushAfterIdle(t *testing.T) {
	t.Parallel()
	b := newTestBuffer(t, "size: 10s\naggregates: {n: count}\nflush_after_idle: 20ms\nlate: error\n")
	var acks ackRecorder
	writeEach(t, b, &acks, []in{{`{}`, 1000, -1}, {`{}`, 12000, -1}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var got []string
	for len(got) < 2 {
		batch, ack, err := b.ReadBatch(ctx)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		for _, m := range batch {
			raw, _ := m.AsBytes()
			got = append(got, string(raw))
		}
		_ = ack(ctx, nil)
	}
	if !strings.Contains(got[0], `"window_start_ms":0`) || !strings.Contains(got[1], `"window_start_ms":10000`) {
		t.Fatalf("results %v", got)
	}
	acks.waitAcked(t, 0)
	acks.waitAcked(t, 1)
	writeEach(t, b, &acks, []in{{`{}`, 15000, -1}})
	if _, errs := drain(t, b); len(errs) != 1 || !errors.Is(errs[0], ErrLate) {
		t.Fatalf("errors %v, want one late record", errs)
	}
}
