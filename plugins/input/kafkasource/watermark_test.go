package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/watermark"
	_ "github.com/connectd/connectd/plugins/buffer/eventwindow"
)

// wmRec is a record to produce with an event time relative to baseTime.
type wmRec struct {
	p  int32
	ms int64
}

func produceAt(t *testing.T, addr string, recs ...wmRec) {
	t.Helper()
	var krs []*kgo.Record
	for _, r := range recs {
		krs = append(krs, &kgo.Record{Topic: "t", Partition: r.p, Value: fmt.Appendf(nil, "p%d@%d", r.p, r.ms),
			Timestamp: baseTime.Add(time.Duration(r.ms) * time.Millisecond)})
	}
	produce(t, addr, krs...)
}

// wmMeta is a message's event-time metadata, relative to baseTime.
type wmMeta struct {
	p         int32
	eventTime int64
	watermark int64 // relative; NoWatermark and MaxInt64 kept as is
	late      bool
}

func wmMetaOf(t *testing.T, m *service.Message) wmMeta {
	t.Helper()
	et, ok := m.MetaGetMut(metaEventTimeMs)
	if !ok {
		t.Fatalf("message without %s", metaEventTimeMs)
	}
	wm, _ := m.MetaGetMut(metaWatermarkMs)
	late, _ := m.MetaGetMut(metaLate)
	w := wm.(int64)
	if w != watermark.NoWatermark && w != math.MaxInt64 {
		w -= baseTime.UnixMilli()
	}
	return wmMeta{p: msgPosition(t, m).tp.partition, eventTime: et.(int64) - baseTime.UnixMilli(), watermark: w, late: late == true}
}

// readWM reads and acknowledges n messages and returns their metadata.
func readWM(t *testing.T, s *source, n int) []wmMeta {
	t.Helper()
	var out []wmMeta
	for _, b := range readRecords(t, s, n) {
		for _, m := range b.msgs {
			out = append(out, wmMetaOf(t, m))
		}
		if err := b.ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func sessOf(s *source) *session {
	return s.cur.Load()
}

func TestWatermarkOutOfOrderWithinBounds(t *testing.T) {
	t.Parallel()
	addr := newTopicsCluster(t, 1, "t")
	produceAt(t, addr, wmRec{0, 10_000}, wmRec{0, 12_000}, wmRec{0, 11_000}, wmRec{0, 15_000}, wmRec{0, 13_000}, wmRec{0, 12_500})
	s := newTestSource(t, sourceYAML(addr, "g", "start_from: earliest", "watermark: { max_out_of_orderness: 2s }"))
	got := readWM(t, s, 6)
	want := []wmMeta{
		{0, 10_000, 7_999, false},
		{0, 12_000, 9_999, false},
		{0, 11_000, 9_999, false}, // within the bound
		{0, 15_000, 12_999, false},
		{0, 13_000, 12_999, false}, // exactly at the bound minus 1ms: on time
		{0, 12_500, 12_999, true},  // beyond the bound: late
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}

func TestWatermarkOffCostsNothing(t *testing.T) {
	t.Parallel()
	addr := newTopicsCluster(t, 1, "t")
	produceAt(t, addr, wmRec{0, 1})
	s := newTestSource(t, sourceYAML(addr, "g", "start_from: earliest"))
	b := readRecords(t, s, 1)[0]
	for _, k := range []string{metaEventTimeMs, metaWatermarkMs, metaLate} {
		if _, ok := b.msgs[0].MetaGetMut(k); ok {
			t.Errorf("metadata %s set without a watermark", k)
		}
	}
	if sessOf(s).wm != nil {
		t.Error("watermark state without a watermark")
	}
}

func TestWatermarkIdlePartitionThenActive(t *testing.T) {
	t.Parallel()
	addr := newTopicsCluster(t, 2, "t")
	produceAt(t, addr, wmRec{0, 10_000}, wmRec{1, 5_000})
	s := newTestSource(t, sourceYAML(addr, "g", "start_from: earliest",
		"watermark: { idle_timeout: 1s, emit_interval: 20ms }"))
	first := readWM(t, s, 2)
	for _, m := range first {
		if m.watermark > 4_999 {
			t.Fatalf("watermark %d above the slow partition's 4999: %v", m.watermark, first)
		}
	}
	tr := sessOf(s).wm.tracker
	// Both go idle (no records for 1s); then p0 alone moves on.
	eventually.True(t, testTimeout, "both partitions idle", func() bool { return tr.Stats().Idle == 2 })
	produceAt(t, addr, wmRec{0, 20_000})
	if got := readWM(t, s, 1); got[0].watermark != 19_999 {
		t.Fatalf("with p1 idle the watermark should follow p0 alone: %v", got)
	}
	eventually.True(t, testTimeout, "p1 idle", func() bool { return tr.Stats().Idle >= 1 })
	// p1 returns behind the watermark: its record is late and the
	// watermark does not go back.
	produceAt(t, addr, wmRec{1, 6_000})
	got := readWM(t, s, 1)
	if want := (wmMeta{1, 6_000, 19_999, true}); got[0] != want {
		t.Fatalf("record on the returning partition: got %v, want %v", got[0], want)
	}
	// p1 holds the watermark again: p0 moving on alone does not raise it
	// until p1 catches up.
	produceAt(t, addr, wmRec{0, 30_000})
	if got := readWM(t, s, 1); got[0].watermark != 19_999 {
		t.Fatalf("p1 active again must hold the watermark at 19999: %v", got)
	}
	produceAt(t, addr, wmRec{1, 40_000})
	if got := readWM(t, s, 1); got[0].watermark != 29_999 {
		t.Fatalf("after p1 caught up the watermark is p0's: %v", got)
	}
}

func TestWatermarkAlignmentPausesFastPartition(t *testing.T) {
	t.Parallel()
	addr := newTopicsCluster(t, 2, "t")
	group := strings.ReplaceAll(t.Name(), "/", "_")
	produceAt(t, addr, wmRec{0, 10_000}, wmRec{1, 100_000})
	s := newTestSource(t, sourceYAML(addr, "g", "start_from: earliest",
		fmt.Sprintf("watermark: { emit_interval: 20ms, alignment: { group: %s, max_drift: 1s, update_interval: 20ms } }", group)))
	readWM(t, s, 2)
	sess := sessOf(s)
	p1 := topicPartition{"t", 1}
	p0 := topicPartition{"t", 0}
	alignPaused := func(tp topicPartition) (paused bool) {
		onOwner(s, func(o *owner) { paused = o.wm.alignPaused[tp] })
		return paused
	}
	eventually.True(t, testTimeout, "p1 paused by alignment", func() bool { return alignPaused(p1) })
	if alignPaused(p0) {
		t.Fatal("p0 holds the group minimum and must not be paused")
	}
	// Records of the paused partition wait.
	produceAt(t, addr, wmRec{1, 101_000})
	if b, err := readOne(t, s, 300*time.Millisecond); err == nil {
		t.Fatalf("read %d records from a paused partition", len(b.msgs))
	}
	// p0 catches up past p1: p1 resumes, p0 (now far ahead) pauses.
	produceAt(t, addr, wmRec{0, 200_000})
	got := readWM(t, s, 2)
	sort.Slice(got, func(i, j int) bool { return got[i].p < got[j].p })
	if got[0].eventTime != 200_000 || got[1].eventTime != 101_000 {
		t.Fatalf("after p0 caught up: %v", got)
	}
	eventually.True(t, testTimeout, "p0 paused and p1 resumed", func() bool { return alignPaused(p0) && !alignPaused(p1) })
	if st := sess.wm.tracker.Stats(); st.Paused != 1 {
		t.Fatalf("tracker stats %+v, want one paused partition", st)
	}
}

func TestWatermarkPauseReasonsAreKeptApart(t *testing.T) {
	t.Parallel()
	addr := newTopicsCluster(t, 1, "t")
	s := newTestSource(t, sourceYAML(addr, "g", "start_from: earliest", "watermark: {}"))
	sess := sessOf(s)
	tp := topicPartition{"t", 0}
	onOwner(s, func(o *owner) {
		o.wm.alignPaused[tp] = true
		o.tracker.parts[tp].paused = true
		o.tracker.parts[tp].add(0)
		o.tracker.parts[tp].unacked = o.tracker.limit
	})
	// An ack that releases the checkpoint_limit pause must not resume a
	// partition alignment paused: ResumeFetchPartitions is not called, so
	// the client still reports it paused.
	sess.clients[0].PauseFetchPartitions(map[string][]int32{"t": {0}})
	sess.ack(&fetchedBatch{positions: []position{{tp: tp, offset: 0}}})
	var limitPaused bool
	onOwner(s, func(o *owner) { limitPaused = o.tracker.limitPaused(tp) }) // after the ack
	if paused := sess.clients[0].PauseFetchPartitions(nil); len(paused["t"]) != 1 {
		t.Fatalf("ack resumed a partition paused by alignment: paused %v", paused)
	}
	if limitPaused {
		t.Fatal("checkpoint_limit pause not released")
	}
}

func TestWatermarkReaderWithoutPartitions(t *testing.T) {
	t.Parallel()
	addr := newTopicsCluster(t, 2, "t")
	produceAt(t, addr, wmRec{0, 10_000}, wmRec{1, 20_000})
	s := newTestSource(t, sourceYAML(addr, "g", "start_from: earliest", "readers: 3", "watermark: {}"))
	got := readWM(t, s, 2)
	tr := sessOf(s).wm.tracker
	eventually.True(t, testTimeout, "watermark 9999", func() bool { return tr.Watermark() == baseTime.UnixMilli()+9_999 })
	if st := tr.Stats(); st.Partitions != 2 {
		t.Fatalf("tracker stats %+v, want 2 partitions", st)
	}
	hi := int64(math.MinInt64)
	for _, m := range got {
		hi = max(hi, m.watermark)
	}
	if hi != 9_999 {
		t.Fatalf("watermarks %v: want the last to be 9999 (an empty reader holds nothing back)", got)
	}
}

func TestWatermarkBoundedEndsWithMaxWatermark(t *testing.T) {
	t.Parallel()
	addr := newTopicsCluster(t, 2, "t")
	var recs []wmRec
	for i := range 20 {
		recs = append(recs, wmRec{int32(i % 2), int64(i) * 1000})
	}
	produceAt(t, addr, recs...)
	s := newTestSource(t, sourceYAML(addr, "g", "start_from: earliest", "stop_at: latest", "batch_size: 4",
		"checkpoint_limit: 4", "watermark: {}"))
	var batches [][]wmMeta
	deadline := time.Now().Add(testTimeout)
	for {
		b, err := readOne(t, s, time.Until(deadline))
		if errors.Is(err, service.ErrEndOfInput) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var ms []wmMeta
		for _, m := range b.msgs {
			ms = append(ms, wmMetaOf(t, m))
		}
		batches = append(batches, ms)
		if err := b.ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for i, b := range batches {
		n += len(b)
		for j, m := range b {
			last := i == len(batches)-1 && j == len(b)-1
			if final := m.watermark == math.MaxInt64; final != last {
				t.Fatalf("batch %d of %d, message %d: watermark %d: %v", i, len(batches), j, m.watermark, batches)
			}
		}
	}
	if n != 20 {
		t.Fatalf("read %d records, want 20", n)
	}
}

func TestWatermarkTableDerivation(t *testing.T) {
	t.Parallel()
	c, err := parseConfig(t, `
ddl: |
  CREATE TABLE ev (
    id STRING,
    ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
  ) WITH (
    'connector' = 'kafka',
    'topic' = 't',
    'properties.bootstrap.servers' = 'localhost:9092',
    'properties.group.id' = 'g',
    'format' = 'json',
    'scan.watermark.idle-timeout' = '1 min',
    'scan.watermark.alignment.group' = 'ag',
    'scan.watermark.alignment.max-drift' = '10 s',
    'scan.watermark.alignment.update-interval' = '500 ms'
  )
`)
	if err != nil {
		t.Fatal(err)
	}
	w := c.Watermark
	if !w.Enabled || w.Column != "ts" || w.Tracker.MaxOutOfOrderness != 5*time.Second || w.Tracker.IdleTimeout != time.Minute {
		t.Fatalf("derived %+v", w)
	}
	if a := w.Alignment; a == nil || a.Group != "ag" || a.MaxDrift != 10*time.Second || a.UpdateInterval != 500*time.Millisecond {
		t.Fatalf("derived alignment %+v", a)
	}
}

func TestWatermarkTableContradictions(t *testing.T) {
	t.Parallel()
	ddl := `
ddl: |
  CREATE TABLE ev (
    id STRING,
    ts TIMESTAMP(3),
    other TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
  ) WITH (
    'connector' = 'kafka',
    'topic' = 't',
    'properties.bootstrap.servers' = 'localhost:9092',
    'properties.group.id' = 'g',
    'format' = 'json',
    'scan.watermark.idle-timeout' = '1 min'
  )
`
	for _, tc := range []struct{ yaml, want string }{
		{"watermark: { column: other }", "field watermark.column: table ev: \"other\" contradicts WATERMARK FOR ts"},
		{"watermark: { max_out_of_orderness: 1s }", "field watermark.max_out_of_orderness: table ev: 1s contradicts WATERMARK FOR ts"},
		{"watermark: { idle_timeout: 2m }", "field watermark.idle_timeout: \"2m0s\" contradicts option 'scan.watermark.idle-timeout'"},
		{"watermark: { expression: 'ts' }", "field watermark.expression: table ev: the table's WATERMARK FOR ts gives the event time"},
	} {
		if _, err := parseConfig(t, ddl+tc.yaml); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.yaml, err, tc.want)
		}
	}
	// Agreeing values are fine, and enabled: false turns the table's
	// watermark off.
	if c, err := parseConfig(t, ddl+"watermark: { column: ts, max_out_of_orderness: 5s, idle_timeout: 1m }"); err != nil || !c.Watermark.Enabled {
		t.Fatalf("agreeing watermark block: %v, enabled %v", err, c.Watermark.Enabled)
	}
	if c, err := parseConfig(t, ddl+"watermark: { enabled: false }"); err != nil || c.Watermark.Enabled {
		t.Fatalf("enabled: false: %v, enabled %v", err, c.Watermark.Enabled)
	}
}

func TestWatermarkTableColumnEventTime(t *testing.T) {
	t.Parallel()
	addr := newTopicsCluster(t, 1, "t")
	var krs []*kgo.Record
	for _, ms := range []int64{10_000, 20_000, 3_000} {
		ts := baseTime.Add(time.Duration(ms) * time.Millisecond).UTC().Format("2006-01-02 15:04:05.000")
		krs = append(krs, &kgo.Record{Topic: "t", Partition: 0, Value: fmt.Appendf(nil, `{"id":"a","ts":%q}`, ts)})
	}
	produce(t, addr, krs...)
	in := buildTableInput(t, fmt.Sprintf(`
ddl: |
  CREATE TABLE ev (
    id STRING,
    ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
  ) WITH (
    'connector' = 'kafka',
    'topic' = 't',
    'properties.bootstrap.servers' = '%s',
    'properties.group.id' = 'g',
    'scan.startup.mode' = 'earliest-offset',
    'format' = 'json'
  )
`, addr))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var got []wmMeta
	for len(got) < 3 {
		batch, ack, err := in.ReadBatch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range batch {
			got = append(got, wmMetaOf(t, m))
		}
		_ = ack(ctx, nil)
	}
	want := []wmMeta{{0, 10_000, 8_999, false}, {0, 20_000, 18_999, false}, {0, 3_000, 18_999, true}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}

func TestWatermarkExpressionEventTime(t *testing.T) {
	t.Parallel()
	addr := newTopicsCluster(t, 1, "t")
	var krs []*kgo.Record
	for _, v := range []string{`{"ts":10000}`, `{"ts":20000}`, `not json`, `{"ts":15000}`} {
		krs = append(krs, &kgo.Record{Topic: "t", Partition: 0, Value: []byte(v), Timestamp: baseTime})
	}
	produce(t, addr, krs...)
	s := newTestSource(t, sourceYAML(addr, "g", "start_from: earliest",
		fmt.Sprintf("watermark: { max_out_of_orderness: 1s, expression: 'int(row.ts) + %d' }", baseTime.UnixMilli())))
	var got []string
	for _, b := range readRecords(t, s, 4) {
		for _, m := range b.msgs {
			if _, ok := m.MetaGetMut(metaEventTimeMs); !ok {
				got = append(got, "none")
				continue
			}
			got = append(got, fmt.Sprint(wmMetaOf(t, m)))
		}
	}
	want := []string{"{0 10000 8999 false}", "{0 20000 18999 false}", "none", "{0 15000 18999 true}"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}

// TestWatermarkStallWarningDefault: stall_warning is 1m when not set (also
// for a watermark a table derives), and 0s turns it off.
func TestWatermarkStallWarningDefault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		yaml string
		want time.Duration
	}{
		{"watermark: {}", time.Minute},
		{"watermark: { stall_warning: \"\" }", time.Minute},
		{"watermark: { stall_warning: 0s }", 0},
		{"watermark: { stall_warning: 90s, idle_timeout: 5m }", 90 * time.Second},
	} {
		c, err := parseConfig(t, "seed_brokers: [ \"127.0.0.1:9092\" ]\ntopics: [ a ]\nconsumer_group: g\n"+tc.yaml)
		if err != nil {
			t.Fatalf("%s: %v", tc.yaml, err)
		}
		if got := c.Watermark.Tracker.StallWarning; got != tc.want {
			t.Errorf("%s: stall_warning %v, want %v", tc.yaml, got, tc.want)
		}
	}
	c, err := parseConfig(t, `
ddl: |
  CREATE TABLE ev (id STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (
    'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'localhost:9092', 'properties.group.id' = 'g', 'format' = 'json')
`)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Watermark.Tracker.StallWarning; !c.Watermark.Enabled || got != time.Minute {
		t.Fatalf("table watermark: enabled %v, stall_warning %v, want 1m", c.Watermark.Enabled, got)
	}
}

func TestWatermarkLintNamesFields(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"column without table", "watermark: { column: ts }", "field watermark.column: only used with a table"},
		{"alignment without group", "watermark: { alignment: { max_drift: 1s } }", "field watermark.alignment.group: required"},
		{"negative out-of-orderness", "watermark: { max_out_of_orderness: -1s }", "field watermark.max_out_of_orderness: must not be negative"},
		{"negative idle timeout", "watermark: { idle_timeout: -5s }", "field watermark.idle_timeout: must not be negative"},
		{"negative stall warning", "watermark: { stall_warning: -5s }", "field watermark.stall_warning: must not be negative"},
		{"negative drift", "watermark: { alignment: { group: g, max_drift: -1s } }", "field watermark.alignment.max_drift: must not be negative"},
		{"bad expression", "watermark: { expression: 'row.ts +' }", "field watermark.expression: "},
		{"column and expression", "watermark: { column: ts, expression: 'row.ts' }", "field watermark.expression: set only one of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			yaml := "input:\n  kafka_source:\n    seed_brokers: [ \"127.0.0.1:9092\" ]\n    topics: [ a ]\n    consumer_group: g\n    " + tc.yaml + "\noutput:\n  drop: {}\n"
			err := service.NewStreamBuilder().SetYAML(yaml)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("lint: got %v, want %q", err, tc.want)
			}
			// The constructor reports the same.
			if _, err := parseConfig(t, "seed_brokers: [ \"127.0.0.1:9092\" ]\ntopics: [ a ]\nconsumer_group: g\n"+tc.yaml); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("constructor: got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestWatermarkEventWindowEndToEnd runs kafka_source into an event_window
// buffer: a bounded read ends with the MaxInt64 watermark, every window
// fires, the counts per key are exact, and the stream exits.
func TestWatermarkEventWindowEndToEnd(t *testing.T) {
	t.Parallel()
	addr := newTopicsCluster(t, 2, "t")
	var krs []*kgo.Record
	want := map[string]int{}
	for i := range 60 {
		key := fmt.Sprintf("k%d", i%3)
		ms := int64(i) * 1000 // windows of 10s: 6 windows x 3 keys
		krs = append(krs, &kgo.Record{Topic: "t", Partition: int32(i % 2), Key: []byte(key), Value: []byte(`{}`),
			Timestamp: baseTime.Add(time.Duration(ms) * time.Millisecond)})
		win := (baseTime.UnixMilli() + ms) / 10_000 * 10_000
		want[fmt.Sprintf("%s@%d", key, win)]++
	}
	produce(t, addr, krs...)
	b := service.NewStreamBuilder()
	if err := b.AddInputYAML(fmt.Sprintf(`
kafka_source:
  seed_brokers: [ %q ]
  topics: [ t ]
  consumer_group: g
  start_from: earliest
  stop_at: latest
  readers: 2
  watermark: { max_out_of_orderness: 2s }
`, addr)); err != nil {
		t.Fatal(err)
	}
	if err := b.SetBufferYAML(`
event_window:
  type: tumbling
  size: 10s
  key: ${! @kafka_key }
  aggregates: { n: count }
  late: error
`); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string]int{}
	if err := b.AddConsumerFunc(func(_ context.Context, m *service.Message) error {
		if err := m.GetError(); err != nil {
			et, _ := m.MetaGetMut(metaEventTimeMs)
			wm, _ := m.MetaGetMut(metaWatermarkMs)
			t.Errorf("errored record (event time %v, watermark %v): %v", et, wm, err)
			return nil
		}
		v, err := m.AsStructured()
		if err != nil {
			return err
		}
		r := v.(map[string]any)
		mu.Lock()
		defer mu.Unlock()
		got[fmt.Sprintf("%v@%v", r["key"], r["window_start_ms"])] += int(toInt(r["n"]))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := b.SetLoggerYAML("level: none"); err != nil {
		t.Fatal(err)
	}
	stream, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := stream.Run(ctx); err != nil {
		t.Fatalf("the bounded stream did not exit: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("window counts\ngot  %v\nwant %v", got, want)
	}
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int:
		return int64(x)
	case float64:
		return int64(x)
	case uint64:
		return int64(x)
	}
	return -1
}

// TestWatermarkGroupModeTracksAssignments: in group mode the watermark
// partitions follow the coordinator's assignment, and a second member
// joining takes partitions away from the first's tracker.
func TestWatermarkGroupModeTracksAssignments(t *testing.T) {
	t.Parallel()
	const partitions = 4
	addr := newTopicsCluster(t, partitions, "t")
	conf := sourceYAML(addr, "g", "assignment: group", "commit_period: 50ms", "fetch_max_wait: 50ms", "watermark: { emit_interval: 20ms }")
	a := newTestSource(t, conf)
	trackerOf := func(s *source) *watermark.Tracker { return sessOf(s).wm.tracker }
	eventually.True(t, testTimeout, "every partition in a's tracker", func() bool { return trackerOf(a).Stats().Partitions == partitions })
	b := newTestSource(t, conf)
	// a must keep reading for the rebalance to complete.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); drain(ctx, t, a, func(string) {}) }()
	go func() { defer wg.Done(); drain(ctx, t, b, func(string) {}) }()
	defer wg.Wait()
	defer cancel()
	eventually.True(t, testTimeout, "partitions split across both trackers", func() bool {
		na, nb := trackerOf(a).Stats().Partitions, trackerOf(b).Stats().Partitions
		return na > 0 && nb > 0 && na+nb == partitions && len(trackedPartitions(a)) == na && len(trackedPartitions(b)) == nb
	})
}

// BenchmarkWatermarkStamp measures what event time costs per message on the
// delivery path (compare off with on).
func BenchmarkWatermarkStamp(b *testing.B) {
	recs := make([]*kgo.Record, 500)
	lags := make([]int64, len(recs))
	for i := range recs {
		recs[i] = &kgo.Record{Topic: "t", Partition: 1, Offset: int64(i), Key: []byte("key"), Value: make([]byte, 200),
			Timestamp: baseTime.Add(time.Duration(i) * time.Millisecond)}
	}
	res := service.MockResources()
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("watermark=%v", on), func(b *testing.B) {
			conf := Config{CheckpointLimit: 1, Readers: 1}
			conf.Watermark.Enabled = on
			conf.Watermark.Tracker.MaxOutOfOrderness = 5 * time.Second
			sess := newSession(conf, res.Logger(), newSourceMetrics(res.Metrics(), PartitionMetricsPartition))
			o := newOwner(sess, nil, nil)
			fb := newFetchedBatch(recs, lags, &messageBuilder{meta: metaDefault | sess.build.meta})
			var parts []*watermark.Partition
			if on {
				p, err := sess.wm.tracker.Add("t", 1)
				if err != nil {
					b.Fatal(err)
				}
				parts = make([]*watermark.Partition, len(recs))
				for i := range parts {
					parts[i] = p
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				batch := fb.buildMessages()
				if on {
					stamps, _ := o.stampDelivery(fb, &batchMarks{parts: parts}, nil, nil)
					setStamps(batch, stamps, false)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/msg")
		})
	}
}
