package canal_test

import (
	"strings"
	"testing"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/canal"
	"github.com/connectd/connectd/schema/format/changelog"
	"github.com/connectd/connectd/schema/format/changelog/changelogtest"
)

const products = "ROW<id INT, name STRING, description STRING, weight DOUBLE>"

func build(t *testing.T, src string) (*schema.Type, func(map[string]string) (changelogtest.Codec, error)) {
	row, err := schema.ParseType(src)
	if err != nil {
		t.Fatal(err)
	}
	return row, func(o map[string]string) (changelogtest.Codec, error) { return canal.New(row, o) }
}

// TestDecodeDocumentedMessages reads Canal's documented messages
// (testdata/README.md) as Flink's CanalJsonDeserializationSchema does.
func TestDecodeDocumentedMessages(t *testing.T) {
	row, b := build(t, products)
	changelogtest.RunFiles(t, row, b, []changelogtest.Case{
		{File: "update.json", Meta: true, Want: `-U {"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.15}
+U {"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.18}
meta database = inventory
meta event-timestamp = 2020-05-13T12:39:20Z
meta ingestion-timestamp = 2020-05-13T12:39:20.798Z
meta pk-names = [id]
meta sql-type = {description:12, id:4, name:12, weight:7}
meta table = products
`},
		{File: "insert_two.json", Want: `+I {"id":101,"name":"scooter","description":"Small 2-wheel scooter","weight":3.14}
+I {"id":102,"name":"car battery","description":"12V car battery","weight":8.1}
`},
		{File: "delete.json", Want: `-D {"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.18}
`},
		{File: "ddl.json", Want: ""},
		// include filters: whole-string regular expressions
		{File: "insert_two.json", Opts: map[string]string{"database.include": "inv.*", "table.include": "prod.*"}, Want: `+I {"id":101,"name":"scooter","description":"Small 2-wheel scooter","weight":3.14}
+I {"id":102,"name":"car battery","description":"12V car battery","weight":8.1}
`},
		{File: "insert_two.json", Opts: map[string]string{"database.include": "inv"}, Want: ""},
		{File: "other_table.json", Opts: map[string]string{"table.include": "products|orders"}, Want: ""},
		{File: "other_table.json", Opts: map[string]string{"database.include": "billing", "table.include": "invoices"}, Want: `+I {"id":1,"name":"x","description":null,"weight":1}
`},
	})
}

// TestUpdateOld checks how "old" fills the update-before row: a field "old"
// names keeps its old value (also an explicit null), one it does not name
// is the new value.
func TestUpdateOld(t *testing.T) {
	row, err := schema.ParseType("ROW<id INT, a STRING, b STRING>")
	if err != nil {
		t.Fatal(err)
	}
	f, err := canal.New(row, nil)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := f.DecodeChanges([]byte(`{"data":[{"id":"1","a":"new","b":"B"},{"id":"2","a":"x","b":"y"}],"old":[{"a":null},{"b":"old-y"}],"type":"UPDATE","database":"d","table":"t"}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := changelogtest.Render(row, changes)
	// Flink asks whether "old" holds the field anywhere (Jackson's
	// findValue over the whole array): "b" is named in the second
	// element, so the first row's "b" stays NULL, as in Flink.
	want := `-U {"id":1,"a":null,"b":null}
+U {"id":1,"a":"new","b":"B"}
-U {"id":2,"a":null,"b":"old-y"}
+U {"id":2,"a":"x","b":"y"}
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	row, _ := schema.ParseType(products)
	for _, tc := range []struct{ data, want string }{
		{`{"data":[{"id":"1"}],"type":"TRUNCATE","database":"d","table":"t"}`, `unknown "type" value "TRUNCATE"`},
		{`{"data":[{"id":"1"}],"type":"UPDATE"}`, `needs both "data" and "old"`},
		{`{"data":null,"type":"INSERT"}`, `"data" field of an INSERT message is null`},
		{`{"data":[{"id":"x"}],"type":"INSERT"}`, "field id"},
	} {
		f, _ := canal.New(row, nil)
		if _, err := f.DecodeChanges([]byte(tc.data)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.data, err, tc.want)
		}
		g, _ := canal.New(row, map[string]string{"ignore-parse-errors": "true"})
		if c, err := g.DecodeChanges([]byte(tc.data)); err != nil || len(c) != 0 && tc.want != "field id" {
			t.Errorf("%s with ignore-parse-errors: %v, %v", tc.data, c, err)
		}
	}
	f, _ := canal.New(row, map[string]string{"database.include": "x"})
	if _, err := f.DecodeChanges([]byte(`{"data":[],"type":"INSERT"}`)); err == nil || !strings.Contains(err.Error(), `no "database" field`) {
		t.Errorf("missing database with database.include: err = %v", err)
	}
	if _, err := canal.New(row, map[string]string{"table.include": "(?<=x)y"}); err == nil || !strings.Contains(err.Error(), "table.include") {
		t.Errorf("look-behind regex: err = %v", err)
	}
}

func TestEncode(t *testing.T) {
	row, _ := schema.ParseType(products)
	f, err := canal.New(row, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := map[string]any{"id": int64(1), "name": "n", "description": nil, "weight": 1.5}
	for kind, want := range map[changelog.Kind]string{
		changelog.Insert:       `{"data":[{"id":1,"name":"n","description":null,"weight":1.5}],"type":"INSERT"}`,
		changelog.UpdateAfter:  `{"data":[{"id":1,"name":"n","description":null,"weight":1.5}],"type":"INSERT"}`,
		changelog.UpdateBefore: `{"data":[{"id":1,"name":"n","description":null,"weight":1.5}],"type":"DELETE"}`,
		changelog.Delete:       `{"data":[{"id":1,"name":"n","description":null,"weight":1.5}],"type":"DELETE"}`,
	} {
		got, err := f.EncodeChange(r, kind)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s: got %s, want %s", kind, got, want)
		}
		back, err := f.DecodeChanges(got)
		if err != nil || len(back) != 1 || back[0].Kind.IsRetract() != kind.IsRetract() || back[0].Row["weight"] != 1.5 {
			t.Errorf("%s: read back %+v, %v", kind, back, err)
		}
	}
}
