package schema

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/connectd/connectd/schema/javatime"
)

// supportedFunctions is the list in ComputedSQL and in the error for an
// unknown function.
const supportedFunctions = "UPPER, LOWER, TRIM([BOTH | LEADING | TRAILING] [chars] FROM s), CHAR_LENGTH, CONCAT, " +
	"SUBSTRING(s FROM i [FOR n]) or SUBSTRING(s, i [, n]), REPLACE, REGEXP_EXTRACT(s, regex [, group]), SPLIT_INDEX, " +
	"JSON_VALUE(s, path [RETURNING type]), COALESCE, IF, NULLIF, TO_TIMESTAMP(s [, format]), TO_TIMESTAMP_LTZ(n, 0 | 3), " +
	"FROM_UNIXTIME(n [, format]), DATE_FORMAT(ts | s, format), UNIX_TIMESTAMP([s [, format]]), PROCTIME(), NOW(), " +
	"CURRENT_TIMESTAMP, LOCALTIMESTAMP, CURRENT_DATE, CURRENT_TIME, LOCALTIME"

// niladic are the functions written without parentheses.
var niladic = map[string]sqlVal{
	"CURRENT_TIMESTAMP": {"sql_now()", &Type{Kind: KindTimestampLTZ, Precision: 3, NotNull: true}},
	"LOCALTIMESTAMP":    {"sql_localtimestamp()", &Type{Kind: KindTimestamp, Precision: 3, NotNull: true}},
	"CURRENT_DATE":      {"sql_current_date()", &Type{Kind: KindDate, NotNull: true}},
	"CURRENT_TIME":      {"sql_localtime()", &Type{Kind: KindTime, NotNull: true}},
	"LOCALTIME":         {"sql_localtime()", &Type{Kind: KindTime, NotNull: true}},
}

// NiladicFunction reports whether name is a function written without
// parentheses (CURRENT_TIMESTAMP), which a column of that name must be
// backquoted not to be read as.
func NiladicFunction(name string) bool {
	_, ok := niladic[strings.ToUpper(name)]
	return ok
}

func (x *sqlTranslator) cast() (sqlVal, error) {
	x.next()
	if err := x.expect("("); err != nil {
		return sqlVal{}, err
	}
	e, err := x.or()
	if err != nil {
		return sqlVal{}, err
	}
	if err := x.expect("AS"); err != nil {
		return sqlVal{}, err
	}
	typTok := x.cur()
	typ, err := x.typ(0)
	if err != nil {
		return sqlVal{}, err
	}
	if err := x.expect(")"); err != nil {
		return sqlVal{}, err
	}
	bad := func(msg string) error {
		return &SyntaxError{Line: typTok.pos.line, Column: typTok.pos.col, Msg: msg}
	}
	out := typ
	out.NotNull = false
	switch {
	case (typ.IsString() || typ.IsBinary()) && (typ.Kind == KindChar || typ.Kind == KindBinary || typ.Length != MaxLength):
		return sqlVal{}, bad(fmt.Sprintf("unsupported Flink SQL construct CAST(... AS %s) in a computed column: "+
			"Flink fits the value to the length (VARCHAR and VARBINARY cut it, CHAR and BINARY also pad it); cast to STRING or BYTES", typ))
	case typ.IsString():
		if e.isString() {
			return sqlVal{e.cel, out}, nil
		}
		return sqlVal{castString(e), out}, nil
	case typ.Kind == KindTinyint, typ.Kind == KindSmallint, typ.Kind == KindInt, typ.Kind == KindBigint:
		bits := map[Kind]int{KindTinyint: 8, KindSmallint: 16, KindInt: 32, KindBigint: 64}[typ.Kind]
		return sqlVal{fmt.Sprintf("sql_int(%s, %d)", e.cel, bits), out}, nil
	case typ.Kind == KindFloat, typ.Kind == KindDouble:
		return sqlVal{"double(" + e.cel + ")", out}, nil
	case typ.Kind == KindDecimal:
		return sqlVal{fmt.Sprintf("sql_decimal(%s, %d, %d)", e.cel, typ.Precision, typ.Scale), out}, nil
	case typ.Kind == KindBoolean:
		return sqlVal{"sql_bool(" + e.cel + ")", out}, nil
	case typ.Kind == KindDate:
		if e.kind() == KindTimestampLTZ {
			return sqlVal{"sql_ltz_date(" + e.cel + ")", out}, nil
		}
		return sqlVal{"sql_date(" + e.cel + ")", out}, nil
	case typ.Kind == KindTime:
		if e.kind() == KindTimestampLTZ {
			return sqlVal{fmt.Sprintf("sql_ltz_time(%s, %d)", e.cel, typ.Precision), out}, nil
		}
		return sqlVal{fmt.Sprintf("sql_time(%s, %d)", e.cel, typ.Precision), out}, nil
	case typ.Kind == KindTimestamp:
		if e.kind() == KindTimestampLTZ {
			return sqlVal{fmt.Sprintf("sql_ltz_timestamp(%s, %d)", e.cel, typ.Precision), out}, nil
		}
		return sqlVal{fmt.Sprintf("sql_timestamp(%s, %d)", e.cel, typ.Precision), out}, nil
	case typ.Kind == KindTimestampLTZ:
		if e.kind() == KindTimestampLTZ {
			return sqlVal{fmt.Sprintf("sql_timestamp(%s, %d)", e.cel, typ.Precision), out}, nil
		}
		return sqlVal{fmt.Sprintf("sql_timestamp_ltz(%s, %d)", e.cel, typ.Precision), out}, nil
	case typ.IsBinary():
		return sqlVal{"bytes(" + e.cel + ")", out}, nil
	}
	return sqlVal{}, bad(fmt.Sprintf("unsupported Flink SQL construct CAST(... AS %s) in a computed column (supported: %s)", typ, ComputedSQL))
}

// castString is CAST(e AS STRING) in CEL, by the type of e as far as known.
func castString(e sqlVal) string {
	switch e.kind() {
	case KindTimestampLTZ:
		return fmt.Sprintf("sql_ltz_string(%s, %d)", e.cel, e.t.Precision)
	case KindTimestamp:
		return fmt.Sprintf("sql_timestamp_string(%s, %d)", e.cel, e.t.Precision)
	case KindTime:
		return fmt.Sprintf("sql_time_string(%s, %d)", e.cel, e.t.Precision)
	case KindDecimal:
		if e.t.Scale > 0 || !strings.ContainsAny(e.cel, ".") {
			return fmt.Sprintf("sql_decimal_string(%s, %d)", e.cel, e.t.Scale)
		}
	case KindFloat:
		return "sql_float_string(" + e.cel + ")"
	}
	return "sql_string(" + e.cel + ")"
}

// args reads the arguments of a call up to its ")"; SUBSTRING and TRIM
// have their own forms.
func (x *sqlTranslator) args() ([]sqlVal, error) {
	var args []sqlVal
	if x.accept(")") {
		return nil, nil
	}
	for {
		e, err := x.or()
		if err != nil {
			return nil, err
		}
		args = append(args, e)
		if x.accept(")") {
			return args, nil
		}
		if err := x.expect(","); err != nil {
			return nil, err
		}
	}
}

func celList(args []sqlVal) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.cel
	}
	return strings.Join(parts, ", ")
}

func (x *sqlTranslator) call() (sqlVal, error) {
	nameTok := x.next()
	x.next() // (
	name := strings.ToUpper(nameTok.text)
	errAt := func(msg string, a ...any) error {
		return &SyntaxError{Line: nameTok.pos.line, Column: nameTok.pos.col, Msg: fmt.Sprintf(msg, a...)}
	}
	switch name {
	case "SUBSTRING", "SUBSTR":
		return x.substring(errAt)
	case "TRIM":
		return x.trim()
	case "JSON_VALUE":
		return x.jsonValue(errAt)
	}
	args, err := x.args()
	if err != nil {
		return sqlVal{}, err
	}
	arity := func(want string, ok bool) error {
		if ok {
			return nil
		}
		return errAt("%s takes %s, got %d arguments", name, want, len(args))
	}
	str, bigint, ltz3 := typeOf(KindVarchar), typeOf(KindBigint), &Type{Kind: KindTimestampLTZ, Precision: 3}
	// strArg is argument i as a string: CAST(... AS STRING) when its type
	// is known and not a string (an unknown type is left to the function).
	strArg := func(i int) string {
		if args[i].t == nil || args[i].isString() {
			return args[i].cel
		}
		return castString(args[i])
	}
	// lit is argument i when it is a string literal.
	lit := func(i int) (string, bool) {
		v, err := strconv.Unquote(args[i].cel)
		return v, err == nil && strings.HasPrefix(args[i].cel, `"`)
	}
	dateFormat := func(i int) error {
		if f, ok := lit(i); ok {
			if _, err := javatime.Compile(f); err != nil {
				return errAt("%s: format '%s': %v", name, f, err)
			}
		}
		return nil
	}
	switch name {
	case "UPPER", "LOWER", "CHAR_LENGTH", "CHARACTER_LENGTH":
		if err := arity("one argument", len(args) == 1); err != nil {
			return sqlVal{}, err
		}
		fn := map[string]string{"UPPER": "sql_upper", "LOWER": "sql_lower", "CHAR_LENGTH": "sql_char_length", "CHARACTER_LENGTH": "sql_char_length"}[name]
		t := str
		if fn == "sql_char_length" {
			t = typeOf(KindInt)
		}
		return sqlVal{fn + "(" + strArg(0) + ")", t}, nil
	case "CONCAT":
		if err := arity("at least one argument", len(args) > 0); err != nil {
			return sqlVal{}, err
		}
		parts := make([]string, len(args))
		for i := range args {
			parts[i] = strArg(i)
		}
		return sqlVal{"sql_concat([" + strings.Join(parts, ", ") + "])", str}, nil
	case "REPLACE":
		if err := arity("three arguments (string, search, replacement)", len(args) == 3); err != nil {
			return sqlVal{}, err
		}
		return sqlVal{"sql_replace(" + strArg(0) + ", " + strArg(1) + ", " + strArg(2) + ")", str}, nil
	case "REGEXP_EXTRACT":
		if err := arity("two or three arguments (string, regex [, group])", len(args) == 2 || len(args) == 3); err != nil {
			return sqlVal{}, err
		}
		if re, ok := lit(1); ok {
			if err := CheckJavaRegex(re); err != nil {
				return sqlVal{}, errAt("REGEXP_EXTRACT: %v", err)
			}
		}
		idx := "0"
		if len(args) == 3 {
			idx = args[2].cel
		}
		return sqlVal{"sql_regexp_extract(" + strArg(0) + ", " + args[1].cel + ", " + idx + ")", str}, nil
	case "SPLIT_INDEX":
		if err := arity("three arguments (string, separator, index)", len(args) == 3); err != nil {
			return sqlVal{}, err
		}
		return sqlVal{"sql_split_index(" + strArg(0) + ", " + args[1].cel + ", " + args[2].cel + ")", str}, nil
	case "COALESCE":
		if err := arity("at least one argument", len(args) > 0); err != nil {
			return sqlVal{}, err
		}
		out := args[len(args)-1].cel
		var t *Type
		for i := len(args) - 2; i >= 0; i-- {
			out = "sql_coalesce(" + args[i].cel + ", " + out + ")"
		}
		for _, a := range args {
			if t == nil && a.t != nil {
				t = a.t
			}
		}
		return sqlVal{out, widen(t)}, nil
	case "IF":
		if err := arity("three arguments (condition, then, else)", len(args) == 3); err != nil {
			return sqlVal{}, err
		}
		t := args[1].t
		if t == nil {
			t = args[2].t
		}
		return sqlVal{"sql_if(" + celList(args) + ")", widen(t)}, nil
	case "NULLIF":
		if err := arity("two arguments", len(args) == 2); err != nil {
			return sqlVal{}, err
		}
		return sqlVal{"sql_nullif(" + celList(args) + ")", widen(args[0].t)}, nil
	case "TO_TIMESTAMP":
		if err := arity("one or two arguments (string [, format])", len(args) == 1 || len(args) == 2); err != nil {
			return sqlVal{}, err
		}
		if len(args) == 1 { // as CAST: a date alone, a T, a fraction
			return sqlVal{"sql_to_timestamp(" + strArg(0) + `, "")`, &Type{Kind: KindTimestamp, Precision: 3}}, nil
		}
		if err := dateFormat(1); err != nil {
			return sqlVal{}, err
		}
		return sqlVal{"sql_to_timestamp(" + strArg(0) + ", " + args[1].cel + ")", &Type{Kind: KindTimestamp, Precision: 3}}, nil
	case "TO_TIMESTAMP_LTZ":
		if err := arity("two arguments (epoch, precision 0 or 3)", len(args) == 2); err != nil {
			return sqlVal{}, err
		}
		switch strings.TrimSuffix(args[1].cel, ".0") {
		case "0":
			return sqlVal{"sql_to_timestamp_ltz(" + args[0].cel + ", 0)", ltz3}, nil
		case "3":
			return sqlVal{"sql_to_timestamp_ltz(" + args[0].cel + ", 3)", ltz3}, nil
		}
		return sqlVal{}, errAt("TO_TIMESTAMP_LTZ: the precision must be the literal 0 or 3")
	case "FROM_UNIXTIME":
		if err := arity("one or two arguments (seconds [, format])", len(args) == 1 || len(args) == 2); err != nil {
			return sqlVal{}, err
		}
		f := `"yyyy-MM-dd HH:mm:ss"`
		if len(args) == 2 {
			if err := dateFormat(1); err != nil {
				return sqlVal{}, err
			}
			f = args[1].cel
		}
		return sqlVal{"sql_from_unixtime(" + args[0].cel + ", " + f + ")", str}, nil
	case "DATE_FORMAT":
		if err := arity("two arguments (timestamp or string, format)", len(args) == 2); err != nil {
			return sqlVal{}, err
		}
		if err := dateFormat(1); err != nil {
			return sqlVal{}, err
		}
		fn := "sql_date_format"
		if args[0].kind() == KindTimestampLTZ {
			fn = "sql_ltz_date_format"
		}
		return sqlVal{fn + "(" + celList(args) + ")", str}, nil
	case "UNIX_TIMESTAMP":
		if err := arity("no argument, or one or two (string [, format])", len(args) <= 2); err != nil {
			return sqlVal{}, err
		}
		switch len(args) {
		case 0:
			return sqlVal{"sql_unix_timestamp_now()", bigint}, nil
		case 1:
			return sqlVal{"sql_unix_timestamp(" + strArg(0) + `, "yyyy-MM-dd HH:mm:ss")`, bigint}, nil
		}
		if err := dateFormat(1); err != nil {
			return sqlVal{}, err
		}
		return sqlVal{"sql_unix_timestamp(" + strArg(0) + ", " + args[1].cel + ")", bigint}, nil
	case "NOW", "PROCTIME":
		if err := arity("no argument", len(args) == 0); err != nil {
			return sqlVal{}, err
		}
		if name == "PROCTIME" {
			x.procTime = true
		}
		return sqlVal{"sql_now()", &Type{Kind: KindTimestampLTZ, Precision: 3, NotNull: true}}, nil
	}
	if v, ok := niladic[name]; ok && len(args) == 0 {
		return v, nil
	}
	return sqlVal{}, errAt("function %s is not supported in a computed column; supported: %s", nameTok.text, supportedFunctions)
}

// widen is the type of a value chosen among others: a string literal's
// CHAR(n) is STRING.
func widen(t *Type) *Type {
	if t != nil && t.Kind == KindChar {
		return typeOf(KindVarchar)
	}
	return t
}

// substring translates SUBSTRING(s FROM i [FOR n]) and SUBSTRING(s, i [, n]).
func (x *sqlTranslator) substring(errAt func(string, ...any) error) (sqlVal, error) {
	s, err := x.or()
	if err != nil {
		return sqlVal{}, err
	}
	sep := ","
	if x.accept("FROM") {
		sep = "FOR"
	} else if err := x.expect(","); err != nil {
		return sqlVal{}, err
	}
	i, err := x.or()
	if err != nil {
		return sqlVal{}, err
	}
	n := "-1"
	if x.accept(sep) {
		e, err := x.or()
		if err != nil {
			return sqlVal{}, err
		}
		n = "sql_nonneg(" + e.cel + ")"
	}
	if err := x.expect(")"); err != nil {
		return sqlVal{}, err
	}
	if !s.isString() && s.t != nil {
		s.cel = castString(s)
	}
	return sqlVal{"sql_substring(" + s.cel + ", " + i.cel + ", " + n + ")", typeOf(KindVarchar)}, nil
}

// trim translates TRIM(s) and TRIM([BOTH | LEADING | TRAILING] [chars] FROM s).
func (x *sqlTranslator) trim() (sqlVal, error) {
	mode := "BOTH"
	for _, m := range []string{"BOTH", "LEADING", "TRAILING"} {
		if x.accept(m) {
			mode = m
		}
	}
	chars := `" "`
	var s sqlVal
	if !x.accept("FROM") {
		e, err := x.or()
		if err != nil {
			return sqlVal{}, err
		}
		if x.accept("FROM") {
			chars = e.cel
			if s, err = x.or(); err != nil {
				return sqlVal{}, err
			}
		} else {
			s = e
		}
	} else {
		var err error
		if s, err = x.or(); err != nil {
			return sqlVal{}, err
		}
	}
	if err := x.expect(")"); err != nil {
		return sqlVal{}, err
	}
	return sqlVal{fmt.Sprintf("sql_trim(%s, %s, %q)", s.cel, chars, mode), typeOf(KindVarchar)}, nil
}

// jsonValue translates JSON_VALUE(s, path [RETURNING type]).
func (x *sqlTranslator) jsonValue(errAt func(string, ...any) error) (sqlVal, error) {
	s, err := x.or()
	if err != nil {
		return sqlVal{}, err
	}
	if err := x.expect(","); err != nil {
		return sqlVal{}, err
	}
	pathTok := x.cur()
	path, err := x.or()
	if err != nil {
		return sqlVal{}, err
	}
	if p, err := strconv.Unquote(path.cel); err == nil {
		if _, err := ParseJSONPath(p); err != nil {
			return sqlVal{}, &SyntaxError{Line: pathTok.pos.line, Column: pathTok.pos.col, Msg: fmt.Sprintf("JSON_VALUE: path '%s': %v", p, err)}
		}
	}
	ret := typeOf(KindVarchar)
	if x.accept("RETURNING") {
		typTok := x.cur()
		if ret, err = x.typ(0); err != nil {
			return sqlVal{}, err
		}
		switch {
		case ret.IsString() && ret.Length == MaxLength, ret.Kind == KindInt, ret.Kind == KindBigint, ret.Kind == KindSmallint,
			ret.Kind == KindTinyint, ret.Kind == KindDouble, ret.Kind == KindFloat, ret.Kind == KindBoolean:
		default:
			return sqlVal{}, &SyntaxError{Line: typTok.pos.line, Column: typTok.pos.col,
				Msg: fmt.Sprintf("JSON_VALUE ... RETURNING %s is not supported; supported: STRING, BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE", ret)}
		}
	}
	if !x.cur().is(")") {
		return sqlVal{}, x.errf("JSON_VALUE: %s is not supported (connectd gives NULL on an empty or failing path, Flink's default NULL ON EMPTY NULL ON ERROR)", x.cur().describe())
	}
	x.next()
	kind := "string"
	switch {
	case ret.Kind == KindBoolean:
		kind = "bool"
	case ret.Kind == KindDouble || ret.Kind == KindFloat:
		kind = "double"
	case !ret.IsString():
		kind = "int"
	}
	return sqlVal{fmt.Sprintf("sql_json_value(%s, %s, %q)", s.cel, path.cel, kind), ret}, nil
}

// javaOnlyRegex are the constructs of java.util.regex that Go's RE2 lacks.
var javaOnlyRegex = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`\(\?[=!]`), "lookahead (?= or (?!"},
	{regexp.MustCompile(`\(\?<[=!]`), "lookbehind (?<= or (?<!"},
	{regexp.MustCompile(`\(\?>`), "atomic group (?>"},
	{regexp.MustCompile(`[*+?}][+]`), "possessive quantifier (*+, ++, ?+, {n}+)"},
	{regexp.MustCompile(`\\[1-9]|\\k<`), "backreference (\\1, \\k<name>)"},
	{regexp.MustCompile(`\\[GZ]`), "anchor \\G or \\Z"},
	{regexp.MustCompile(`&&\[`), "character class intersection &&["},
}

// CheckJavaRegex checks a Java regular expression for what Go's RE2 can
// run the same way: constructs RE2 lacks are refused, naming them.
func CheckJavaRegex(re string) error {
	plain := regexp.MustCompile(`\\\\`).ReplaceAllString(re, "")
	for _, c := range javaOnlyRegex {
		if c.re.MatchString(plain) {
			return fmt.Errorf("regex '%s' uses a %s, which Go's RE2 engine does not have", re, c.what)
		}
	}
	if _, err := regexp.Compile(re); err != nil {
		return fmt.Errorf("regex '%s': %w", re, err)
	}
	return nil
}

// validateComputedRowtime checks a computed column that the table's
// WATERMARK FOR names: not a processing-time attribute (PROCTIME()), and,
// when its type is known, TIMESTAMP(p) or TIMESTAMP_LTZ(p) with p <= 3, as
// Flink requires of a rowtime column.
func (t *Table) validateComputedRowtime(c Column, tr *Translation) []error {
	wm := t.Watermark
	if wm == nil || wm.Column != c.Name {
		return nil
	}
	if tr.ProcTime {
		return []error{fmt.Errorf("table %s: WATERMARK FOR %s: column %s AS %s is a processing-time attribute (PROCTIME()); "+
			"a watermark needs an event-time column, as in Flink", t.Name, wm.Column, c.Name, c.Expr)}
	}
	if typ := tr.Type; typ != nil && (!typ.IsTimestamp() || typ.Precision > 3) {
		return []error{fmt.Errorf("table %s: WATERMARK FOR %s: the rowtime column must be TIMESTAMP(p) or TIMESTAMP_LTZ(p) with p <= 3, got %s AS %s of type %s",
			t.Name, wm.Column, c.Name, c.Expr, typ)}
	}
	return nil
}
