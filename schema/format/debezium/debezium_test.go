package debezium_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/changelog"
	"github.com/connectd/connectd/schema/format/changelog/changelogtest"
	"github.com/connectd/connectd/schema/format/debezium"
)

func rowType(t *testing.T, src string) *schema.Type {
	t.Helper()
	typ, err := schema.ParseType(src)
	if err != nil {
		t.Fatal(err)
	}
	return typ
}

const customers = "ROW<id INT, first_name STRING, last_name STRING, email STRING>"
const products = "ROW<id BIGINT, name STRING, description STRING, weight DECIMAL(10, 2)>"

// TestDecodeDocumentedEvents reads Debezium's documented envelopes
// (testdata/README.md) and checks the rows and kinds Flink's
// DebeziumJsonDeserializationSchema gives for them, with the metadata.
func TestDecodeDocumentedEvents(t *testing.T) {
	cases := []struct {
		file, row string
		opts      map[string]string
		want      string
	}{
		{"create_with_schema.json", customers, map[string]string{"schema-include": "true"},
			`+I {"id":1004,"first_name":"Anne","last_name":"Kretchmar","email":"annek@noanswer.org"}
meta ingestion-timestamp = 2016-06-09T16:56:51.815Z
meta schema = {"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":false,"field":"first_name"},{"type":"string","optional":false,"field":"last_name"},{"type":"string","optional":false,"field":"email"}],"optional":true,"name":"mysql-server-1.inventory.customers.Value","field":"before"},{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":false,"field":"first_name"},{"type":"string","optional":false,"field":"last_name"},{"type":"string","optional":false,"field":"email"}],"optional":true,"name":"mysql-server-1.inventory.customers.Value","field":"after"},{"type":"struct","fields":[{"type":"string","optional":false,"field":"connector"},{"type":"int64","optional":false,"field":"ts_ms"},{"type":"string","optional":false,"field":"db"},{"type":"string","optional":true,"field":"table"}],"optional":false,"name":"io.debezium.connector.mysql.Source","field":"source"},{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}],"optional":false,"name":"mysql-server-1.inventory.customers.Envelope"}
meta source.database = inventory
meta source.properties = {connector:mysql, db:inventory, file:mysql-bin.000003, gtid:NULL, name:mysql-server-1, pos:154, query:INSERT INTO customers (first_name, last_name, email) VALUES ('Anne', 'Kretchmar', 'annek@noanswer.org'), row:0, server_id:0, snapshot:false, table:customers, thread:7, ts_ms:0, version:2.7.0.Final}
meta source.schema = NULL
meta source.table = customers
meta source.timestamp = 1970-01-01T00:00:00Z
`},
		{"update_with_schema.json", customers, map[string]string{"schema-include": "true"},
			`-U {"id":1004,"first_name":"Anne","last_name":"Kretchmar","email":"annek@noanswer.org"}
+U {"id":1004,"first_name":"Anne Marie","last_name":"Kretchmar","email":"annek@noanswer.org"}
meta ingestion-timestamp = 2016-06-10T17:50:29.523Z
meta schema = {"type":"struct","fields":[],"optional":false,"name":"mysql-server-1.inventory.customers.Envelope"}
meta source.database = inventory
meta source.properties = {connector:mysql, db:inventory, file:mysql-bin.000003, gtid:NULL, name:mysql-server-1, pos:484, query:NULL, row:0, server_id:223344, snapshot:false, table:customers, thread:7, ts_ms:1465581029100, version:2.7.0.Final}
meta source.schema = NULL
meta source.table = customers
meta source.timestamp = 2016-06-10T17:50:29.1Z
`},
		{"delete_with_schema.json", customers, map[string]string{"schema-include": "true"},
			`-D {"id":1004,"first_name":"Anne Marie","last_name":"Kretchmar","email":"annek@noanswer.org"}
meta ingestion-timestamp = 2016-06-10T18:05:02.461Z
meta schema = {"type":"struct","fields":[],"optional":false,"name":"mysql-server-1.inventory.customers.Envelope"}
meta source.database = inventory
meta source.properties = {connector:mysql, db:inventory, file:mysql-bin.000003, gtid:NULL, name:mysql-server-1, pos:805, query:NULL, row:0, server_id:223344, snapshot:false, table:customers, thread:7, ts_ms:1465581902300, version:2.7.0.Final}
meta source.schema = NULL
meta source.table = customers
meta source.timestamp = 2016-06-10T18:05:02.3Z
`},
		{"read.json", customers, nil,
			`+I {"id":1001,"first_name":"Sally","last_name":"Thomas","email":"sally.thomas@acme.com"}
meta ingestion-timestamp = 2016-06-09T16:56:41.234Z
meta schema = NULL
meta source.database = inventory
meta source.properties = {connector:mysql, db:inventory, file:mysql-bin.000003, name:mysql-server-1, pos:154, row:0, server_id:0, snapshot:true, table:customers, ts_ms:1465491400000, version:2.7.0.Final}
meta source.schema = NULL
meta source.table = customers
meta source.timestamp = 2016-06-09T16:56:40Z
`},
		{"update.json", products, nil,
			`-U {"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.18}
+U {"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.15}
meta ingestion-timestamp = 2020-05-13T09:32:10.904Z
meta schema = NULL
meta source.database = inventory
meta source.properties = {connector:mysql, db:inventory, file:mysql-bin.000003, gtid:NULL, name:dbserver1, pos:2090, query:NULL, row:0, server_id:223344, snapshot:false, table:products, thread:2, ts_ms:1589362330000, version:1.1.1.Final}
meta source.schema = NULL
meta source.table = products
meta source.timestamp = 2020-05-13T09:32:10Z
`},
		{"delete.json", products, nil,
			`-D {"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.15}
meta ingestion-timestamp = 2020-05-13T09:32:24.455Z
meta schema = NULL
meta source.database = postgres
meta source.properties = {connector:postgresql, db:postgres, schema:inventory, table:products, ts_ms:1589362340000}
meta source.schema = inventory
meta source.table = products
meta source.timestamp = 2020-05-13T09:32:20Z
`},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			row := rowType(t, tc.row)
			f, err := debezium.New(row, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			f.ReadMetadata()
			changes, err := f.DecodeChanges(data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := changelogtest.Render(row, changes)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestSchemaIncludeMismatch: an envelope with schema read without
// schema-include has no "op" at the top (Flink fails it as corrupt), and
// one without schema read with it has no "payload".
func TestSchemaIncludeMismatch(t *testing.T) {
	row := rowType(t, customers)
	withSchema, _ := os.ReadFile("testdata/update_with_schema.json")
	plain, _ := os.ReadFile("testdata/read.json")
	f, _ := debezium.New(row, nil)
	if _, err := f.DecodeChanges(withSchema); err == nil || !strings.Contains(err.Error(), `no "op" field`) {
		t.Errorf("without schema-include: err = %v", err)
	}
	g, _ := debezium.New(row, map[string]string{"schema-include": "true"})
	if _, err := g.DecodeChanges(plain); err == nil || !strings.Contains(err.Error(), `no "payload" field`) {
		t.Errorf("with schema-include: err = %v", err)
	}
}

func TestDecodeEdges(t *testing.T) {
	row := rowType(t, "ROW<id INT, v STRING>")
	cases := []struct {
		name, data string
		opts       map[string]string
		want       string // rendered changes, or "error: <substring>"
	}{
		{"tombstone", "", nil, ""},
		{"update without before", `{"before":null,"after":{"id":1,"v":"a"},"op":"u"}`, nil, "error: REPLICA IDENTITY FULL"},
		{"delete without before", `{"before":null,"after":null,"op":"d"}`, nil, "error: REPLICA IDENTITY FULL"},
		{"unknown op", `{"before":null,"after":{"id":1,"v":"a"},"op":"t"}`, nil, `error: unknown "op" value "t"`},
		{"unknown op ignored", `{"before":null,"after":{"id":1,"v":"a"},"op":"t"}`, map[string]string{"ignore-parse-errors": "true"}, ""},
		{"not json ignored", `{oops`, map[string]string{"ignore-parse-errors": "true"}, ""},
		{"bad field", `{"before":null,"after":{"id":"x","v":"a"},"op":"c"}`, nil, "error: field id"},
		{"bad field ignored", `{"before":null,"after":{"id":"x","v":"a"},"op":"c"}`, map[string]string{"ignore-parse-errors": "true"}, `+I {"id":null,"v":"a"}` + "\n"},
		{"missing field is NULL", `{"after":{"id":7},"op":"r"}`, nil, `+I {"id":7,"v":null}` + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := debezium.New(row, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			changes, err := f.DecodeChanges([]byte(tc.data))
			if want, ok := strings.CutPrefix(tc.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("err = %v, want one containing %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := changelogtest.Render(row, changes)
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestEncode writes each kind as Flink's DebeziumJsonSerializationSchema,
// and reads it back.
func TestEncode(t *testing.T) {
	row := rowType(t, products)
	f, err := debezium.New(row, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := map[string]any{"id": int64(111), "name": "scooter", "description": nil, "weight": "5.1"}
	want := map[changelog.Kind]string{
		changelog.Insert:       `{"before":null,"after":{"id":111,"name":"scooter","description":null,"weight":5.10},"op":"c"}`,
		changelog.UpdateAfter:  `{"before":null,"after":{"id":111,"name":"scooter","description":null,"weight":5.10},"op":"c"}`,
		changelog.UpdateBefore: `{"before":{"id":111,"name":"scooter","description":null,"weight":5.10},"after":null,"op":"d"}`,
		changelog.Delete:       `{"before":{"id":111,"name":"scooter","description":null,"weight":5.10},"after":null,"op":"d"}`,
	}
	for kind, w := range want {
		got, err := f.EncodeChange(r, kind)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != w {
			t.Errorf("%s: got %s, want %s", kind, got, w)
		}
		back, err := f.DecodeChanges(got)
		if err != nil {
			t.Fatal(err)
		}
		wantKind := changelog.Insert
		if kind.IsRetract() {
			wantKind = changelog.Delete
		}
		if len(back) != 1 || back[0].Kind != wantKind || back[0].Row["name"] != "scooter" {
			t.Errorf("%s: read back %+v", kind, back)
		}
	}
	g, _ := debezium.New(row, map[string]string{"schema-include": "true"})
	if _, err := g.EncodeChange(r, changelog.Insert); err == nil || !strings.Contains(err.Error(), "schema-include") {
		t.Errorf("schema-include encode: err = %v", err)
	}
}

func TestOptions(t *testing.T) {
	row := rowType(t, products)
	if _, err := debezium.New(row, map[string]string{"fail-on-missing-field": "true"}); err == nil || !strings.Contains(err.Error(), "'fail-on-missing-field' is not supported") {
		t.Errorf("fail-on-missing-field: err = %v", err)
	}
	if _, err := debezium.New(row, map[string]string{"timestamp-format.standard": "ISO"}); err == nil || !strings.Contains(err.Error(), "timestamp-format.standard") {
		t.Errorf("bad timestamp format: err = %v", err)
	}
	f, err := debezium.New(rowType(t, "ROW<ts TIMESTAMP(3), d DECIMAL(10, 8)>"), map[string]string{
		"timestamp-format.standard": "ISO-8601", "encode.decimal-as-plain-number": "true"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.EncodeChange(map[string]any{"ts": "2020-01-02 03:04:05.5", "d": "0.00000001"}, changelog.Insert)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"before":null,"after":{"ts":"2020-01-02T03:04:05.5","d":0.00000001},"op":"c"}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// encode.ignore-null-fields leaves NULL fields out of the whole envelope,
// as Flink's serializer (its JSON schema covers the envelope row).
func TestEncodeIgnoreNullFields(t *testing.T) {
	row := rowType(t, "ROW<id INT, v STRING>")
	f, err := debezium.New(row, map[string]string{"encode.ignore-null-fields": "true"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.EncodeChange(map[string]any{"id": int64(1), "v": nil}, changelog.Insert)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"after":{"id":1},"op":"c"}`; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
