package schema_test

import (
	"strings"
	"testing"

	"github.com/connectd/connectd/schema"
)

func TestTranslateSQL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sql, cel string
		cols     []string
	}{
		{"price * (1 + amount)", "price * (1 + amount)", []string{"price", "amount"}},
		{"a = 1 AND b <> 'x''y' OR NOT c", `a == 1 && b != "x'y" || !(c)`, []string{"a", "b", "c"}},
		{"a <= 2.5 AND a >= -1 AND a != 3 AND a < 4 AND a > 0", "a <= 2.5 && a >= -1 && a != 3 && a < 4 && a > 0", []string{"a"}},
		{"first_name || ' ' || last_name", `string(first_name) + " " + string(last_name)`, []string{"first_name", "last_name"}},
		{"x IS NULL OR y IS NOT NULL", "x == null || y != null", []string{"x", "y"}},
		{"flag IS NOT TRUE", "(flag != true)", []string{"flag"}},
		{"status IN ('a', 'b')", `status in ["a", "b"]`, []string{"status"}},
		{"status NOT IN (1)", "!(status in [1])", []string{"status"}},
		{"CASE WHEN x > 10 THEN 'big' WHEN x > 1 THEN 'small' ELSE 'none' END", `(sql_true(x > 10) ? "big" : (sql_true(x > 1) ? "small" : "none"))`, []string{"x"}},
		{"CASE WHEN x THEN 1 END", "(sql_true(x) ? 1 : null)", []string{"x"}},
		{"CAST(id AS STRING)", "string(id)", []string{"id"}},
		{"CAST(s AS BIGINT) + CAST(d AS DECIMAL(10, 2))", "int(s) + double(d)", []string{"s", "d"}},
		{"CAST(s AS TIMESTAMP_LTZ(3))", "timestamp(s)", []string{"s"}},
		{"ts - INTERVAL '5' SECOND", `ts - duration("5s")`, []string{"ts"}},
		{"UPPER(TRIM(name))", "((name).trim()).upperAscii()", []string{"name"}},
		{"CHAR_LENGTH(name) + 1", "size(name) + 1", []string{"name"}},
		{"CONCAT(a, '-', b)", `(string(a) + "-" + string(b))`, []string{"a", "b"}},
		{"TO_TIMESTAMP_LTZ(epoch_ms, 3)", `(timestamp(0) + duration(string(int(epoch_ms)) + "ms"))`, []string{"epoch_ms"}},
		{"TO_TIMESTAMP_LTZ(epoch_s, 0)", "timestamp(int(epoch_s))", []string{"epoch_s"}},
		{"addr.city", "addr.city", []string{"addr"}},
		{"`order id` + `in`", `row["order id"] + row["in"]`, []string{"order id", "in"}},
		{"n || 'x' || (1 + 2)", `string(n) + "x" + string((1 + 2))`, []string{"n"}},
		{"TRUE AND NULL IS NULL", "true && null == null", nil},
	} {
		got, cols, err := schema.TranslateSQL(tc.sql)
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		if got != tc.cel || strings.Join(cols, ",") != strings.Join(tc.cols, ",") {
			t.Errorf("%s:\n got  %s %q\n want %s %q", tc.sql, got, cols, tc.cel, tc.cols)
		}
	}
}

func TestTranslateSQLRejects(t *testing.T) {
	t.Parallel()
	for sql, want := range map[string]string{
		"PROCTIME()":               "line 1, column 1: unsupported Flink SQL function PROCTIME in a computed column (supported: column names",
		"x BETWEEN 1 AND 2":        `line 1, column 3: unsupported Flink SQL construct "BETWEEN"`,
		"arr[1]":                   `line 1, column 4: unsupported Flink SQL construct "["`,
		"CASE x WHEN 1 THEN 2 END": "unsupported Flink SQL construct: CASE value WHEN",
		"CAST(x AS ARRAY<INT>)":    "line 1, column 11: unsupported Flink SQL construct CAST(... AS ARRAY<INT>)",
		"UPPER(a, b)":              "UPPER takes one argument, got 2",
		"TO_TIMESTAMP_LTZ(x, 6)":   "the precision must be the literal 0 or 3",
		"x IS UNKNOWN":             `unsupported Flink SQL construct "UNKNOWN"`,
		"ts - INTERVAL '1' MONTH":  "interval unit MONTH",
		"'open":                    "string is not closed",
		"(a + b":                   "expected ), found end of input",
		"a ? b : c":                `unsupported Flink SQL construct "?"`,
	} {
		_, _, err := schema.TranslateSQL(sql)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want %q, got %v", sql, want, err)
		}
	}
}

// A computed column must name columns of the table that are not computed.
func TestValidateComputed(t *testing.T) {
	t.Parallel()
	tables, err := schema.ParseDDL(`CREATE TABLE t (
  x INT,
  y AS x + 1,
  z AS y * 2,
  w AS nope,
  v AS LOCALTIMESTAMP()
) WITH ('format' = 'json')`)
	if err != nil {
		t.Fatal(err)
	}
	err = tables[0].Validate()
	for _, want := range []string{
		"column z AS y * 2: column y is computed too",
		"column w AS nope: no column nope",
		"column v AS LOCALTIMESTAMP(): line 1, column 1: unsupported Flink SQL function LOCALTIMESTAMP",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q, got %v", want, err)
		}
	}
	if err != nil && strings.Contains(err.Error(), "column y AS") {
		t.Errorf("column y is valid: %v", err)
	}
}

func TestTranslateSQLDoubleLiterals(t *testing.T) {
	t.Parallel()
	got, _, err := schema.TranslateSQLWith("amount * (1 + vat) + 2.5 + TO_TIMESTAMP_LTZ(ms, 3)", schema.DoubleLiterals)
	if err != nil {
		t.Fatal(err)
	}
	if want := `amount * (1.0 + vat) + 2.5 + (timestamp(0) + duration(string(int(ms)) + "ms"))`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// FuzzTranslateSQL: no panic on any input.
func FuzzTranslateSQL(f *testing.F) {
	for _, s := range []string{"price * (1 + amount)", "CASE WHEN a IS NOT NULL THEN a || 'x' ELSE CAST(b AS STRING) END",
		"ts - INTERVAL '5' SECOND", "x NOT IN (1, 2) AND `a b`.c <> 3", "TO_TIMESTAMP_LTZ(ms, 3)", "UPPER(", "a <", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		_, _, _ = schema.TranslateSQL(sql)
		_, _, _ = schema.TranslateSQLWith(sql, schema.DoubleLiterals)
	})
}
