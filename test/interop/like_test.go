package interop

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/connectd/connectd/schema"
)

// likeCase is a CREATE TABLE ... LIKE that Flink and connectd both take,
// or both refuse.
type likeCase struct {
	name string
	// derived is the statement after the base table's, with %s for the
	// base table's name.
	derived string
	// refused is a phrase of the error (lower case) when both refuse it.
	refused string
	// flinkSays is the phrase of Flink's error when it differs from
	// connectd's.
	flinkSays string
}

// likeBase is the base table of every likeCase, with %s for its name.
const likeBase = `CREATE TABLE %s (
  id BIGINT,
  v STRING,
  ts TIMESTAMP(3) METADATA FROM 'timestamp',
  p INT METADATA FROM 'partition' VIRTUAL,
  c AS id + 1,
  PRIMARY KEY (id) NOT ENFORCED,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'base', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset')`

var likeCases = []likeCase{
	{name: "defaults", derived: `CREATE TABLE %s (note STRING) WITH ('scan.startup.mode' = 'latest-offset', 'topic' = 'd') LIKE %s`},
	{name: "docs_example", derived: `CREATE TABLE %s WITH ('connector' = 'kafka', 'topic' = 'f', 'format' = 'csv') LIKE %s (EXCLUDING ALL INCLUDING GENERATED)`},
	{name: "excluding_constraints", derived: `CREATE TABLE %s (k STRING, PRIMARY KEY (k) NOT ENFORCED) LIKE %s (EXCLUDING CONSTRAINTS)`},
	{name: "overwriting_watermarks", derived: `CREATE TABLE %s (WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE) LIKE %s (OVERWRITING WATERMARKS)`,
		refused: "the rowtime attribute field 'ts' is not defined in the table schema"},
	{name: "watermark_on_own_column", derived: `CREATE TABLE %s (t2 TIMESTAMP(3), WATERMARK FOR t2 AS t2) LIKE %s (EXCLUDING WATERMARKS)`},
	{name: "computed_reads_own_metadata", derived: `CREATE TABLE %s (o BIGINT METADATA FROM 'offset' VIRTUAL, o2 AS o + 1) LIKE %s`},
	{name: "overwriting_generated", derived: `CREATE TABLE %s (c AS id * 10, e AS id - 1) LIKE %s (OVERWRITING GENERATED)`},
	{name: "overwriting_metadata", derived: `CREATE TABLE %s (p BIGINT METADATA FROM 'offset' VIRTUAL) LIKE %s (OVERWRITING METADATA)`},
	{name: "excluding_metadata_watermarks", derived: `CREATE TABLE %s (x INT) LIKE %s (EXCLUDING METADATA EXCLUDING WATERMARKS EXCLUDING OPTIONS)`},
	{name: "including_all_new_options", derived: `CREATE TABLE %s WITH ('json.ignore-parse-errors' = 'true') LIKE %s (INCLUDING ALL)`},

	{name: "option_twice", derived: `CREATE TABLE %s WITH ('topic' = 'other') LIKE %s (INCLUDING OPTIONS)`, refused: "already exists an option"},
	{name: "physical_twice", derived: `CREATE TABLE %s (v INT) LIKE %s`, refused: "a column named 'v' already exists in the base table"},
	{name: "generated_twice", derived: `CREATE TABLE %s (c AS id * 10) LIKE %s`, refused: "generated column named 'c' already exists"},
	{name: "metadata_twice", derived: `CREATE TABLE %s (p BIGINT METADATA FROM 'offset' VIRTUAL) LIKE %s`, refused: "metadata column named 'p' already exists"},
	{name: "computed_over_metadata", derived: `CREATE TABLE %s (p AS id + 2) LIKE %s (OVERWRITING GENERATED)`, refused: "can only overwrite other computed columns"},
	{name: "second_primary_key", derived: `CREATE TABLE %s (PRIMARY KEY (v) NOT ENFORCED) LIKE %s`, refused: "already has a primary key"},
	{name: "second_watermark", derived: `CREATE TABLE %s (WATERMARK FOR ts AS ts) LIKE %s`, refused: "already exists a watermark spec for column 'ts'"},
	{name: "overwriting_all", derived: `CREATE TABLE %s LIKE %s (OVERWRITING ALL)`, refused: "illegal merging strategy"},
	{name: "overwriting_constraints", derived: `CREATE TABLE %s LIKE %s (OVERWRITING CONSTRAINTS)`, refused: "illegal merging strategy"},
	{name: "key_on_nullable_base_column", derived: `CREATE TABLE %s (PRIMARY KEY (v) NOT ENFORCED) LIKE %s (EXCLUDING CONSTRAINTS)`,
		refused: "nullable", flinkSays: "column 'v' is nullable"},
	{name: "computed_reads_base_metadata", derived: `CREATE TABLE %s (t2 AS ts) LIKE %s`,
		refused: "unknown identifier 'ts'"},
	{name: "feature_twice", derived: `CREATE TABLE %s LIKE %s (INCLUDING OPTIONS EXCLUDING OPTIONS)`, refused: "declared only once"},
}

// TestFlinkLike makes Flink the referee of connectd's LIKE clause: for each
// likeCase Flink creates the base and the derived table and prints the
// derived one (SHOW CREATE TABLE); connectd parses the same two statements.
// The merged tables must be the same (columns in order with their kind,
// type, metadata key and expression, primary key, watermark, options), or
// both must refuse the statement with the same reason.
func TestFlinkLike(t *testing.T) {
	requireFlink(t)
	var s flinkScript
	type idx struct{ base, derived, show int }
	at := make([]idx, len(likeCases))
	for i, c := range likeCases {
		base, derived := fmt.Sprintf("like_base_%d", i), fmt.Sprintf("like_%s", c.name)
		at[i].base = s.add(fmt.Sprintf(likeBase, base))
		at[i].derived = s.add(fmt.Sprintf(c.derived, derived, base))
		at[i].show = s.add("SHOW CREATE TABLE " + derived)
	}
	res := runFlink(t, &s)
	for i, c := range likeCases {
		t.Run(c.name, func(t *testing.T) {
			base := fmt.Sprintf("like_base_%d", i)
			ddl := fmt.Sprintf(likeBase, base) + ";\n" + fmt.Sprintf(c.derived, "like_"+c.name, base)
			tables, cerr := schema.ParseDDL(ddl)
			if res[at[i].base].Err != "" {
				t.Fatalf("Flink refused the base table: %s", firstLines(res[at[i].base].Err, 4))
			}
			flinkErr := res[at[i].derived].Err
			if c.refused != "" {
				says := c.flinkSays
				if says == "" {
					says = c.refused
				}
				if flinkErr == "" || !strings.Contains(strings.ToLower(flinkErr), says) {
					t.Errorf("Flink: want a refusal with %q, got %q", says, firstLines(flinkErr, 4))
				}
				if cerr == nil || !strings.Contains(strings.ToLower(cerr.Error()), c.refused) {
					t.Errorf("connectd: want a refusal with %q, got %v", c.refused, cerr)
				}
				return
			}
			if flinkErr != "" {
				t.Fatalf("Flink refused the derived table: %s", firstLines(flinkErr, 6))
			}
			if cerr != nil {
				t.Fatalf("connectd refused the derived table: %v", cerr)
			}
			show := res[at[i].show]
			if show.Err != "" || len(show.Rows) != 1 || len(show.Rows[0].Values) != 1 {
				t.Fatalf("SHOW CREATE TABLE: %s (%d rows)", firstLines(show.Err, 4), len(show.Rows))
			}
			var text string
			if err := json.Unmarshal(show.Rows[0].Values[0], &text); err != nil {
				t.Fatalf("SHOW CREATE TABLE printed %s: %v", show.Rows[0].Values[0], err)
			}
			flinkTables, err := schema.ParseDDL(text)
			if err != nil || len(flinkTables) != 1 {
				t.Fatalf("connectd cannot parse Flink's SHOW CREATE TABLE (%v):\n%s", err, text)
			}
			want, got := canonicalTable(flinkTables[0]), canonicalTable(tables[1])
			if want != got {
				t.Errorf("Flink's table\n%s\nconnectd's\n%s\nFlink printed:\n%s", want, got, text)
			}
		})
	}
}

// canonicalTable renders what a LIKE merges, comparable across Flink's
// printing and connectd's parsing: backquotes dropped from expressions,
// options sorted, the primary key's name left out (Flink makes one up).
func canonicalTable(t *schema.Table) string {
	var b strings.Builder
	for _, c := range t.Columns {
		switch c.Kind {
		case schema.Computed:
			fmt.Fprintf(&b, "%s AS %s\n", c.Name, strings.ReplaceAll(c.Expr, "`", ""))
		case schema.Metadata:
			fmt.Fprintf(&b, "%s %s METADATA FROM '%s' virtual=%v\n", c.Name, c.Type, c.MetadataKey, c.Virtual)
		default:
			fmt.Fprintf(&b, "%s %s\n", c.Name, c.Type)
		}
	}
	if t.PrimaryKey != nil {
		fmt.Fprintf(&b, "PRIMARY KEY (%s)\n", strings.Join(t.PrimaryKey.Columns, ", "))
	}
	if t.Watermark != nil {
		fmt.Fprintf(&b, "WATERMARK FOR %s - %v\n", t.Watermark.Column, t.Watermark.Delay)
	}
	keys := make([]string, 0, len(t.Options))
	for k := range t.Options {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "'%s' = '%s'\n", k, t.Options[k])
	}
	return b.String()
}
