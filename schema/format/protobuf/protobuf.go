// Package protobuf is the `protobuf` format: records are Protocol Buffers
// messages of one type, read from and written to rows of a table whose
// columns are the message's fields, by name, as Flink's protobuf format maps
// them (flink-protobuf's PbFormatUtils and PbSchemaValidationUtils):
//
//	bool                                   BOOLEAN
//	int32 sint32 sfixed32 uint32 fixed32   INT
//	int64 sint64 sfixed64 uint64 fixed64   BIGINT
//	float / double                         FLOAT / DOUBLE
//	string                                 STRING (VARCHAR, CHAR)
//	bytes                                  BYTES (VARBINARY, BINARY)
//	enum                                   STRING (the value's name) or an integer type (its number)
//	message                                ROW of its fields
//	repeated T                             ARRAY<T>
//	map<K, V>                              MAP<K, V>
//
// Unsigned values wrap as Java's signed int and long do. A table column
// without a field of that name, or of another type, is an error at start
// naming both; message fields without a column are skipped.
//
// Flink generates Java code for a compiled message class
// (`protobuf.message-class-name`); connectd reads the schema at start from
// `protobuf.descriptor-file` — a .proto file, compiled here with
// github.com/bufbuild/protocompile, or a descriptor set written by protoc —
// and handles messages dynamically (google.golang.org/protobuf's dynamicpb).
//
// NULLs: a field with presence (proto2 fields, proto3 `optional`, message
// fields, oneof members) that a record does not set reads as NULL, or as
// its default value with `protobuf.read-default-values`; a proto3 field
// without presence reads its value (the default when unset). Writing, a
// NULL column leaves the field unset; a NULL element of an array or a map
// value is written as `protobuf.write-null-string-literal` for strings, and
// as the type's default value otherwise.
package protobuf

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/connectd/connectd/schema"
)

// Format decodes and encodes rows as messages of one type.
type Format struct {
	row  *schema.Type
	md   protoreflect.MessageDescriptor
	opts Options
}

// New loads the message of opts and checks that every field of row (a
// ROW) is a field of it of a matching type.
func New(row *schema.Type, opts Options) (*Format, error) {
	md, err := LoadMessage(opts.DescriptorFile, opts.MessageName)
	if err != nil {
		return nil, fmt.Errorf("format protobuf: %w", err)
	}
	if err := checkRow(row, md, ""); err != nil {
		return nil, fmt.Errorf("format protobuf: message %s: %w", md.FullName(), err)
	}
	return &Format{row: row, md: md, opts: opts}, nil
}

// LoadMessage reads the descriptor of message name from file: a .proto
// source (its imports resolved from its directory; Google's well-known
// types are built in) or a binary FileDescriptorSet.
func LoadMessage(file, name string) (protoreflect.MessageDescriptor, error) {
	var (
		d   protoreflect.Descriptor
		err error
	)
	if strings.EqualFold(filepath.Ext(file), ".proto") {
		d, err = fromProto(file, name)
	} else {
		d, err = fromDescriptorSet(file, name)
	}
	if err != nil {
		return nil, err
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	if !ok {
		return nil, fmt.Errorf("option 'protobuf.message-name' = '%s': %s is not a message", name, file)
	}
	return md, nil
}

func fromProto(file, name string) (protoreflect.Descriptor, error) {
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{filepath.Dir(file)}}),
	}
	files, err := c.Compile(context.Background(), filepath.Base(file))
	if err != nil {
		return nil, fmt.Errorf("option 'protobuf.descriptor-file' = '%s': %w", file, err)
	}
	d, err := files.AsResolver().FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil, fmt.Errorf("option 'protobuf.message-name' = '%s': not in %s or its imports: %w", name, file, err)
	}
	return d, nil
}

func fromDescriptorSet(file, name string) (protoreflect.Descriptor, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("option 'protobuf.descriptor-file': %w", err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("option 'protobuf.descriptor-file' = '%s': not a .proto file (by its extension) nor a descriptor set: %w", file, err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("option 'protobuf.descriptor-file' = '%s': %w (write it with protoc --include_imports)", file, err)
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil, fmt.Errorf("option 'protobuf.message-name' = '%s': not in %s: %w", name, file, err)
	}
	return d, nil
}

// checkRow checks that each field of row is a field of md of a matching
// type; path names nested rows in errors.
func checkRow(row *schema.Type, md protoreflect.MessageDescriptor, path string) error {
	var errs []error
	for _, f := range row.Fields {
		p := schema.FieldPath(path, f.Name)
		fd := md.Fields().ByName(protoreflect.Name(f.Name))
		if fd == nil {
			errs = append(errs, fmt.Errorf("column %s: the message has no field %s", p, f.Name))
			continue
		}
		if err := checkField(f.Type, fd, p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func checkField(t *schema.Type, fd protoreflect.FieldDescriptor, path string) error {
	switch {
	case fd.IsMap():
		if t.Kind != schema.KindMap {
			return mismatch(path, t, fd, "MAP")
		}
		if err := checkKind(t.Key, fd.MapKey(), path+" (key)"); err != nil {
			return err
		}
		return checkKind(t.Value, fd.MapValue(), path+" (value)")
	case fd.IsList():
		if t.Kind != schema.KindArray {
			return mismatch(path, t, fd, "ARRAY")
		}
		return checkKind(t.Elem, fd, path+"[]")
	}
	return checkKind(t, fd, path)
}

// checkKind checks a single value of fd (an element of a list) against t.
func checkKind(t *schema.Type, fd protoreflect.FieldDescriptor, path string) error {
	ok := false
	want := ""
	switch fd.Kind() {
	case protoreflect.BoolKind:
		ok, want = t.Kind == schema.KindBoolean, "BOOLEAN"
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		ok, want = t.Kind == schema.KindInt, "INT"
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		ok, want = t.Kind == schema.KindBigint, "BIGINT"
	case protoreflect.FloatKind:
		ok, want = t.Kind == schema.KindFloat, "FLOAT"
	case protoreflect.DoubleKind:
		ok, want = t.Kind == schema.KindDouble, "DOUBLE"
	case protoreflect.StringKind:
		ok, want = t.IsString(), "STRING"
	case protoreflect.BytesKind:
		ok, want = t.IsBinary(), "BYTES"
	case protoreflect.EnumKind:
		ok, want = t.IsString() || isInteger(t.Kind), "STRING or an integer type"
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if t.Kind != schema.KindRow {
			return mismatch(path, t, fd, "ROW")
		}
		return checkRow(t, fd.Message(), path)
	}
	if !ok {
		return mismatch(path, t, fd, want)
	}
	return nil
}

func isInteger(k schema.Kind) bool {
	return k == schema.KindTinyint || k == schema.KindSmallint || k == schema.KindInt || k == schema.KindBigint
}

func mismatch(path string, t *schema.Type, fd protoreflect.FieldDescriptor, want string) error {
	kind := fd.Kind().String()
	switch {
	case fd.IsMap():
		kind = "map"
	case fd.IsList() && !strings.HasSuffix(path, "[]"):
		kind = "repeated " + kind
	}
	return fmt.Errorf("column %s: type %s does not match the field's type %s (want %s)", path, t, kind, want)
}

// Decode parses one message into a row. With ignore-parse-errors, a
// record that does not parse gives a nil row and a nil error (skipped).
func (f *Format) Decode(data []byte) (map[string]any, error) {
	m := dynamicpb.NewMessage(f.md)
	if err := proto.Unmarshal(data, m); err != nil {
		if f.opts.IgnoreParseErrors {
			return nil, nil
		}
		return nil, fmt.Errorf("format protobuf: message %s: %w", f.md.FullName(), err)
	}
	row := f.readRow(f.row, m)
	out, err := schema.CoerceRow(f.row, row, "")
	if err != nil {
		return nil, fmt.Errorf("format protobuf: message %s: %w", f.md.FullName(), err)
	}
	return out, nil
}

func (f *Format) readRow(t *schema.Type, m protoreflect.Message) map[string]any {
	out := make(map[string]any, len(t.Fields))
	fields := m.Descriptor().Fields()
	for _, c := range t.Fields {
		fd := fields.ByName(protoreflect.Name(c.Name))
		switch {
		case fd.IsList():
			l := m.Get(fd).List()
			list := make([]any, l.Len())
			for i := range list {
				list[i] = f.readValue(c.Type.Elem, fd, l.Get(i))
			}
			out[c.Name] = list
		case fd.IsMap():
			mp := m.Get(fd).Map()
			vals := make(map[string]any, mp.Len())
			mp.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
				vals[k.String()] = f.readValue(c.Type.Value, fd.MapValue(), v)
				return true
			})
			out[c.Name] = vals
		case fd.HasPresence() && !m.Has(fd) && !f.opts.ReadDefaultValues:
			out[c.Name] = nil
		default:
			out[c.Name] = f.readValue(c.Type, fd, m.Get(fd))
		}
	}
	return out
}

// readValue converts one value of fd (an element of a list or a map value)
// to the Go value of t.
func (f *Format) readValue(t *schema.Type, fd protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return v.Bool()
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return v.Int()
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return int64(int32(uint32(v.Uint()))) // Java's int
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return int64(v.Uint()) // Java's long
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return v.Float()
	case protoreflect.StringKind:
		return v.String()
	case protoreflect.BytesKind:
		return append([]byte{}, v.Bytes()...)
	case protoreflect.EnumKind:
		n := v.Enum()
		if isInteger(t.Kind) {
			return int64(n)
		}
		if ev := fd.Enum().Values().ByNumber(n); ev != nil {
			return string(ev.Name())
		}
		return strconv.Itoa(int(n))
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return f.readRow(t, v.Message())
	}
	return nil
}

// Encode writes a row as one message (deterministic: map entries sorted).
func (f *Format) Encode(row map[string]any) ([]byte, error) {
	r, err := schema.CoerceRow(f.row, row, "")
	if err != nil {
		return nil, fmt.Errorf("format protobuf: %w", err)
	}
	m := dynamicpb.NewMessage(f.md)
	if err := f.writeRow(f.row, r, m, ""); err != nil {
		return nil, fmt.Errorf("format protobuf: message %s: %w", f.md.FullName(), err)
	}
	out, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("format protobuf: message %s: %w", f.md.FullName(), err)
	}
	return out, nil
}

func (f *Format) writeRow(t *schema.Type, row map[string]any, m protoreflect.Message, path string) error {
	fields := m.Descriptor().Fields()
	for _, c := range t.Fields {
		v := row[c.Name]
		if v == nil {
			continue
		}
		fd := fields.ByName(protoreflect.Name(c.Name))
		p := schema.FieldPath(path, c.Name)
		switch {
		case fd.IsList():
			l := m.Mutable(fd).List()
			for i, e := range v.([]any) {
				pv, err := f.writeValue(c.Type.Elem, fd, e, l.NewElement, schema.ElementPath(p, i))
				if err != nil {
					return err
				}
				l.Append(pv)
			}
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for k, e := range v.(map[string]any) {
				key, err := mapKey(fd.MapKey(), k, p)
				if err != nil {
					return err
				}
				pv, err := f.writeValue(c.Type.Value, fd.MapValue(), e, mp.NewValue, p+"."+k)
				if err != nil {
					return err
				}
				mp.Set(key, pv)
			}
		default:
			pv, err := f.writeValue(c.Type, fd, v, func() protoreflect.Value { return m.NewField(fd) }, p)
			if err != nil {
				return err
			}
			m.Set(fd, pv)
		}
	}
	return nil
}

// writeValue converts a row value (nil for a NULL element) to a value of
// fd; fresh makes an empty message value.
func (f *Format) writeValue(t *schema.Type, fd protoreflect.FieldDescriptor, v any, fresh func() protoreflect.Value, path string) (protoreflect.Value, error) {
	if v == nil {
		switch fd.Kind() {
		case protoreflect.StringKind:
			return protoreflect.ValueOfString(f.opts.NullStringLiteral), nil
		case protoreflect.MessageKind, protoreflect.GroupKind:
			return fresh(), nil
		}
		return fd.Default(), nil
	}
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(v.(bool)), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(v.(int64))), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(int32(v.(int64)))), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(v.(int64)), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(v.(int64))), nil
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(v.(float64))), nil
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(v.(float64)), nil
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(v.(string)), nil
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(v.([]byte)), nil
	case protoreflect.EnumKind:
		if n, ok := v.(int64); ok {
			if n < math.MinInt32 || n > math.MaxInt32 {
				return protoreflect.Value{}, fmt.Errorf("column %s: %d is not an enum number", path, n)
			}
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber(n)), nil
		}
		name := v.(string)
		ev := fd.Enum().Values().ByName(protoreflect.Name(name))
		if ev == nil {
			return protoreflect.Value{}, fmt.Errorf("column %s: %q is not a value of enum %s", path, name, fd.Enum().FullName())
		}
		return protoreflect.ValueOfEnum(ev.Number()), nil
	case protoreflect.MessageKind, protoreflect.GroupKind:
		pv := fresh()
		if err := f.writeRow(t, v.(map[string]any), pv.Message(), path); err != nil {
			return protoreflect.Value{}, err
		}
		return pv, nil
	}
	return protoreflect.Value{}, fmt.Errorf("column %s: field kind %s is not supported", path, fd.Kind())
}

// mapKey parses a MAP's key (a string in rows) as the proto map's key kind.
func mapKey(fd protoreflect.FieldDescriptor, k, path string) (protoreflect.MapKey, error) {
	bad := func(err error) (protoreflect.MapKey, error) {
		return protoreflect.MapKey{}, fmt.Errorf("column %s: map key %q: %w", path, k, err)
	}
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(k).MapKey(), nil
	case protoreflect.BoolKind:
		b, err := strconv.ParseBool(k)
		if err != nil {
			return bad(err)
		}
		return protoreflect.ValueOfBool(b).MapKey(), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := strconv.ParseInt(k, 10, 32)
		if err != nil {
			return bad(err)
		}
		return protoreflect.ValueOfInt32(int32(n)).MapKey(), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, err := strconv.ParseInt(k, 10, 32)
		if err != nil {
			return bad(err)
		}
		return protoreflect.ValueOfUint32(uint32(int32(n))).MapKey(), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return bad(err)
		}
		return protoreflect.ValueOfInt64(n).MapKey(), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return bad(err)
		}
		return protoreflect.ValueOfUint64(uint64(n)).MapKey(), nil
	}
	return bad(fmt.Errorf("key kind %s", fd.Kind()))
}
