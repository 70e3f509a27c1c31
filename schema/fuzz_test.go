package schema_test

import (
	"os"
	"testing"

	"github.com/connectd/connectd/schema"
)

// FuzzParseDDL: the parser never panics or hangs, every table it accepts
// renders as canonical DDL that parses back to itself (renderDDL), and every
// type prints as Flink SQL that parses back to the same type. Seeds are the
// seed's statements (testdata/seed.sql), those below and those in
// testdata/fuzz/FuzzParseDDL; run with `go test -fuzz FuzzParseDDL ./schema`.
func FuzzParseDDL(f *testing.F) {
	seed, err := os.ReadFile("testdata/seed.sql")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(seed))
	f.Add("CREATE TABLE t (a INT) WITH ('k' = 'v')")
	f.Add("CREATE TEMPORARY TABLE IF NOT EXISTS c.`d b`.t (`a``b` ROW<x DECIMAL(5, 2) NOT NULL, y ARRAY<MAP<STRING, BYTES>>> COMMENT 'it''s', " +
		"m TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL, c AS CONCAT(a, ',') COMMENT 'c', CONSTRAINT k PRIMARY KEY (`a``b`) NOT ENFORCED, " +
		"WATERMARK FOR m AS m - INTERVAL '0.5' SECOND) COMMENT 't' WITH ('k' = 'v', 'a' = '')")
	f.Fuzz(func(t *testing.T, src string) {
		tables, err := schema.ParseDDL(src)
		if err != nil {
			return
		}
		renderTables(t, tables) // canonical DDL that parses back to itself
		for _, tb := range tables {
			_ = tb.Validate()
			for _, c := range tb.Columns {
				if c.Type == nil {
					continue
				}
				back, err := schema.ParseType(c.Type.String())
				if err != nil {
					t.Fatalf("type %s of column %s does not parse back: %v", c.Type, c.Name, err)
				}
				if !back.Equal(c.Type) {
					t.Fatalf("type %s parses back as %s", c.Type, back)
				}
			}
		}
	})
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
