package kafkasink

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/table"
)

// upsert-kafka with sink.buffer-flush.*: a batch is a flush, and of the
// rows of one key in it only the last is written, as Flink's
// ReducingUpsertWriter does: three updates of key 1 give one record (the
// last), an update then a delete of key 2 gives one tombstone. The next
// flush writes its rows again. Under every delivery guarantee.
func TestTableUpsertBufferFlushKeepsLastRowPerKey(t *testing.T) {
	t.Parallel()
	for _, guarantee := range []string{"none", "at-least-once", "exactly-once"} {
		t.Run(guarantee, func(t *testing.T) {
			t.Parallel()
			txn := ""
			if guarantee == "exactly-once" {
				txn = fmt.Sprintf(", 'sink.transactional-id-prefix' = 'reduce-%s'", guarantee)
			}
			topic := "upsert-" + guarantee
			_, addr := newCluster(t, kfake.SeedTopics(1, topic))
			ddl := fmt.Sprintf(`CREATE TABLE users (
  id BIGINT,
  name STRING,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka', 'topic' = '%s', 'properties.bootstrap.servers' = '%s',
  'key.format' = 'json', 'value.format' = 'json',
  'sink.delivery-guarantee' = '%s'%s,
  'sink.buffer-flush.max-rows' = '100', 'sink.buffer-flush.interval' = '10 s'
)`, topic, addr, guarantee, txn)
			s := newConnectedSink(t, yamlDDL(ddl, 0))
			if !s.cfg.ReduceByKey || s.cfg.Batching.Count != 100 || s.cfg.Batching.Period != "10s" {
				t.Fatalf("config: reduce %v, batching %+v", s.cfg.ReduceByKey, s.cfg.Batching)
			}
			row := func(id int, name string, del bool) *service.Message {
				m := service.NewMessage(nil)
				r := map[string]any{"id": id}
				if name != "" {
					r["name"] = name
				}
				m.SetStructured(r)
				if del {
					m.MetaSetMut(table.MetaTombstone, true)
				}
				return m
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			flush1 := service.MessageBatch{row(1, "a", false), row(1, "b", false), row(2, "c", false), row(1, "d", false), row(2, "", true)}
			if err := s.WriteBatch(ctx, flush1); err != nil {
				t.Fatal(err)
			}
			flush2 := service.MessageBatch{row(1, "e", false), row(3, "f", false)}
			if err := s.WriteBatch(ctx, flush2); err != nil {
				t.Fatal(err)
			}
			// A last flush marks the end of what the test wrote.
			if err := s.WriteBatch(ctx, service.MessageBatch{row(99, "end", false)}); err != nil {
				t.Fatal(err)
			}
			want := []string{`{"id":1} {"id":1,"name":"d"}`, `{"id":2} <tombstone>`, `{"id":1} {"id":1,"name":"e"}`, `{"id":3} {"id":3,"name":"f"}`,
				`{"id":99} {"id":99,"name":"end"}`}
			got := readTopicUntil(t, addr, topic, `{"id":99}`)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("the topic holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// readTopicUntil reads topic (read committed) up to the record whose key
// is last, and renders each record as "key value", values normalized.
func readTopicUntil(t *testing.T, addr, topic, last string) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []string
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %v of %s before the deadline, not %s", out, topic, last)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetching %s/%d: %v", topic, p, err) })
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			v := "<tombstone>"
			if r.Value != nil {
				var m map[string]any
				if err := json.Unmarshal(r.Value, &m); err != nil {
					t.Fatalf("value %q: %v", r.Value, err)
				}
				b, _ := json.Marshal(m)
				v = string(b)
			}
			out = append(out, string(r.Key)+" "+v)
			done = done || string(r.Key) == last
		})
		if done {
			return out
		}
	}
}

// The same reduction for rows read by kafka_source, whose offsets the sink
// holds (at-least-once) or commits in its transactions (exactly-once): the
// rows left out are acknowledged with their flush, so the source group
// commits past every one of them.
func TestTableUpsertBufferFlushFromSource(t *testing.T) {
	t.Parallel()
	for _, guarantee := range []string{"at-least-once", "exactly-once"} {
		t.Run(guarantee, func(t *testing.T) {
			t.Parallel()
			in, out := "changes-"+guarantee, "latest-"+guarantee
			_, addr := newCluster(t, kfake.SeedTopics(1, in, out))
			producer, err := kgo.NewClient(kgo.SeedBrokers(addr))
			if err != nil {
				t.Fatal(err)
			}
			defer producer.Close()
			ctx, cancel := context.WithTimeout(context.Background(), tableTestTimeout)
			defer cancel()
			// Keys 1, 2, 3 changed four times each, interleaved.
			const changes = 12
			for i := range changes {
				v := fmt.Sprintf(`{"id":%d,"v":%d}`, i%3+1, i)
				if err := producer.ProduceSync(ctx, &kgo.Record{Topic: in, Value: []byte(v)}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			txn := ""
			if guarantee == "exactly-once" {
				txn = ", 'sink.transactional-id-prefix' = 'reduce-src'"
			}
			group := "reduce-" + guarantee
			runStream(t, fmt.Sprintf(`
input:
  kafka_source:
    commit_period: 50ms
    ddl: |
      CREATE TABLE changes (id BIGINT, v BIGINT) WITH ('connector' = 'kafka', 'topic' = '%[1]s',
        'properties.bootstrap.servers' = '%[3]s', 'properties.group.id' = '%[5]s', 'format' = 'json',
        'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset')
output:
  kafka_sink:
    ddl: |
      CREATE TABLE latest (id BIGINT, v BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka',
        'topic' = '%[2]s', 'properties.bootstrap.servers' = '%[3]s', 'key.format' = 'json', 'value.format' = 'json',
        'sink.delivery-guarantee' = '%[4]s'%[6]s, 'sink.buffer-flush.max-rows' = '%[7]d', 'sink.buffer-flush.interval' = '30 s')
`, in, out, addr, guarantee, group, txn, changes))
			got := readTopicUntil(t, addr, out, `{"id":3}`)
			want := []string{`{"id":1} {"id":1,"v":9}`, `{"id":2} {"id":2,"v":10}`, `{"id":3} {"id":3,"v":11}`}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("the topic holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			adm := kadm.NewClient(producer)
			offs, err := adm.FetchOffsets(ctx, group)
			if err != nil {
				t.Fatal(err)
			}
			if o, ok := offs.Lookup(in, 0); !ok || o.At != changes {
				t.Fatalf("group %s committed %+v for %s/0, want %d (past every row, those left out too)", group, o, in, changes)
			}
		})
	}
}
