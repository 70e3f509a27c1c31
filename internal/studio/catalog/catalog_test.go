package catalog

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/studio/yamlsrc"
)

// lines joins YAML lines, so that tests can count them.
func lines(l ...string) string { return strings.Join(l, "\n") + "\n" }

func TestDDLErrorsAtFilePosition(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		yaml string
		want yamlsrc.Problem
	}{
		{
			name: "literal block",
			yaml: lines(
				"input:",                               // 1
				"  kafka_source:",                      // 2
				"    topics: [ a ]",                    // 3
				"    ddl: |",                           // 4
				"      CREATE TABLE orders (",          // 5
				"        id BIGINT,",                   // 6
				"        amount DECIMAL(10, 2) WITH",   // 7: DDL line 3, col 31
				"      ) WITH ('connector' = 'kafka')", // 8
				"output:",
				"  drop: {}",
			),
			want: yamlsrc.Problem{Path: "input.kafka_source.ddl", Line: 7, Col: 31},
		},
		{
			name: "literal block with anchor and blank first line",
			yaml: lines(
				"pipeline:",                          // 1
				"  processors:",                      // 2
				"    - table_decode:",                // 3
				"        ddl: &t |",                  // 4
				"",                                   // 5: DDL line 1
				"          CREATE TABLE x (id INT,)", // 6: DDL line 2, the ) at DDL col 24
			),
			want: yamlsrc.Problem{Path: "pipeline.processors.0.table_decode.ddl", Line: 6, Col: 10 + 24},
		},
		{
			name: "double-quoted on one line",
			yaml: lines(
				"output:",
				`  kafka_sink: { ddl: "CREATE TABLE t (id INT) WITH ('topic' = 'x'" }`,
			),
			// The DDL (43 characters) ends without its ): the end of input
			// is DDL column 44; the opening quote is at file column 22.
			want: yamlsrc.Problem{Path: "output.kafka_sink.ddl", Line: 2, Col: 22 + 44},
		},
		{
			name: "plain scalar after an anchor",
			yaml: lines(
				"input:",
				"  kafka_source:",
				"    ddl: &d CREATE TABLE t (id INTEGR)",
			),
			// INTEGR at DDL column 20; the value starts at file column 13.
			want: yamlsrc.Problem{Path: "input.kafka_source.ddl", Line: 3, Col: 12 + 20},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := Analyze([]byte(c.yaml), Env{})
			if len(res.Errors) != 1 {
				t.Fatalf("errors: %+v", res.Errors)
			}
			got := res.Errors[0]
			if got.Path != c.want.Path || got.Line != c.want.Line || got.Col != c.want.Col || got.File != "" {
				t.Fatalf("got %+v, want path %s at %d:%d", got, c.want.Path, c.want.Line, c.want.Col)
			}
			if got.Message == "" || strings.Contains(got.Message, "line ") {
				t.Fatalf("message %q should be the DDL's own message, without the DDL position", got.Message)
			}
		})
	}
}

const flinkTables = `input:
  kafka_source:
    ddl: &orders |
      CREATE TABLE orders (
        id BIGINT NOT NULL,
        amount DECIMAL(10, 2),
        ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
        part INT METADATA FROM 'partition' VIRTUAL,
        doubled AS amount * 2,
        PRIMARY KEY (id) NOT ENFORCED,
        WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
      ) WITH (
        'connector' = 'upsert-kafka',
        'topic' = 'orders',
        'properties.bootstrap.servers' = '${STUDIO_TEST_BROKERS:127.0.0.1:9092}',
        'key.format' = 'json',
        'value.format' = 'json'
      );
      CREATE TABLE other (id INT) WITH ('connector' = 'kafka', 'topic' = 'o', 'format' = 'json')
    table: orders
pipeline:
  processors:
    - cel:
        ddl: *orders
        table: orders
        filter: amount > 1.0
output:
  kafka_sink:
    topic: out
    table:
      name: sunk
      columns:
        - { name: id, type: BIGINT }
      options: { format: json }
`

func TestTablesDescribed(t *testing.T) {
	t.Parallel()
	res := Analyze([]byte(flinkTables), Env{LookupEnv: func(k string) (string, bool) {
		if k == "STUDIO_TEST_BROKERS" {
			return "broker-a:9092", true
		}
		return "", false
	}})
	if len(res.Errors) != 0 {
		t.Fatalf("errors: %+v", res.Errors)
	}
	if len(res.Tables) != 2 {
		t.Fatalf("want orders (shared through the anchor) and sunk, got %d tables: %+v", len(res.Tables), res.Tables)
	}
	orders, sunk := res.Tables[0], res.Tables[1]
	wantUses := []Use{{Path: "input", Component: "kafka_source"}, {Path: "pipeline.processors.0", Component: "cel"}}
	if orders.Name != "orders" || orders.Source != SourceDDL || !reflect.DeepEqual(orders.UsedBy, wantUses) {
		t.Fatalf("orders: %+v", orders)
	}
	wantCols := []Column{
		{Name: "id", Type: "BIGINT NOT NULL", Kind: KindPhysical},
		{Name: "amount", Type: "DECIMAL(10, 2)", Kind: KindPhysical},
		{Name: "ts", Type: "TIMESTAMP_LTZ(3)", Kind: KindMetadata, MetadataKey: "timestamp", Virtual: true},
		{Name: "part", Type: "INT", Kind: KindMetadata, MetadataKey: "partition", Virtual: true},
		{Name: "doubled", Kind: KindComputed, Expr: "amount * 2"},
	}
	if !reflect.DeepEqual(orders.Columns, wantCols) {
		t.Fatalf("columns:\n got %+v\nwant %+v", orders.Columns, wantCols)
	}
	if !reflect.DeepEqual(orders.PrimaryKey, []string{"id"}) || !reflect.DeepEqual(orders.MetadataColumns, []string{"ts", "part"}) {
		t.Fatalf("key %v, metadata columns %v", orders.PrimaryKey, orders.MetadataColumns)
	}
	if wm := orders.Watermark; wm == nil || *wm != (Watermark{Column: "ts", Delay: "5s", DelayMs: 5000}) {
		t.Fatalf("watermark %+v", orders.Watermark)
	}
	if got := orders.Options["properties.bootstrap.servers"]; got != "broker-a:9092" {
		t.Fatalf("bootstrap servers %q: want the environment variable expanded", got)
	}
	// The statement: from CREATE (line 4, col 7) to its ; (line 18, col 8).
	wantRange := yamlsrc.Range{Start: yamlsrc.Pos{Line: 4, Col: 7}, End: yamlsrc.Pos{Line: 18, Col: 8}}
	if orders.Range == nil || *orders.Range != wantRange {
		t.Fatalf("orders range %+v, want %+v", orders.Range, wantRange)
	}
	if orders.DDLRange == nil || orders.DDLRange.Start != (yamlsrc.Pos{Line: 3, Col: 10}) || orders.DDLRange.End.Line != 19 {
		t.Fatalf("ddl range %+v", orders.DDLRange)
	}
	if sunk.Source != SourceYAML || sunk.Range == nil || sunk.Range.Start != (yamlsrc.Pos{Line: 30, Col: 5}) || sunk.Range.End != (yamlsrc.Pos{Line: 34, Col: 31}) {
		t.Fatalf("sunk: %+v range %+v", sunk, sunk.Range)
	}
}

func TestCatalogFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := "CREATE TABLE a (id INT) WITH ('format' = 'json');\n"
	bad := "CREATE TABLE b (\n  id INT,\n  name STRIN G\n)"
	if err := os.WriteFile(filepath.Join(dir, "good.sql"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.sql"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	src := lines(
		"pipeline:",
		"  processors:",
		"    - table_decode: { catalog: ./good.sql, table: a }",
		"    - table_encode: { catalog: ./bad.sql, table: b }",
		"    - table_encode: { catalog: ./good.sql, table: nope }",
	)
	res := Analyze([]byte(src), Env{Dir: dir})
	if len(res.Tables) != 1 || res.Tables[0].Name != "a" || res.Tables[0].Source != SourceCatalog || res.Tables[0].Catalog != "./good.sql" {
		t.Fatalf("tables: %+v", res.Tables)
	}
	if len(res.Errors) != 2 {
		t.Fatalf("errors: %+v", res.Errors)
	}
	syn := res.Errors[0]
	if syn.File != "./bad.sql" || syn.Line != 3 || syn.Col != 8 || syn.Path != "pipeline.processors.1.table_encode.catalog" {
		t.Fatalf("catalog syntax error: %+v", syn)
	}
	missing := res.Errors[1]
	if missing.File != "" || missing.Line != 5 || missing.Col != 44 || !strings.Contains(missing.Message, "nope") {
		t.Fatalf("missing table: want it at the table key (5:44), got %+v", missing)
	}
}

func TestCatalogFileNotAllowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.sql"), []byte("CREATE TABLE a (id INT) WITH ('format' = 'json')"), 0o644); err != nil {
		t.Fatal(err)
	}
	var asked string
	env := Env{Dir: dir, AllowFile: func(p string) error {
		asked = p
		return errors.New("outside the studio's directories")
	}}
	res := Analyze([]byte("pipeline:\n  processors:\n    - table_decode: { catalog: t.sql, table: a }\n"), env)
	if asked != filepath.Join(dir, "t.sql") || len(res.Tables) != 0 || len(res.Errors) != 1 ||
		!strings.Contains(res.Errors[0].Message, "outside the studio's directories") || res.Errors[0].Line != 3 {
		t.Fatalf("asked %q, result %+v", asked, res)
	}
}

func TestInvalidTableAtField(t *testing.T) {
	t.Parallel()
	src := lines(
		"input:",
		"  kafka_source:",
		"    topics: [ a ]",
		"    ddl: |",
		"      CREATE TABLE t (id INT, PRIMARY KEY (nope) NOT ENFORCED) WITH ('connector' = 'kafka', 'format' = 'json')",
	)
	res := Analyze([]byte(src), Env{})
	if len(res.Errors) != 1 || res.Errors[0].Line != 4 || res.Errors[0].Col != 5 || !strings.Contains(res.Errors[0].Message, "nope") {
		t.Fatalf("errors: %+v", res.Errors)
	}
}

func TestBrokenYAMLKeepsTablesBefore(t *testing.T) {
	t.Parallel()
	src := lines(
		"input:",
		"  table_decode:",
		"    ddl: CREATE TABLE t (id INT) WITH ('format' = 'json')",
		"output:",
		"  drop: {",
		"oops: [",
	)
	res := Analyze([]byte(src), Env{})
	if len(res.Tables) != 1 || res.Tables[0].Name != "t" {
		t.Fatalf("tables: %+v", res.Tables)
	}
	if len(res.Errors) != 1 || res.Errors[0].Line == 0 {
		t.Fatalf("errors: %+v", res.Errors)
	}
}

func TestHandler(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(Handler(Options{}))
	defer srv.Close()
	body, _ := json.Marshal(Request{YAML: flinkTables})
	resp, err := http.Post(srv.URL+"/api/catalog", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got Result
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	if len(got.Tables) != 2 || got.Tables[0].Columns[2].MetadataKey != "timestamp" {
		t.Fatalf("tables: %+v", got.Tables)
	}
	resp2, err := http.Get(srv.URL + "/api/catalog")
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: status %d", resp2.StatusCode)
	}
}
