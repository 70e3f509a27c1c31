package expr

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/javatime"
)

// The CEL functions sql_* that schema.TranslateSQL calls: Flink's SQL
// functions with Flink's semantics. Each takes dyn arguments and gives
// NULL when an argument it needs is NULL, or failed on a NULL operand
// upstream (CEL's "no such overload": `a + 1` with a NULL a), as a Flink
// function of NULL is NULL. Zone-dependent ones use the table's
// `table.local-time-zone` (Clock.Zone).

// Clock is the time zone and the clock of the zone-dependent functions.
type Clock struct {
	// Zone is `table.local-time-zone`; nil is UTC.
	Zone *time.Location
	// Now is the processing-time clock; nil is time.Now.
	Now func() time.Time
}

func (c Clock) zone() *time.Location {
	if c.Zone == nil {
		return time.UTC
	}
	return c.Zone
}

func (c Clock) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

// isNull reports whether v is NULL for a SQL function: null, or an error
// of an operator applied to a NULL.
func isNull(v ref.Val) bool {
	switch x := v.(type) {
	case types.Null:
		return true
	case *types.Err:
		return strings.HasPrefix(x.String(), "no such overload")
	}
	return false
}

// nullOrErr returns the value to give back when v is NULL or an error, and
// whether it is either.
func nullOrErr(vs ...ref.Val) (ref.Val, bool) {
	for _, v := range vs {
		if isNull(v) {
			return types.NullValue, true
		}
		if types.IsError(v) {
			return v, true
		}
	}
	return nil, false
}

func sqlErr(format string, a ...any) ref.Val { return types.NewErr(format, a...) }

// fn declares a function of n dyn arguments.
func fn(name string, n int, result *cel.Type, f func(args ...ref.Val) ref.Val) cel.EnvOption {
	argTypes := make([]*cel.Type, n)
	for i := range argTypes {
		argTypes[i] = cel.DynType
	}
	return cel.Function(name, cel.Overload(fmt.Sprintf("%s_%d", name, n), argTypes, result,
		cel.OverloadIsNonStrict(), cel.FunctionBinding(f)))
}

// strict is f called only when no argument is NULL or an error.
func strict(f func(args ...ref.Val) ref.Val) func(args ...ref.Val) ref.Val {
	return func(args ...ref.Val) ref.Val {
		if v, ok := nullOrErr(args...); ok {
			return v
		}
		return f(args...)
	}
}

func str(v ref.Val) (string, bool) {
	s, ok := v.(types.String)
	return string(s), ok
}

func toInt(v ref.Val) (int64, bool) {
	switch x := v.(type) {
	case types.Int:
		return int64(x), true
	case types.Double:
		return int64(x), true
	case types.Uint:
		return int64(x), true
	}
	return 0, false
}

func toTime(v ref.Val) (time.Time, bool) {
	t, ok := v.(types.Timestamp)
	return t.Time, ok
}

func ts(t time.Time) ref.Val { return types.Timestamp{Time: t} }

// wall is the wall clock of instant t in loc, as a TIMESTAMP (UTC fields).
func wall(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

// instant is the instant of TIMESTAMP t's wall clock in loc.
func instant(t time.Time, loc *time.Location) time.Time {
	return javatime.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc).UTC()
}

// layouts caches compiled date-time patterns and regular expressions.
var (
	layouts sync.Map // string -> *javatime.Layout or error
	regexes sync.Map // string -> *regexp.Regexp or error
)

func layout(p string) (*javatime.Layout, error) {
	if v, ok := layouts.Load(p); ok {
		if l, ok := v.(*javatime.Layout); ok {
			return l, nil
		}
		return nil, v.(error)
	}
	l, err := javatime.Compile(p)
	if err != nil {
		err = fmt.Errorf("format '%s': %w", p, err)
		layouts.Store(p, err)
		return nil, err
	}
	layouts.Store(p, l)
	return l, nil
}

func compileRegex(re string) (*regexp.Regexp, error) {
	if v, ok := regexes.Load(re); ok {
		if r, ok := v.(*regexp.Regexp); ok {
			return r, nil
		}
		return nil, v.(error)
	}
	if err := schema.CheckJavaRegex(re); err != nil {
		regexes.Store(re, err)
		return nil, err
	}
	r := regexp.MustCompile(re)
	regexes.Store(re, r)
	return r, nil
}

// parseTimestamp reads a TIMESTAMP from a string as Flink's CAST does:
// `yyyy-MM-dd[ HH:mm[:ss[.fraction]]]`, a T allowed in place of the space.
func parseTimestamp(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, l := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// upperSpecial are the characters whose upper case is longer in Java
// (String.toUpperCase) than Go's rune mapping gives.
var upperSpecial = strings.NewReplacer("ß", "SS", "ﬀ", "FF", "ﬁ", "FI", "ﬂ", "FL", "ﬃ", "FFI", "ﬄ", "FFL", "ﬅ", "ST", "ﬆ", "ST", "ŉ", "ʼN")

// javaDouble formats f as Java's Double.toString, which Flink's CAST(DOUBLE
// AS STRING) uses: plain between 1e-3 and 1e7, else computerized
// scientific notation (1.5E10), always with a fraction digit.
func javaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	a := math.Abs(f)
	if a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, 64) // 1.5E+10
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// roundRat rounds r to scale digits, half away from zero (Java's HALF_UP,
// which Flink's CAST to DECIMAL uses); ok is false when the result has more
// than precision digits.
func roundRat(r *big.Rat, precision, scale int) (*big.Rat, bool) {
	m := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(m))
	num, den := scaled.Num(), scaled.Denom()
	q, rem := new(big.Int).QuoRem(num, den, new(big.Int))
	if new(big.Int).Mul(new(big.Int).Abs(rem), big.NewInt(2)).Cmp(den) >= 0 {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(precision)), nil)
	if new(big.Int).Abs(q).Cmp(limit) >= 0 {
		return nil, false
	}
	return new(big.Rat).SetFrac(q, m), true
}

func formatTimestamp(t time.Time, precision int) string {
	s := t.Format("2006-01-02 15:04:05")
	if precision > 0 {
		frac := fmt.Sprintf("%09d", t.Nanosecond())
		s += "." + frac[:precision]
	}
	return s
}

// sqlFunctions are the declarations of the sql_* functions.
func sqlFunctions(c Clock) []cel.EnvOption {
	loc := c.zone()
	nullableString, nullableInt, nullableBool := cel.NullableType(cel.StringType), cel.NullableType(cel.IntType), cel.NullableType(cel.BoolType)
	return []cel.EnvOption{
		fn("sql_false", 1, cel.BoolType, func(a ...ref.Val) ref.Val {
			if e, ok := a[0].(*types.Err); ok && !isNull(e) {
				return e
			}
			return types.Bool(a[0] == types.False)
		}),
		fn("sql_is_null", 1, cel.BoolType, func(a ...ref.Val) ref.Val {
			if isNull(a[0]) {
				return types.True
			}
			if types.IsError(a[0]) {
				return a[0]
			}
			return types.False
		}),
		fn("sql_not", 1, nullableBool, strict(func(a ...ref.Val) ref.Val {
			b, ok := a[0].(types.Bool)
			if !ok {
				return sqlErr("NOT of a %s", a[0].Type())
			}
			return !b
		})),
		fn("sql_eq", 2, nullableBool, strict(func(a ...ref.Val) ref.Val { return sqlEqual(a[0], a[1]) })),
		fn("sql_ne", 2, nullableBool, strict(func(a ...ref.Val) ref.Val {
			v := sqlEqual(a[0], a[1])
			if b, ok := v.(types.Bool); ok {
				return !b
			}
			return v
		})),
		fn("sql_in", 2, nullableBool, func(a ...ref.Val) ref.Val {
			if v, ok := nullOrErr(a[0]); ok {
				return v
			}
			list, ok := a[1].(traits.Lister)
			if !ok {
				return sqlErr("IN of a %s", a[1].Type())
			}
			sawNull := false
			for it := list.Iterator(); it.HasNext() == types.True; {
				e := it.Next()
				if isNull(e) {
					sawNull = true
					continue
				}
				if sqlEqual(a[0], e) == types.True {
					return types.True
				}
			}
			if sawNull {
				return types.NullValue
			}
			return types.False
		}),
		fn("sql_at", 2, cel.DynType, strict(func(a ...ref.Val) ref.Val {
			switch c := a[0].(type) {
			case traits.Lister:
				i, ok := toInt(a[1])
				n, _ := c.Size().(types.Int)
				if !ok || i < 1 || i > int64(n) {
					return types.NullValue
				}
				return c.Get(types.Int(i - 1))
			case traits.Mapper:
				if v, found := c.Find(a[1]); found {
					return v
				}
				return types.NullValue
			}
			return sqlErr("[] of a %s", a[0].Type())
		})),
		fn("sql_coalesce", 2, cel.DynType, func(a ...ref.Val) ref.Val {
			if !isNull(a[0]) {
				return a[0]
			}
			return a[1]
		}),
		fn("sql_if", 3, cel.DynType, func(a ...ref.Val) ref.Val {
			if a[0] == types.True {
				return a[1]
			}
			if e, ok := a[0].(*types.Err); ok && !isNull(e) {
				return e
			}
			return a[2]
		}),
		fn("sql_nullif", 2, cel.DynType, func(a ...ref.Val) ref.Val {
			if isNull(a[0]) || types.IsError(a[0]) {
				return a[0]
			}
			if !isNull(a[1]) && sqlEqual(a[0], a[1]) == types.True {
				return types.NullValue
			}
			return a[0]
		}),
		fn("sql_nonneg", 1, cel.DynType, strict(func(a ...ref.Val) ref.Val {
			if n, ok := toInt(a[0]); ok && n < 0 {
				return sqlErr("SUBSTRING: the length must not be negative, got %d", n)
			}
			return a[0]
		})),
		// Strings.
		fn("sql_string", 1, nullableString, strict(func(a ...ref.Val) ref.Val { return types.String(castToString(a[0])) })),
		fn("sql_float_string", 1, nullableString, strict(func(a ...ref.Val) ref.Val {
			f, _ := a[0].(types.Double)
			return types.String(strconv.FormatFloat(float64(f), 'g', -1, 32))
		})),
		fn("sql_decimal_string", 2, nullableString, strict(func(a ...ref.Val) ref.Val {
			scale, _ := toInt(a[1])
			switch x := a[0].(type) {
			case types.Double:
				return types.String(strconv.FormatFloat(float64(x), 'f', int(scale), 64))
			case types.Int:
				return types.String(strconv.FormatFloat(float64(x), 'f', int(scale), 64))
			}
			return types.String(castToString(a[0]))
		})),
		fn("sql_timestamp_string", 2, nullableString, strict(func(a ...ref.Val) ref.Val {
			t, ok := toTime(a[0])
			p, _ := toInt(a[1])
			if !ok {
				return types.String(castToString(a[0]))
			}
			return types.String(formatTimestamp(t.UTC(), int(p)))
		})),
		fn("sql_ltz_string", 2, nullableString, strict(func(a ...ref.Val) ref.Val {
			t, ok := toTime(a[0])
			p, _ := toInt(a[1])
			if !ok {
				return types.String(castToString(a[0]))
			}
			return types.String(formatTimestamp(t.In(loc), int(p)))
		})),
		fn("sql_time_string", 2, nullableString, strict(func(a ...ref.Val) ref.Val {
			t, ok := toTime(a[0])
			p, _ := toInt(a[1])
			if !ok {
				return types.String(castToString(a[0]))
			}
			return types.String(formatTimestamp(t.UTC(), int(p))[11:])
		})),
		fn("sql_upper", 1, nullableString, strict(func(a ...ref.Val) ref.Val {
			s, _ := str(a[0])
			return types.String(strings.ToUpper(upperSpecial.Replace(s)))
		})),
		fn("sql_lower", 1, nullableString, strict(func(a ...ref.Val) ref.Val {
			s, _ := str(a[0])
			return types.String(strings.ToLower(strings.ReplaceAll(s, "İ", "i\u0307")))
		})),
		fn("sql_char_length", 1, nullableInt, strict(func(a ...ref.Val) ref.Val {
			s, _ := str(a[0])
			return types.Int(utf8.RuneCountInString(s))
		})),
		fn("sql_trim", 3, nullableString, strict(func(a ...ref.Val) ref.Val {
			s, _ := str(a[0])
			chars, _ := str(a[1])
			mode, _ := str(a[2])
			if mode != "TRAILING" {
				s = strings.TrimLeft(s, chars)
			}
			if mode != "LEADING" {
				s = strings.TrimRight(s, chars)
			}
			return types.String(s)
		})),
		fn("sql_concat", 1, nullableString, strict(func(a ...ref.Val) ref.Val {
			list, ok := a[0].(traits.Lister)
			if !ok {
				return sqlErr("CONCAT of a %s", a[0].Type())
			}
			var b strings.Builder
			for it := list.Iterator(); it.HasNext() == types.True; {
				e := it.Next()
				if v, ok := nullOrErr(e); ok {
					return v
				}
				b.WriteString(castToString(e))
			}
			return types.String(b.String())
		})),
		fn("sql_substring", 3, nullableString, strict(func(a ...ref.Val) ref.Val {
			s, _ := str(a[0])
			pos, _ := toInt(a[1])
			n, _ := toInt(a[2])
			r := []rune(s)
			num := int64(len(r))
			var start int64
			switch {
			case pos > 0:
				start = pos - 1
				if start >= num {
					return types.String("")
				}
			case pos < 0:
				start = num + pos
				if start < 0 {
					return types.String("")
				}
			}
			end := num
			if n >= 0 && num-start >= n {
				end = start + n
			}
			return types.String(string(r[start:end]))
		})),
		fn("sql_replace", 3, nullableString, strict(func(a ...ref.Val) ref.Val {
			s, _ := str(a[0])
			old, _ := str(a[1])
			nw, _ := str(a[2])
			return types.String(strings.ReplaceAll(s, old, nw))
		})),
		fn("sql_regexp_extract", 3, nullableString, strict(func(a ...ref.Val) ref.Val {
			s, _ := str(a[0])
			re, _ := str(a[1])
			idx, _ := toInt(a[2])
			r, err := compileRegex(re)
			if err != nil {
				return sqlErr("REGEXP_EXTRACT: %v", err)
			}
			m := r.FindStringSubmatchIndex(s)
			if m == nil || idx < 0 || int(idx) > r.NumSubexp() || m[2*idx] < 0 {
				return types.NullValue
			}
			return types.String(s[m[2*idx]:m[2*idx+1]])
		})),
		fn("sql_split_index", 3, nullableString, strict(func(a ...ref.Val) ref.Val {
			s, _ := str(a[0])
			sep, _ := str(a[1])
			idx, _ := toInt(a[2])
			if idx < 0 || s == "" {
				return types.NullValue
			}
			var parts []string
			if sep == "" {
				parts = strings.Fields(s)
			} else {
				parts = strings.Split(s, sep)
			}
			if idx >= int64(len(parts)) {
				return types.NullValue
			}
			return types.String(parts[idx])
		})),
		fn("sql_json_value", 3, cel.DynType, strict(func(a ...ref.Val) ref.Val {
			s, _ := str(a[0])
			p, _ := str(a[1])
			kind, _ := str(a[2])
			steps, err := schema.ParseJSONPath(p)
			if err != nil {
				return sqlErr("JSON_VALUE: path '%s': %v", p, err)
			}
			dec := json.NewDecoder(strings.NewReader(s))
			dec.UseNumber()
			var doc any
			if err := dec.Decode(&doc); err != nil {
				return types.NullValue
			}
			v, ok := schema.JSONPathValue(doc, steps)
			if !ok {
				return types.NullValue
			}
			return jsonScalar(v, kind)
		})),
		// Decimals and casts.
		fn("sql_decimal", 3, cel.NullableType(cel.DoubleType), strict(func(a ...ref.Val) ref.Val {
			p, _ := toInt(a[1])
			sc, _ := toInt(a[2])
			var r *big.Rat
			switch x := a[0].(type) {
			case types.Double:
				r, _ = new(big.Rat).SetString(strconv.FormatFloat(float64(x), 'g', -1, 64))
			case types.Int:
				r = new(big.Rat).SetInt64(int64(x))
			case types.String:
				var ok bool
				if r, ok = new(big.Rat).SetString(strings.TrimSpace(string(x))); !ok {
					return sqlErr("CAST('%s' AS DECIMAL(%d, %d)): not a number", x, p, sc)
				}
			case types.Bool:
				r = new(big.Rat)
				if x {
					r.SetInt64(1)
				}
			default:
				return sqlErr("CAST of a %s AS DECIMAL", a[0].Type())
			}
			if r == nil {
				return types.NullValue
			}
			out, ok := roundRat(r, int(p), int(sc))
			if !ok {
				return types.NullValue // Flink: an overflowing DECIMAL cast is NULL
			}
			f, _ := out.Float64()
			return types.Double(f)
		})),
		fn("sql_int", 2, nullableInt, strict(func(a ...ref.Val) ref.Val {
			bits, _ := toInt(a[1])
			switch x := a[0].(type) {
			case types.Int:
				return types.Int(narrow(int64(x), int(bits)))
			case types.Double:
				return types.Int(javaDoubleToInt(float64(x), int(bits)))
			case types.String:
				s := strings.TrimSpace(string(x))
				n, err := strconv.ParseInt(s, 10, int(bits))
				if err != nil {
					return sqlErr("CAST('%s' AS INTEGER): not an integer of %d bits", x, bits)
				}
				return types.Int(n)
			case types.Bool:
				if x {
					return types.Int(1)
				}
				return types.Int(0)
			}
			return sqlErr("CAST of a %s AS an integer", a[0].Type())
		})),
		fn("sql_bool", 1, nullableBool, strict(func(a ...ref.Val) ref.Val {
			switch x := a[0].(type) {
			case types.Bool:
				return x
			case types.String:
				switch strings.ToLower(strings.TrimSpace(string(x))) {
				case "true", "t", "yes", "y", "1":
					return types.True
				case "false", "f", "no", "n", "0":
					return types.False
				}
				return sqlErr("CAST('%s' AS BOOLEAN): not a boolean", x)
			case types.Int:
				return types.Bool(x != 0)
			case types.Double:
				return types.Bool(x != 0)
			}
			return sqlErr("CAST of a %s AS BOOLEAN", a[0].Type())
		})),
		fn("sql_date", 1, cel.TimestampType, strict(func(a ...ref.Val) ref.Val {
			t, ok := timestampOf(a[0])
			if !ok {
				return sqlErr("CAST(%s AS DATE): not a date", castToString(a[0]))
			}
			return ts(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC))
		})),
		fn("sql_ltz_date", 1, cel.TimestampType, strict(func(a ...ref.Val) ref.Val {
			t, _ := toTime(a[0])
			w := wall(t, loc)
			return ts(time.Date(w.Year(), w.Month(), w.Day(), 0, 0, 0, 0, time.UTC))
		})),
		fn("sql_time", 2, cel.TimestampType, strict(func(a ...ref.Val) ref.Val {
			p, _ := toInt(a[1])
			if s, ok := str(a[0]); ok {
				if t, err := schema.ParseTime(s, int(p)); err == nil {
					return ts(t)
				}
			}
			t, ok := timestampOf(a[0])
			if !ok {
				return sqlErr("CAST(%s AS TIME): not a time", castToString(a[0]))
			}
			return ts(schema.TruncateTime(t.UTC(), int(p)))
		})),
		fn("sql_ltz_time", 2, cel.TimestampType, strict(func(a ...ref.Val) ref.Val {
			t, _ := toTime(a[0])
			p, _ := toInt(a[1])
			return ts(schema.TruncateTime(wall(t, loc), int(p)))
		})),
		fn("sql_timestamp", 2, cel.TimestampType, strict(func(a ...ref.Val) ref.Val {
			p, _ := toInt(a[1])
			t, ok := timestampOf(a[0])
			if !ok {
				return sqlErr("CAST(%s AS TIMESTAMP): not a timestamp", castToString(a[0]))
			}
			return ts(schema.TruncateTimestamp(t, int(p)))
		})),
		fn("sql_ltz_timestamp", 2, cel.TimestampType, strict(func(a ...ref.Val) ref.Val {
			t, _ := toTime(a[0])
			p, _ := toInt(a[1])
			return ts(schema.TruncateTimestamp(wall(t, loc), int(p)))
		})),
		fn("sql_timestamp_ltz", 2, cel.TimestampType, strict(func(a ...ref.Val) ref.Val {
			p, _ := toInt(a[1])
			t, ok := timestampOf(a[0])
			if !ok {
				return sqlErr("CAST(%s AS TIMESTAMP_LTZ): not a timestamp", castToString(a[0]))
			}
			return ts(schema.TruncateTimestamp(instant(t, loc), int(p)))
		})),
		// Time functions.
		fn("sql_to_timestamp_ltz", 2, cel.TimestampType, strict(func(a ...ref.Val) ref.Val {
			n, ok := toInt(a[0])
			if !ok {
				if s, isStr := str(a[0]); isStr {
					v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
					if err != nil {
						return sqlErr("TO_TIMESTAMP_LTZ('%s'): not a number", s)
					}
					n = v
				}
			}
			p, _ := toInt(a[1])
			if p == 0 {
				return ts(time.Unix(n, 0).UTC())
			}
			return ts(time.UnixMilli(n).UTC())
		})),
		fn("sql_to_timestamp", 2, cel.TimestampType, strict(func(a ...ref.Val) ref.Val {
			s, _ := str(a[0])
			f, _ := str(a[1])
			if f == "" { // TO_TIMESTAMP(s): as CAST, a date alone, a T, a fraction
				t, ok := parseTimestamp(s)
				if !ok {
					return types.NullValue
				}
				return ts(schema.TruncateTimestamp(t, 3))
			}
			l, err := layout(f)
			if err != nil {
				return sqlErr("TO_TIMESTAMP: %v", err)
			}
			t, err := l.Parse(s, time.UTC)
			if err != nil {
				return types.NullValue // Flink: an unparsable string is NULL
			}
			return ts(schema.TruncateTimestamp(t, 3))
		})),
		fn("sql_from_unixtime", 2, nullableString, strict(func(a ...ref.Val) ref.Val {
			n, _ := toInt(a[0])
			f, _ := str(a[1])
			l, err := layout(f)
			if err != nil {
				return sqlErr("FROM_UNIXTIME: %v", err)
			}
			return types.String(l.Format(time.Unix(n, 0).In(loc)))
		})),
		fn("sql_date_format", 2, nullableString, strict(func(a ...ref.Val) ref.Val {
			f, _ := str(a[1])
			l, err := layout(f)
			if err != nil {
				return sqlErr("DATE_FORMAT: %v", err)
			}
			t, ok := timestampOf(a[0])
			if !ok {
				return types.NullValue
			}
			return types.String(l.Format(t.UTC()))
		})),
		fn("sql_ltz_date_format", 2, nullableString, strict(func(a ...ref.Val) ref.Val {
			f, _ := str(a[1])
			l, err := layout(f)
			if err != nil {
				return sqlErr("DATE_FORMAT: %v", err)
			}
			t, _ := toTime(a[0])
			return types.String(l.Format(t.In(loc)))
		})),
		fn("sql_unix_timestamp", 2, nullableInt, strict(func(a ...ref.Val) ref.Val {
			s, _ := str(a[0])
			f, _ := str(a[1])
			l, err := layout(f)
			if err != nil {
				return sqlErr("UNIX_TIMESTAMP: %v", err)
			}
			t, err := l.Parse(s, loc)
			if err != nil {
				return types.Int(math.MinInt64) // as Flink: Long.MIN_VALUE
			}
			// Flink parses with SimpleDateFormat, whose calendar reads a
			// wall clock that occurs twice (clocks go back) in standard
			// time: the later instant.
			return types.Int(javatime.Later(t, loc).Unix())
		})),
		fn("sql_unix_timestamp_now", 0, cel.IntType, func(...ref.Val) ref.Val { return types.Int(c.now().Unix()) }),
		fn("sql_now", 0, cel.TimestampType, func(...ref.Val) ref.Val {
			return ts(c.now().UTC().Truncate(time.Millisecond))
		}),
		fn("sql_localtimestamp", 0, cel.TimestampType, func(...ref.Val) ref.Val {
			return ts(wall(c.now(), loc).Truncate(time.Millisecond))
		}),
		fn("sql_current_date", 0, cel.TimestampType, func(...ref.Val) ref.Val {
			w := wall(c.now(), loc)
			return ts(time.Date(w.Year(), w.Month(), w.Day(), 0, 0, 0, 0, time.UTC))
		}),
		fn("sql_localtime", 0, cel.TimestampType, func(...ref.Val) ref.Val {
			return ts(schema.TruncateTime(wall(c.now(), loc), 0))
		}),
	}
}

// narrow is Java's narrowing of a long to an integer of bits: it wraps.
func narrow(n int64, bits int) int64 {
	switch bits {
	case 8:
		return int64(int8(n))
	case 16:
		return int64(int16(n))
	case 32:
		return int64(int32(n))
	}
	return n
}

// javaDoubleToInt is Flink's CAST of a DOUBLE to an integer type, Java's
// (long) or (int) cast: toward zero, NaN is 0, out of range saturates;
// TINYINT and SMALLINT go through int and wrap.
func javaDoubleToInt(f float64, bits int) int64 {
	if math.IsNaN(f) {
		return 0
	}
	if bits == 64 {
		switch {
		case f >= math.MaxInt64:
			return math.MaxInt64
		case f <= math.MinInt64:
			return math.MinInt64
		}
		return int64(f)
	}
	var i int32
	switch {
	case f >= math.MaxInt32:
		i = math.MaxInt32
	case f <= math.MinInt32:
		i = math.MinInt32
	default:
		i = int32(f)
	}
	return narrow(int64(i), bits)
}

// timestampOf reads a TIMESTAMP from a timestamp or a string.
func timestampOf(v ref.Val) (time.Time, bool) {
	switch x := v.(type) {
	case types.Timestamp:
		return x.Time.UTC(), true
	case types.String:
		return parseTimestamp(string(x))
	}
	return time.Time{}, false
}

// sqlEqual is SQL's = of two non-NULL values: numbers across types,
// otherwise CEL's equality.
func sqlEqual(a, b ref.Val) ref.Val {
	return a.Equal(b)
}

// castToString is CAST(v AS STRING) for a value whose SQL type the
// translator did not know.
func castToString(v ref.Val) string {
	switch x := v.(type) {
	case types.String:
		return string(x)
	case types.Bool:
		if x {
			return "TRUE"
		}
		return "FALSE"
	case types.Int:
		return strconv.FormatInt(int64(x), 10)
	case types.Double:
		return javaDouble(float64(x))
	case types.Bytes:
		return string(x)
	case types.Timestamp:
		t := x.Time.UTC()
		p := 0
		if t.Nanosecond() != 0 {
			p = 3
			if t.Nanosecond()%int(time.Millisecond) != 0 {
				p = 9
			}
		}
		return formatTimestamp(t, p)
	}
	out, err := FromCEL(v)
	if err != nil {
		return fmt.Sprint(v.Value())
	}
	return fmt.Sprint(out)
}

// jsonScalar is a JSON_VALUE result: a scalar as kind (string, int,
// double, bool); NULL for an object, an array or a JSON null (Flink's NULL
// ON EMPTY / NULL ON ERROR).
func jsonScalar(v any, kind string) ref.Val {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case json.Number:
		s = string(x)
	case bool:
		s = strconv.FormatBool(x)
	default:
		return types.NullValue
	}
	switch kind {
	case "int":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(s, 64)
			if ferr != nil {
				return types.NullValue
			}
			n = int64(f)
		}
		return types.Int(n)
	case "double":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return types.NullValue
		}
		return types.Double(f)
	case "bool":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return types.NullValue
		}
		return types.Bool(b)
	}
	return types.String(s)
}
