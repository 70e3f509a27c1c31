package cel

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

func build(t *testing.T, conf string) (*processor, error) {
	t.Helper()
	parsed, err := Spec().ParseYAML(conf, nil)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	c, err := configFromParsed(parsed)
	if err != nil {
		return nil, err
	}
	return newProcessor(c), nil
}

const ordersTable = `
ddl: |
  CREATE TABLE orders (
    id BIGINT NOT NULL,
    amount DECIMAL(10, 2),
    currency STRING,
    ts TIMESTAMP(3),
    sig BYTES,
    amount_eur AS amount * 0.9
  ) WITH ('format' = 'json')
`

func structured(row map[string]any) *service.Message {
	m := service.NewMessage(nil)
	m.SetStructuredMut(row)
	m.MetaSetMut("kafka_topic", "orders")
	m.MetaSetMut("kafka_partition", 1)
	m.MetaSetMut("kafka_offset", 42)
	m.MetaSetMut("kafka_timestamp_ms", "1764677594123")
	return m
}

func TestProcess(t *testing.T) {
	t.Parallel()
	ts := time.Date(2026, 12, 2, 12, 13, 14, 0, time.UTC)
	order := func() map[string]any {
		return map[string]any{"id": int64(1), "amount": "150.00", "currency": "EUR", "ts": ts, "sig": []byte{0xca, 0xfe}, "amount_eur": 135.0}
	}
	for _, tc := range []struct {
		name, conf string
		row        map[string]any
		// want is the content as JSON; "" means dropped.
		want, wantErr string
	}{
		{"filter keeps", ordersTable + "filter: amount >= 100.0 && currency == 'EUR'\n", order(), `{"amount":"150.00","amount_eur":135,"currency":"EUR","id":1,"sig":"yv4=","ts":"2026-12-02T12:13:14Z"}`, ""},
		{"filter drops", ordersTable + "filter: amount < 100.0\n", order(), "", ""},
		{"null filter drops", ordersTable + "filter: \"currency == 'EUR' ? dyn(null) : dyn(true)\"\n", order(), "", ""},
		{"map projects and computes", ordersTable + `map: '{"id": id, "cents": int(amount * 100.0), "day": ts.getDayOfMonth("UTC") + 1, "eur": amount_eur, "sig": sig, "topic": meta.kafka_topic}'` + "\n",
			order(), `{"cents":15000,"day":2,"eur":135,"id":1,"sig":"yv4=","topic":"orders"}`, ""},
		{"kafka_timestamp", "filter: kafka_timestamp > timestamp('2025-12-02T12:13:14Z')\nmap: '{\"at\": kafka_timestamp, \"t\": row.t}'\n",
			map[string]any{"t": 1}, `{"at":"2025-12-02T12:13:14.123Z","t":1}`, ""},
		{"null operand flags", ordersTable + "filter: amount > 100.0\n", map[string]any{"id": int64(2), "amount": nil},
			`{"amount":null,"id":2}`, `cel (topic orders, partition 1, offset 42): field filter: expression "amount > 100.0": no such overload`},
		{"sql_true drops a NULL comparison", ordersTable + "filter: sql_true(amount > 100.0)\n", map[string]any{"id": int64(2), "amount": nil}, "", ""},
		{"sql_true keeps other errors", "filter: sql_true(row.n / 0 > 1)\n", map[string]any{"n": 1},
			`{"n":1}`, `field filter: expression "sql_true(row.n / 0 > 1)": division by zero`},
		{"missing key flags", "map: '{\"x\": row.nope}'\n", map[string]any{"a": 1},
			`{"a":1}`, `field map: expression "{\"x\": row.nope}": no such key: nope`},
		{"dyn result must be a map", "map: row.a\n", map[string]any{"a": 1}, `{"a":1}`, "field map: expression \"row.a\": the result is int64, want a map"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := build(t, tc.conf)
			if err != nil {
				t.Fatal(err)
			}
			out, err := p.Process(context.Background(), structured(tc.row))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(out) != 0 {
					t.Fatalf("want the message dropped, got %d", len(out))
				}
				return
			}
			if len(out) != 1 {
				t.Fatalf("got %d messages", len(out))
			}
			got, _ := out[0].AsBytes()
			if string(got) != tc.want {
				t.Errorf("content %s, want %s", got, tc.want)
			}
			err = out[0].GetError()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestConstructErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ conf, want string }{
		{"{}", "field filter: set filter, map or both"},
		{ordersTable + "filter: amount > 'x'\n", "field filter: ERROR: 1:8: found no matching overload for '_>_' applied to '(wrapper(double), string)'"},
		{ordersTable + "filter: nope == 1\n", "field filter: ERROR: 1:1: undeclared reference to 'nope'"},
		{ordersTable + "filter: id\n", "field filter: the expression is int, want bool"},
		{ordersTable + "filter: id ==\nmap: '[id]'\n", "field filter: ERROR: 1:6: Syntax error"},
		{ordersTable + "map: '[id]'\n", "field map: the expression is list(int), want map(string, dyn)"},
		{"filter: id > 1\n", "undeclared reference to 'id'"},
		{"ddl: 'CREATE TABLE t (x INT, y AS SHA256(x)) WITH (''format'' = ''json'')'\nfilter: x > 1\n", "function SHA256 is not supported in a computed column"},
		{"catalog: /nonexistent.sql\ntable: t\nfilter: x > 1\n", "field catalog"},
	} {
		_, err := build(t, tc.conf)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want %q, got %v", tc.conf, tc.want, err)
		}
	}
	// Every problem is reported at once.
	_, err := build(t, ordersTable+"filter: nope\nmap: '[1]'\n")
	if err == nil || !strings.Contains(err.Error(), "field filter") || !strings.Contains(err.Error(), "field map") {
		t.Errorf("want both fields named, got %v", err)
	}
}

func TestLintRule(t *testing.T) {
	t.Parallel()
	for conf, want := range map[string]string{
		"cel: {}\n":                              "field filter: set filter, map or both",
		"cel:\n  filter: row.a ==\n":             "field filter: ERROR: 1:9: Syntax error",
		"cel:\n  table: [1]\n  filter: 'true'\n": "field table: want an object",
		"cel:\n  ddl: \"CREATE TABLE t (a INT) WITH ('format' = 'json')\"\n  filter: a > 'x'\n": "field filter: ERROR: 1:3: found no matching overload",
		"cel:\n  ddl: \"CREATE TABLE t (a INT) WITH ('format' = 'json')\"\n  map: 'a'\n":        "field map: the expression is wrapper(int), want map(string, dyn)",
		"cel:\n  table: { name: t, columns: [ { name: a, type: INT } ] }\n  filter: b\n":        "undeclared reference to 'b'",
		// The catalog is read as when the processor starts.
		"cel:\n  catalog: ./not/there.sql\n  table: t\n  filter: anything > 1\n": "field catalog: catalog: open ./not/there.sql",
	} {
		err := service.NewStreamBuilder().AddProcessorYAML(conf)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want lint error %q, got %v", conf, want, err)
		}
	}
	for _, ok := range []string{
		"cel:\n  ddl: \"CREATE TABLE t (a INT) WITH ('format' = 'json')\"\n  filter: a != null && a > 1\n",
		"cel:\n  map: '{\"a\": row.a}'\n",
	} {
		if err := service.NewStreamBuilder().AddProcessorYAML(ok); err != nil {
			t.Errorf("%s: lints clean, got %v", ok, err)
		}
	}
}
