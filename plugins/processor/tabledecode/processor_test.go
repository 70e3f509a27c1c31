package tabledecode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/plugins/processor/tablespec"
)

func build(t *testing.T, conf string) (*processor, error) {
	t.Helper()
	parsed, err := Spec().ParseYAML(conf, nil)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	c, err := tablespec.FromParsed(parsed)
	if err != nil {
		return nil, err
	}
	return newProcessor(c, service.MockResources()), nil
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

	fail, err := build(t, ordersDDL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fail.Process(ctx, kafkaMsg(`{"id":null}`, 41)); err == nil ||
		!strings.Contains(err.Error(), "table_decode (topic orders, partition 2, offset 41): format json: field id: NULL in a NOT NULL column") {
		t.Fatalf("fail: want an error naming topic, partition, offset and field, got %v", err)
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
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ conf, want string }{
		{"catalog: " + cat + "\ntable: a\n", ""},
		{"catalog: " + cat + "\ntable: nope\n", "field table: catalog: no table nope (tables: a, computed, pk)"},
		{"catalog: " + cat + "\ntable: pk\n", "use 'connector' = 'upsert-kafka'"},
		{"catalog: " + cat + "\ntable: computed\n", "computed columns (AS x + 1) are not yet supported"},
		{"catalog: " + cat + "\ntable: a\nformat: avro-confluent\n", `field format: format "avro-confluent" is not supported by connectd's codecs yet (supported: avro, csv, json, raw)`},
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
