package schema

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrNotNull is wrapped by errors for a NULL in a NOT NULL column.
var ErrNotNull = errors.New("NULL in a NOT NULL column")

// Coerce returns v as the Go value that rows of type t hold (see the package
// documentation), converting the usual alternatives: numbers as json.Number,
// float64 or any integer type, timestamps as strings (RFC 3339 or SQL
// `2006-01-02 15:04:05.999`), bytes as base64 strings. path names the value
// in errors. Fields of a ROW that the type does not declare are dropped.
func Coerce(t *Type, v any, path string) (any, error) {
	if v == nil {
		if t.NotNull {
			return nil, fmt.Errorf("%s: %w", path, ErrNotNull)
		}
		return nil, nil
	}
	out, err := coerce(t, v, path)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// coerce converts a non-nil v. A value that already has the row type is
// returned as is, in its interface: boxing it again would allocate. Paths of
// array elements, map entries and ROW fields are built only for an error.
func coerce(t *Type, v any, path string) (any, error) {
	bad := func() error {
		return fmt.Errorf("%s: cannot use %T value %s as %s", path, v, clip(v), t)
	}
	switch t.Kind {
	case KindChar, KindVarchar:
		switch x := v.(type) {
		case string:
			return v, nil
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
			return v, nil
		case string:
			if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
				return b, nil
			}
		}
	case KindTinyint, KindSmallint, KindInt, KindBigint:
		if n, ok := v.(int64); ok && IntInRange(t.Kind, n) {
			return v, nil
		}
		n, ok := toInt64(v)
		if !ok {
			return nil, bad()
		}
		if err := CheckIntRange(t.Kind, n); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return n, nil
	case KindFloat, KindDouble:
		if x, ok := v.(float64); ok && (t.Kind == KindDouble || float64(float32(x)) == x) {
			return v, nil
		}
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
			if CanonicalDecimal(string(x), t.Precision, t.Scale) {
				return v, nil
			}
			s = string(x)
		case string:
			if CanonicalDecimal(x, t.Precision, t.Scale) {
				return json.Number(x), nil
			}
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
			// == on time.Time compares the representation (location and
			// monotonic reading included): equal means the same value.
			if d := time.Date(x.Year(), x.Month(), x.Day(), 0, 0, 0, 0, time.UTC); d != x {
				return d, nil
			}
			return v, nil
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
			if d := TruncateTime(x, t.Precision); d != x {
				return d, nil
			}
			return v, nil
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
			if d := TruncateTimestamp(x, t.Precision); d != x {
				return d, nil
			}
			return v, nil
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
			return v, nil
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
			if out[i], err = Coerce(t.Elem, e, path); err != nil {
				_, err = Coerce(t.Elem, e, ElementPath(path, i))
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
		for k, e := range m {
			var err error
			if out[k], err = Coerce(t.Value, e, path); err != nil {
				// The first error in key order, with its entry's path.
				for _, k := range sortedKeys(m) {
					if _, err := Coerce(t.Value, m[k], path+"."+k); err != nil {
						return nil, err
					}
				}
				return nil, err
			}
		}
		return out, nil
	case KindRow:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, bad()
		}
		return CoerceRow(t, m, path)
	}
	return nil, bad()
}

// ElementPath is the path of element i of the array at path: `path[i]`.
func ElementPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// FieldPath is the path of field name of the ROW at path: `path.name`, or
// name at the top level (path "").
func FieldPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// IntInRange reports whether n fits the integer kind (CheckIntRange without
// the error).
func IntInRange(k Kind, n int64) bool {
	switch k {
	case KindTinyint:
		return n >= math.MinInt8 && n <= math.MaxInt8
	case KindSmallint:
		return n >= math.MinInt16 && n <= math.MaxInt16
	case KindInt:
		return n >= math.MinInt32 && n <= math.MaxInt32
	}
	return true
}

// CanonicalDecimal reports whether s is already the form ParseDecimal
// returns for DECIMAL(precision, scale): an optional '-' (not on zero), the
// integer digits without leading zeros ("0" when none), and exactly scale
// fraction digits after a '.' (no '.' when scale is 0), fitting precision.
func CanonicalDecimal(s string, precision, scale int) bool {
	body := s
	if len(body) > 0 && body[0] == '-' {
		body = body[1:]
	}
	n := len(body) - scale // integer digits, with the '.' when scale > 0
	if scale > 0 {
		n--
		if n < 1 || body[n] != '.' {
			return false
		}
	} else if n < 1 {
		return false
	}
	zero := true
	for i := 0; i < len(body); i++ {
		if i == n {
			continue // the '.'
		}
		c := body[i]
		if c < '0' || c > '9' {
			return false
		}
		if c != '0' {
			zero = false
		}
	}
	if body[0] == '0' && n > 1 { // leading zero
		return false
	}
	digits := n
	if n == 1 && body[0] == '0' {
		digits = 0
	}
	if digits+scale > precision {
		return false
	}
	return !(zero && len(body) != len(s)) // no "-0.00"
}

// CoerceRow coerces the fields of a ROW type from m; absent fields are NULL.
// path prefixes field names in errors ("" at the top level).
func CoerceRow(t *Type, m map[string]any, path string) (map[string]any, error) {
	out := make(map[string]any, len(t.Fields))
	for _, f := range t.Fields {
		v, err := Coerce(f.Type, m[f.Name], path)
		if err != nil {
			_, err = Coerce(f.Type, m[f.Name], FieldPath(path, f.Name))
			return nil, err
		}
		out[f.Name] = v
	}
	return out, nil
}

func clip(v any) string {
	s := fmt.Sprintf("%v", v)
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.Quote(s)
}

func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint64:
		return int64(x), x <= math.MaxInt64
	case uint32:
		return int64(x), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return int64(x), true
		}
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 64)
		return n, err == nil
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n, err == nil
	}
	return 0, false
}

func toFloat64(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case json.Number:
		f, err := ParseFloat(string(x))
		return f, err == nil
	case string:
		f, err := ParseFloat(x)
		return f, err == nil
	}
	if n, ok := toInt64(v); ok {
		return float64(n), true
	}
	return 0, false
}

// ParseFloat parses a float as Java's Double.parseDouble accepts the usual
// forms, including NaN, Infinity and -Infinity.
func ParseFloat(s string) (float64, error) {
	switch s = strings.TrimSpace(s); s {
	case "NaN":
		return math.NaN(), nil
	case "Infinity", "+Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	if strings.ContainsAny(s, "xXpP_nN") { // no hex floats, no inf/nan spellings of Go
		return 0, fmt.Errorf("invalid number %q", s)
	}
	return strconv.ParseFloat(s, 64)
}

// FormatFloat formats a FLOAT (bits 32) or DOUBLE (bits 64) value in the
// shortest form that parses back to it; NaN and infinities as Java does.
func FormatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// AppendFloat appends FormatFloat's text of a FLOAT or DOUBLE value of kind
// k; a FLOAT is rounded to float32 first, as Coerce does.
func AppendFloat(buf []byte, f float64, k Kind) []byte {
	bits := 64
	if k == KindFloat {
		f, bits = float64(float32(f)), 32
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(buf, FormatFloat(f, bits)...)
	}
	return strconv.AppendFloat(buf, f, 'g', -1, bits)
}

// CheckIntRange reports whether n fits the integer kind.
func CheckIntRange(k Kind, n int64) error {
	var lo, hi int64
	switch k {
	case KindTinyint:
		lo, hi = math.MinInt8, math.MaxInt8
	case KindSmallint:
		lo, hi = math.MinInt16, math.MaxInt16
	case KindInt:
		lo, hi = math.MinInt32, math.MaxInt32
	default:
		return nil
	}
	if n < lo || n > hi {
		return fmt.Errorf("%d is out of range for %s (%d to %d)", n, (&Type{Kind: k}).String(), lo, hi)
	}
	return nil
}

var ten = big.NewInt(10)

// ParseDecimal parses a decimal number (plain or with an exponent) into a
// DECIMAL(precision, scale) value: rounded half-up to scale fraction digits,
// as Flink's DecimalData.fromBigDecimal, and an error if more than
// precision digits remain. The result is plain notation with exactly scale
// fraction digits.
func ParseDecimal(s string, precision, scale int) (json.Number, error) {
	s = strings.TrimSpace(s)
	if d, ok := plainDecimal(s, precision, scale); ok {
		return d, nil
	}
	mant, exp, err := splitDecimal(s)
	if err != nil {
		return "", err
	}
	// value = mant * 10^exp; scaled = value * 10^scale
	unscaled, ok := new(big.Int).SetString(mant, 10)
	if !ok {
		return "", fmt.Errorf("invalid decimal %q", s)
	}
	shift := exp + scale
	if shift >= 0 {
		unscaled.Mul(unscaled, new(big.Int).Exp(ten, big.NewInt(int64(shift)), nil))
	} else {
		div := new(big.Int).Exp(ten, big.NewInt(int64(-shift)), nil)
		q, r := new(big.Int).QuoRem(unscaled, div, new(big.Int))
		r.Abs(r).Mul(r, big.NewInt(2))
		if r.Cmp(div) >= 0 { // half up, away from zero
			if unscaled.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
		unscaled = q
	}
	digits := unscaled.String()
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	if len(digits) > precision && digits != "0" {
		return "", fmt.Errorf("decimal %s does not fit DECIMAL(%d, %d)", s, precision, scale)
	}
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	out := digits
	if scale > 0 {
		out = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		out = "-" + out
	}
	return json.Number(out), nil
}

// plainDecimal is the fast path of ParseDecimal for plain literals with at
// most scale fraction digits: no rounding, no big numbers.
func plainDecimal(s string, precision, scale int) (json.Number, bool) {
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimPrefix(s, "-")
	intPart, frac, hasPoint := strings.Cut(body, ".")
	if len(frac) > scale || intPart == "" && frac == "" || len(body) > 40 {
		return "", false
	}
	for i := 0; i < len(body); i++ {
		if c := body[i]; (c < '0' || c > '9') && c != '.' {
			return "", false
		}
	}
	if hasPoint && strings.Contains(frac, ".") {
		return "", false
	}
	intPart = strings.TrimLeft(intPart, "0")
	if len(intPart)+scale > precision {
		return "", false // let the slow path report the overflow
	}
	if intPart == "" {
		intPart = "0"
	}
	var b strings.Builder
	b.Grow(len(intPart) + scale + 2)
	zero := intPart == "0" && strings.Trim(frac, "0") == ""
	if neg && !zero {
		b.WriteByte('-')
	}
	b.WriteString(intPart)
	if scale > 0 {
		b.WriteByte('.')
		b.WriteString(frac)
		for i := len(frac); i < scale; i++ {
			b.WriteByte('0')
		}
	}
	return json.Number(b.String()), true
}

// splitDecimal returns the digits (with sign) and the power of ten of a
// decimal literal. Exponents are bounded so that a hostile input cannot
// make a huge number.
func splitDecimal(s string) (string, int, error) {
	bad := fmt.Errorf("invalid decimal %q", s)
	if s == "" {
		return "", 0, bad
	}
	num, expText := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		num, expText = s[:i], s[i+1:]
	}
	exp := 0
	if expText != "" {
		e, err := strconv.Atoi(expText)
		if err != nil || e > 1000 || e < -1000 {
			return "", 0, bad
		}
		exp = e
	}
	sign := ""
	switch {
	case strings.HasPrefix(num, "-"):
		sign, num = "-", num[1:]
	case strings.HasPrefix(num, "+"):
		num = num[1:]
	}
	intPart, frac, _ := strings.Cut(num, ".")
	if intPart == "" && frac == "" {
		return "", 0, bad
	}
	for _, part := range []string{intPart, frac} {
		for _, r := range part {
			if r < '0' || r > '9' {
				return "", 0, bad
			}
		}
	}
	if len(intPart)+len(frac) > 1000 {
		return "", 0, bad
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		digits = "0"
	}
	return sign + digits, exp - len(frac), nil
}

// TruncateTimestamp returns ts in UTC truncated to precision fraction digits.
func TruncateTimestamp(ts time.Time, precision int) time.Time {
	ts = ts.UTC()
	return ts.Truncate(time.Duration(math.Pow10(9 - precision)))
}

// TruncateTime returns the time of day of ts on 1970-01-01 UTC, truncated to
// precision fraction digits.
func TruncateTime(ts time.Time, precision int) time.Time {
	t := time.Date(1970, 1, 1, ts.Hour(), ts.Minute(), ts.Second(), ts.Nanosecond(), time.UTC)
	return t.Truncate(time.Duration(math.Pow10(9 - precision)))
}

// ParseDate parses `2006-01-02` into midnight UTC.
func ParseDate(s string) (time.Time, error) {
	return time.Parse("2006-01-02", strings.TrimSpace(s))
}

// FormatDate formats a DATE value as `2006-01-02`.
func FormatDate(d time.Time) string { return d.Format("2006-01-02") }

// AppendDate appends FormatDate(d) to buf.
func AppendDate(buf []byte, d time.Time) []byte {
	y, m, day := d.Date()
	if y < 0 || y > 9999 {
		return d.AppendFormat(buf, "2006-01-02")
	}
	return appendYMD(buf, y, int(m), day)
}

func appendYMD(buf []byte, y, m, d int) []byte {
	return append(buf, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
}

// appendClock appends `15:04:05` and the fraction of `.999999999`: no
// trailing zeros, no '.' when zero.
func appendClock(buf []byte, h, m, s, ns int) []byte {
	buf = append(buf, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10), ':',
		byte('0'+s/10), byte('0'+s%10))
	if ns == 0 {
		return buf
	}
	var frac [9]byte
	for i := 8; i >= 0; i-- {
		frac[i] = byte('0' + ns%10)
		ns /= 10
	}
	n := 9
	for frac[n-1] == '0' {
		n--
	}
	buf = append(buf, '.')
	return append(buf, frac[:n]...)
}

// ParseTime parses `15:04[:05[.fraction]]` into a TIME value.
func ParseTime(s string, precision int) (time.Time, error) {
	s = strings.TrimSpace(s)
	t, err := time.Parse("15:04:05.999999999", s)
	if err != nil {
		var err2 error
		if t, err2 = time.Parse("15:04", s); err2 != nil {
			return time.Time{}, err
		}
	}
	return TruncateTime(t, precision), nil
}

// FormatTime formats a TIME value as `15:04:05[.fraction]`, fraction digits
// without trailing zeros (Flink's SQL_TIME_FORMAT).
func FormatTime(t time.Time) string { return t.Format("15:04:05.999999999") }

// AppendTime appends FormatTime(t) to buf.
func AppendTime(buf []byte, t time.Time) []byte {
	h, m, s := t.Clock()
	return appendClock(buf, h, m, s, t.Nanosecond())
}

// TimestampStyle is the text form of timestamps: Flink's
// `timestamp-format.standard`.
type TimestampStyle int

// Timestamp styles.
const (
	// TimestampSQL is `2006-01-02 15:04:05.999`, and `...Z` for TIMESTAMP_LTZ.
	TimestampSQL TimestampStyle = iota
	// TimestampISO8601 is `2006-01-02T15:04:05.999`, and `...Z` for TIMESTAMP_LTZ.
	TimestampISO8601
)

// ParseTimestampStyle reads the option value SQL or ISO-8601.
func ParseTimestampStyle(s string) (TimestampStyle, error) {
	switch s {
	case "", "SQL":
		return TimestampSQL, nil
	case "ISO-8601":
		return TimestampISO8601, nil
	}
	return 0, fmt.Errorf("unknown timestamp format standard %q (want SQL or ISO-8601)", s)
}

func (s TimestampStyle) layout(ltz bool) string {
	l := "2006-01-02 15:04:05.999999999"
	if s == TimestampISO8601 {
		l = "2006-01-02T15:04:05.999999999"
	}
	if ltz {
		l += "Z"
	}
	return l
}

// FormatTimestamp formats a timestamp in the style, fraction digits without
// trailing zeros; ltz appends the `Z` of TIMESTAMP_LTZ.
func (s TimestampStyle) FormatTimestamp(ts time.Time, ltz bool) string {
	return ts.UTC().Format(s.layout(ltz))
}

// AppendTimestamp appends FormatTimestamp(ts, ltz) to buf.
func (s TimestampStyle) AppendTimestamp(buf []byte, ts time.Time, ltz bool) []byte {
	ts = ts.UTC()
	y, mo, d := ts.Date()
	if y < 0 || y > 9999 {
		return ts.AppendFormat(buf, s.layout(ltz))
	}
	buf = appendYMD(buf, y, int(mo), d)
	if s == TimestampISO8601 {
		buf = append(buf, 'T')
	} else {
		buf = append(buf, ' ')
	}
	h, m, sec := ts.Clock()
	buf = appendClock(buf, h, m, sec, ts.Nanosecond())
	if ltz {
		buf = append(buf, 'Z')
	}
	return buf
}

// ParseTimestamp parses a timestamp in the style (seconds optional, 0 to 9
// fraction digits) and truncates it to precision.
func (s TimestampStyle) ParseTimestamp(text string, ltz bool, precision int) (time.Time, error) {
	text = strings.TrimSpace(text)
	ts, err := time.Parse(s.layout(ltz), text)
	if err != nil {
		short := strings.Replace(s.layout(ltz), ":05.999999999", "", 1)
		var err2 error
		if ts, err2 = time.Parse(short, text); err2 != nil {
			return time.Time{}, fmt.Errorf("timestamp %q: want the %s form %s", text, s, s.example(ltz))
		}
	}
	return TruncateTimestamp(ts, precision), nil
}

func (s TimestampStyle) String() string {
	if s == TimestampISO8601 {
		return "ISO-8601"
	}
	return "SQL"
}

func (s TimestampStyle) example(ltz bool) string {
	return s.FormatTimestamp(time.Date(2026, 12, 2, 12, 13, 14, 123000000, time.UTC), ltz)
}

// parseAnyTimestamp accepts RFC 3339 and both Flink styles, with or without
// a trailing Z.
func parseAnyTimestamp(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, style := range []TimestampStyle{TimestampSQL, TimestampISO8601} {
		for _, ltz := range []bool{false, true} {
			if t, err := style.ParseTimestamp(s, ltz, 9); err == nil {
				return t, nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("invalid timestamp %q", s)
}

// SortedMapKeys returns the keys of m in order, for deterministic encoding.
func SortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Equal reports whether two row values are the same: deep equality where
// NaN equals NaN and times are compared as instants.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || math.IsNaN(x) && math.IsNaN(y))
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case []byte:
		y, ok := b.([]byte)
		return ok && string(x) == string(y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
