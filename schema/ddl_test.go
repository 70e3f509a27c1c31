package schema_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/schema"
)

func TestSeedStatementsParse(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/seed.sql")
	if err != nil {
		t.Fatal(err)
	}
	tables, err := schema.ParseDDL(string(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 2 {
		t.Fatalf("got %d tables, want 2", len(tables))
	}
	src1, sink := tables[0], tables[1]
	if src1.Name != "kafka_source" || len(src1.Columns) != 2 || src1.Columns[1].Type.String() != "TIMESTAMP(3)" {
		t.Fatalf("kafka_source parsed as %+v", src1)
	}
	if wm := src1.Watermark; wm == nil || wm.Column != "event_time" || wm.Delay != 5*time.Second {
		t.Fatalf("watermark = %+v", src1.Watermark)
	}
	if src1.Options["scan.topic-partition-discovery.interval"] != "1 min" || len(src1.Options) != 7 {
		t.Fatalf("options = %v", src1.Options)
	}
	if err := src1.Validate(); err != nil {
		t.Fatalf("kafka_source must validate: %v", err)
	}
	if sink.PrimaryKey == nil || sink.PrimaryKey.Columns[0] != "device_id" {
		t.Fatalf("kafka_sink primary key = %+v", sink.PrimaryKey)
	}
	if got := sink.Columns[0].Type.String(); got != "STRING NOT NULL" {
		t.Fatalf("a primary key column is NOT NULL, got %s", got)
	}
	// Unlike Flink, a PRIMARY KEY on the plain kafka connector is accepted
	// (kafkakey.go): its columns form the Kafka key, a lone STRING column
	// in the raw format.
	if err := sink.Validate(); err != nil {
		t.Fatalf("kafka_sink must validate: %v", err)
	}
	if got := sink.KeyFields(); len(got) != 1 || got[0] != "device_id" {
		t.Fatalf("kafka_sink key fields = %v, want [device_id]", got)
	}
	if name, _, ok := sink.KeyFormatOf(); !ok || name != "raw" {
		t.Fatalf("kafka_sink key format = %q %v, want raw", name, ok)
	}
}

func TestParseDDLFeatures(t *testing.T) {
	t.Parallel()
	src := `
/* a block
   comment */
CREATE TEMPORARY TABLE IF NOT EXISTS cat.db.Orders (
  ` + "`order id`" + ` BIGINT NOT NULL COMMENT 'the id',
  ` + "`select`" + ` STRING,
  price DECIMAL(10, 2),
  amount dec,
  flag boolean NULL,
  t1 tinyint, t2 SMALLINT, t3 INTEGER, t4 FLOAT, t5 DOUBLE PRECISION,
  c CHAR(3), v VARCHAR(20), b BINARY(4), vb VARBINARY(8), raw BYTES,
  d DATE, tm TIME(3), ts TIMESTAMP(9) WITHOUT TIME ZONE, ltz TIMESTAMP(3) WITH LOCAL TIME ZONE,
  ltz2 TIMESTAMP_LTZ,
  tags ARRAY<STRING NOT NULL>,
  attrs MAP<STRING, ARRAY<INT>>,
  addr ROW<city STRING 'the city', zip ROW(code INT)>,
  ev_ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
  part INT METADATA FROM 'partition',
  ` + "`offset`" + ` BIGINT METADATA VIRTUAL,
  total AS price * (1 + amount) COMMENT 'computed',
  CONSTRAINT pk PRIMARY KEY (` + "`order id`" + `) NOT ENFORCED,
  watermark for ev_ts as ev_ts - interval '0.5' second
) COMMENT 'orders table'
WITH ('connector' = 'kafka', 'it''s' = 'a ''quoted'' value');
`
	tables, err := schema.ParseDDL(src)
	if err != nil {
		t.Fatal(err)
	}
	tb := tables[0]
	if tb.Name != "cat.db.Orders" || tb.Comment != "orders table" {
		t.Fatalf("name %q comment %q", tb.Name, tb.Comment)
	}
	want := map[string]string{
		"order id": "BIGINT NOT NULL", "select": "STRING", "price": "DECIMAL(10, 2)", "amount": "DECIMAL(10, 0)",
		"flag": "BOOLEAN", "t1": "TINYINT", "t2": "SMALLINT", "t3": "INT", "t4": "FLOAT", "t5": "DOUBLE",
		"c": "CHAR(3)", "v": "VARCHAR(20)", "b": "BINARY(4)", "vb": "VARBINARY(8)", "raw": "BYTES",
		"d": "DATE", "tm": "TIME(3)", "ts": "TIMESTAMP(9)", "ltz": "TIMESTAMP_LTZ(3)", "ltz2": "TIMESTAMP_LTZ(6)",
		"tags": "ARRAY<STRING NOT NULL>", "attrs": "MAP<STRING, ARRAY<INT>>",
		"addr": "ROW<city STRING, zip ROW<code INT>>", "ev_ts": "TIMESTAMP_LTZ(3)", "part": "INT", "offset": "BIGINT",
	}
	for name, typ := range want {
		c, ok := tb.Column(name)
		if !ok {
			t.Errorf("column %s missing", name)
			continue
		}
		if got := c.Type.String(); got != typ {
			t.Errorf("column %s: type %s, want %s", name, got, typ)
		}
	}
	ev, _ := tb.Column("ev_ts")
	if ev.Kind != schema.Metadata || ev.MetadataKey != "timestamp" || !ev.Virtual {
		t.Errorf("ev_ts = %+v", ev)
	}
	off, _ := tb.Column("offset")
	if off.MetadataKey != "offset" || !off.Virtual {
		t.Errorf("offset = %+v", off)
	}
	total, _ := tb.Column("total")
	if total.Kind != schema.Computed || total.Expr != "price * (1 + amount)" || total.Comment != "computed" {
		t.Errorf("total = %+v", total)
	}
	if tb.PrimaryKey.Name != "pk" || tb.PrimaryKey.Columns[0] != "order id" {
		t.Errorf("pk = %+v", tb.PrimaryKey)
	}
	if tb.Watermark.Delay != 500*time.Millisecond {
		t.Errorf("watermark delay %s", tb.Watermark.Delay)
	}
	if tb.Options["it's"] != "a 'quoted' value" {
		t.Errorf("options %v", tb.Options)
	}
	// Computed columns are accepted (translated to CEL); this table fails
	// validation only for its options.
	err = tb.Validate()
	if err == nil || strings.Contains(err.Error(), "column total") {
		t.Errorf("want only option errors, got %v", err)
	}
}

func TestParseDDLErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		line, col int
		msg       string
	}{
		{"unknown type", "CREATE TABLE t (\n  a STRIN\n)", 2, 5, "unknown type STRIN"},
		{"missing comma", "CREATE TABLE t (a INT b INT)", 1, 23, `expected "," or ")"`},
		{"open string", "CREATE TABLE t (a INT) WITH ('k' = 'v)", 1, 36, "string is not closed"},
		{"open comment", "/* x\nCREATE", 1, 1, "comment /* is not closed"},
		{"pk enforced", "CREATE TABLE t (a INT, PRIMARY KEY (a))", 1, 39, "expected NOT ENFORCED"},
		{"watermark expr", "CREATE TABLE t (a TIMESTAMP(3),\n WATERMARK FOR a AS a + INTERVAL '1' SECOND)", 2, 21, "WATERMARK FOR a AS a + INTERVAL '1' SECOND: connectd supports"},
		{"interval unit", "CREATE TABLE t (a TIMESTAMP(3), WATERMARK FOR a AS a - INTERVAL '1' WEEK)", 1, 69, "interval unit WEEK"},
		{"duplicate option", "CREATE TABLE t (a INT) WITH ('k' = 'v', 'k' = 'w')", 1, 41, "option 'k' is set twice"},
		{"bad char", "CREATE TABLE t (a INT) # x", 1, 24, "unexpected character '#'"},
		{"partitioned", "CREATE TABLE t (a INT) PARTITIONED BY (a)", 1, 24, "PARTITIONED is not supported"},
		{"two pks", "CREATE TABLE t (a INT PRIMARY KEY NOT ENFORCED, PRIMARY KEY (a) NOT ENFORCED)", 1, 49, "more than one PRIMARY KEY"},
		{"eof", "CREATE TABLE t (a INT", 1, 22, `expected "," or ")"`},
		{"deep type", "CREATE TABLE t (a " + strings.Repeat("ARRAY<", 70) + "INT" + strings.Repeat(">", 70) + ")", 1, 409, "nested more than 64 levels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := schema.ParseDDL(tc.src)
			var se *schema.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("want a SyntaxError, got %v", err)
			}
			if se.Line != tc.line || se.Column != tc.col || !strings.Contains(se.Msg, tc.msg) {
				t.Fatalf("got %v, want line %d, column %d: ...%s...", err, tc.line, tc.col, tc.msg)
			}
		})
	}
}

func TestTypeStringRoundTrip(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"STRING", "VARCHAR(10) NOT NULL", "CHAR(1)", "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT NOT NULL",
		"FLOAT", "DOUBLE", "DECIMAL(38, 18)", "DATE", "TIME(0)", "TIMESTAMP(3)", "TIMESTAMP_LTZ(9)",
		"BINARY(16)", "VARBINARY(3)", "BYTES", "ARRAY<ARRAY<INT NOT NULL>>", "MAP<STRING, DOUBLE>",
		"ROW<a INT, `b c` ROW<`select` STRING>> NOT NULL",
	} {
		typ, err := schema.ParseType(s)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		if got := typ.String(); got != s {
			t.Errorf("ParseType(%q).String() = %q", s, got)
		}
	}
}
