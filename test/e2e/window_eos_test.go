package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkatest"
)

// The input of TestWindowEOSSIGKILL: winRecords records over winKeys keys,
// spread round-robin over winPartitions partitions. A partition's n-th
// record has the event time winT0() + n*winStep plus a jitter in
// [0, winJitter), so that each partition is nearly in event-time order
// (far less than the source's max_out_of_orderness of 100ms: no record is
// late) and the windows of winSize fire one after the other as the run goes.
const (
	winRecords    = 40_000
	winKeys       = 20
	winPartitions = 4
	winKills      = 6
	winStep       = 2 * time.Millisecond
	winJitter     = 40 * time.Millisecond
	winSize       = time.Second
	// winSentinelKey keys one record per partition, winSentinelGap after the
	// last data record: it moves the watermark past every data window, so
	// they all fire, while its own window stays open (it is not checked).
	winSentinelKey = "sentinel"
	winSentinelGap = 10 * time.Second
	// winSleep slows connectd down, so that a run lasts long enough (about
	// 10s) for the kills to land while some windows have fired and others
	// are open: 1ms on one record in four (a shorter sleep takes about 1ms
	// all the same).
	winSleep = `${! if @kafka_offset % 4 == 0 { "1ms" } else { "0s" } }`
)

// winT0 returns the event time of the first record of each partition: the
// start of the previous hour, so that the windows are aligned the same way
// in every run. Not a fixed date: the broker's retention (7 days by
// default, checked every 5 minutes) deletes the records whose timestamps
// are older than that, even during the test, and a restarted connectd
// then finds nothing left to read.
func winT0() time.Time { return time.Now().Add(-time.Hour).Truncate(time.Hour) }

// windowID names a window: its key and start, Unix milliseconds.
type windowID struct {
	key   string
	start int64
}

func (w windowID) String() string { return w.key + "@" + strconv.FormatInt(w.start, 10) }

// windowResult is a result message of the event_window buffer, with the
// aggregate `n: count`.
type windowResult struct {
	Key   string `json:"key"`
	Start int64  `json:"window_start_ms"`
	End   int64  `json:"window_end_ms"`
	N     int    `json:"n"`
}

// windowAgg is what a window result holds besides its key and start.
type windowAgg struct {
	N   int
	End int64
}

// windowTable is each window's count and end.
type windowTable map[windowID]windowAgg

// windowKind is one kind of window the test runs: the event_window fields
// that choose it, the key of a partition's n-th record, and the windows
// that the records make.
type windowKind struct {
	name     string
	fields   string
	key      func(rng *rand.Rand, n int) string
	expected func(recs []*kgo.Record) windowTable
}

// sessionGap is the gap of the session windows. Their keys take turns: a
// key has records in one slot of sessionSlot records (200ms of event time)
// in four, so that each key's records make one session per active slot,
// 560ms or more from its next one.
const (
	sessionGap  = 300 * time.Millisecond
	sessionSlot = 100
)

var windowKinds = []windowKind{
	{
		name:   "tumbling",
		fields: fmt.Sprintf("type: tumbling\n    size: %s", winSize),
		key:    func(rng *rand.Rand, _ int) string { return fmt.Sprintf("u%02d", rng.IntN(winKeys)) },
		expected: func(recs []*kgo.Record) windowTable {
			out := windowTable{}
			size := winSize.Milliseconds()
			for _, r := range recs {
				ms := r.Timestamp.UnixMilli()
				id := windowID{string(r.Key), ms - ms%size}
				out[id] = windowAgg{N: out[id].N + 1, End: id.start + size}
			}
			return out
		},
	},
	{
		name:   "session",
		fields: fmt.Sprintf("type: session\n    gap: %s", sessionGap),
		key: func(rng *rand.Rand, n int) string {
			first := (4 - n/sessionSlot%4) % 4 // the keys k with (slot + k) % 4 == 0
			return fmt.Sprintf("u%02d", first+4*rng.IntN(winKeys/4))
		},
		expected: func(recs []*kgo.Record) windowTable {
			byKey := map[string][]int64{}
			for _, r := range recs {
				byKey[string(r.Key)] = append(byKey[string(r.Key)], r.Timestamp.UnixMilli())
			}
			out := windowTable{}
			gap := sessionGap.Milliseconds()
			for key, ts := range byKey {
				slices.Sort(ts)
				start, end, n := ts[0], ts[0]+gap, 0
				for _, t := range ts {
					if t > end { // [t, t+gap) does not touch the session
						out[windowID{key, start}] = windowAgg{N: n, End: end}
						start, n = t, 0
					}
					end, n = max(end, t+gap), n+1
				}
				out[windowID{key, start}] = windowAgg{N: n, End: end}
			}
			return out
		},
	},
}

// windowInput builds the input records of kind (data, then one sentinel per
// partition) with a fixed seed, and the table of windows they should give.
func windowInput(topic string, kind windowKind) ([]*kgo.Record, windowTable) {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := winT0()
	recs := make([]*kgo.Record, 0, winRecords+winPartitions)
	var last time.Time
	for i := range winRecords {
		p, n := i%winPartitions, i/winPartitions
		ts := t0.Add(time.Duration(n)*winStep + time.Duration(rng.Int64N(int64(winJitter))))
		key := kind.key(rng, n)
		v, _ := json.Marshal(map[string]any{"u": key, "i": i})
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(p), Key: []byte(key), Value: v, Timestamp: ts})
		if ts.After(last) {
			last = ts
		}
	}
	expected := kind.expected(recs)
	for p := range winPartitions {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(p), Key: []byte(winSentinelKey),
			Value: []byte(`{"u":"sentinel"}`), Timestamp: last.Add(winSentinelGap)})
	}
	return recs, expected
}

// produceWindowInput writes recs to their partitions, in order.
func produceWindowInput(t *testing.T, brokers, topic string, recs []*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ProducerLinger(5*time.Millisecond),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := kafkatest.ProduceN(ctx, cl, int64(len(recs)), func(i int64) *kgo.Record { return recs[i] }); err != nil {
		t.Fatalf("producing input to %s: %v", topic, err)
	}
}

// windowConfig writes the windowed count pipeline: kafka_source with
// watermarks, a per-record sleep, tumbling windows of winSize per record
// key counting records, and an exactly_once kafka_sink to out.
func windowConfig(t *testing.T, brokers, in, out, group, txnPrefix, fields string) string {
	t.Helper()
	return writeFile(t, "window_eos.yaml", fmt.Sprintf(`
http:
  # Any free port, unless the test names one to read /metrics.
  address: 127.0.0.1:${CONNECTD_HTTP_PORT:0}
# The open window of the sentinels holds their acknowledgements: a stop
# would wait for them until the end of this timeout.
shutdown_timeout: 3s
logger:
  level: warn
input:
  kafka_source:
    seed_brokers: [ %[1]q ]
    topics: [ %[2]q ]
    consumer_group: %[4]q
    start_from: committed
    committed_fallback: earliest
    commit_period: 200ms
    # A reader per partition, so that the partitions are delivered side by
    # side: one reader hands out what it fetched a partition after the
    # other, and the combined watermark (the minimum over the partitions)
    # did not move until nearly all the input was in.
    readers: %[8]d
    watermark:
      max_out_of_orderness: 100ms
  processors:
    - sleep:
        duration: '%[6]s'
buffer:
  event_window:
    %[7]s
    key: ${! @kafka_key }
    aggregates:
      n: count
pipeline:
  threads: 1
output:
  kafka_sink:
    seed_brokers: [ %[1]q ]
    topic: %[3]q
    key: ${! @window_key }
    delivery_guarantee: exactly_once
    transactional_id_prefix: %[5]q
`, brokers, in, out, group, txnPrefix, winSleep, fields, winPartitions))
}

// differing counts the windows that a and b do not both hold with the same
// count.
func differing(a, b windowTable) int {
	n := 0
	for id, count := range a {
		if c, ok := b[id]; !ok || c != count {
			n++
		}
	}
	for id := range b {
		if _, ok := a[id]; !ok {
			n++
		}
	}
	return n
}

// windowKeyOf is the identity of a window result for an outputTally: its
// window, whatever its count.
func windowKeyOf(value []byte) string {
	var r windowResult
	if err := json.Unmarshal(value, &r); err != nil || r.Key == "" {
		return string(value)
	}
	return windowID{r.Key, r.Start}.String()
}

// windowCheck counts what a reader saw against the expected table.
// duplicates counts the results beyond the first of a window; wrong, the
// results of an expected window with another count (or end).
type windowCheck struct {
	total, distinct, duplicates, missing, wrong, extra int
	// table is each window's last count and end, in read order.
	table windowTable
}

func (c windowCheck) ok() bool {
	return c.duplicates == 0 && c.missing == 0 && c.wrong == 0 && c.extra == 0
}

// checkWindows parses the result values, leaving the sentinel's window out,
// and checks them against expected.
func checkWindows(t *testing.T, values [][]byte, expected windowTable) windowCheck {
	t.Helper()
	c := windowCheck{table: windowTable{}}
	seen := map[windowID]int{}
	for _, raw := range values {
		var r windowResult
		if err := json.Unmarshal(raw, &r); err != nil || r.Key == "" {
			t.Fatalf("unexpected output record %q: %v", raw, err)
		}
		if r.Key == winSentinelKey {
			continue
		}
		id := windowID{r.Key, r.Start}
		c.total++
		seen[id]++
		c.table[id] = windowAgg{N: r.N, End: r.End}
		want, ok := expected[id]
		switch {
		case !ok:
			c.extra++
		case r.N != want.N || r.End != want.End:
			c.wrong++
		}
		if seen[id] > 1 {
			c.duplicates++
		}
	}
	c.distinct = len(seen)
	for id := range expected {
		if seen[id] == 0 {
			c.missing++
		}
	}
	return c
}

// verifyWindows reads out with franz-go and kcat, both read_committed, logs
// the counts and fails unless each reader sees every expected window once,
// with its expected count, and nothing else. It returns franz-go's table.
func verifyWindows(t *testing.T, brokers, kcat, out, what string, expected windowTable) windowTable {
	t.Helper()
	var table windowTable
	for _, reader := range []struct {
		name string
		read func() [][]byte
	}{
		{"franz-go read_committed", func() [][]byte { return readAllCommitted(t, brokers, out) }},
		{"kcat read_committed", func() [][]byte { return kcatAll(t, kcat, brokers, out) }},
	} {
		c := checkWindows(t, reader.read(), expected)
		t.Logf("%s, %s: windows expected %d, results %d, distinct %d, duplicates %d, missing %d, wrong %d, extra %d",
			what, reader.name, len(expected), c.total, c.distinct, c.duplicates, c.missing, c.wrong, c.extra)
		if !c.ok() || !maps.Equal(c.table, expected) {
			t.Errorf("%s, %s: the window results are not exactly the expected ones, once each", what, reader.name)
		}
		if table == nil {
			table = c.table
		}
	}
	return table
}

// windowRun is one pipeline (its output topic, group and transactional ids)
// and the read_committed tally of its output, by window.
type windowRun struct {
	out   string
	conf  string
	tally *outputTally
}

// newWindowRun creates the output topic of a run and starts tallying it
// until the test ends.
func newWindowRun(t *testing.T, brokers, in, name, fields string) *windowRun {
	t.Helper()
	out := kafkatest.NewTopic(t, brokers, "e2e-window-out-"+name, winPartitions)
	r := &windowRun{
		out:   out,
		conf:  windowConfig(t, brokers, in, out, out+"-g", out, fields),
		tally: newOutputTallyBy(windowKeyOf),
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); r.tally.run(ctx, t, brokers, out) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return r
}

// TestWindowEOSSIGKILL: a windowed count (event_window, per key, with
// kafka_source watermarks and an exactly_once kafka_sink) over 40,000
// timestamped records, run once uninterrupted and once SIGKILLed six times
// at random instants while windows are open and restarted: read_committed
// franz-go and kcat consumers see, for both runs, every window's result
// once, with the count (and end) computed from the input, and nothing
// else. For tumbling windows of 1s and for sessions.
func TestWindowEOSSIGKILL(t *testing.T) {
	t.Parallel()
	for _, kind := range windowKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			testWindowEOSSIGKILL(t, kind)
		})
	}
}

func testWindowEOSSIGKILL(t *testing.T, kind windowKind) {
	brokers := kafkatest.Broker(t)
	kcat := kafkatest.Kcat(t)
	in := kafkatest.NewTopic(t, brokers, "e2e-window-in-"+kind.name, winPartitions)
	recs, expected := windowInput(in, kind)
	produceWindowInput(t, brokers, in, recs)
	a := newWindowRun(t, brokers, in, kind.name+"-a", kind.fields)
	b := newWindowRun(t, brokers, in, kind.name+"-b", kind.fields)
	if out, code := runCLI(t, 60*time.Second, "lint", a.conf); code != 0 {
		t.Fatalf("connectd lint %s: exit %d\n%s", a.conf, code, out)
	}
	want := len(expected)
	begin := time.Now()

	// Run A, uninterrupted.
	p := startConnectd(t, a.conf)
	waitTotal(t, a.tally, want, time.Minute, p)
	p.stop()
	t.Logf("uninterrupted run: %d windows in %v", want, time.Since(begin).Round(time.Millisecond))

	// Run B: each kill comes after a random delay, and not before the run
	// added a window (so that every run makes progress and no kill lands
	// before the first window fired).
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("random seed %d", seed)
	begin = time.Now()
	kills, midStream := 0, 0
	for k := 1; k <= winKills; k++ {
		before, _ := b.tally.counts()
		if before >= want {
			t.Logf("output complete after %d SIGKILLs", k-1)
			break
		}
		p := startConnectd(t, b.conf)
		time.Sleep(700*time.Millisecond + time.Duration(rng.IntN(1800))*time.Millisecond) // a random instant, not a wait for a condition
		waitTotal(t, b.tally, before+1, time.Minute, p)
		p.kill()
		kills++
		distinct, total := b.tally.counts()
		t.Logf("SIGKILL %d at %v: %d of %d windows, %d results committed", k, time.Since(begin).Round(time.Millisecond), distinct, want, total)
		if distinct < want {
			midStream++
		}
	}
	port := freePort(t)
	p = startConnectd(t, b.conf, fmt.Sprintf("CONNECTD_HTTP_PORT=%d", port))
	waitTotal(t, b.tally, want, time.Minute, p)
	// A window this run fires again (a duplicate) fires before its
	// watermark passes the end of the last data window: wait for that,
	// then stop (SIGTERM delivers the fired results).
	complete := time.Now()
	var lastEnd int64
	for _, w := range expected {
		lastEnd = max(lastEnd, w.End)
	}
	waitMetric(t, port, `event_window_watermark_ms\{[^}]*\}`, int(lastEnd), p)
	t.Logf("the last run's watermark passed the last data window %v after the output was complete", time.Since(complete).Round(time.Millisecond))
	p.stop()
	if midStream == 0 {
		t.Errorf("no SIGKILL landed while windows were open: the run was too fast for the kills")
	}

	tableA := verifyWindows(t, brokers, kcat, a.out, "uninterrupted run", expected)
	tableB := verifyWindows(t, brokers, kcat, b.out, fmt.Sprintf("after %d SIGKILLs (%d mid-stream)", kills, midStream), expected)
	if n := differing(tableA, tableB); n > 0 {
		t.Errorf("the killed run's counts differ from the uninterrupted run's in %d windows", n)
	}
}
