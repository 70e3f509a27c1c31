package debezium_test

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"

	"github.com/linkedin/goavro/v2"

	"github.com/connectd/connectd/schema/format/changelog"
	"github.com/connectd/connectd/schema/format/changelog/changelogtest"
	"github.com/connectd/connectd/schema/format/debezium"
	"github.com/connectd/connectd/schema/registry/registrytest"
)

// TestAvroDecodesDebeziumEvents reads Debezium's create, update and delete
// events of the documented customers table as its AvroConverter writes
// them (the writer schema in the registry, the Confluent wire format), as
// Flink's debezium-avro-confluent does: by field name, source and the rest
// left out.
func TestAvroDecodesDebeziumEvents(t *testing.T) {
	t.Parallel()
	reg := registrytest.New()
	defer reg.Close()
	avsc, err := os.ReadFile("testdata/customers_envelope.avsc")
	if err != nil {
		t.Fatal(err)
	}
	id := reg.Add("dbserver1.inventory.customers-value", "AVRO", string(avsc))
	codec, err := goavro.NewCodec(string(avsc))
	if err != nil {
		t.Fatal(err)
	}
	value := func(id int32, first string) map[string]any {
		return map[string]any{"mysql_server_1.inventory.customers.Value": map[string]any{
			"id": id, "first_name": first, "last_name": "Kretchmar", "email": "annek@noanswer.org"}}
	}
	source := map[string]any{"version": "2.7.0.Final", "connector": "mysql", "name": "mysql-server-1", "ts_ms": int64(0), "db": "inventory",
		"table": map[string]any{"string": "customers"}}
	event := func(before, after any, op string) []byte {
		native := map[string]any{"before": before, "after": after, "source": source, "op": op,
			"ts_ms": map[string]any{"long": int64(1465491411815)}, "transaction": nil}
		b, err := codec.BinaryFromNative(nil, native)
		if err != nil {
			t.Fatal(err)
		}
		frame := make([]byte, 5, 5+len(b))
		binary.BigEndian.PutUint32(frame[1:], uint32(id))
		return append(frame, b...)
	}
	row := rowType(t, customers)
	f, err := debezium.NewAvro(row, map[string]string{"url": reg.URL()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"create", event(nil, value(1004, "Anne"), "c"), `+I {"id":1004,"first_name":"Anne","last_name":"Kretchmar","email":"annek@noanswer.org"}` + "\n"},
		{"update", event(value(1004, "Anne"), value(1004, "Anne Marie"), "u"), `-U {"id":1004,"first_name":"Anne","last_name":"Kretchmar","email":"annek@noanswer.org"}
+U {"id":1004,"first_name":"Anne Marie","last_name":"Kretchmar","email":"annek@noanswer.org"}
`},
		{"delete", event(value(1004, "Anne Marie"), nil, "d"), `-D {"id":1004,"first_name":"Anne Marie","last_name":"Kretchmar","email":"annek@noanswer.org"}` + "\n"},
		{"read", event(nil, value(1001, "Sally"), "r"), `+I {"id":1001,"first_name":"Sally","last_name":"Kretchmar","email":"annek@noanswer.org"}` + "\n"},
		{"tombstone", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changes, err := f.DecodeChangesRecord(t.Context(), tc.data, changelog.Record{Topic: "dbserver1.inventory.customers"})
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
	if _, err := f.DecodeChanges(event(nil, value(1, "x"), "u")); err == nil || !strings.Contains(err.Error(), "REPLICA IDENTITY FULL") {
		t.Errorf("update without before: err = %v", err)
	}
}

// TestAvroRoundTrip writes each kind as Flink's
// DebeziumAvroSerializationSchema (registering the envelope's schema under
// <topic>-value) and reads it back.
func TestAvroRoundTrip(t *testing.T) {
	t.Parallel()
	reg := registrytest.New()
	defer reg.Close()
	row := rowType(t, products)
	f, err := debezium.NewAvro(row, map[string]string{"url": reg.URL()})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"before", "after", "op", `generated.record_before"`} {
		if !strings.Contains(f.SchemaJSON(), name) {
			t.Fatalf("envelope schema %s lacks %s", f.SchemaJSON(), name)
		}
	}
	r := map[string]any{"id": int64(111), "name": "scooter", "description": nil, "weight": "5.18"}
	rec := changelog.Record{Topic: "products"}
	for kind, want := range map[changelog.Kind]changelog.Kind{
		changelog.Insert: changelog.Insert, changelog.UpdateAfter: changelog.Insert,
		changelog.UpdateBefore: changelog.Delete, changelog.Delete: changelog.Delete,
	} {
		data, err := f.EncodeChangeRecord(t.Context(), r, kind, rec)
		if err != nil {
			t.Fatal(err)
		}
		back, err := f.DecodeChangesRecord(t.Context(), data, rec)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := changelogtest.Render(row, back)
		if w := want.String() + ` {"id":111,"name":"scooter","description":null,"weight":5.18}` + "\n"; got != w {
			t.Errorf("%s: read back %s, want %s", kind, got, w)
		}
	}
	if n := reg.Requests("POST", "/subjects/products-value/versions"); n < 1 {
		t.Errorf("the envelope schema was not registered under products-value (%d requests)", n)
	}
}

// TestAvroReadsFlinkEnvelope reads a record written with the schema Flink's
// debezium-avro-confluent registers: a top-level union of null and the
// envelope record (testdata/flink_envelope.avsc).
func TestAvroReadsFlinkEnvelope(t *testing.T) {
	t.Parallel()
	reg := registrytest.New()
	defer reg.Close()
	avsc, err := os.ReadFile("testdata/flink_envelope.avsc")
	if err != nil {
		t.Fatal(err)
	}
	id := reg.Add("changes-value", "AVRO", string(avsc))
	// goavro cannot compile Flink's names as they are (a nested record
	// type would resolve to the top record named "record"); names are not
	// in the binary encoding, so a renamed top writes the same bytes.
	text := strings.Replace(string(avsc), `"name": "record",`, `"name": "record_top",`, 1)
	codec, err := goavro.NewCodec(text)
	if err != nil {
		t.Fatal(err)
	}
	row := map[string]any{"id": map[string]any{"long": int64(1)}, "n": map[string]any{"long": int64(2)},
		"v": map[string]any{"string": "b"}, "total": nil}
	native := map[string]any{"org.apache.flink.avro.generated.record_top": map[string]any{
		"before": nil,
		"after":  map[string]any{"org.apache.flink.avro.generated.record_after": row},
		"op":     map[string]any{"string": "c"},
	}}
	b, err := codec.BinaryFromNative(nil, native)
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 5, 5+len(b))
	binary.BigEndian.PutUint32(frame[1:], uint32(id))
	rt := rowType(t, "ROW<id BIGINT, n BIGINT, v STRING, total DECIMAL(10, 2)>")
	f, err := debezium.NewAvro(rt, map[string]string{"url": reg.URL()})
	if err != nil {
		t.Fatal(err)
	}
	changes, err := f.DecodeChanges(append(frame, b...))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := changelogtest.Render(rt, changes)
	if want := `+I {"id":1,"n":2,"v":"b","total":null}` + "\n"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
