package schema_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/datadriven"

	"github.com/connectd/connectd/schema"
)

// Data-driven tests of the Flink DDL parser (testdata/ddl) and of the Flink
// SQL to CEL translator (testdata/sqlexpr), as pebble's: each file holds
// directives, each with an input and, after "----", the expected output.
// After a deliberate change, rewrite the expected outputs with
//
//	go test ./schema -run 'TestDDL|TestSQLExpr' -rewrite
//
// and read the diff: every changed line is a change of behaviour.
//
// Directives of testdata/ddl:
//
//	parse [file=<name>]     ParseDDL of the input (or of testdata/<name>): each
//	                        table as canonical DDL (see renderDDL), or the error
//	validate [file=<name>]  Table.Validate of each parsed table: ok, or its errors
//	key [file=<name>]       the Kafka key of each table: KeyFields, KeyFormatOf
//	type                    ParseType of each input line, printed back
//
// Directives of testdata/sqlexpr:
//
//	translate [literals=double]  TranslateSQL (TranslateSQLWith DoubleLiterals)
//	                             of the input: the CEL and the columns read, or
//	                             the error
//	computed                     Table.Validate of a table whose columns are the
//	                             input (computed columns among them): ok, or the
//	                             errors
//	eval [zone=<tz>]             evaluates computed columns (package schema/expr)
//	                             over one row: input lines `name TYPE = <JSON value>`
//	                             declare the row, lines `? <sql>` the expressions;
//	                             each prints `<sql> = <value>`, or its error. The
//	                             clock of NOW() is 2024-03-10T07:30:00.123456Z.
//
// An error prints as "error: <message>"; a *schema.SyntaxError also prints
// the source line it points into with a caret under its column. In messages
// the list of supported SQL (schema.ComputedSQL) is written $ComputedSQL.

func TestDDL(t *testing.T) {
	t.Parallel()
	datadriven.Walk(t, "testdata/ddl", func(t *testing.T, path string) {
		t.Parallel()
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			switch td.Cmd {
			case "parse":
				src := ddlInput(t, td)
				tables, err := schema.ParseDDL(src)
				if err != nil {
					return errorText(t, src, err)
				}
				return renderTables(t, tables)
			case "validate":
				var out []string
				for _, tb := range parseOK(t, ddlInput(t, td)) {
					if err := tb.Validate(); err != nil {
						out = append(out, abbreviate(err.Error()))
					} else {
						out = append(out, fmt.Sprintf("table %s: ok", tb.Name))
					}
				}
				return strings.Join(out, "\n")
			case "key":
				var out []string
				for _, tb := range parseOK(t, ddlInput(t, td)) {
					out = append(out, renderKey(tb))
				}
				return strings.Join(out, "\n")
			case "type":
				var out []string
				for _, line := range strings.Split(td.Input, "\n") {
					typ, err := schema.ParseType(line)
					if err != nil {
						out = append(out, "error: "+err.Error())
						continue
					}
					s := typ.String()
					if back, err := schema.ParseType(s); err != nil || back.String() != s {
						t.Errorf("%s: %s does not parse back to itself (%v, %v)", td.Pos, s, back, err)
					}
					out = append(out, s)
				}
				return strings.Join(out, "\n")
			}
			t.Fatalf("%s: unknown directive %q", td.Pos, td.Cmd)
			return ""
		})
	})
}

func TestSQLExpr(t *testing.T) {
	t.Parallel()
	datadriven.Walk(t, "testdata/sqlexpr", func(t *testing.T, path string) {
		t.Parallel()
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			switch td.Cmd {
			case "translate":
				lits := schema.IntLiterals
				if td.HasArg("literals") {
					var v string
					td.ScanArgs(t, "literals", &v)
					if v != "double" {
						t.Fatalf("%s: literals=%s: want literals=double", td.Pos, v)
					}
					lits = schema.DoubleLiterals
				}
				cel, cols, err := schema.TranslateSQLWith(td.Input, lits)
				if err != nil {
					return errorText(t, td.Input, err)
				}
				quoted := make([]string, len(cols))
				for i, c := range cols {
					quoted[i] = strconv.Quote(c)
				}
				if len(quoted) == 0 {
					quoted = []string{"none"}
				}
				return cel + "\ncolumns: " + strings.Join(quoted, ", ")
			case "eval":
				return evalComputed(t, td)
			case "computed":
				tables := parseOK(t, "CREATE TABLE t (\n"+td.Input+"\n) WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'json')")
				if err := tables[0].Validate(); err != nil {
					return abbreviate(err.Error())
				}
				return "ok"
			}
			t.Fatalf("%s: unknown directive %q", td.Pos, td.Cmd)
			return ""
		})
	})
}

// ddlInput is the DDL of a directive: its input, or testdata/<file>.
func ddlInput(t *testing.T, td *datadriven.TestData) string {
	if !td.HasArg("file") {
		return td.Input
	}
	if td.Input != "" {
		t.Fatalf("%s: give an input or file=, not both", td.Pos)
	}
	var name string
	td.ScanArgs(t, "file", &name)
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

func parseOK(t *testing.T, src string) []*schema.Table {
	tables, err := schema.ParseDDL(src)
	if err != nil {
		t.Fatalf("ParseDDL: %v", err)
	}
	return tables
}

// errorText is "error: <err>", and for a syntax error the line of src it
// points into with a caret under the column. The position must lie in src.
func errorText(t *testing.T, src string, err error) string {
	out := "error: " + abbreviate(err.Error())
	var se *schema.SyntaxError
	if !errors.As(err, &se) {
		t.Errorf("%v: want a *schema.SyntaxError", err)
		return out
	}
	lines := strings.Split(src, "\n")
	if se.Line < 1 || se.Line > len(lines) || se.Column < 1 || se.Column > utf8.RuneCountInString(lines[se.Line-1])+1 {
		t.Errorf("%v: the position is outside the source", err)
		return out
	}
	line := strings.TrimRight(lines[se.Line-1], " \t\r")
	if strings.TrimSpace(line) == "" || utf8.RuneCountInString(line) > 100 {
		return out
	}
	var caret strings.Builder
	for _, r := range []rune(lines[se.Line-1])[:se.Column-1] {
		if r == '\t' {
			caret.WriteRune('\t')
		} else {
			caret.WriteRune(' ')
		}
	}
	return out + "\n" + line + "\n" + caret.String() + "^"
}

// abbreviate writes the supported-SQL list of error messages as $ComputedSQL.
func abbreviate(msg string) string {
	return strings.ReplaceAll(msg, schema.ComputedSQL, "$ComputedSQL")
}

// renderTables renders the tables as canonical DDL and checks that the
// rendering parses back to the same tables.
func renderTables(t *testing.T, tables []*schema.Table) string {
	if len(tables) == 0 {
		return "no tables"
	}
	var b strings.Builder
	for _, tb := range tables {
		b.WriteString(renderDDL(tb))
	}
	out := b.String()
	back, err := schema.ParseDDL(out)
	if err != nil {
		t.Errorf("the rendering does not parse: %v\n%s", err, out)
		return out
	}
	var again strings.Builder
	for _, tb := range back {
		again.WriteString(renderDDL(tb))
	}
	if again.String() != out {
		t.Errorf("the rendering parses back as\n%s\nnot\n%s", again.String(), out)
	}
	return out
}

// renderDDL renders t as a canonical CREATE TABLE statement: one column or
// constraint a line, in the order columns, primary key, watermark; types as
// Type.String prints them (aliases resolved, defaults explicit, primary key
// columns NOT NULL); metadata keys explicit; the watermark delay in
// seconds; options sorted by key.
func renderDDL(t *schema.Table) string {
	var elems []string
	for _, c := range t.Columns {
		e := quoteIdent(c.Name)
		switch c.Kind {
		case schema.Computed:
			e += " AS " + c.Expr
		case schema.Metadata:
			e += " " + c.Type.String() + " METADATA FROM " + quoteString(c.MetadataKey)
			if c.Virtual {
				e += " VIRTUAL"
			}
		default:
			e += " " + c.Type.String()
		}
		if c.Comment != "" {
			e += " COMMENT " + quoteString(c.Comment)
		}
		elems = append(elems, e)
	}
	if pk := t.PrimaryKey; pk != nil {
		e := ""
		if pk.Name != "" {
			e = "CONSTRAINT " + quoteIdent(pk.Name) + " "
		}
		cols := make([]string, len(pk.Columns))
		for i, c := range pk.Columns {
			cols[i] = quoteIdent(c)
		}
		elems = append(elems, e+"PRIMARY KEY ("+strings.Join(cols, ", ")+") NOT ENFORCED")
	}
	if wm := t.Watermark; wm != nil {
		col := quoteIdent(wm.Column)
		e := "WATERMARK FOR " + col + " AS " + col
		if wm.Source {
			e = "WATERMARK FOR " + col + " AS SOURCE_WATERMARK()"
		}
		if wm.Delay != 0 {
			e += " - INTERVAL '" + seconds(wm.Delay) + "' SECOND"
		}
		elems = append(elems, e)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n  %s\n)", quoteName(t.Name), strings.Join(elems, ",\n  "))
	if t.Comment != "" {
		b.WriteString(" COMMENT " + quoteString(t.Comment))
	}
	if len(t.Options) > 0 {
		keys := make([]string, 0, len(t.Options))
		for k := range t.Options {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteString(" WITH (")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "\n  %s = %s", quoteString(k), quoteString(t.Options[k]))
		}
		b.WriteString("\n)")
	}
	b.WriteString(";\n")
	return b.String()
}

// renderKey renders the Kafka key of t: its columns and format.
func renderKey(t *schema.Table) string {
	fields := t.KeyFields()
	if len(fields) == 0 {
		return fmt.Sprintf("table %s: no key", t.Name)
	}
	out := fmt.Sprintf("table %s: key (%s)", t.Name, strings.Join(fields, ", "))
	name, opts, ok := t.KeyFormatOf()
	if !ok {
		return out + ", no key format"
	}
	out += ", format " + name
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out += fmt.Sprintf(" %s=%s", k, quoteString(opts[k]))
	}
	return out
}

// quoteName renders a table name: its dot-separated parts each quoted. A
// quoted part that holds a dot (`a.b`) is not told apart in Table.Name; a
// name with an empty part is rendered as one identifier.
func quoteName(name string) string {
	parts := strings.Split(name, ".")
	if slices.Contains(parts, "") {
		return quoteIdent(name)
	}
	for i, p := range parts {
		parts[i] = quoteIdent(p)
	}
	return strings.Join(parts, ".")
}

// quoteIdent is schema.QuoteIdent, which backquotes IF (a table named if
// would read as CREATE TABLE IF NOT EXISTS) and TRUE and FALSE.
func quoteIdent(name string) string { return schema.QuoteIdent(name) }

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// seconds renders d as a decimal number of seconds ("0.5").
func seconds(d time.Duration) string {
	s := fmt.Sprintf("%d", d/time.Second)
	if frac := d % time.Second; frac != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%09d", frac), "0")
	}
	return s
}
