package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkatest"
)

// Per-partition order through kafka_sink (DESIGN.md contract 7): records a
// sink receives for one partition reach Kafka in that order, at the defaults
// and across retries.

const (
	orderRecords    = 1_000_000
	orderKeys       = 1_000
	orderPartitions = 8
)

// orderPipeline is a generate -> kafka_sink pipeline writing records keyed
// k0..k<keys-1>, each value "<key>:<seq>:<n>" with seq the key's own sequence
// number (0, 1, 2, ...) and n the record's place in the input, one message at
// a time (generate's batch_size 1, as stdin), to topic with the sink at its
// defaults. generate has no processors after it, so the sink receives the
// records in input order. extraInput is appended to the generate block
// (four-space indent).
func orderPipeline(brokers, topic string, records, keys int, extraInput string) string {
	return fmt.Sprintf(`
http:
  enabled: false
logger:
  level: warn
input:
  generate:
    count: %[3]d
    interval: ""
    mapping: |
      let n = count("order") - 1
      let key = "k%%d".format($n %% %[4]d)
      meta key = $key
      root = "%%s:%%d:%%d".format($key, ($n / %[4]d).floor().int64(), $n)
%[5]s
output:
  kafka_sink:
    seed_brokers: [ %[1]q ]
    topic: %[2]q
    key: ${! @key }
`, brokers, topic, records, keys, extraInput)
}

// orderReport is what reading an output topic back found, in partition
// (offset) order: per partition over the input places n of its records, and
// per key over their sequence numbers.
type orderReport struct {
	records int
	keys    int
	// duplicates counts records beyond one per input.
	duplicates int
	// inversions counts the places where a partition's input places do not
	// rise (the next record is no later in the input than the previous one:
	// a repeat or a step back).
	inversions int
	// keyInversions counts the same per key, over sequence numbers.
	keyInversions int
	// skips counts records that landed before the partition's (or key's)
	// record just before them in the input had landed: an older record then
	// lands after a newer one, or is missing.
	skips int
	// wrongLast counts keys whose last value is not their last input.
	wrongLast int
	// malformed counts records that are not "<key>:<seq>:<n>" under key <key>.
	malformed int
	// bad holds the first problems found, for the failure message.
	bad []string
}

func (r orderReport) String() string {
	return fmt.Sprintf("%d records over %d keys: %d duplicates, %d inversions per partition (repeats or steps back), "+
		"%d per key, %d skips, %d keys not ending on their last input, %d malformed",
		r.records, r.keys, r.duplicates, r.inversions, r.keyInversions, r.skips, r.wrongLast, r.malformed)
}

// checkOrder reads topic back (every partition from its start to its end
// offset) and checks it against the input of orderPipeline: records keyed
// "k<n % keys>" with values "<key>:<n / keys>:<n>", n from 0 to records-1.
//
// A partition's input is the records whose key it holds, in order of n.
// At-least-once may repeat a run of records after a failure (an exact
// replay), so what must hold in every partition is: its first record is its
// first input, each record is at most the next input after the record
// before it (so nothing is missing and no record lands before an older one
// of its partition has), and each key's last value is its last input. The
// same is checked per key over its sequence numbers. Without faults each
// record is the next input after the one before it: no inversions, no
// duplicates.
func checkOrder(t *testing.T, brokers, topic string, records, keys int) orderReport {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(64<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	var want int64
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })

	var (
		rep       orderReport
		placed    = map[int32][]int{} // input places n per partition, in offset order
		keyOf     = map[int32]map[int]bool{}
		prevSeq   = map[string]int{}
		lastByKey = map[string]int{}
		bad       = func(format string, args ...any) {
			if len(rep.bad) < 20 {
				rep.bad = append(rep.bad, fmt.Sprintf(format, args...))
			}
		}
	)
	for int64(rep.records) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records of %s before the deadline", rep.records, want, topic)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetching %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			rep.records++
			f := strings.Split(string(r.Value), ":")
			var seq, n int
			var err1, err2 error
			if len(f) == 3 {
				seq, err1 = strconv.Atoi(f[1])
				n, err2 = strconv.Atoi(f[2])
			}
			if len(f) != 3 || err1 != nil || err2 != nil || f[0] != string(r.Key) || f[0] != fmt.Sprintf("k%d", n%keys) || seq != n/keys {
				rep.malformed++
				bad("partition %d offset %d: key %q value %q is not <key>:<seq>:<n>", r.Partition, r.Offset, r.Key, r.Value)
				return
			}
			placed[r.Partition] = append(placed[r.Partition], n)
			if keyOf[r.Partition] == nil {
				keyOf[r.Partition] = map[int]bool{}
			}
			keyOf[r.Partition][n%keys] = true
			p, seen := prevSeq[f[0]]
			if !seen {
				p = -1
			}
			switch {
			case seq > p+1:
				rep.skips++
				bad("key %s (partition %d offset %d): %d after %d", f[0], r.Partition, r.Offset, seq, p)
			case seq <= p:
				rep.keyInversions++
			}
			prevSeq[f[0]] = seq
			lastByKey[f[0]] = seq
		})
	}
	rep.keys = len(prevSeq)

	// Per partition: the rank of each record in the partition's input (the
	// n of its keys, in order), which must rise by one or step back.
	for part, ns := range placed {
		var inputs []int
		for n := range records {
			if keyOf[part][n%keys] {
				inputs = append(inputs, n)
			}
		}
		rank := make(map[int]int, len(inputs))
		for i, n := range inputs {
			rank[n] = i
		}
		prev := -1
		for i, n := range ns {
			r := rank[n]
			switch {
			case r > prev+1:
				rep.skips++
				bad("partition %d, record %d: input %d (place %d in the partition) after place %d", part, i, n, r, prev)
			case r <= prev:
				rep.inversions++
				if rep.inversions <= 5 {
					bad("partition %d, record %d: input %d (place %d in the partition) after place %d", part, i, n, r, prev)
				}
			}
			prev = r
		}
		if prev != len(inputs)-1 {
			bad("partition %d ends on place %d of %d", part, prev, len(inputs))
		}
	}
	for n := records - keys; n < records; n++ {
		key := fmt.Sprintf("k%d", n%keys)
		if got, ok := lastByKey[key]; !ok || got != n/keys {
			rep.wrongLast++
			bad("key %s ends on %d (read: %v), want its last input %d", key, got, ok, n/keys)
		}
	}
	rep.duplicates = rep.records - records
	sort.Strings(rep.bad)
	return rep
}

// TestSinkOrderAtDefaults writes 1,000,000 keyed records over 8 partitions
// through kafka_sink at its default settings and reads every partition back
// in order: each key's sequence rises by one from record to record. With 64
// batches in flight (the earlier default) a partition's records raced into
// the producer and came out shuffled.
func TestSinkOrderAtDefaults(t *testing.T) {
	brokers := kafkatest.Broker(t)
	topic := kafkatest.NewTopic(t, brokers, "e2e-sink-order", orderPartitions)
	conf := writeFile(t, "order.yaml", orderPipeline(brokers, topic, orderRecords, orderKeys, ""))

	t0 := time.Now()
	out, code := runCLI(t, 10*time.Minute, "run", conf)
	if code != 0 {
		t.Fatalf("connectd run exited %d:\n%s", code, out)
	}
	t.Logf("wrote %d records in %s", orderRecords, time.Since(t0).Round(time.Millisecond))

	rep := checkOrder(t, brokers, topic, orderRecords, orderKeys)
	t.Logf("read back: %v", rep)
	if rep.records != orderRecords || rep.inversions != 0 || rep.keyInversions != 0 || rep.skips != 0 || rep.wrongLast != 0 ||
		rep.malformed != 0 || rep.keys != orderKeys {
		t.Fatalf("want %d records over %d keys, each partition and each key in input order; got %v; first problems:\n%s",
			orderRecords, orderKeys, rep, strings.Join(rep.bad, "\n"))
	}
}

// TestSinkOrderAcrossBrokerRestart writes 1,000,000 keyed records through
// kafka_sink at its defaults to a private broker that is restarted (SIGTERM,
// start on the same data) when 30% have arrived. The connectd process rides
// out the outage. At-least-once may repeat records, so the property is: no
// record is missing, each key's last value is its last input, and a key's
// sequence only steps back to replay, in order, values it already holds (each
// value is at most one more than the one before it). Duplicates and steps
// back are counted and reported.
func TestSinkOrderAcrossBrokerRestart(t *testing.T) {
	_ = kafkatest.Broker(t) // the shared broker's skip/require rule
	bin := connectdBin(t)
	broker := startPrivateBroker(t, orderRestartPortOffset)
	brokers := broker.brokers
	topic := kafkatest.NewTopic(t, brokers, "e2e-sink-order-restart", orderPartitions)
	// generate hands out a batch of 100 every millisecond at most (about
	// 100,000 records/s on a fast machine), so that the stream runs for
	// seconds and the broker goes away mid-stream.
	conf := writeFile(t, "order-restart.yaml", orderPipeline(brokers, topic, orderRecords, orderKeys,
		"    interval: 1ms\n    batch_size: 100"))

	cmd := exec.Command(bin, "run", conf)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		exited  = make(chan struct{})
		waitErr error
	)
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	written := func() int64 {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
		if err != nil {
			return -1
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
		if err != nil {
			return -1
		}
		var n int64
		ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
		return n
	}
	restartAt := int64(orderRecords * 3 / 10)
	eventually.NoError(t, 3*time.Minute, fmt.Sprintf("%d records written before the restart", restartAt), func() error {
		n := written()
		if n >= restartAt {
			return nil
		}
		select {
		case <-exited:
			t.Fatalf("connectd exited (%v) with %d records written, before the restart; log:\n%s", waitErr, n, logs.String())
		default:
		}
		return stateWithLogs(fmt.Sprintf("%d records written", n), logs)
	})
	t.Logf("restarting the broker at %d written records", written())
	t0 := time.Now()
	if err := broker.restart(); err != nil {
		t.Fatalf("restarting the private broker: %v", err)
	}
	n := written()
	t.Logf("broker back after %s, %d records written", time.Since(t0).Round(time.Millisecond), n)
	if n >= orderRecords {
		t.Fatalf("all %d records were written before the restarted broker answered: the restart was not mid-stream", n)
	}
	select {
	case <-exited:
		t.Fatalf("connectd exited during the broker restart (%v); log:\n%s", waitErr, logs.String())
	case <-time.After(0):
	}

	select {
	case <-exited:
	case <-time.After(5 * time.Minute):
		t.Fatalf("connectd did not finish within 5m of the restart; log:\n%s", lastLines(logs.String(), 40))
	}
	if waitErr != nil {
		t.Fatalf("connectd run: %v; log:\n%s", waitErr, lastLines(logs.String(), 40))
	}

	rep := checkOrder(t, brokers, topic, orderRecords, orderKeys)
	t.Logf("read back across a broker restart: %v", rep)
	if l := strings.TrimSpace(logs.String()); l != "" {
		t.Logf("connectd log (level warn):\n%s", lastLines(l, 40))
	}
	if rep.skips != 0 || rep.wrongLast != 0 || rep.malformed != 0 || rep.keys != orderKeys || rep.records < orderRecords {
		t.Fatalf("want every record, each record of a partition (and key) at most the next input after the one before it, "+
			"each key ending on its last input; "+
			"got %v; first problems:\n%s", rep, strings.Join(rep.bad, "\n"))
	}
}

// TestSinkUpsertFinalValues feeds an upsert-kafka sink (a table with a
// PRIMARY KEY) a changelog of 3,000 keys with 6 changes each, in groups of 8
// keys whose changes interleave (a key's changes are 8 messages apart):
// every third key is updated and finally deleted, every third is deleted
// after its first value and then updated again, the rest only updated. Read with kcat (librdkafka), the topic holds each key's changes in
// order, so each key ends on its last change: its last value, or a tombstone
// (a null value) for a deleted key. With batches racing into the producer, a
// deleted key came back to life (pv=1, pv=2, delete written as pv=1, delete,
// pv=2).
func TestSinkUpsertFinalValues(t *testing.T) {
	brokers := kafkatest.Broker(t)
	kcat := kafkatest.Kcat(t)
	const (
		keys  = 3000
		steps = 6
	)
	topic := kafkatest.NewTopic(t, brokers, "e2e-sink-upsert-order", orderPartitions)
	conf := writeFile(t, "upsert.yaml", fmt.Sprintf(`
http:
  enabled: false
logger:
  level: warn
input:
  generate:
    count: %[3]d
    interval: ""
    mapping: |
      let n = count("upsert") - 1
      let i = $n %% (8 * %[5]d)
      let id = ($n / (8 * %[5]d)).floor().int64() * 8 + $i %% 8
      let step = ($i / 8).floor().int64()
      let del = ($id %% 3 == 0 && $step == %[5]d - 1) || ($id %% 3 == 1 && $step == 1)
      root = if $del { {"id": $id} } else { {"id": $id, "pv": $step} }
      meta kafka_tombstone_message = $del
output:
  kafka_sink:
    ddl: |
      CREATE TABLE pageviews (
        id BIGINT,
        pv BIGINT,
        PRIMARY KEY (id) NOT ENFORCED
      ) WITH (
        'connector' = 'upsert-kafka',
        'topic' = '%[2]s',
        'properties.bootstrap.servers' = '%[1]s',
        'key.format' = 'json',
        'value.format' = 'json'
      )
`, brokers, topic, keys*steps, keys, steps))
	if out, code := runCLI(t, 5*time.Minute, "run", conf); code != 0 {
		t.Fatalf("connectd run exited %d:\n%s", code, out)
	}

	// Each key's changes in the order the topic holds them (one
	// partition per key, kcat prints a partition in offset order):
	// "pv=<n>" or "delete".
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, kcat, "-C", "-b", brokers, "-t", topic, "-o", "beginning", "-e", "-q",
		"-X", "isolation.level=read_committed", "-f", "%k\t%S\t%s\n").Output()
	if err != nil {
		t.Fatalf("kcat: %v", err)
	}
	got := map[int][]string{}
	records := 0
	for _, line := range strings.Split(string(out), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\t", 3)
		var key struct{ ID *int }
		if len(f) != 3 || json.Unmarshal([]byte(f[0]), &key) != nil || key.ID == nil {
			t.Fatalf("kcat line %q is not <key json> TAB <value size> TAB <value>", line)
		}
		records++
		if f[1] == "-1" {
			got[*key.ID] = append(got[*key.ID], "delete")
			continue
		}
		var v struct{ ID, PV *int }
		if json.Unmarshal([]byte(f[2]), &v) != nil || v.ID == nil || v.PV == nil || *v.ID != *key.ID {
			t.Fatalf("kcat line %q: value is not {\"id\":%d,\"pv\":<n>}", line, *key.ID)
		}
		got[*key.ID] = append(got[*key.ID], fmt.Sprintf("pv=%d", *v.PV))
	}

	var wrongFinal, wrongOrder []string
	for id := range keys {
		var want []string
		for step := range steps {
			if (id%3 == 0 && step == steps-1) || (id%3 == 1 && step == 1) {
				want = append(want, "delete")
			} else {
				want = append(want, fmt.Sprintf("pv=%d", step))
			}
		}
		g := got[id]
		if len(g) == 0 || g[len(g)-1] != want[len(want)-1] {
			wrongFinal = append(wrongFinal, fmt.Sprintf("key %d ends on %v, want %s", id, g[max(len(g)-1, 0):], want[len(want)-1]))
		}
		if !slices.Equal(g, want) {
			wrongOrder = append(wrongOrder, fmt.Sprintf("key %d: %v, want %v", id, g, want))
		}
	}
	t.Logf("kcat read %d records over %d keys: %d keys end on a wrong value, %d keys hold their changes out of order or repeated",
		records, len(got), len(wrongFinal), len(wrongOrder))
	if len(wrongFinal) > 0 {
		t.Errorf("%d of %d keys do not end on their last change (deleted keys must end on a tombstone); first:\n%s",
			len(wrongFinal), keys, strings.Join(wrongFinal[:min(len(wrongFinal), 10)], "\n"))
	}
	if len(wrongOrder) > 0 || records != keys*steps {
		t.Errorf("want each of %d keys to hold its %d changes once, in order (%d records); got %d records, %d keys differ; first:\n%s",
			keys, steps, keys*steps, records, len(wrongOrder), strings.Join(wrongOrder[:min(len(wrongOrder), 10)], "\n"))
	}
}
