package protobuf_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format"
	"github.com/connectd/connectd/schema/format/protobuf"
)

// orderColumns are the table's columns for shop.v1.Order (testdata).
const orderColumns = `id BIGINT, customer STRING, note STRING, gift BOOLEAN, qty INT, delta INT,
  small_unsigned INT, big_unsigned BIGINT, weight FLOAT, total DOUBLE, blob BYTES,
  status STRING, status_number INT, first ROW<sku STRING, qty INT>,
  items ARRAY<ROW<sku STRING, qty INT>>, tags ARRAY<STRING>, counts MAP<STRING, BIGINT>,
  labels MAP<INT, STRING>, placed ROW<seconds BIGINT, nanos INT>, rating INT`

func rowType(t testing.TB, columns string) *schema.Type {
	t.Helper()
	tables, err := schema.ParseDDL(`CREATE TABLE t (` + columns + `) WITH ('format' = 'json')`)
	if err != nil {
		t.Fatal(err)
	}
	return tables[0].PhysicalRowType()
}

func newCodec(t testing.TB, columns string, opts map[string]string) format.Codec {
	t.Helper()
	all := map[string]string{"descriptor-file": "testdata/shop.proto", "message-name": "shop.v1.Order"}
	for k, v := range opts {
		all[k] = v
	}
	c, err := format.New(schema.FormatProtobuf, rowType(t, columns), all)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fullRow() map[string]any {
	return map[string]any{
		"id": int64(7), "customer": "ünïcode", "note": "ring twice", "gift": true, "qty": int64(3), "delta": int64(-5),
		"small_unsigned": int64(-1), "big_unsigned": int64(-2), "weight": 1.5, "total": 12.25, "blob": []byte{0, 1, 2},
		"status": "SHIPPED", "status_number": int64(1),
		"first": map[string]any{"sku": "a", "qty": int64(1)},
		"items": []any{map[string]any{"sku": "a", "qty": int64(1)}, map[string]any{"sku": "b", "qty": int64(2)}},
		"tags":  []any{"x", "y"}, "counts": map[string]any{"k": int64(9)}, "labels": map[string]any{"-3": "minus three"},
		"placed": map[string]any{"seconds": int64(1700000000), "nanos": int64(5)}, "rating": int64(0),
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	c := newCodec(t, orderColumns, nil)
	in := fullRow()
	data, err := c.Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", out, in)
	}
	// Deterministic: equal rows give equal bytes (map entries sorted).
	again, _ := c.Encode(fullRow())
	if string(again) != string(data) {
		t.Fatal("two encodings of one row differ")
	}
}

// Fields with presence that a record leaves unset read as NULL, or as
// their defaults with read-default-values; proto3 fields without presence
// read their (default) value; repeated fields and maps read empty.
func TestNulls(t *testing.T) {
	t.Parallel()
	empty := map[string]any{}
	for _, tc := range []struct {
		name string
		opts map[string]string
		want map[string]any
	}{
		{"unset is NULL", nil, map[string]any{"note": nil, "rating": nil, "first": nil, "placed": nil,
			"customer": "", "qty": int64(0), "status": "STATUS_UNSPECIFIED", "items": []any{}, "counts": empty}},
		{"read-default-values", map[string]string{"read-default-values": "true"}, map[string]any{"note": "", "rating": int64(0),
			"first": map[string]any{"sku": "", "qty": int64(0)}, "placed": map[string]any{"seconds": int64(0), "nanos": int64(0)},
			"customer": "", "qty": int64(0), "status": "STATUS_UNSPECIFIED", "items": []any{}, "counts": empty}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCodec(t, orderColumns, tc.opts)
			data, err := c.Encode(map[string]any{"id": int64(1)})
			if err != nil {
				t.Fatal(err)
			}
			out, err := c.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range tc.want {
				if got := out[k]; !reflect.DeepEqual(got, want) {
					t.Errorf("%s: got %#v, want %#v", k, got, want)
				}
			}
		})
	}
}

func TestNullElements(t *testing.T) {
	t.Parallel()
	c := newCodec(t, "id BIGINT, tags ARRAY<STRING>, items ARRAY<ROW<sku STRING, qty INT>>", map[string]string{"write-null-string-literal": "null"})
	data, err := c.Encode(map[string]any{"id": int64(1), "tags": []any{"a", nil}, "items": []any{nil}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"id": int64(1), "tags": []any{"a", "null"}, "items": []any{map[string]any{"sku": "", "qty": int64(0)}}}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("got %#v, want %#v", out, want)
	}
}

func TestBadRecords(t *testing.T) {
	t.Parallel()
	garbage := []byte{0xff, 0xff, 0xff}
	if _, err := newCodec(t, "id BIGINT", nil).Decode(garbage); err == nil || !strings.Contains(err.Error(), "message shop.v1.Order") {
		t.Fatalf("garbage: %v", err)
	}
	if row, err := newCodec(t, "id BIGINT", map[string]string{"ignore-parse-errors": "true"}).Decode(garbage); row != nil || err != nil {
		t.Fatalf("ignore-parse-errors: %v %v", row, err)
	}
	if _, err := newCodec(t, "id BIGINT, status STRING", nil).Encode(map[string]any{"status": "LOST"}); err == nil || !strings.Contains(err.Error(), `column status: "LOST" is not a value of enum shop.v1.Status`) {
		t.Fatalf("unknown enum name: %v", err)
	}
}

func TestSchemaErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		columns string
		opts    map[string]string
		want    string
	}{
		{"id INT", nil, "column id: type INT does not match the field's type int64 (want BIGINT)"},
		{"missing STRING", nil, "column missing: the message has no field missing"},
		{"tags STRING", nil, "column tags: type STRING does not match the field's type repeated string (want ARRAY)"},
		{"first ROW<sku INT>", nil, "column first.sku: type INT does not match the field's type string (want STRING)"},
		{"counts MAP<STRING, INT>", nil, "column counts (value): type INT does not match the field's type int64 (want BIGINT)"},
		{"id BIGINT", map[string]string{"message-name": "shop.v1.Nope"}, "option 'protobuf.message-name' = 'shop.v1.Nope'"},
		{"id BIGINT", map[string]string{"message-name": "shop.v1.Status"}, "is not a message"},
		{"id BIGINT", map[string]string{"descriptor-file": "testdata/missing.proto"}, "option 'protobuf.descriptor-file' = 'testdata/missing.proto'"},
		{"id BIGINT", map[string]string{"message-class-name": "com.shop.Order"}, "option 'message-class-name' = 'com.shop.Order': names a compiled Java class"},
	} {
		all := map[string]string{"descriptor-file": "testdata/shop.proto", "message-name": "shop.v1.Order"}
		for k, v := range tc.opts {
			all[k] = v
		}
		_, err := format.New(schema.FormatProtobuf, rowType(t, tc.columns), all)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: want %q, got %v", tc.columns, tc.opts, tc.want, err)
		}
	}
	if _, err := protobuf.ParseOptions(map[string]string{}); err == nil || !strings.Contains(err.Error(), "'protobuf.descriptor-file' is required") ||
		!strings.Contains(err.Error(), "'protobuf.message-name' is required") {
		t.Errorf("required options: %v", err)
	}
}

// A descriptor set (protoc --descriptor_set_out --include_imports) reads
// as the .proto does.
func TestDescriptorSet(t *testing.T) {
	t.Parallel()
	set := writeDescriptorSet(t)
	c, err := format.New(schema.FormatProtobuf, rowType(t, orderColumns), map[string]string{"descriptor-file": set, "message-name": "shop.v1.Order"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := newCodec(t, orderColumns, nil).Encode(fullRow())
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Decode(data)
	if err != nil || !reflect.DeepEqual(out, fullRow()) {
		t.Fatalf("decoded with the descriptor set: %v %#v", err, out)
	}
}

// writeDescriptorSet writes shop.proto and its imports as a
// FileDescriptorSet, dependencies first, as protoc --include_imports does.
func writeDescriptorSet(t testing.TB) string {
	t.Helper()
	md, err := protobuf.LoadMessage("testdata/shop.proto", "shop.v1.Order")
	if err != nil {
		t.Fatal(err)
	}
	file := md.ParentFile()
	set := &descriptorpb.FileDescriptorSet{}
	for i := range file.Imports().Len() {
		set.File = append(set.File, protodesc.ToFileDescriptorProto(file.Imports().Get(i).FileDescriptor))
	}
	set.File = append(set.File, protodesc.ToFileDescriptorProto(file))
	data, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "shop.desc")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
