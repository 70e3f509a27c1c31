package avroconfluent_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/linkedin/goavro/v2"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/avroconfluent"
	"github.com/connectd/connectd/schema/registry"
	"github.com/connectd/connectd/schema/registry/registrytest"
)

const allTypes = `CREATE TABLE t (
  s STRING, c CHAR(2), b BOOLEAN, ti TINYINT, si SMALLINT, i INT NOT NULL, bi BIGINT,
  f FLOAT, d DOUBLE, dec DECIMAL(20, 4), d8 DATE, tm TIME(3), ts TIMESTAMP(3), by BYTES,
  arr ARRAY<INT>, m MAP<STRING, DOUBLE>, r ROW<x STRING, y ARRAY<ROW<z BIGINT NOT NULL>>>
) WITH ('format' = 'avro-confluent', 'avro-confluent.url' = 'http://localhost:8081')`

func rowType(t testing.TB, ddl string) *schema.Type {
	t.Helper()
	tables, err := schema.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	if err := tables[0].Validate(); err != nil {
		t.Fatal(err)
	}
	return tables[0].PhysicalRowType()
}

func fullRow() map[string]any {
	return map[string]any{
		"s": "héllo", "c": "ab", "b": true, "ti": int64(-128), "si": int64(32767), "i": int64(math.MinInt32), "bi": int64(math.MaxInt64),
		"f": float64(float32(3.14)), "d": math.Inf(1), "dec": json.Number("-1234567890123456.7891"),
		"d8": time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), "tm": time.Date(1970, 1, 1, 23, 59, 58, 120000000, time.UTC),
		"ts": time.Date(2026, 12, 2, 12, 13, 14, 123000000, time.UTC), "by": []byte{0, 1, 255},
		"arr": []any{int64(1), nil}, "m": map[string]any{"a": 1.5, "b": nil},
		"r": map[string]any{"x": nil, "y": []any{map[string]any{"z": int64(7)}, nil}},
	}
}

func newFormat(t testing.TB, reg *registrytest.Registry, row *schema.Type, opts map[string]string) *avroconfluent.Format {
	t.Helper()
	all := map[string]string{"url": reg.URL()}
	for k, v := range opts {
		all[k] = v
	}
	o, err := avroconfluent.ParseOptions(all)
	if err != nil {
		t.Fatal(err)
	}
	f, err := avroconfluent.New(row, o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRoundTripAndCache(t *testing.T) {
	t.Parallel()
	reg := registrytest.New()
	defer reg.Close()
	ctx := context.Background()
	f := newFormat(t, reg, rowType(t, allTypes), nil)
	nulls := map[string]any{}
	for k := range fullRow() {
		nulls[k] = nil
	}
	nulls["i"] = int64(0)
	for _, want := range []map[string]any{fullRow(), nulls} {
		data, err := f.EncodeRecord(ctx, want, avroconfluent.Record{Topic: "orders"})
		if err != nil {
			t.Fatal(err)
		}
		if data[0] != 0 || binary.BigEndian.Uint32(data[1:5]) != 1 {
			t.Fatalf("header % x: want magic 0 and id 1", data[:5])
		}
		// A second format (no caches) decodes via the registry.
		g := newFormat(t, reg, rowType(t, allTypes), nil)
		for range 3 {
			got, err := g.DecodeRecord(ctx, data, avroconfluent.Record{Topic: "orders"})
			if err != nil {
				t.Fatal(err)
			}
			if !schema.Equal(got, want) {
				t.Fatalf("round trip\n got %#v\nwant %#v", got, want)
			}
		}
	}
	if n := reg.Requests("POST", "/subjects/orders-value/versions"); n != 1 {
		t.Errorf("register: %d requests, want 1 (cached)", n)
	}
	if n := reg.Requests("GET", "/schemas/ids/1"); n != 2 {
		t.Errorf("schema by id: %d requests, want 1 per format (cached)", n)
	}
	var registered map[string]any
	if err := json.Unmarshal([]byte(f.SchemaJSON()), &registered); err != nil || registered["name"] != "org.apache.flink.avro.generated.record" {
		t.Errorf("registered schema: want Flink's record name, got %v (%v)", registered["name"], err)
	}
}

func TestSubjects(t *testing.T) {
	t.Parallel()
	reg := registrytest.New()
	defer reg.Close()
	ctx := context.Background()
	row := rowType(t, `CREATE TABLE t (id BIGINT) WITH ('format' = 'avro')`)
	f := newFormat(t, reg, row, nil)
	if _, err := f.Encode(map[string]any{"id": 1}); !errors.Is(err, avroconfluent.ErrNoSubject) {
		t.Fatalf("no topic, no subject: want ErrNoSubject, got %v", err)
	}
	fixed := newFormat(t, reg, row, map[string]string{"subject": "my subject/1"})
	if _, err := fixed.EncodeRecord(ctx, map[string]any{"id": 1}, avroconfluent.Record{Topic: "orders"}); err != nil {
		t.Fatal(err)
	}
	if reg.Requests("POST", "/subjects/my%20subject%2F1/versions") != 1 {
		t.Fatal("the subject option is used, escaped in the path")
	}
	o, _ := avroconfluent.ParseOptions(map[string]string{"url": reg.URL()})
	o.Part = avroconfluent.PartKey
	k, err := avroconfluent.New(row, o)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := k.Subject(avroconfluent.Record{Topic: "orders"}); s != "orders-key" {
		t.Fatalf("key subject: %q", s)
	}

	// auto.register.schemas false: look up, 404 when absent.
	lookup := newFormat(t, reg, row, map[string]string{"auto.register.schemas": "false"})
	_, err = lookup.EncodeRecord(ctx, map[string]any{"id": 1}, avroconfluent.Record{Topic: "other"})
	var re *registry.Error
	if !errors.Is(err, registry.ErrNotFound) || !errors.As(err, &re) || re.Code != 40401 ||
		!strings.Contains(err.Error(), "subject other-value: looking up (auto.register.schemas is false) the table's schema: schema registry POST "+reg.URL()+"/subjects/other-value: HTTP 404, error_code 40401: Subject 'other-value' not found.") {
		t.Fatalf("lookup of an absent subject: %v", err)
	}
	if _, err := f.EncodeRecord(ctx, map[string]any{"id": 1}, avroconfluent.Record{Topic: "orders"}); err != nil {
		t.Fatal(err)
	}
	if _, err := lookup.EncodeRecord(ctx, map[string]any{"id": 1}, avroconfluent.Record{Topic: "orders"}); err != nil {
		t.Fatalf("lookup of a registered schema: %v", err)
	}
	if reg.Requests("POST", "/subjects/orders-value") != 1 || reg.Requests("POST", "/subjects/orders-value/versions") != 1 {
		t.Fatal("auto.register.schemas false must not register")
	}
}

func TestIncompatible(t *testing.T) {
	t.Parallel()
	reg := registrytest.New()
	defer reg.Close()
	reg.RefuseChanges()
	reg.Add("orders-value", "", `{"type":"record","name":"r","fields":[{"name":"id","type":"string"}]}`)
	f := newFormat(t, reg, rowType(t, `CREATE TABLE t (id BIGINT NOT NULL) WITH ('format' = 'avro')`), nil)
	_, err := f.EncodeRecord(context.Background(), map[string]any{"id": 1}, avroconfluent.Record{Topic: "orders"})
	if !errors.Is(err, registry.ErrIncompatible) || !strings.Contains(err.Error(), "subject orders-value: registering the table's schema") ||
		!strings.Contains(err.Error(), "HTTP 409, error_code 409: Schema being registered is incompatible") {
		t.Fatalf("want a 409 naming the subject, got %v", err)
	}
}

func TestBasicAuth(t *testing.T) {
	t.Parallel()
	reg := registrytest.New()
	defer reg.Close()
	reg.RequireAuth("alice:s3cret")
	row := rowType(t, `CREATE TABLE t (id BIGINT) WITH ('format' = 'avro')`)
	ctx := context.Background()
	rec := avroconfluent.Record{Topic: "orders"}

	good := newFormat(t, reg, row, map[string]string{"basic-auth.credentials-source": "USER_INFO", "basic-auth.user-info": "alice:s3cret"})
	data, err := good.EncodeRecord(ctx, map[string]any{"id": 5}, rec)
	if err != nil {
		t.Fatal(err)
	}
	inURL := strings.Replace(reg.URL(), "http://", "http://alice:s3cret@", 1)
	o, err := avroconfluent.ParseOptions(map[string]string{"url": inURL, "basic-auth.credentials-source": "URL"})
	if err != nil {
		t.Fatal(err)
	}
	viaURL, err := avroconfluent.New(row, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := viaURL.DecodeRecord(ctx, data, rec); err != nil {
		t.Fatalf("credentials in the URL: %v", err)
	}

	bad := newFormat(t, reg, row, map[string]string{"basic-auth.user-info": "alice:wrong"})
	_, err = bad.DecodeRecord(ctx, data, rec)
	if !errors.Is(err, registry.ErrUnauthorized) || !strings.Contains(err.Error(), "schema id 1: schema registry GET "+reg.URL()+"/schemas/ids/1: HTTP 401, error_code 401: Unauthorized") {
		t.Fatalf("wrong password: %v", err)
	}
	o.URL = strings.Replace(reg.URL(), "http://", "http://alice:wrong@", 1)
	leaky, _ := avroconfluent.New(row, o)
	if _, err = leaky.DecodeRecord(ctx, data, rec); err == nil || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("errors must not show credentials: %v", err)
	}
}

func TestRetry5xx(t *testing.T) {
	t.Parallel()
	reg := registrytest.New()
	defer reg.Close()
	f := newFormat(t, reg, rowType(t, `CREATE TABLE t (id BIGINT) WITH ('format' = 'avro')`), nil)
	reg.Fail5xx(2)
	if _, err := f.EncodeRecord(context.Background(), map[string]any{"id": 1}, avroconfluent.Record{Topic: "o"}); err != nil {
		t.Fatalf("two 500s are retried: %v", err)
	}
	reg.Fail5xx(3)
	g := newFormat(t, reg, rowType(t, `CREATE TABLE t (id BIGINT) WITH ('format' = 'avro')`), nil)
	_, err := g.EncodeRecord(context.Background(), map[string]any{"id": 1}, avroconfluent.Record{Topic: "o"})
	if err == nil || !strings.Contains(err.Error(), "HTTP 500, error_code 50001") {
		t.Fatalf("three 500s: %v", err)
	}
}

func TestBadRecords(t *testing.T) {
	t.Parallel()
	reg := registrytest.New()
	defer reg.Close()
	reg.Add("x-value", "PROTOBUF", `syntax = "proto3"; message M {}`)
	row := rowType(t, `CREATE TABLE t (id BIGINT) WITH ('format' = 'avro')`)
	f := newFormat(t, reg, row, nil)
	good, err := f.EncodeRecord(context.Background(), map[string]any{"id": 300}, avroconfluent.Record{Topic: "o"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
		is   error
	}{
		{"empty", nil, "shorter than the 5-byte header (0 bytes)", avroconfluent.ErrShort},
		{"short header", []byte{0, 0, 0}, "shorter than the 5-byte header (3 bytes)", avroconfluent.ErrShort},
		{"bad magic", append([]byte{1}, good[1:]...), "the first byte is not the magic byte 0 (got 0x01)", avroconfluent.ErrMagicByte},
		{"json", []byte(`{"id":1}`), "(got 0x7b)", avroconfluent.ErrMagicByte},
		{"unknown id", []byte{0, 0, 0, 0, 99, 2}, "schema id 99: schema registry GET " + reg.URL() + "/schemas/ids/99: HTTP 404, error_code 40403: Schema 99 not found", registry.ErrNotFound},
		{"protobuf id", []byte{0, 0, 0, 0, 1, 2}, "schema id 1 at " + reg.URL() + " is a PROTOBUF schema, not Avro", nil},
		{"truncated", good[:len(good)-1], "schema id 2: ", nil},
		{"trailing", append(append([]byte{}, good...), 0), "schema id 2: 1 bytes after the record", nil},
	} {
		_, err := f.Decode(tc.data)
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("%s: want %q, got %v", tc.name, tc.want, err)
		}
	}
}

// TestWriterSchemas decodes records written with schemas other than the
// table's, as other producers register them.
func TestWriterSchemas(t *testing.T) {
	t.Parallel()
	reg := registrytest.New()
	defer reg.Close()
	row := rowType(t, `CREATE TABLE t (id BIGINT NOT NULL, name STRING, score DOUBLE, tags ARRAY<STRING>, note STRING, kind STRING, sub ROW<a INT>) WITH ('format' = 'avro')`)
	f := newFormat(t, reg, row, nil)
	encode := func(schemaText string, native map[string]any) []byte {
		t.Helper()
		codec, err := goavro.NewCodec(schemaText)
		if err != nil {
			t.Fatal(err)
		}
		id := reg.Add("w-value", "", schemaText)
		body, err := codec.BinaryFromNative(nil, native)
		if err != nil {
			t.Fatal(err)
		}
		out := []byte{0, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(out[1:], uint32(id))
		return append(out, body...)
	}
	// int -> BIGINT, float -> DOUBLE, enum -> STRING, a writer-only field,
	// a table field the writer lacks (note), a namespaced nested record.
	writer := `{"type":"record","name":"Event","namespace":"com.example","fields":[
		{"name":"id","type":"int"},
		{"name":"name","type":["null","string"],"default":null},
		{"name":"score","type":"float"},
		{"name":"tags","type":{"type":"array","items":"string"}},
		{"name":"extra","type":"long"},
		{"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B"]}},
		{"name":"sub","type":["null",{"type":"record","name":"Sub","fields":[{"name":"a","type":"int"}]}]}]}`
	data := encode(writer, map[string]any{"id": int32(7), "name": goavro.Union("string", "x"), "score": float32(1.5),
		"tags": []any{"a"}, "extra": int64(9), "kind": "B", "sub": goavro.Union("com.example.Sub", map[string]any{"a": int32(3)})})
	got, err := f.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"id": int64(7), "name": "x", "score": 1.5, "tags": []any{"a"}, "note": nil, "kind": "B", "sub": map[string]any{"a": int64(3)}}
	if !schema.Equal(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}

	for _, tc := range []struct{ schema, want string }{
		{`{"type":"record","name":"E","fields":[{"name":"id","type":"string"}]}`, "field id: the writer schema's string cannot be read as BIGINT NOT NULL"},
		{`{"type":"record","name":"E","fields":[{"name":"name","type":"string"}]}`, "field id: the writer schema has no such field and the column is NOT NULL"},
		{`{"type":"record","name":"E","fields":[{"name":"id","type":["null","long"]}]}`, "field id: NULL in a NOT NULL column"},
		{`"string"`, "the writer schema is string, not a record"},
	} {
		var native any = map[string]any{"id": "x", "name": "n"}
		switch {
		case strings.Contains(tc.schema, `"null","long"`):
			native = map[string]any{"id": nil}
		case tc.schema == `"string"`:
			native = "x"
		}
		codec, err := goavro.NewCodec(tc.schema)
		if err != nil {
			t.Fatal(err)
		}
		id := reg.Add("w-value", "", tc.schema)
		body, err := codec.BinaryFromNative(nil, native)
		if err != nil {
			t.Fatal(err)
		}
		rec := append([]byte{0, 0, 0, 0, byte(id)}, body...)
		if _, err := f.Decode(rec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want %q, got %v", tc.schema, tc.want, err)
		}
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{}, "option 'url' is required"},
		{map[string]string{"url": "http://h", "basic-auth.credentials-source": "USER_INFO"}, "'basic-auth.user-info' is not set"},
		{map[string]string{"url": "http://h", "basic-auth.user-info": "nocolon"}, "want user:password"},
		{map[string]string{"url": "http://h", "basic-auth.credentials-source": "SASL_INHERIT"}, "option 'basic-auth.credentials-source' = 'SASL_INHERIT'"},
		{map[string]string{"url": "http://h", "schema": "{}"}, "option 'schema' is not supported"},
		{map[string]string{"url": "http://h", "auto.register.schemas": "maybe"}, "auto.register.schemas"},
		{map[string]string{"url": "http://a", "schema-registry.url": "http://b"},
			"options 'url' = 'http://a' and 'schema-registry.url' = 'http://b' (its older spelling) disagree; set one"},
		{map[string]string{"url": "http://a", "subject": "s", "schema-registry.subject": "t"},
			"options 'subject' = 's' and 'schema-registry.subject' = 't' (its older spelling) disagree"},
	} {
		if _, err := avroconfluent.ParseOptions(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want %q, got %v", tc.opts, tc.want, err)
		}
	}
	// The older spellings, which Flink still accepts, alone or with the
	// same value under the new name.
	for _, opts := range []map[string]string{
		{"schema-registry.url": "http://reg:8081", "schema-registry.subject": "orders-value"},
		{"url": "http://reg:8081", "schema-registry.url": "http://reg:8081", "subject": "orders-value"},
	} {
		o, err := avroconfluent.ParseOptions(opts)
		if err != nil || o.URL != "http://reg:8081" || o.Subject != "orders-value" {
			t.Errorf("%v: %+v, %v", opts, o, err)
		}
	}
	o, err := avroconfluent.ParseOptions(map[string]string{"url": "ftp://h"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := avroconfluent.New(rowType(t, `CREATE TABLE t (id BIGINT) WITH ('format' = 'avro')`), o); err == nil || !strings.Contains(err.Error(), "option 'url'") {
		t.Errorf("ftp URL: %v", err)
	}
}

// FuzzDecode checks that no input panics or hangs the decoder; the writer
// schema is the table's, which has every type and container.
func FuzzDecode(f *testing.F) {
	reg := registrytest.New()
	defer reg.Close()
	row := rowType(f, allTypes)
	enc := newFormat(f, reg, row, nil)
	full, err := enc.EncodeRecord(context.Background(), fullRow(), avroconfluent.Record{Topic: "t"})
	if err != nil {
		f.Fatal(err)
	}
	dec := newFormat(f, reg, row, nil)
	f.Add(full)
	f.Add([]byte{0, 0, 0, 0, 1})
	f.Add([]byte{0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) >= 5 {
			data[1], data[2], data[3], data[4] = 0, 0, 0, 1 // always schema id 1, known to the registry
		}
		_, _ = dec.Decode(data)
	})
}
