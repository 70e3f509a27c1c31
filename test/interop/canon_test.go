package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/schema"
)

// Rows are compared in one canonical form, built from Flink's JSON lines
// (interop/flink's Json.java) and from connectd's rows (a kafka_source's
// messages as the file output writes them) by the column's type:
//
//	NULL                       nil
//	BOOLEAN                    bool
//	other scalars              string: integers in decimal; FLOAT and DOUBLE as
//	                           Go's shortest text at their width (NaN, +Inf,
//	                           -Inf); DECIMAL plain with the scale's digits;
//	                           DATE 2006-01-02; TIME 15:04:05.000000000;
//	                           TIMESTAMP 2006-01-02T15:04:05.000000000, and
//	                           TIMESTAMP_LTZ the same in UTC with a Z; bytes
//	                           in standard base64
//	ARRAY, ROW                 []any (a ROW's fields in declaration order)
//	MAP                        map[string]any
//
// Nothing is rounded or re-scaled on the way: a DECIMAL with other fraction
// digits, a timestamp with another precision, a FLOAT that is not a float32
// value all show as a difference.

const (
	canonTime      = "15:04:05.000000000"
	canonTimestamp = "2006-01-02T15:04:05.000000000"
)

// decodeJSON parses one JSON value with numbers kept as text.
func decodeJSON(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// canonFloat is f as Go's shortest text at the type's width.
func canonFloat(f float64, k schema.Kind) string {
	if k == schema.KindFloat {
		return strconv.FormatFloat(f, 'g', -1, 32)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// fromFlink returns the canonical form of v, a value of type t in the JSON
// form of Json.java.
func fromFlink(t *schema.Type, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	bad := func() error { return fmt.Errorf("Flink printed %s for a %s", show(v), t) }
	switch t.Kind {
	case schema.KindBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt, schema.KindBigint:
		if n, ok := v.(json.Number); ok {
			if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
				return string(n), nil
			}
		}
	case schema.KindFloat, schema.KindDouble:
		// Java's Float.toString / Double.toString: Go parses those forms
		// (1.0E10, NaN, Infinity) to the same bits.
		if s, ok := v.(string); ok {
			bits := 64
			if t.Kind == schema.KindFloat {
				bits = 32
			}
			if f, err := strconv.ParseFloat(s, bits); err == nil {
				return canonFloat(f, t.Kind), nil
			}
		}
	case schema.KindArray:
		if list, ok := v.([]any); ok {
			out := make([]any, len(list))
			for i, e := range list {
				c, err := fromFlink(t.Elem, e)
				if err != nil {
					return nil, fmt.Errorf("[%d]: %w", i, err)
				}
				out[i] = c
			}
			return out, nil
		}
	case schema.KindMap:
		if pairs, ok := v.([]any); ok {
			out := make(map[string]any, len(pairs))
			for _, p := range pairs {
				kv, ok := p.([]any)
				if !ok || len(kv) != 2 {
					return nil, bad()
				}
				k, err := fromFlink(t.Key, kv[0])
				if err != nil {
					return nil, err
				}
				ks, ok := k.(string)
				if !ok {
					return nil, fmt.Errorf("map key %s: connectd's MAP keys are character strings", show(kv[0]))
				}
				if out[ks], err = fromFlink(t.Value, kv[1]); err != nil {
					return nil, fmt.Errorf("[%s]: %w", ks, err)
				}
			}
			return out, nil
		}
	case schema.KindRow:
		if list, ok := v.([]any); ok && len(list) == len(t.Fields) {
			out := make([]any, len(list))
			for i, f := range t.Fields {
				c, err := fromFlink(f.Type, list[i])
				if err != nil {
					return nil, fmt.Errorf(".%s: %w", f.Name, err)
				}
				out[i] = c
			}
			return out, nil
		}
	default:
		// Character strings, DECIMAL, DATE, TIME, TIMESTAMP, TIMESTAMP_LTZ
		// and bytes: Json.java prints them in the canonical text already.
		if s, ok := v.(string); ok {
			return s, nil
		}
	}
	return nil, bad()
}

// fromConnectd returns the canonical form of v, a value of type t in a row
// of a connectd message written as JSON (schema's row values, marshalled by
// Benthos: time.Time as RFC 3339, []byte as base64, DECIMAL's json.Number
// as a number).
func fromConnectd(t *schema.Type, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	bad := func() error { return fmt.Errorf("connectd wrote %s for a %s", show(v), t) }
	timeOf := func() (time.Time, error) {
		s, ok := v.(string)
		if !ok {
			return time.Time{}, bad()
		}
		ts, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || ts.Location() != time.UTC {
			return time.Time{}, bad()
		}
		return ts, nil
	}
	switch t.Kind {
	case schema.KindChar, schema.KindVarchar:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case schema.KindBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt, schema.KindBigint:
		if n, ok := v.(json.Number); ok {
			if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
				return string(n), nil
			}
		}
	case schema.KindFloat, schema.KindDouble:
		if n, ok := v.(json.Number); ok {
			f, err := strconv.ParseFloat(string(n), 64)
			if err != nil {
				return nil, bad()
			}
			if t.Kind == schema.KindFloat && float64(float32(f)) != f {
				return nil, fmt.Errorf("connectd wrote %s for a FLOAT, which is not a float32 value", n)
			}
			return canonFloat(f, t.Kind), nil
		}
	case schema.KindDecimal:
		if n, ok := v.(json.Number); ok {
			return string(n), nil
		}
	case schema.KindDate:
		ts, err := timeOf()
		if err != nil {
			return nil, err
		}
		if ts.Hour() != 0 || ts.Minute() != 0 || ts.Second() != 0 || ts.Nanosecond() != 0 {
			return nil, fmt.Errorf("connectd's DATE %s is not at midnight UTC", show(v))
		}
		return ts.Format(time.DateOnly), nil
	case schema.KindTime:
		ts, err := timeOf()
		if err != nil {
			return nil, err
		}
		if y, m, d := ts.Date(); y != 1970 || m != 1 || d != 1 {
			return nil, fmt.Errorf("connectd's TIME %s is not on 1970-01-01", show(v))
		}
		return ts.Format(canonTime), nil
	case schema.KindTimestamp, schema.KindTimestampLTZ:
		ts, err := timeOf()
		if err != nil {
			return nil, err
		}
		if t.Kind == schema.KindTimestampLTZ {
			return ts.Format(canonTimestamp) + "Z", nil
		}
		return ts.Format(canonTimestamp), nil
	case schema.KindBinary, schema.KindVarbinary:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case schema.KindArray:
		if list, ok := v.([]any); ok {
			out := make([]any, len(list))
			for i, e := range list {
				c, err := fromConnectd(t.Elem, e)
				if err != nil {
					return nil, fmt.Errorf("[%d]: %w", i, err)
				}
				out[i] = c
			}
			return out, nil
		}
	case schema.KindMap:
		if m, ok := v.(map[string]any); ok {
			out := make(map[string]any, len(m))
			for k, e := range m {
				c, err := fromConnectd(t.Value, e)
				if err != nil {
					return nil, fmt.Errorf("[%s]: %w", k, err)
				}
				out[k] = c
			}
			return out, nil
		}
	case schema.KindRow:
		if m, ok := v.(map[string]any); ok {
			return rowFromConnectd(t, m)
		}
	}
	return nil, bad()
}

// rowFromConnectd is the canonical form of a ROW, in field order; a field
// the type does not declare is an error.
func rowFromConnectd(t *schema.Type, m map[string]any) ([]any, error) {
	out := make([]any, len(t.Fields))
	seen := 0
	for i, f := range t.Fields {
		e, ok := m[f.Name]
		if ok {
			seen++
		}
		c, err := fromConnectd(f.Type, e)
		if err != nil {
			return nil, fmt.Errorf(".%s: %w", f.Name, err)
		}
		out[i] = c
	}
	if seen != len(m) {
		return nil, fmt.Errorf("connectd's row %s has fields the type %s does not declare", show(m), t)
	}
	return out, nil
}

// toConnectdInput turns a canonical value of type t into the JSON value a
// connectd sink is given for it: the forms schema.Coerce reads (DECIMAL and
// FLOAT/DOUBLE as text, times in SQL text, bytes in base64, ROW and MAP as
// objects).
func toConnectdInput(t *schema.Type, c any) any {
	if c == nil {
		return nil
	}
	switch t.Kind {
	case schema.KindFloat, schema.KindDouble:
		s := c.(string)
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return json.Number(s)
		}
		return s
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt, schema.KindBigint:
		return json.Number(c.(string))
	case schema.KindTimestamp:
		return strings.Replace(c.(string), "T", " ", 1)
	case schema.KindArray:
		list := c.([]any)
		out := make([]any, len(list))
		for i, e := range list {
			out[i] = toConnectdInput(t.Elem, e)
		}
		return out
	case schema.KindMap:
		m := c.(map[string]any)
		out := make(map[string]any, len(m))
		for k, e := range m {
			out[k] = toConnectdInput(t.Value, e)
		}
		return out
	case schema.KindRow:
		list := c.([]any)
		out := make(map[string]any, len(list))
		for i, f := range t.Fields {
			out[f.Name] = toConnectdInput(f.Type, list[i])
		}
		return out
	}
	return c
}

// show is v as compact JSON, for messages.
func show(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return strings.TrimSpace(b.String())
}
