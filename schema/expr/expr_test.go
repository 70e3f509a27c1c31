package expr_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/expr"
)

func table(t *testing.T, ddl string) *schema.Table {
	t.Helper()
	tables, err := schema.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	if err := tables[0].Validate(); err != nil {
		t.Fatal(err)
	}
	return tables[0]
}

const ordersDDL = `CREATE TABLE orders (
  id BIGINT NOT NULL,
  amount DECIMAL(10, 2),
  name STRING,
  ts TIMESTAMP(3),
  payload BYTES,
  tags ARRAY<STRING>,
  addr ROW<city STRING>,
  ` + "`order-note`" + ` STRING,
  total AS amount * 1.2,
  label AS CASE WHEN amount > 100 THEN 'big' ELSE 'small' END,
  city AS UPPER(addr.city),
  late AS ts - INTERVAL '5' SECOND,
  note AS ` + "`order-note`" + ` || '!'
) WITH ('format' = 'json')`

func row() map[string]any {
	return map[string]any{
		"id": int64(7), "amount": json.Number("120.50"), "name": "ada",
		"ts":      time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC),
		"payload": []byte("hi"), "tags": []any{"a", "b"}, "addr": map[string]any{"city": "Paris"},
		"order-note": "fragile",
	}
}

func TestComputedColumns(t *testing.T) {
	t.Parallel()
	env, err := expr.NewEnv(table(t, ordersDDL))
	if err != nil {
		t.Fatal(err)
	}
	r := row()
	if err := env.EvalComputed(r, expr.Input{}); err != nil {
		t.Fatal(err)
	}
	if r["total"] != 144.6 || r["label"] != "big" || r["city"] != "PARIS" || r["note"] != "fragile!" ||
		!r["late"].(time.Time).Equal(time.Date(2026, 12, 2, 11, 59, 55, 0, time.UTC)) {
		t.Fatalf("row = %#v", r)
	}
	// NULL in, NULL out, as in Flink SQL.
	r = map[string]any{"id": int64(1), "amount": nil, "addr": nil, "ts": nil, "order-note": nil}
	if err := env.EvalComputed(r, expr.Input{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"total", "city", "late", "note"} {
		if v, ok := r[c]; !ok || v != nil {
			t.Errorf("%s = %#v, want NULL", c, v)
		}
	}
	if r["label"] != "small" {
		t.Errorf("label = %#v: CASE WHEN on a NULL condition takes ELSE", r["label"])
	}
}

func TestComputedErrors(t *testing.T) {
	t.Parallel()
	for ddl, want := range map[string]string{
		"CREATE TABLE t (s STRING, y AS s + 1) WITH ('format' = 'json')":          "column y AS s + 1 (CEL: s + 1): ERROR: 1:3: found no matching overload for '_+_' applied to '(wrapper(string), int)'",
		"CREATE TABLE t (meta STRING) WITH ('format' = 'json')":                   "column meta: the name is taken by a CEL variable",
		"CREATE TABLE t (n INT NOT NULL, y AS n / 0) WITH ('format' = 'json')":    "",
		"CREATE TABLE t (d DOUBLE NOT NULL, y AS d * 2) WITH ('format' = 'json')": "",
		"CREATE TABLE t (d DOUBLE, n INT, y AS d * n) WITH ('format' = 'json')":   "", // INT widens to DOUBLE, as in Flink
	} {
		tables, err := schema.ParseDDL(ddl)
		if err != nil {
			t.Fatal(err)
		}
		_, err = expr.NewEnv(tables[0])
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", ddl, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want %q, got %v", ddl, want, err)
		}
	}
	// A failure that no NULL explains is an error naming the column.
	tables, _ := schema.ParseDDL("CREATE TABLE t (n INT NOT NULL, y AS n / 0) WITH ('format' = 'json')")
	env, err := expr.NewEnv(tables[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := env.EvalComputed(map[string]any{"n": int64(1)}, expr.Input{}); err == nil || !strings.Contains(err.Error(), "computed column y AS n / 0: division by zero") {
		t.Fatalf("got %v", err)
	}
}

func TestTypedValues(t *testing.T) {
	t.Parallel()
	env, err := expr.NewEnv(table(t, ordersDDL))
	if err != nil {
		t.Fatal(err)
	}
	ts := time.UnixMilli(1764677594123).UTC()
	in := expr.Input{Meta: map[string]any{"kafka_topic": "orders", "kafka_partition": 3}, KafkaTimestamp: &ts}
	r := row()
	if err := env.EvalComputed(r, in); err != nil {
		t.Fatal(err)
	}
	act, err := env.Activation(r, in)
	if err != nil {
		t.Fatal(err)
	}
	for src, want := range map[string]any{
		`amount > 100.0 && amount < 121`:          true,
		`payload == b"hi" && size(payload) == 2`:  true,
		`ts == timestamp("2026-12-02T12:00:00Z")`: true,
		`ts`:              time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC),
		`kafka_timestamp`: ts,
		`meta.kafka_topic + ":" + string(meta.kafka_partition)`: "orders:3",
		`row["order-note"]`:       "fragile",
		`total`:                   144.6,
		`tags[1]`:                 "b",
		`addr.city`:               "Paris",
		`name != null && id == 7`: true,
		`payload`:                 []byte("hi"),
		`duration("1.5s")`:        "1.5s",
		`null`:                    nil,
	} {
		p, err := env.Compile(src, nil)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		got, err := p.Eval(act)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if g, ok := got.(time.Time); ok {
			if !g.Equal(want.(time.Time)) {
				t.Errorf("%s = %v, want %v", src, got, want)
			}
			continue
		}
		if b, ok := got.([]byte); ok {
			if string(b) != string(want.([]byte)) {
				t.Errorf("%s = %v, want %v", src, got, want)
			}
			continue
		}
		if got != want {
			t.Errorf("%s = %#v, want %#v", src, got, want)
		}
	}
	m, err := env.CompileMap(`{"id": id, "tags": tags, "nothing": null, "at": ts}`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Eval(act)
	if err != nil {
		t.Fatal(err)
	}
	out := got.(map[string]any)
	if out["id"] != int64(7) || len(out["tags"].([]any)) != 2 || out["nothing"] != nil || !out["at"].(time.Time).Equal(r["ts"].(time.Time)) {
		t.Fatalf("map = %#v", out)
	}
	if _, ok := out["nothing"]; !ok {
		t.Fatal("a null value keeps its key")
	}
}

// Without a table, only row, meta and kafka_timestamp exist; JSON numbers
// are ints when integral.
func TestNoTable(t *testing.T) {
	t.Parallel()
	env, err := expr.NewEnv(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.CompileFilter("id > 1"); err == nil || !strings.Contains(err.Error(), "undeclared reference to 'id'") {
		t.Fatalf("got %v", err)
	}
	if _, err := env.CompileFilter(`"x"`); err == nil || !strings.Contains(err.Error(), "the expression is string, want bool") {
		t.Fatalf("got %v", err)
	}
	if _, err := env.CompileMap(`[1]`); err == nil || !strings.Contains(err.Error(), "want map(string, dyn)") {
		t.Fatalf("got %v", err)
	}
	p, err := env.CompileFilter(`row.n % 2 == 1 && row.f > 1.0`)
	if err != nil {
		t.Fatal(err)
	}
	act, err := env.Activation(map[string]any{"n": json.Number("3"), "f": json.Number("1.5")}, expr.Input{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Eval(act)
	if err != nil || got != true {
		t.Fatalf("got %v, %v", got, err)
	}
}
