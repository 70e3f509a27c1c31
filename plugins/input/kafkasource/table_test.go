package kafkasource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/halt"
	"github.com/connectd/connectd/internal/table"
)

// seedDDL returns the CREATE TABLE statement of the seed's table name
// (issue 5) from its one fixture, schema/testdata/seed.sql.
func seedDDL(t *testing.T, name string) string {
	t.Helper()
	seed, err := os.ReadFile("../../../schema/testdata/seed.sql")
	if err != nil {
		t.Fatal(err)
	}
	head := "CREATE TABLE " + name + " ("
	_, rest, ok := strings.Cut(string(seed), head)
	if !ok {
		t.Fatalf("schema/testdata/seed.sql has no %q", head)
	}
	stmt, _, _ := strings.Cut(rest, "\nCREATE TABLE ")
	return head + strings.TrimRight(stmt, "\n")
}

// yamlDDL quotes DDL as a YAML block scalar under key ddl.
func yamlDDL(ddl string) string {
	return "ddl: |\n  " + strings.ReplaceAll(ddl, "\n", "\n  ") + "\n"
}

// The seed's table sets the subscription, brokers, group, start mode and
// discovery interval; no YAML field is needed.
func TestTableDerivesSettings(t *testing.T) {
	t.Parallel()
	c, err := parseConfig(t, yamlDDL(seedDDL(t, "kafka_source")))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Topics, ",") != "user_events" || strings.Join(c.Conn.SeedBrokers, ",") != "kafka:9092" ||
		c.ConsumerGroup != "flink-consumer" || c.StartFrom != StartLatest || c.DiscoveryInterval != time.Minute || c.Table == nil {
		t.Fatalf("derived config: topics %v brokers %v group %q start %s discovery %v", c.Topics, c.Conn.SeedBrokers, c.ConsumerGroup, c.StartFrom, c.DiscoveryInterval)
	}
	if c.OnError != table.PolicyFail {
		t.Fatalf("on_error default %q", c.OnError)
	}

	// Bounds from the table; YAML fields that agree with it are fine.
	c, err = parseConfig(t, yamlDDL(`CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'raw',
  'properties.bootstrap.servers' = 'h:1', 'scan.startup.mode' = 'specific-offsets', 'scan.startup.specific-offsets' = 'partition:0,offset:42;partition:1,offset:7',
  'scan.bounded.mode' = 'timestamp', 'scan.bounded.timestamp-millis' = '1700000000000')`)+
		"consumer_group: g\nseed_brokers: [ 'h:1' ]\ntopics: [ x ]\nstop_at: timestamp\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.StartFrom != StartOffsets || c.StartOffsets[topicPartition{"x", 0}] != 42 || c.StartOffsets[topicPartition{"x", 1}] != 7 ||
		c.StopAt != StopTimestamp || c.StopTimestamp != 1700000000000 {
		t.Fatalf("bounds: %+v", c)
	}

	// scan.bounded.* on upsert-kafka (Flink 1.x's connector refused them):
	// the changelog is read from earliest up to the bound.
	c, err = parseConfig(t, yamlDDL(`CREATE TABLE u (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka',
  'topic' = 'x', 'key.format' = 'json', 'value.format' = 'json', 'properties.bootstrap.servers' = 'h:1', 'properties.group.id' = 'g',
  'scan.bounded.mode' = 'specific-offsets', 'scan.bounded.specific-offsets' = 'partition:0,offset:5')`))
	if err != nil {
		t.Fatal(err)
	}
	if c.StartFrom != StartEarliest || c.StopAt != StopOffsets || c.StopOffsets[topicPartition{"x", 0}] != 5 {
		t.Fatalf("upsert-kafka bounds: start %s stop %s %v", c.StartFrom, c.StopAt, c.StopOffsets)
	}

	// scan.bounded.mode = 'group-offsets': properties.group.id is the
	// bound (stop_group), not the group this input resumes from and
	// commits to.
	c, err = parseConfig(t, yamlDDL(`CREATE TABLE g (v STRING) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'raw',
  'properties.bootstrap.servers' = 'h:1', 'properties.group.id' = 'flink-job', 'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'group-offsets')`))
	if err != nil {
		t.Fatal(err)
	}
	if c.StopAt != StopCommitted || c.StopGroup != "flink-job" || c.ConsumerGroup != "" || c.StartFrom != StartEarliest {
		t.Fatalf("group-offsets bound: stop %s group %q, consumer group %q, start %s", c.StopAt, c.StopGroup, c.ConsumerGroup, c.StartFrom)
	}
}

// A YAML field that contradicts the table is an error naming both; an
// option connectd does not support is an error naming it, at parse time and
// at lint time.
func TestTableConfigErrors(t *testing.T) {
	t.Parallel()
	seed := yamlDDL(seedDDL(t, "kafka_source"))
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"start_from contradicts", seed + "start_from: earliest\n",
			[]string{`field start_from: "earliest" contradicts option 'scan.startup.mode' = 'latest-offset' of table kafka_source`}},
		{"topics contradict", seed + "topics: [ other ]\n",
			[]string{`field topics: [other] contradicts option 'topic' = 'user_events'`}},
		{"group contradicts", seed + "consumer_group: mine\n",
			[]string{`field consumer_group: "mine" contradicts option 'properties.group.id' = 'flink-consumer'`}},
		{"brokers contradict", seed + "seed_brokers: [ 'localhost:9092' ]\n",
			[]string{`field seed_brokers: [localhost:9092] contradicts option 'properties.bootstrap.servers' = 'kafka:9092'`}},
		{"discovery contradicts", seed + "discovery_interval: 30s\n",
			[]string{`field discovery_interval: "30s" contradicts option 'scan.topic-partition-discovery.interval' = '1 min'`}},
		{"unsupported option", yamlDDL(`CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'raw', 'properties.bootstrap.servers' = 'h:1', 'properties.group.id' = 'g', 'scan.parallelism' = '4')`),
			[]string{"option 'scan.parallelism' is not supported by connectd"}},
		{"group-offsets bound with the group-offsets start", yamlDDL(`CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'raw', 'properties.bootstrap.servers' = 'h:1', 'properties.group.id' = 'g', 'scan.bounded.mode' = 'group-offsets')`),
			[]string{"field start_from: table t: option 'scan.bounded.mode' = 'group-offsets' ends the read at the offsets committed in 'properties.group.id' = 'g'"}},
		{"group-offsets bound contradicts stop_group", yamlDDL(`CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'raw', 'properties.bootstrap.servers' = 'h:1', 'properties.group.id' = 'g', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'group-offsets')`) + "stop_group: other\n",
			[]string{`field stop_group: "other" contradicts option 'properties.group.id' = 'g'`}},
		{"start timestamp contradicts", yamlDDL(`CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'raw', 'properties.bootstrap.servers' = 'h:1', 'properties.group.id' = 'g', 'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = '1700000000000')`) + "start_timestamp: 1600000000000\n",
			[]string{`field start_timestamp: 1600000000000 contradicts option 'scan.startup.timestamp-millis' = '1700000000000'`}},
		{"bad start timestamp option", yamlDDL(`CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'raw', 'properties.bootstrap.servers' = 'h:1', 'properties.group.id' = 'g', 'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = 'soon')`),
			[]string{`option 'scan.startup.timestamp-millis' = 'soon': want an integer`}},
		{"on_error without a table", "seed_brokers: [ 'h:1' ]\ntopics: [ a ]\nconsumer_group: g\non_error: skip\n",
			[]string{"field on_error: only used with a table"}},
		{"upsert-kafka reads from earliest", yamlDDL(`CREATE TABLE t (a STRING, PRIMARY KEY (a) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = 'x', 'key.format' = 'raw', 'value.format' = 'json', 'properties.bootstrap.servers' = 'h:1', 'properties.group.id' = 'g')`) + "start_from: latest\n",
			[]string{`field start_from: table t: "latest" contradicts option 'connector' = 'upsert-kafka', which reads from the earliest offset`}},
		{"no topic", yamlDDL(`CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', 'format' = 'raw', 'properties.bootstrap.servers' = 'h:1', 'properties.group.id' = 'g')`),
			[]string{"table t: option 'topic' or 'topic-pattern' is required (as in Flink: either 'topic' or 'topic-pattern' must be set); field topics or topic_pattern may set it instead"}},
		{"no group", yamlDDL(`CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'raw', 'properties.bootstrap.servers' = 'h:1')`),
			[]string{"field consumer_group: required with start_from: committed", "option 'properties.group.id' of table t"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseConfig(t, tc.yaml)
			lintErr := service.NewStreamBuilder().SetYAML("input:\n  kafka_source:\n    " +
				strings.ReplaceAll(strings.TrimSpace(tc.yaml), "\n", "\n    ") + "\noutput:\n  drop: {}\n")
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("config: want %q, got %v", w, err)
				}
				if lintErr == nil || !strings.Contains(lintErr.Error(), w) {
					t.Errorf("lint: want %q, got %v", w, lintErr)
				}
			}
		})
	}
}

// At run time a field left at its default yields to the table, and one set
// to the same value as the table is no contradiction.
func TestTableAgreeingFields(t *testing.T) {
	t.Parallel()
	_, err := parseConfig(t, yamlDDL(seedDDL(t, "kafka_source"))+
		"start_from: latest\ntopics: [ user_events ]\nconsumer_group: flink-consumer\ndiscovery_interval: 1m\nseed_brokers: [ 'kafka:9092' ]\n")
	if err != nil {
		t.Fatal(err)
	}
}

// richDDL has key fields with a prefix, EXCEPT_KEY, every readable metadata
// column and a computed column.
func richDDL(addr, extra string) string {
	return fmt.Sprintf(`CREATE TABLE orders (
  k_id BIGINT,
  name STRING,
  amount DECIMAL(10, 2),
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  part INT METADATA FROM 'partition' VIRTUAL,
  off BIGINT METADATA FROM 'offset' VIRTUAL,
  src STRING METADATA FROM 'topic' VIRTUAL,
  hdrs MAP<STRING, BYTES> METADATA FROM 'headers',
  epoch INT METADATA FROM 'leader-epoch' VIRTUAL,
  tstype STRING METADATA FROM 'timestamp-type' VIRTUAL,
  doubled AS amount * 2
) WITH (
  'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = '%s', 'properties.group.id' = 'g',
  'scan.startup.mode' = 'earliest-offset',
  'key.format' = 'json', 'key.fields' = 'k_id', 'key.fields-prefix' = 'k_',
  'value.format' = 'json', 'value.fields-include' = 'EXCEPT_KEY'%s
)`, addr, extra)
}

func buildTableInput(t *testing.T, yaml string) service.BatchInput {
	t.Helper()
	return buildTableInputIn(t, yaml, service.MockResources())
}

func buildTableInputIn(t *testing.T, yaml string, mgr *service.Resources) service.BatchInput {
	t.Helper()
	c, err := parseConfig(t, yaml)
	if err != nil {
		t.Fatal(err)
	}
	in := newSource(c, mgr)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := in.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close(context.Background()) })
	return in
}

func TestTableSourceDecodesRows(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	ts := time.UnixMilli(1700000000123)
	produce(t, addr, &kgo.Record{Topic: "t", Partition: 1, Key: []byte(`{"id":7}`), Value: []byte(`{"name":"ada","amount":"12.30"}`),
		Timestamp: ts, Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("abc")}}})
	in := buildTableInput(t, yamlDDL(richDDL(addr, "")))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	batch, ack, err := in.ReadBatch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ack(ctx, nil) }()
	if len(batch) != 1 {
		t.Fatalf("got %d messages", len(batch))
	}
	v, err := batch[0].AsStructuredMut()
	if err != nil {
		t.Fatal(err)
	}
	row := v.(map[string]any)
	if row["k_id"] != int64(7) || row["name"] != "ada" || row["amount"] != json.Number("12.30") || row["doubled"] == nil {
		t.Fatalf("physical and computed columns: %#v", row)
	}
	if got, ok := row["ts"].(time.Time); !ok || !got.Equal(ts) {
		t.Fatalf("ts = %#v, want %v", row["ts"], ts)
	}
	if row["part"] != int64(1) || row["off"] != int64(0) || row["src"] != "t" || row["tstype"] != "CreateTime" {
		t.Fatalf("metadata columns: part %#v off %#v src %#v tstype %#v", row["part"], row["off"], row["src"], row["tstype"])
	}
	if h, ok := row["hdrs"].(map[string]any); !ok || string(h["trace"].([]byte)) != "abc" {
		t.Fatalf("headers column: %#v", row["hdrs"])
	}
	if _, has := row["id"]; has {
		t.Fatalf("the key field is named with its prefix in the row: %#v", row)
	}
}

func TestTableSourceBadRecords(t *testing.T) {
	t.Parallel()
	for _, policy := range []table.Policy{table.PolicyFail, table.PolicySkip, table.PolicyDeadLetter} {
		t.Run(string(policy), func(t *testing.T) {
			t.Parallel()
			addr := newCluster(t)
			produce(t, addr,
				&kgo.Record{Topic: "t", Partition: 0, Key: []byte(`{"id":1}`), Value: []byte(`{"name":`)},
				&kgo.Record{Topic: "t", Partition: 0, Key: []byte(`{"id":2}`), Value: []byte(`{"name":"ok"}`)})
			mgr := service.MockResources()
			in := buildTableInputIn(t, yamlDDL(richDDL(addr, ""))+"on_error: "+string(policy)+"\nbatch_size: 2\n", mgr)
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			if policy == table.PolicyFail {
				// The run stops (halt) naming the record; ReadBatch delivers
				// nothing and waits for the shutdown (here: ctx ends when
				// the run stops), and no offset is committed.
				run := halt.For(mgr)
				readCtx, stopRead := context.WithCancel(ctx)
				go func() {
					<-run.Done()
					stopRead()
				}()
				batch, _, err := in.ReadBatch(readCtx)
				if len(batch) != 0 || !errors.Is(err, context.Canceled) {
					t.Fatalf("fail: want nothing delivered until the shutdown, got %d messages, %v", len(batch), err)
				}
				if err := run.Err(); err == nil || !strings.Contains(err.Error(), "kafka_source (topic t, partition 0, offset 0): value: ") {
					t.Fatalf("fail: want the run stopped with an error naming topic, partition and offset, got %v", err)
				}
				if err := in.Close(ctx); err != nil {
					t.Fatal(err)
				}
				if got := committedOffsets(t, addr, "g"); got[topicPartition{"t", 0}] > 0 {
					t.Fatalf("fail: committed %v, want nothing past offset 0 of t/0 (the bad record)", got)
				}
				return
			}
			var got service.MessageBatch
			for len(got) == 0 {
				batch, ack, err := in.ReadBatch(ctx)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, batch...)
				_ = ack(ctx, nil)
			}
			switch policy {
			case table.PolicySkip:
				if len(got) != 1 || got[0].GetError() != nil {
					t.Fatalf("skip: want only the good record, got %d messages", len(got))
				}
			case table.PolicyDeadLetter:
				if len(got) < 1 || got[0].GetError() == nil {
					t.Fatalf("dead_letter: want the bad record flagged, got %d messages", len(got))
				}
				if b, _ := got[0].AsBytes(); string(b) != `{"name":` {
					t.Fatalf("dead_letter: the message keeps its raw bytes, got %q", b)
				}
			}
		})
	}
}

// The lint rule reads the catalog as the input does when it starts: a
// problem of its table, or a catalog that does not exist, is a lint error.
func TestTableCatalogLint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cat := filepath.Join(dir, "tables.sql")
	if err := os.WriteFile(cat, []byte(`CREATE TABLE x (a STRING) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'raw', 'properties.bootstrap.servers' = 'h:1', 'properties.group.id' = 'g', 'json.bad' = 'x');`), 0o600); err != nil {
		t.Fatal(err)
	}
	err := service.NewStreamBuilder().SetYAML(fmt.Sprintf("input:\n  kafka_source:\n    catalog: %q\n    table: x\noutput:\n  drop: {}\n", cat))
	if err == nil || !strings.Contains(err.Error(), "option 'json.bad' is not supported") {
		t.Fatalf("lint with the catalog: %v", err)
	}
	err = service.NewStreamBuilder().SetYAML("input:\n  kafka_source:\n    catalog: ./nope.sql\n    table: x\noutput:\n  drop: {}\n")
	if err == nil || !strings.Contains(err.Error(), "field catalog: catalog: open ./nope.sql: no such file or directory") {
		t.Fatalf("a missing catalog: %v", err)
	}
}

// The metadata columns read the fetched record, as Flink's do: `headers`
// holds every record header, one named kafka_* too, and the message
// carries only the metadata that metadata_keys selects, with a table as
// without.
func TestTableSourceReadsTheRecord(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	produce(t, addr, &kgo.Record{Topic: "t", Partition: 2, Key: []byte(`{"id":7}`), Value: []byte(`{"name":"ada","amount":"1.50"}`),
		Timestamp: time.UnixMilli(1700000000123),
		Headers:   []kgo.RecordHeader{{Key: "trace", Value: []byte("abc")}, {Key: "kafka_origin", Value: []byte("eu")}}})
	in := buildTableInput(t, yamlDDL(richDDL(addr, ""))+"metadata_keys: [ kafka_offset ]\n")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	batch, ack, err := in.ReadBatch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ack(ctx, nil) }()
	if len(batch) != 1 {
		t.Fatalf("got %d messages", len(batch))
	}
	v, err := batch[0].AsStructured()
	if err != nil {
		t.Fatal(err)
	}
	row := v.(map[string]any)
	h, _ := row["hdrs"].(map[string]any)
	if len(h) != 2 || string(h["trace"].([]byte)) != "abc" || string(h["kafka_origin"].([]byte)) != "eu" {
		t.Fatalf("headers column %#v, want every record header (kafka_origin too)", row["hdrs"])
	}
	if row["part"] != int64(2) || row["src"] != "t" || row["tstype"] != "CreateTime" || row["k_id"] != int64(7) {
		t.Fatalf("metadata and key columns: %#v", row)
	}
	var keys []string
	_ = batch[0].MetaWalkMut(func(k string, _ any) error {
		keys = append(keys, k)
		return nil
	})
	if fmt.Sprint(keys) != "[kafka_offset]" {
		t.Fatalf("message metadata %v, want only metadata_keys: [kafka_offset]", keys)
	}

	// An upsert-kafka table's messages carry kafka_tombstone_message
	// whatever metadata_keys says: it is the row's kind, which kafka_sink
	// writes back as a tombstone.
	c, err := parseConfig(t, yamlDDL(`CREATE TABLE u (id STRING, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka',
  'topic' = 't', 'key.format' = 'raw', 'value.format' = 'json', 'properties.bootstrap.servers' = 'h:1', 'properties.group.id' = 'g')`)+
		"metadata_keys: [ kafka_offset ]\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := metaKeyNames(c.Metadata); fmt.Sprint(got) != "[kafka_offset kafka_tombstone_message]" {
		t.Fatalf("upsert-kafka metadata %v, want kafka_offset and kafka_tombstone_message", got)
	}
}

// columnDDL is a table whose event time is its ts column, read from the
// earliest offset; extra is added to its WITH options.
func columnDDL(addr, extra string) string {
	return yamlDDL(fmt.Sprintf(`CREATE TABLE ev (
  id STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = '%s', 'properties.group.id' = 'g',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json'%s
)`, addr, extra))
}

// columnRecord is a row of columnDDL at baseTime + ms.
func columnRecord(ms int64) *kgo.Record {
	ts := baseTime.Add(time.Duration(ms) * time.Millisecond).UTC().Format("2006-01-02 15:04:05.000")
	return &kgo.Record{Topic: "t", Partition: 0, Value: fmt.Appendf(nil, `{"id":"a","ts":%q}`, ts)}
}

// A redelivered batch carries the event-time stamps of its first delivery:
// its rows are not observed again (they would be late against the
// watermark they moved).
func TestTableSourceRedeliveryKeepsStamps(t *testing.T) {
	t.Parallel()
	addr := newTopicsCluster(t, 1, "t")
	produce(t, addr, columnRecord(10_000), columnRecord(20_000), columnRecord(3_000))
	in := buildTableInput(t, columnDDL(addr, ""))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var first []wmMeta
	for len(first) < 3 {
		batch, ack, err := in.ReadBatch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range batch {
			first = append(first, wmMetaOf(t, m))
		}
		if len(first) < 3 {
			_ = ack(ctx, nil)
			continue
		}
		if len(batch) != 3 {
			t.Fatalf("the three records came in batches of %d; the test needs them in one", len(batch))
		}
		_ = ack(ctx, errors.New("nack"))
	}
	batch, ack, err := in.ReadBatch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ack(ctx, nil) }()
	var again []wmMeta
	for _, m := range batch {
		again = append(again, wmMetaOf(t, m))
	}
	want := []wmMeta{{0, 10_000, 8_999, false}, {0, 20_000, 18_999, false}, {0, 3_000, 18_999, true}}
	if fmt.Sprint(first) != fmt.Sprint(want) || fmt.Sprint(again) != fmt.Sprint(want) {
		t.Fatalf("first delivery %v\nredelivery     %v\nwant both      %v", first, again, want)
	}
}

// When the last record of a bounded read gives no row (a tombstone of a
// kafka table is skipped, as in Flink), the end-of-input watermark goes on
// the last row delivered.
func TestTableSourceEndOfInputAfterSkippedRecord(t *testing.T) {
	t.Parallel()
	addr := newTopicsCluster(t, 1, "t")
	// One produce: the records share a record batch, so they are fetched,
	// and delivered, together.
	produce(t, addr, columnRecord(10_000), columnRecord(20_000), &kgo.Record{Topic: "t", Partition: 0})
	in := buildTableInput(t, columnDDL(addr, ", 'scan.bounded.mode' = 'latest-offset'"))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var got []wmMeta
	for {
		batch, ack, err := in.ReadBatch(ctx)
		if errors.Is(err, service.ErrEndOfInput) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range batch {
			got = append(got, wmMetaOf(t, m))
		}
		_ = ack(ctx, nil)
	}
	want := []wmMeta{{0, 10_000, 8_999, false}, {0, 20_000, math.MaxInt64, false}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got  %v\nwant %v (the end-of-input watermark on the last row)", got, want)
	}
}

// A decode that the end of the session cuts short (a schema registry that
// has not answered yet) is not a bad record: closing the input does not
// stop the run under on_error fail.
func TestTableSourceCloseMidDecode(t *testing.T) {
	t.Parallel()
	asked := make(chan struct{}, 1)
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	t.Cleanup(registry.Close)
	addr := newTopicsCluster(t, 1, "t")
	produce(t, addr, &kgo.Record{Topic: "t", Partition: 0, Value: []byte{0, 0, 0, 0, 1, 2, 'a'}})
	mgr := service.MockResources()
	c, err := parseConfig(t, yamlDDL(fmt.Sprintf(`CREATE TABLE a (name STRING) WITH ('connector' = 'kafka', 'topic' = 't',
  'properties.bootstrap.servers' = '%s', 'properties.group.id' = 'g', 'scan.startup.mode' = 'earliest-offset',
  'format' = 'avro-confluent', 'avro-confluent.url' = '%s')`, addr, registry.URL)))
	if err != nil {
		t.Fatal(err)
	}
	in := newSource(c, mgr)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := in.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("the reader did not ask the registry for the record's schema")
	}
	if err := in.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := halt.For(mgr).Err(); err != nil {
		t.Fatalf("closing mid-decode stopped the run: %v", err)
	}
}

// BenchmarkTableRows measures what a table source costs per record on the
// reader goroutine: the message with the default metadata, the row decoded
// from the fetched record (JSON value, metadata columns) and its event
// time from the row's watermark column (fetchedBatch.prepare).
func BenchmarkTableRows(b *testing.B) {
	c, err := parseConfig(b, yamlDDL(`CREATE TABLE bench (id BIGINT, name STRING,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', p INT METADATA FROM 'partition' VIRTUAL, o BIGINT METADATA FROM 'offset' VIRTUAL,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'json', 'properties.bootstrap.servers' = 'h:1', 'properties.group.id' = 'g')`))
	if err != nil {
		b.Fatal(err)
	}
	recs := make([]*kgo.Record, 500)
	lags := make([]int64, len(recs))
	for i := range recs {
		recs[i] = &kgo.Record{Topic: "t", Partition: 1, Offset: int64(i), Key: []byte("key"),
			Value: fmt.Appendf(nil, `{"id":%d,"name":"user-%d"}`, i, i), Timestamp: baseTime.Add(time.Duration(i) * time.Millisecond)}
	}
	res := service.MockResources()
	sess := newSession(c, res.Logger(), newSourceMetrics(res.Metrics(), PartitionMetricsPartition))
	sess.build.rows = newTableRows(c, res)
	fb := newFetchedBatch(recs, lags, &sess.build)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if !fb.prepare(ctx) {
			b.Fatal("prepare")
		}
		p := fb.takePrepared()
		if p.halted || len(p.msgs) != len(recs) || !p.ok[len(recs)-1] {
			b.Fatal("a row did not decode")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/msg")
}
