// Package avro is Flink's `avro` format: Avro binary records without a
// header, with the writer schema derived from the table the way Flink's
// AvroSchemaConverter derives it (legacy timestamp mapping, Flink's
// default):
//
//	BOOLEAN                    boolean
//	TINYINT, SMALLINT, INT     int
//	BIGINT                     long
//	FLOAT, DOUBLE              float, double
//	CHAR, VARCHAR, STRING      string
//	BINARY, VARBINARY, BYTES   bytes
//	DECIMAL(p, s)              bytes, logicalType decimal(p, s)
//	DATE                       int, logicalType date
//	TIME(p), p <= 3            int, logicalType time-millis
//	TIMESTAMP(p), p <= 3       long, logicalType timestamp-millis
//	ARRAY<T>, MAP<STRING, T>   array, map
//	ROW<...>                   record named <parent>_<field>; the top record is
//	                           org.apache.flink.avro.generated.record
//
// A nullable type is the union ["null", T] and its field defaults to null.
// TIMESTAMP_LTZ, TIMESTAMP(p > 3) and TIME(p > 3) are refused, as Flink
// refuses them with the legacy mapping.
package avro

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"time"

	"github.com/linkedin/goavro/v2"

	"github.com/connectd/connectd/schema"
)

// MaxBlockCount bounds the items of one Avro array or map block that a
// decoder accepts. goavro allocates room for a block's declared count before
// reading it, and its default bound (2^31-1) lets a hostile record of a few
// bytes ask for gigabytes; init lowers goavro.MaxBlockCount to this value
// (it is process-wide, and only ever lowered).
const MaxBlockCount = 1 << 20

func init() {
	if goavro.MaxBlockCount > MaxBlockCount {
		goavro.MaxBlockCount = MaxBlockCount
	}
}

// RecordName is the name of the top record, as in Flink.
const RecordName = "org.apache.flink.avro.generated.record"

// Options are the avro format options; connectd has none yet (Flink's
// `avro.encoding` json and `avro.timestamp_mapping.legacy` false are not
// supported).
type Options struct{}

// ParseOptions reads Flink option values (keys without the `avro.` prefix).
func ParseOptions(opts map[string]string) (Options, error) {
	if err := schema.ValidateFormatOptions(schema.FormatAvro, opts); err != nil {
		return Options{}, err
	}
	return Options{}, nil
}

var avroName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Schema returns the Avro schema (JSON) of a ROW type, as Flink's
// AvroSchemaConverter.convertToSchema.
func Schema(row *schema.Type) (string, error) {
	return schemaJSON(row, RecordName)
}

// codecTopName names the top record in the schema given to goavro. goavro
// resolves a nested `"type": "record"` as a reference to a named type
// `record` of the enclosing namespace when one exists, which Flink's top
// name is; the binary encoding does not carry names, so the bytes are the
// same as with Flink's schema.
const codecTopName = RecordName + "_top"

func schemaJSON(row *schema.Type, topName string) (string, error) {
	s, err := convert(row, RecordName, "")
	if err != nil {
		return "", err
	}
	if m, ok := s.(map[string]any); ok {
		m["name"] = topName
	}
	b, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func convert(t *schema.Type, rowName, path string) (any, error) {
	var s any
	switch t.Kind {
	case schema.KindBoolean:
		s = "boolean"
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt:
		s = "int"
	case schema.KindBigint:
		s = "long"
	case schema.KindFloat:
		s = "float"
	case schema.KindDouble:
		s = "double"
	case schema.KindChar, schema.KindVarchar:
		s = "string"
	case schema.KindBinary, schema.KindVarbinary:
		s = "bytes"
	case schema.KindDecimal:
		s = map[string]any{"type": "bytes", "logicalType": "decimal", "precision": t.Precision, "scale": t.Scale}
	case schema.KindDate:
		s = map[string]any{"type": "int", "logicalType": "date"}
	case schema.KindTime:
		if t.Precision > 3 {
			return nil, fmt.Errorf("format avro: column %s: Avro does not support TIME with precision %d (at most 3)", path, t.Precision)
		}
		s = map[string]any{"type": "int", "logicalType": "time-millis"}
	case schema.KindTimestamp:
		if t.Precision > 3 {
			return nil, fmt.Errorf("format avro: column %s: Avro does not support TIMESTAMP with precision %d (at most 3 with Flink's legacy timestamp mapping)", path, t.Precision)
		}
		s = map[string]any{"type": "long", "logicalType": "timestamp-millis"}
	case schema.KindTimestampLTZ:
		return nil, fmt.Errorf("format avro: column %s: TIMESTAMP_LTZ is not supported with Flink's legacy timestamp mapping; use TIMESTAMP(3)", path)
	case schema.KindArray:
		items, err := convert(t.Elem, rowName, path+"[]")
		if err != nil {
			return nil, err
		}
		s = map[string]any{"type": "array", "items": items}
	case schema.KindMap:
		values, err := convert(t.Value, rowName, path+".value")
		if err != nil {
			return nil, err
		}
		s = map[string]any{"type": "map", "values": values}
	case schema.KindRow:
		fields := make([]any, 0, len(t.Fields))
		for _, f := range t.Fields {
			fpath := f.Name
			if path != "" {
				fpath = path + "." + f.Name
			}
			if !avroName.MatchString(f.Name) {
				return nil, fmt.Errorf("format avro: column %s: %q is not a valid Avro field name ([A-Za-z_][A-Za-z0-9_]*)", fpath, f.Name)
			}
			ft, err := convert(f.Type, rowName+"_"+f.Name, fpath)
			if err != nil {
				return nil, err
			}
			field := map[string]any{"name": f.Name, "type": ft}
			if !f.Type.NotNull {
				field["default"] = nil
			}
			fields = append(fields, field)
		}
		s = map[string]any{"type": "record", "name": rowName, "fields": fields}
	default:
		return nil, fmt.Errorf("format avro: column %s: type %s is not supported", path, t)
	}
	if !t.NotNull {
		return []any{"null", s}, nil
	}
	return s, nil
}

// unionName is goavro's name of a union member of type t (not null).
func unionName(t *schema.Type, rowName string) string {
	switch t.Kind {
	case schema.KindBoolean:
		return "boolean"
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt:
		return "int"
	case schema.KindBigint:
		return "long"
	case schema.KindFloat:
		return "float"
	case schema.KindDouble:
		return "double"
	case schema.KindChar, schema.KindVarchar:
		return "string"
	case schema.KindBinary, schema.KindVarbinary:
		return "bytes"
	case schema.KindDecimal:
		return "bytes.decimal"
	case schema.KindDate:
		return "int.date"
	case schema.KindTime:
		return "int.time-millis"
	case schema.KindTimestamp:
		return "long.timestamp-millis"
	case schema.KindArray:
		return "array"
	case schema.KindMap:
		return "map"
	case schema.KindRow:
		return rowName
	}
	return ""
}

// Format decodes and encodes Avro binary records of a ROW type.
type Format struct {
	row    *schema.Type
	codec  *goavro.Codec
	schema string
}

// New returns the avro format for rows of type row (kind ROW).
func New(row *schema.Type, _ Options) (*Format, error) {
	if row.Kind != schema.KindRow {
		return nil, fmt.Errorf("format avro: want a ROW type, got %s", row)
	}
	s, err := Schema(row)
	if err != nil {
		return nil, err
	}
	cs, err := schemaJSON(row, codecTopName)
	if err != nil {
		return nil, err
	}
	codec, err := goavro.NewCodec(cs)
	if err != nil {
		return nil, fmt.Errorf("format avro: derived schema: %w", err)
	}
	return &Format{row: row, codec: codec, schema: s}, nil
}

// SchemaJSON returns the writer schema.
func (f *Format) SchemaJSON() string { return f.schema }

// Decode reads one Avro binary record (no header) into a row.
func (f *Format) Decode(data []byte) (row map[string]any, err error) {
	native, rest, err := f.codec.NativeFromBinary(data)
	if err != nil {
		return nil, fmt.Errorf("format avro: %w", err)
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("format avro: %d bytes after the record", len(rest))
	}
	v, err := fromNative(f.row, native, RecordName, "")
	if err != nil {
		return nil, fmt.Errorf("format avro: %w", err)
	}
	m, _ := v.(map[string]any)
	return m, nil
}

func fromNative(t *schema.Type, v any, rowName, path string) (any, error) {
	if v == nil {
		if t.NotNull {
			return nil, fmt.Errorf("field %s: %w", path, schema.ErrNotNull)
		}
		return nil, nil
	}
	if !t.NotNull {
		u, ok := v.(map[string]any)
		if !ok || len(u) != 1 {
			return nil, fmt.Errorf("field %s: malformed union %T", path, v)
		}
		v, ok = u[unionName(t, rowName)]
		if !ok {
			return nil, fmt.Errorf("field %s: union member is not %s", path, unionName(t, rowName))
		}
	}
	bad := func() error { return fmt.Errorf("field %s: unexpected Avro value %T for %s", path, v, t) }
	switch t.Kind {
	case schema.KindBoolean, schema.KindChar, schema.KindVarchar, schema.KindDouble:
		return v, nil
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt:
		n, ok := v.(int32)
		if !ok {
			return nil, bad()
		}
		if err := schema.CheckIntRange(t.Kind, int64(n)); err != nil {
			return nil, fmt.Errorf("field %s: %w", path, err)
		}
		return int64(n), nil
	case schema.KindBigint:
		n, ok := v.(int64)
		if !ok {
			return nil, bad()
		}
		return n, nil
	case schema.KindFloat:
		x, ok := v.(float32)
		if !ok {
			return nil, bad()
		}
		return float64(x), nil
	case schema.KindBinary, schema.KindVarbinary:
		b, ok := v.([]byte)
		if !ok {
			return nil, bad()
		}
		return append([]byte{}, b...), nil
	case schema.KindDecimal:
		r, ok := v.(*big.Rat)
		if !ok {
			return nil, bad()
		}
		d, err := schema.ParseDecimal(r.FloatString(t.Scale), t.Precision, t.Scale)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", path, err)
		}
		return d, nil
	case schema.KindDate:
		d, ok := v.(time.Time)
		if !ok {
			return nil, bad()
		}
		return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC), nil
	case schema.KindTime:
		d, ok := v.(time.Duration)
		if !ok {
			return nil, bad()
		}
		return schema.TruncateTime(time.Unix(0, 0).UTC().Add(d), t.Precision), nil
	case schema.KindTimestamp:
		ts, ok := v.(time.Time)
		if !ok {
			return nil, bad()
		}
		return schema.TruncateTimestamp(ts, t.Precision), nil
	// Arrays, maps and records are goavro's, made for this record alone:
	// they are converted in place.
	case schema.KindArray:
		list, ok := v.([]any)
		if !ok {
			return nil, bad()
		}
		for i, e := range list {
			var err error
			if list[i], err = fromNative(t.Elem, e, rowName, path); err != nil {
				return nil, fmt.Errorf("%w (element %d)", err, i)
			}
		}
		return list, nil
	case schema.KindMap:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, bad()
		}
		for k, e := range m {
			var err error
			if m[k], err = fromNative(t.Value, e, rowName, path); err != nil {
				return nil, fmt.Errorf("%w (key %q)", err, k)
			}
		}
		return m, nil
	case schema.KindRow:
		m, ok := v.(map[string]any)
		if !ok || len(m) != len(t.Fields) {
			return nil, bad()
		}
		for _, f := range t.Fields {
			fpath := f.Name
			if path != "" {
				fpath = path + "." + f.Name
			}
			e, ok := m[f.Name]
			if !ok {
				return nil, fmt.Errorf("field %s: missing from the Avro record", fpath)
			}
			var err error
			if m[f.Name], err = fromNative(f.Type, e, childRowName(rowName, f), fpath); err != nil {
				return nil, err
			}
		}
		return m, nil
	}
	return nil, bad()
}

// childRowName is the record name of field f's ROW type (or of the ROW
// inside its ARRAY or MAP) in a record named rowName, as convert names it;
// "" when f's type holds no ROW, which needs no name.
func childRowName(rowName string, f schema.Field) string {
	t := f.Type
	for t.Kind == schema.KindArray || t.Kind == schema.KindMap {
		if t.Kind == schema.KindArray {
			t = t.Elem
		} else {
			t = t.Value
		}
	}
	if t.Kind != schema.KindRow {
		return ""
	}
	return rowName + "_" + f.Name
}
