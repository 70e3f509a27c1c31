package tabledecode

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/halt"
	"github.com/connectd/connectd/internal/table"
)

func build(t *testing.T, conf string) (*processor, error) {
	t.Helper()
	return buildIn(t, conf, service.MockResources())
}

func buildIn(t *testing.T, conf string, mgr *service.Resources) (*processor, error) {
	t.Helper()
	parsed, err := Spec().ParseYAML(conf, nil)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	c, err := table.ProcessorFromParsed(parsed)
	if err != nil {
		return nil, err
	}
	return newProcessor(c, mgr), nil
}

// logTo returns resources whose logger writes to buf.
func logTo(buf *bytes.Buffer) *service.Resources {
	return service.MockResources(service.MockResourcesOptUseLogger(service.NewLoggerFromSlog(slog.New(slog.NewTextHandler(buf, nil)))))
}

func kafkaMsg(content string, offset int) *service.Message {
	m := service.NewMessage([]byte(content))
	m.MetaSetMut("kafka_topic", "orders")
	m.MetaSetMut("kafka_partition", 2)
	m.MetaSetMut("kafka_offset", offset)
	return m
}

const ordersDDL = `
ddl: |
  CREATE TABLE orders (id BIGINT NOT NULL, name STRING) WITH ('format' = 'json')
`

func TestPolicies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// fail: the record is dropped (it must not reach the output) and the
	// run stops with an error naming topic, partition, offset and field,
	// logged once at error level.
	var logs bytes.Buffer
	mgr := logTo(&logs)
	fail, err := buildIn(t, ordersDDL, mgr)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := fail.Process(ctx, kafkaMsg(`{"id":null}`, 41)); err != nil || len(out) != 0 {
		t.Fatalf("fail: want the bad record dropped, got %v, %v", out, err)
	}
	const want = "table_decode (topic orders, partition 2, offset 41): format json: field id: NULL in a NOT NULL column"
	if err := halt.For(mgr).Err(); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "on_error: fail ends the run") {
		t.Fatalf("fail: want the run stopped with an error naming topic, partition, offset and field, got %v", err)
	}
	if out, err := fail.Process(ctx, kafkaMsg(`{`, 42)); err != nil || len(out) != 0 {
		t.Fatalf("fail: a later bad record is dropped too, got %v, %v", out, err)
	}
	if n := strings.Count(logs.String(), "level=ERROR"); n != 1 || !strings.Contains(logs.String(), "offset 41") {
		t.Fatalf("fail: want one error log line naming offset 41, got %d:\n%s", n, logs.String())
	}

	skip, err := build(t, ordersDDL+"on_error: skip\n")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := skip.Process(ctx, kafkaMsg(`{`, 1)); err != nil || len(out) != 0 {
		t.Fatalf("skip: got %v, %v", out, err)
	}

	dl, err := build(t, ordersDDL+"on_error: dead_letter\n")
	if err != nil {
		t.Fatal(err)
	}
	out, err := dl.Process(ctx, kafkaMsg(`{"id":"x"}`, 7))
	if err != nil || len(out) != 1 {
		t.Fatalf("dead_letter: got %v, %v", out, err)
	}
	if raw, _ := out[0].AsBytes(); string(raw) != `{"id":"x"}` {
		t.Fatalf("dead_letter: the message must keep its bytes, got %s", raw)
	}
	if err := out[0].GetError(); err == nil || !strings.Contains(err.Error(), "offset 7") {
		t.Fatalf("dead_letter: want the error flag, got %v", err)
	}

	// Good records decode under every policy.
	for _, p := range []*processor{fail, skip, dl} {
		out, err := p.Process(ctx, kafkaMsg(`{"id":5,"name":"ada"}`, 9))
		if err != nil || len(out) != 1 || out[0].GetError() != nil {
			t.Fatalf("good record: %v, %v", out, err)
		}
		v, _ := out[0].AsStructured()
		if row := v.(map[string]any); row["id"] != int64(5) || row["name"] != "ada" {
			t.Fatalf("row = %#v", row)
		}
	}
}

func TestMetadataColumns(t *testing.T) {
	t.Parallel()
	p, err := build(t, `
table:
  name: events
  columns:
    - { name: v, type: STRING }
    - { name: topic, type: STRING, metadata: topic, virtual: true }
    - { name: part, type: INT, metadata: partition, virtual: true }
    - { name: off, type: BIGINT, metadata: offset, virtual: true }
    - { name: ts, type: TIMESTAMP_LTZ(3), metadata: timestamp }
    - { name: hdrs, type: "MAP<STRING, BYTES>", metadata: headers }
  options: { format: raw }
`)
	if err != nil {
		t.Fatal(err)
	}
	m := kafkaMsg("payload", 12)
	m.MetaSetMut("kafka_timestamp_ms", "1764677594123")
	m.MetaSetMut("source", "shop")
	out, err := p.Process(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := out[0].AsStructured()
	row := v.(map[string]any)
	if row["v"] != "payload" || row["topic"] != "orders" || row["part"] != int64(2) || row["off"] != int64(12) ||
		!row["ts"].(time.Time).Equal(time.UnixMilli(1764677594123)) || string(row["hdrs"].(map[string]any)["source"].([]byte)) != "shop" {
		t.Fatalf("row = %#v", row)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cat := filepath.Join(dir, "tables.sql")
	if err := os.WriteFile(cat, []byte(`
CREATE TABLE a (x INT) WITH ('format' = 'csv');
CREATE TABLE pk (x INT, PRIMARY KEY (x) NOT ENFORCED) WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'json');
CREATE TABLE computed (x INT, y AS x + 1) WITH ('format' = 'json');
CREATE TABLE unsupported (x INT, y AS SHA256(x)) WITH ('format' = 'json');
CREATE TABLE mistyped (s STRING, y AS s * 2) WITH ('format' = 'json');
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ conf, want string }{
		{"catalog: " + cat + "\ntable: a\n", ""},
		{"catalog: " + cat + "\ntable: nope\n", "field table: catalog: no table nope (tables: a, computed, mistyped, pk, unsupported)"},
		{"catalog: " + cat + "\ntable: pk\n", "option 'key.format' is required: the PRIMARY KEY columns (x) form the Kafka key"},
		{"catalog: " + cat + "\ntable: computed\n", ""},
		{"catalog: " + cat + "\ntable: unsupported\n", "column y AS SHA256(x): line 1, column 1: function SHA256 is not supported in a computed column; supported: UPPER"},
		{"catalog: " + cat + "\ntable: mistyped\n", "column y AS s * 2 (CEL: s * 2): ERROR: 1:3: found no matching overload for '_*_' applied to '(wrapper(string), int)'"},
		{"catalog: " + cat + "\ntable: a\nformat: avro-confluent\n", "field format: format avro-confluent: option 'url' is required"},
		{"catalog: " + cat + "\ntable: a\noptions: { delimiter: ';' }\n", "format csv: option 'delimiter' is not supported"},
		{"ddl: \"CREATE TABLE t (x INT)\"\n", "field format: the table t names no format"},
		{"ddl: \"CREATE TABLE t (x INT\"\n", "field ddl: line 1, column 22: expected"},
		{"ddl: \"CREATE TABLE t (x INT) WITH ('format' = 'json', 'json.fast' = 'true')\"\n", "option 'json.fast' is not supported by connectd"},
		{"table: { name: t, columns: [ { name: x, type: INTEGR } ], options: { format: json } }\n", "field table: table t: column x: type \"INTEGR\": line 1, column 1: unknown type INTEGR"},
		{"table: t\n", "field table: a table name needs catalog or ddl"},
	} {
		_, err := build(t, tc.conf)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.conf, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want %q, got %v", tc.conf, tc.want, err)
		}
	}
}

func TestLintRule(t *testing.T) {
	t.Parallel()
	for conf, want := range map[string]string{
		"table_decode: {}\n":                                      "field table: a table is required",
		"table_decode:\n  table: { name: t }\n  ddl: x\n":         "an inline table excludes catalog and ddl",
		"table_decode:\n  table: t\n  catalog: a.sql\n  ddl: x\n": "catalog and ddl are alternatives",
		"table_decode:\n  catalog: a.sql\n":                       "catalog needs the name of a table",
		"table_decode:\n  ddl: x\n  on_error: retry\n":            "retry",
	} {
		err := service.NewStreamBuilder().AddProcessorYAML(conf)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want lint error %q, got %v", conf, want, err)
		}
	}
	if err := service.NewStreamBuilder().AddProcessorYAML("table_decode:\n  ddl: \"CREATE TABLE t (a INT) WITH ('format' = 'json')\"\n"); err != nil {
		t.Errorf("a valid config lints clean: %v", err)
	}
}

// Computed columns of a DDL table are evaluated after decoding, from
// physical and metadata columns; NULL in gives NULL out; a failure that no
// NULL explains is a bad record.
func TestComputedColumns(t *testing.T) {
	t.Parallel()
	_, err := build(t, `
ddl: |
  CREATE TABLE orders (
    id BIGINT NOT NULL,
    price DECIMAL(10, 2),
    qty INT,
    epoch_ms BIGINT,
    kafka_ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
    total AS price * qty,
    event_time AS TO_TIMESTAMP_LTZ(epoch_ms, 3),
    lag_ms AS kafka_ts - event_time,
    size AS CASE WHEN qty >= 10 THEN 'bulk' ELSE 'retail' END,
    per_item AS 100 / qty,
    WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND
  ) WITH ('format' = 'json')
on_error: dead_letter
`)
	if err == nil || !strings.Contains(err.Error(), "column lag_ms AS kafka_ts - event_time: column event_time is computed too") {
		t.Fatalf("want the computed-reference error, got %v", err)
	}
	_, err = build(t, "ddl: \"CREATE TABLE t (price STRING, qty INT, total AS price * qty) WITH ('format' = 'json')\"\n")
	if err == nil || !strings.Contains(err.Error(), "column total AS price * qty (CEL: price * qty): ERROR: 1:7: found no matching overload for '_*_' applied to '(wrapper(string), wrapper(int))'") {
		t.Fatalf("want the type error naming the column, got %v", err)
	}
	p, err := build(t, `
ddl: |
  CREATE TABLE orders (
    id BIGINT NOT NULL,
    price DECIMAL(10, 2),
    qty INT,
    epoch_ms BIGINT,
    kafka_ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
    total AS price * CAST(qty AS DOUBLE),
    event_time AS TO_TIMESTAMP_LTZ(epoch_ms, 3),
    delay AS kafka_ts - TO_TIMESTAMP_LTZ(epoch_ms, 3),
    size AS CASE WHEN qty >= 10 THEN 'bulk' ELSE 'retail' END,
    per_item AS 100 / qty,
    WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND
  ) WITH ('format' = 'json')
on_error: dead_letter
`)
	if err != nil {
		t.Fatal(err)
	}
	m := kafkaMsg(`{"id":1,"price":"2.50","qty":10,"epoch_ms":1764677594000}`, 3)
	m.MetaSetMut("kafka_timestamp_ms", "1764677594250")
	out, err := p.Process(context.Background(), m)
	if err != nil || len(out) != 1 || out[0].GetError() != nil {
		t.Fatalf("got %v, %v", out, err)
	}
	v, _ := out[0].AsStructured()
	row := v.(map[string]any)
	if row["total"] != 25.0 || !row["event_time"].(time.Time).Equal(time.UnixMilli(1764677594000)) || row["delay"] != "250ms" ||
		row["size"] != "bulk" || row["per_item"] != int64(10) {
		t.Fatalf("row = %#v", row)
	}
	// NULL in, NULL out.
	out, err = p.Process(context.Background(), kafkaMsg(`{"id":2}`, 4))
	if err != nil || len(out) != 1 || out[0].GetError() != nil {
		t.Fatalf("got %v, %v", out, err)
	}
	v, _ = out[0].AsStructured()
	row = v.(map[string]any)
	for _, c := range []string{"total", "event_time", "delay", "per_item"} {
		if x, ok := row[c]; !ok || x != nil {
			t.Errorf("%s = %#v, want NULL", c, x)
		}
	}
	if row["size"] != "retail" {
		t.Errorf("size = %#v: a NULL condition is not true, so ELSE", row["size"])
	}
	// Division by zero is not explained by a NULL: a bad record.
	out, err = p.Process(context.Background(), kafkaMsg(`{"id":3,"qty":0}`, 5))
	if err != nil || len(out) != 1 {
		t.Fatalf("got %v, %v", out, err)
	}
	if err := out[0].GetError(); err == nil || !strings.Contains(err.Error(), "offset 5): computed column per_item AS 100 / qty: division by zero") {
		t.Fatalf("want a dead letter naming the column, got %v", err)
	}
}

// The YAML form writes a computed column with expr instead of type.
func TestComputedColumnYAML(t *testing.T) {
	t.Parallel()
	p, err := build(t, `
table:
  name: people
  columns:
    - { name: first, type: STRING }
    - { name: last, type: STRING }
    - { name: full, expr: "first || ' ' || UPPER(last)" }
  options: { format: json }
`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Process(context.Background(), kafkaMsg(`{"first":"Ada","last":"Lovelace"}`, 1))
	if err != nil || len(out) != 1 {
		t.Fatalf("got %v, %v", out, err)
	}
	v, _ := out[0].AsStructured()
	if full := v.(map[string]any)["full"]; full != "Ada LOVELACE" {
		t.Fatalf("full = %#v", full)
	}
	if _, err := build(t, `
table:
  name: people
  columns:
    - { name: first, type: STRING }
    - { name: full, expr: "first BETWEEN 'a' AND 'b'" }
  options: { format: json }
`); err == nil || !strings.Contains(err.Error(), `column full AS first BETWEEN 'a' AND 'b': line 1, column 7: unsupported Flink SQL construct "BETWEEN"`) {
		t.Fatalf("want the construct named, got %v", err)
	}
}
