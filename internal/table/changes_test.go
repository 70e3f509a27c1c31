package table

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/changelog"
)

// DecodeChanges: every row of a changelog record gets the key columns
// (EXCEPT_KEY), the record's metadata and the
// envelope's `value.*` metadata, and computed columns; a tombstone and a
// DDL record give ErrSkipped.
func TestCodecDecodeChanges(t *testing.T) {
	t.Parallel()
	tb := table(t, `CREATE TABLE p (
  k BIGINT, id BIGINT, weight DOUBLE,
  db STRING METADATA FROM 'value.database' VIRTUAL,
  pks ARRAY<STRING> METADATA FROM 'value.pk-names' VIRTUAL,
  types MAP<STRING, INT> METADATA FROM 'value.sql-type' VIRTUAL,
  off BIGINT METADATA FROM 'offset' VIRTUAL,
  heavy AS weight > 5
) WITH ('connector' = 'kafka', 'topic' = 't', 'value.format' = 'canal-json', 'key.format' = 'json', 'key.fields' = 'k',
  'value.fields-include' = 'EXCEPT_KEY')`)
	c, err := NewCodec(tb)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Changelog() {
		t.Fatal("canal-json is a changelog format")
	}
	value := `{"data":[{"id":"111","weight":"5.18"}],"old":[{"weight":"4.5"}],"type":"UPDATE","database":"inventory","table":"products","pkNames":["id"],"sqlType":{"id":4,"weight":7}}`
	changes, err := c.DecodeChanges(context.Background(), Record{Topic: "t", Offset: 9, Key: []byte(`{"k":7}`), Value: []byte(value)})
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 || changes[0].Kind != changelog.UpdateBefore || changes[1].Kind != changelog.UpdateAfter {
		t.Fatalf("changes %+v", changes)
	}
	before, after := changes[0].Row, changes[1].Row
	if before["weight"] != 4.5 || after["weight"] != 5.18 || before["id"] != int64(111) || before["k"] != int64(7) || after["k"] != int64(7) {
		t.Fatalf("rows %v / %v", before, after)
	}
	if before["heavy"] != false || after["heavy"] != true {
		t.Fatalf("computed column per row: %v / %v", before["heavy"], after["heavy"])
	}
	if after["db"] != "inventory" || after["off"] != int64(9) {
		t.Fatalf("metadata: db %v off %v", after["db"], after["off"])
	}
	if pks, _ := after["pks"].([]any); len(pks) != 1 || pks[0] != "id" {
		t.Fatalf("pk-names: %#v", after["pks"])
	}
	if types, _ := after["types"].(map[string]any); types["weight"] != int64(7) {
		t.Fatalf("sql-type: %#v", after["types"])
	}
	for _, v := range []string{"", `{"data":null,"type":"CREATE","database":"inventory","table":"products"}`} {
		var val []byte
		if v != "" {
			val = []byte(v)
		}
		if _, err := c.DecodeChanges(context.Background(), Record{Topic: "t", Value: val}); !errors.Is(err, ErrSkipped) {
			t.Errorf("%q: err = %v, want ErrSkipped", v, err)
		}
	}
	if row, err := c.Decode(context.Background(), Record{Topic: "t", Value: []byte(value)}); err != nil || row["weight"] != 5.18 {
		t.Fatalf("Decode gives the last row: %v, %v", row, err)
	}
}

// EncodeChange writes by kind: a changelog format in its envelope,
// upsert-kafka as value / tombstone / nothing, and a plain table with an
// insert-only format refuses any kind but insert.
func TestCodecEncodeChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	row := map[string]any{"id": int64(1), "name": "a"}
	dbz, err := NewCodec(table(t, `CREATE TABLE d (id BIGINT, name STRING) WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'maxwell-json')`))
	if err != nil {
		t.Fatal(err)
	}
	enc, err := dbz.EncodeChange(ctx, row, "t", changelog.UpdateBefore)
	if err != nil || string(enc.Value) != `{"data":{"id":1,"name":"a"},"type":"delete"}` {
		t.Fatalf("maxwell -U: %s, %v", enc.Value, err)
	}
	up, err := NewCodec(table(t, `CREATE TABLE u (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 't', 'key.format' = 'json', 'value.format' = 'json')`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.EncodeChange(ctx, row, "t", changelog.UpdateBefore); !errors.Is(err, ErrDropped) {
		t.Fatalf("upsert -U: err = %v, want ErrDropped", err)
	}
	if enc, err := up.EncodeChange(ctx, row, "t", changelog.Delete); err != nil || enc.Value != nil || string(enc.Key) != `{"id":1}` {
		t.Fatalf("upsert -D: key %s value %q, %v", enc.Key, enc.Value, err)
	}
	if enc, err := up.EncodeChange(ctx, row, "t", changelog.UpdateAfter); err != nil || string(enc.Value) != `{"id":1,"name":"a"}` {
		t.Fatalf("upsert +U: %s, %v", enc.Value, err)
	}
	plain, err := NewCodec(table(t, `CREATE TABLE p (id BIGINT, name STRING) WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'json')`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.EncodeChange(ctx, row, "t", changelog.Delete); err == nil || !strings.Contains(err.Error(), "format json writes inserts only") {
		t.Fatalf("json -D: err = %v", err)
	}
	if enc, err := plain.EncodeChange(ctx, row, "t", changelog.Insert); err != nil || string(enc.Value) != `{"id":1,"name":"a"}` {
		t.Fatalf("json +I: %s, %v", enc.Value, err)
	}
}

func TestKindOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		meta map[string]any
		want changelog.Kind
		err  string
	}{
		{nil, changelog.Insert, ""},
		{map[string]any{"row_kind": "-U"}, changelog.UpdateBefore, ""},
		{map[string]any{"row_kind": "update_after"}, changelog.UpdateAfter, ""},
		{map[string]any{"kafka_tombstone_message": true}, changelog.Delete, ""},
		{map[string]any{"row_kind": "+I", "kafka_tombstone_message": true}, changelog.Insert, ""},
		{map[string]any{"row_kind": "upsert"}, 0, `metadata row_kind: unknown row kind "upsert"`},
	} {
		msg := service.NewMessage(nil)
		for k, v := range tc.meta {
			msg.MetaSetMut(k, v)
		}
		got, err := KindOf(msg)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: err = %v, want %q", tc.meta, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %v, %v; want %v", tc.meta, got, err, tc.want)
		}
	}
	// row_kind is not a record header.
	msg := service.NewMessage(nil)
	msg.MetaSetMut("row_kind", "+I")
	msg.MetaSetMut("trace", "x")
	if hs := MessageHeaders(msg); len(hs) != 1 || hs[0].Key != "trace" {
		t.Fatalf("headers %v", hs)
	}
}

// Flink's rules for changelog formats in the table model.
func TestChangelogTableRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ ddl, want string }{
		{`CREATE TABLE u (id BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = 't', 'key.format' = 'json', 'value.format' = 'debezium-json')`,
			"upsert-kafka needs an insert-only value format"},
		{`CREATE TABLE k (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 't', 'key.format' = 'canal-json', 'key.fields' = 'id', 'value.format' = 'json')`,
			"a key format must be insert-only"},
		{`CREATE TABLE m (id BIGINT, x STRING METADATA FROM 'value.source.table') WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'json')`,
			`unknown metadata key "value.source.table"`},
		{`CREATE TABLE m (id BIGINT, x INT METADATA FROM 'value.source.table') WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'debezium-json')`,
			`metadata "value.source.table" cannot be declared as INT`},
		{`CREATE TABLE m (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'canal-json', 'canal-json.table.include' = '(?<=a)b')`,
			`option 'canal-json.table.include' = '(?<=a)b': not a regular expression`},
		{`CREATE TABLE m (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'maxwell-json', 'maxwell-json.fail-on-missing-field' = 'true')`,
			`option 'maxwell-json.fail-on-missing-field' is not supported`},
	} {
		tables, err := schema.ParseDDL(tc.ddl)
		if err != nil {
			t.Fatal(err)
		}
		if err := tables[0].Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\nerr = %v\nwant %q", tc.ddl, err, tc.want)
		}
	}
	// A PRIMARY KEY on a CDC table is accepted, as in Flink, and does not
	// form the Kafka key (connectd's extension for insert-only formats).
	pk, err := schema.ParseDDL(`CREATE TABLE c (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'debezium-json')`)
	if err != nil {
		t.Fatal(err)
	}
	if err := pk[0].Validate(); err != nil {
		t.Fatalf("PRIMARY KEY on a debezium-json table: %v", err)
	}
	if k := pk[0].KeyFields(); k != nil {
		t.Fatalf("key fields %v, want none", k)
	}
	ok := `CREATE TABLE m (id BIGINT, x STRING METADATA FROM 'value.source.table' VIRTUAL) WITH (
  'connector' = 'kafka', 'topic' = 't', 'format' = 'debezium-json', 'debezium-json.schema-include' = 'true', 'debezium-json.ignore-parse-errors' = 'true')`
	tables, err := schema.ParseDDL(ok)
	if err != nil {
		t.Fatal(err)
	}
	if err := tables[0].Validate(); err != nil {
		t.Fatal(err)
	}
}
