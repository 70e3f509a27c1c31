package schema

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// refCoerce is Coerce before values of the row's type were returned as is
// and paths built only on error (commit 99c0587): the reference that
// TestCoerceMatchesReference compares Coerce with.
var (
	RefCoerce    = refCoerce
	RefCoerceRow = refCoerceRow
)

func refCoerce(t *Type, v any, path string) (any, error) {
	if v == nil {
		if t.NotNull {
			return nil, fmt.Errorf("%s: %w", path, ErrNotNull)
		}
		return nil, nil
	}
	out, err := refCoerceValue(t, v, path)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func refCoerceValue(t *Type, v any, path string) (any, error) {
	bad := func() error {
		return fmt.Errorf("%s: cannot use %T value %s as %s", path, v, clip(v), t)
	}
	switch t.Kind {
	case KindChar, KindVarchar:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		case json.Number:
			return string(x), nil
		case bool:
			return strconv.FormatBool(x), nil
		case int64, int, int32, float64:
			return fmt.Sprint(x), nil
		}
	case KindBoolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
				return b, nil
			}
		}
	case KindTinyint, KindSmallint, KindInt, KindBigint:
		n, ok := toInt64(v)
		if !ok {
			return nil, bad()
		}
		if err := CheckIntRange(t.Kind, n); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return n, nil
	case KindFloat, KindDouble:
		f, ok := toFloat64(v)
		if !ok {
			return nil, bad()
		}
		if t.Kind == KindFloat {
			f = float64(float32(f))
		}
		return f, nil
	case KindDecimal:
		var s string
		switch x := v.(type) {
		case json.Number:
			s = string(x)
		case string:
			s = x
		case float64:
			s = strconv.FormatFloat(x, 'g', -1, 64)
		case float32:
			s = strconv.FormatFloat(float64(x), 'g', -1, 32)
		default:
			n, ok := toInt64(v)
			if !ok {
				return nil, bad()
			}
			s = strconv.FormatInt(n, 10)
		}
		d, err := ParseDecimal(s, t.Precision, t.Scale)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return d, nil
	case KindDate:
		switch x := v.(type) {
		case time.Time:
			return time.Date(x.Year(), x.Month(), x.Day(), 0, 0, 0, 0, time.UTC), nil
		case string:
			if d, err := ParseDate(x); err == nil {
				return d, nil
			}
			if ts, err := parseAnyTimestamp(x); err == nil {
				return time.Date(ts.Year(), ts.Month(), ts.Day(), 0, 0, 0, 0, time.UTC), nil
			}
		}
	case KindTime:
		switch x := v.(type) {
		case time.Time:
			return TruncateTime(x, t.Precision), nil
		case string:
			if d, err := ParseTime(x, t.Precision); err == nil {
				return d, nil
			}
			if ts, err := parseAnyTimestamp(x); err == nil {
				return TruncateTime(ts, t.Precision), nil
			}
		}
	case KindTimestamp, KindTimestampLTZ:
		switch x := v.(type) {
		case time.Time:
			return TruncateTimestamp(x, t.Precision), nil
		case string:
			if ts, err := parseAnyTimestamp(x); err == nil {
				return TruncateTimestamp(ts, t.Precision), nil
			}
		case json.Number, int64, int:
			if ms, ok := toInt64(x); ok { // epoch milliseconds
				return TruncateTimestamp(time.UnixMilli(ms), t.Precision), nil
			}
		}
	case KindBinary, KindVarbinary:
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			if b, err := base64.StdEncoding.DecodeString(x); err == nil {
				return b, nil
			}
		}
	case KindArray:
		list, ok := v.([]any)
		if !ok {
			return nil, bad()
		}
		out := make([]any, len(list))
		for i, e := range list {
			var err error
			if out[i], err = refCoerce(t.Elem, e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return nil, err
			}
		}
		return out, nil
	case KindMap:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, bad()
		}
		out := make(map[string]any, len(m))
		for _, k := range sortedKeys(m) {
			var err error
			if out[k], err = refCoerce(t.Value, m[k], path+"."+k); err != nil {
				return nil, err
			}
		}
		return out, nil
	case KindRow:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, bad()
		}
		return refCoerceRow(t, m, path)
	}
	return nil, bad()
}

// refCoerceRow coerces the fields of a ROW type from m; absent fields are NULL.
// path prefixes field names in errors ("" at the top level).
func refCoerceRow(t *Type, m map[string]any, path string) (map[string]any, error) {
	out := make(map[string]any, len(t.Fields))
	for _, f := range t.Fields {
		p := f.Name
		if path != "" {
			p = path + "." + f.Name
		}
		v, err := refCoerce(f.Type, m[f.Name], p)
		if err != nil {
			return nil, err
		}
		out[f.Name] = v
	}
	return out, nil
}
