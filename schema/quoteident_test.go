package schema_test

import (
	"testing"

	"github.com/connectd/connectd/schema"
)

// Names that read back as something else when printed bare are backquoted:
// literals, IF (CREATE TABLE IF NOT EXISTS) and the functions written
// without parentheses.
func TestQuoteIdentKeywords(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"true": "`true`", "FALSE": "`FALSE`", "if": "`if`", "current_timestamp": "`current_timestamp`",
		"LOCALTIMESTAMP": "`LOCALTIMESTAMP`", "plain": "plain", "trueish": "trueish",
	} {
		if got := schema.QuoteIdent(name); got != want {
			t.Errorf("QuoteIdent(%q) = %s, want %s", name, got, want)
		}
		// The printed name reads back as a column, not a literal or function.
		tables, err := schema.ParseDDL("CREATE TABLE t (" + schema.QuoteIdent(name) + " INT, c AS " + schema.QuoteIdent(name) + " + 1) WITH ('format' = 'json')")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, cols, err := schema.TranslateSQL(tables[0].Columns[1].Expr); err != nil || len(cols) != 1 || cols[0] != name {
			t.Errorf("%s: the computed column reads %v (%v), want the column", name, cols, err)
		}
	}
}
