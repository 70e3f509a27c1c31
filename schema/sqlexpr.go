package schema

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ComputedSQL lists the Flink SQL that a computed column (`col AS expr`) may
// use; TranslateSQL turns it into CEL and rejects anything else.
const ComputedSQL = "column names (a.b for ROW fields, arr[1] for ARRAY elements, m['k'] for MAP values), numbers, 'strings', " +
	"TRUE, FALSE, NULL, + - * / %, || (string concatenation), = <> != < <= > >=, AND, OR, NOT, IS [NOT] NULL, IS [NOT] TRUE/FALSE, " +
	"x [NOT] IN (...), CASE WHEN ... THEN ... [ELSE ...] END, CAST(x AS STRING | INT | BIGINT | SMALLINT | TINYINT | " +
	"DOUBLE | FLOAT | DECIMAL(p, s) | BOOLEAN | DATE | TIME | TIMESTAMP(p) | TIMESTAMP_LTZ(p) | BYTES), " +
	"INTERVAL 'n' SECOND | MINUTE | HOUR | DAY, and the functions " + supportedFunctions

// TranslateSQL translates a Flink SQL expression (the `AS expr` of a computed
// column) into a CEL expression, and returns the column names it reads. A
// column whose name is not a CEL identifier is read as row["name"]. An
// unsupported construct is an error that names it; see ComputedSQL. The CEL
// calls functions sql_* that package schema/expr declares.
func TranslateSQL(sql string) (cel string, columns []string, err error) {
	return TranslateSQLWith(sql, IntLiterals)
}

// Literals says how TranslateSQL writes SQL integer literals in CEL, which
// has no implicit int to double conversion: SQL `1 + vat` on a DECIMAL vat
// needs `1.0 + vat` in CEL, and `n % 2` on an INT n needs `n % 2`.
type Literals int

// Ways to write integer literals.
const (
	// IntLiterals writes integer literals as CEL ints.
	IntLiterals Literals = iota
	// DoubleLiterals writes integer literals as CEL doubles (1.0), except
	// the precision of TO_TIMESTAMP_LTZ.
	DoubleLiterals
)

// TranslateSQLWith is TranslateSQL with a choice of integer literals; the
// caller type-checks both and keeps the one that fits (package schema/expr).
func TranslateSQLWith(sql string, lits Literals) (cel string, columns []string, err error) {
	tr, err := TranslateComputed(sql, lits, nil)
	if err != nil {
		return "", nil, err
	}
	return tr.CEL, tr.Columns, nil
}

// Translation is a computed column's SQL translated to CEL.
type Translation struct {
	// CEL is the expression in CEL.
	CEL string
	// Columns are the columns it reads, in order of first use.
	Columns []string
	// Type is the Flink type of the result when the translator knows it
	// (functions, CAST, literals, typed columns); nil when it does not.
	Type *Type
	// ProcTime reports a PROCTIME() call: the column is a processing-time
	// attribute.
	ProcTime bool
}

// TranslateComputed translates sql with the column types of table t (nil:
// none known). Known types choose Flink's semantics where CEL's would
// differ: TIMESTAMP_LTZ against TIMESTAMP under a time zone, the scale of
// a DECIMAL, an INT operand of a DOUBLE operator.
func TranslateComputed(sql string, lits Literals, t *Table) (*Translation, error) {
	toks, err := lex(sql)
	if err != nil {
		return nil, err
	}
	x := &sqlTranslator{parser: parser{src: sql, toks: toks}, seen: map[string]bool{}, lits: lits, table: t}
	out, err := x.or()
	if err != nil {
		return nil, err
	}
	if x.cur().kind != tEOF {
		return nil, x.unsupported()
	}
	return &Translation{CEL: out.cel, Columns: x.cols, Type: out.t, ProcTime: x.procTime}, nil
}

// sqlVal is a translated expression and its Flink type (nil: unknown).
type sqlVal struct {
	cel string
	t   *Type
}

func (v sqlVal) kind() Kind {
	if v.t == nil {
		return KindInvalid
	}
	return v.t.Kind
}

func (v sqlVal) isString() bool { return v.t != nil && v.t.IsString() }

func (v sqlVal) isApprox() bool {
	k := v.kind()
	return k == KindFloat || k == KindDouble || k == KindDecimal
}

func (v sqlVal) isInt() bool {
	switch v.kind() {
	case KindTinyint, KindSmallint, KindInt, KindBigint:
		return true
	}
	return false
}

// Types of results.
func typeOf(k Kind) *Type {
	switch k {
	case KindVarchar, KindVarbinary:
		return &Type{Kind: k, Length: MaxLength}
	case KindTimestamp, KindTimestampLTZ:
		return &Type{Kind: k, Precision: 3}
	case KindDecimal:
		return &Type{Kind: k, Precision: DefaultDecimalPrecision}
	}
	return &Type{Kind: k}
}

type sqlTranslator struct {
	parser
	lits     Literals
	table    *Table
	cols     []string
	seen     map[string]bool
	procTime bool
}

func (x *sqlTranslator) unsupported() error {
	return x.errf("unsupported Flink SQL construct %s in a computed column (supported: %s)", x.cur().describe(), ComputedSQL)
}

// peek2 reports whether the current and next tokens are a and b (two-character operators).
func (x *sqlTranslator) peek2(a, b string) bool {
	return x.cur().is(a) && x.toks[x.i+1].is(b) && x.toks[x.i+1].pos.off == x.cur().end
}

var boolType = &Type{Kind: KindBoolean}

func (x *sqlTranslator) or() (sqlVal, error) {
	l, err := x.and()
	for err == nil && x.accept("OR") {
		var r sqlVal
		if r, err = x.and(); err == nil {
			l = sqlVal{l.cel + " || " + r.cel, boolType}
		}
	}
	return l, err
}

func (x *sqlTranslator) and() (sqlVal, error) {
	l, err := x.not()
	for err == nil && x.accept("AND") {
		var r sqlVal
		if r, err = x.not(); err == nil {
			l = sqlVal{l.cel + " && " + r.cel, boolType}
		}
	}
	return l, err
}

func (x *sqlTranslator) not() (sqlVal, error) {
	if x.accept("NOT") {
		e, err := x.not()
		return sqlVal{"!(" + e.cel + ")", boolType}, err
	}
	return x.cmp()
}

// cmp translates comparisons. = and <> are sql_eq and sql_ne, NULL when an
// operand is NULL (CEL's == says null == 1 is false); IS NULL is
// sql_is_null, true also for an operand that failed on a NULL (`(a + 1) IS
// NULL`); IN is sql_in, NULL for a NULL operand or when no element matches
// and one is NULL, as in SQL.
func (x *sqlTranslator) cmp() (sqlVal, error) {
	l, err := x.add()
	if err != nil {
		return sqlVal{}, err
	}
	switch {
	case x.accept("IS"):
		neg := x.accept("NOT")
		var out string
		switch {
		case x.accept("NULL"):
			out = "sql_is_null(" + l.cel + ")"
		case x.accept("TRUE"):
			out = "sql_true(" + l.cel + ")"
		case x.accept("FALSE"):
			out = "sql_false(" + l.cel + ")"
		default:
			return sqlVal{}, x.unsupported()
		}
		if neg {
			out = "!" + out
		}
		return sqlVal{out, boolType}, nil
	case x.cur().is("IN") || x.cur().is("NOT") && x.toks[x.i+1].is("IN"):
		neg := x.accept("NOT")
		x.next()
		if err := x.expect("("); err != nil {
			return sqlVal{}, err
		}
		var items []string
		for {
			e, err := x.or()
			if err != nil {
				return sqlVal{}, err
			}
			items = append(items, e.cel)
			if x.accept(")") {
				break
			}
			if err := x.expect(","); err != nil {
				return sqlVal{}, err
			}
		}
		in := "sql_in(" + l.cel + ", [" + strings.Join(items, ", ") + "])"
		if neg {
			return sqlVal{"sql_not(" + in + ")", boolType}, nil
		}
		return sqlVal{in, boolType}, nil
	}
	op, width := "", 2 // width: tokens of the SQL operator
	switch {
	case x.peek2("<", ">"), x.peek2("!", "="):
		op = "!="
	case x.peek2("<", "="):
		op = "<="
	case x.peek2(">", "="):
		op = ">="
	case x.cur().is("="):
		op, width = "==", 1
	case x.cur().is("<"), x.cur().is(">"):
		op, width = x.cur().text, 1
	default:
		return l, nil
	}
	for range width {
		x.next()
	}
	r, err := x.add()
	if err != nil {
		return sqlVal{}, err
	}
	l, r = x.numeric(l, r)
	switch op {
	case "==":
		return sqlVal{"sql_eq(" + l.cel + ", " + r.cel + ")", boolType}, nil
	case "!=":
		return sqlVal{"sql_ne(" + l.cel + ", " + r.cel + ")", boolType}, nil
	}
	return sqlVal{l.cel + " " + op + " " + r.cel, boolType}, nil
}

// numeric converts an integer operand beside a FLOAT, DOUBLE or DECIMAL one
// to a CEL double, as Flink widens INT to DOUBLE; CEL has no implicit
// conversion.
func (x *sqlTranslator) numeric(l, r sqlVal) (sqlVal, sqlVal) {
	if l.isInt() && r.isApprox() {
		l = sqlVal{"double(" + l.cel + ")", typeOf(KindDouble)}
	}
	if r.isInt() && l.isApprox() {
		r = sqlVal{"double(" + r.cel + ")", typeOf(KindDouble)}
	}
	return l, r
}

// arithType is the Flink type of l op r, when both are known numbers.
func arithType(l, r sqlVal) *Type {
	switch {
	case l.isApprox() || r.isApprox():
		return typeOf(KindDouble)
	case l.kind() == KindBigint || r.kind() == KindBigint:
		return typeOf(KindBigint)
	case l.isInt() && r.isInt():
		return typeOf(KindInt)
	}
	if l.t != nil && l.t.IsTimestamp() {
		return l.t
	}
	return nil
}

func (x *sqlTranslator) add() (sqlVal, error) {
	l, err := x.mul()
	lString := false // l is the result of ||
	for err == nil {
		var op string
		switch {
		case x.peek2("|", "|"): // string concatenation, never addition
			x.next()
			x.next()
			var r sqlVal
			if r, err = x.mul(); err == nil {
				if !lString {
					l.cel = strCat(l)
				}
				l, lString = sqlVal{l.cel + " + " + strCat(r), typeOf(KindVarchar)}, true
			}
			continue
		case x.cur().is("+"), x.cur().is("-"):
			op, lString = x.cur().text, false
		default:
			return l, nil
		}
		x.next()
		var r sqlVal
		if r, err = x.mul(); err == nil {
			l, r = x.numeric(l, r)
			l = sqlVal{l.cel + " " + op + " " + r.cel, arithType(l, r)}
		}
	}
	return l, err
}

func (x *sqlTranslator) mul() (sqlVal, error) {
	l, err := x.unary()
	for err == nil && (x.cur().is("*") || x.cur().is("/") || x.cur().is("%")) {
		op := x.next().text
		var r sqlVal
		if r, err = x.unary(); err == nil {
			l, r = x.numeric(l, r)
			l = sqlVal{l.cel + " " + op + " " + r.cel, arithType(l, r)}
		}
	}
	return l, err
}

func (x *sqlTranslator) unary() (sqlVal, error) {
	if x.accept("-") {
		e, err := x.unary()
		return sqlVal{"-" + e.cel, e.t}, err
	}
	e, err := x.primary()
	for err == nil {
		switch {
		case x.cur().is("."):
			x.next()
			var f string
			if f, err = x.ident("a ROW field name"); err == nil {
				var ft *Type
				if e.t != nil && e.t.Kind == KindRow {
					for _, fd := range e.t.Fields {
						if fd.Name == f {
							ft = fd.Type
						}
					}
				}
				if celIdent(f) {
					e = sqlVal{e.cel + "." + f, ft}
				} else {
					e = sqlVal{e.cel + "[" + strconv.Quote(f) + "]", ft}
				}
			}
		case x.cur().is("["):
			e, err = x.subscript(e)
		default:
			return e, nil
		}
	}
	return e, err
}

// subscript translates arr[i] (1-based) and m['k'] to sql_at: NULL out of
// range or for a missing key, as in Flink.
func (x *sqlTranslator) subscript(e sqlVal) (sqlVal, error) {
	x.next() // [
	i, err := x.or()
	if err != nil {
		return sqlVal{}, err
	}
	if err := x.expect("]"); err != nil {
		return sqlVal{}, err
	}
	var t *Type
	switch e.kind() {
	case KindArray:
		t = e.t.Elem
	case KindMap:
		t = e.t.Value
	}
	return sqlVal{"sql_at(" + e.cel + ", " + i.cel + ")", t}, nil
}

// strCat is e as a string operand of ||: strings as they are, anything
// else through sql_string (CAST AS STRING).
func strCat(e sqlVal) string {
	c := e.cel
	if e.isString() || strings.HasPrefix(c, `"`) && strings.HasSuffix(c, `"`) && strings.Count(c, `"`)-strings.Count(c, `\"`) == 2 {
		return c
	}
	return castString(e)
}

var celIdentRE = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*$`)

// celReserved are CEL's reserved words and literals.
var celReserved = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true,
	"continue": true, "else": true, "for": true, "function": true, "if": true, "import": true, "let": true,
	"loop": true, "package": true, "namespace": true, "return": true, "var": true, "void": true, "while": true,
}

// celIdent reports whether name can be a CEL variable or field name. Names
// starting sql_ are the translator's functions.
func celIdent(name string) bool {
	return celIdentRE.MatchString(name) && !celReserved[name] && !strings.HasPrefix(name, "sql_")
}

// CELIdent reports whether a column name can be written as a CEL variable.
func CELIdent(name string) bool { return celIdent(name) }

func (x *sqlTranslator) column(name string) sqlVal {
	if !x.seen[name] {
		x.seen[name] = true
		x.cols = append(x.cols, name)
	}
	var t *Type
	if x.table != nil {
		if c, ok := x.table.Column(name); ok {
			t = c.Type
		}
	}
	if celIdent(name) {
		return sqlVal{name, t}
	}
	return sqlVal{"row[" + strconv.Quote(name) + "]", t}
}

func (x *sqlTranslator) primary() (sqlVal, error) {
	t := x.cur()
	switch t.kind {
	case tNumber:
		if strings.Count(t.text, ".") > 1 {
			return sqlVal{}, x.errf("bad number %s", t.text)
		}
		x.next()
		if strings.HasSuffix(t.text, ".") {
			return sqlVal{t.text + "0", typeOf(KindDecimal)}, nil
		}
		if strings.Contains(t.text, ".") {
			return sqlVal{t.text, typeOf(KindDecimal)}, nil
		}
		if x.lits == DoubleLiterals {
			return sqlVal{t.text + ".0", typeOf(KindDouble)}, nil
		}
		return sqlVal{t.text, typeOf(KindInt)}, nil
	case tString:
		x.next()
		return sqlVal{strconv.Quote(t.text), &Type{Kind: KindChar, Length: len([]rune(t.text)), NotNull: true}}, nil
	case tQuotedIdent:
		x.next()
		return x.column(t.text), nil
	case tPunct:
		if x.accept("(") {
			e, err := x.or()
			if err != nil {
				return sqlVal{}, err
			}
			if err := x.expect(")"); err != nil {
				return sqlVal{}, err
			}
			return sqlVal{"(" + e.cel + ")", e.t}, nil
		}
		return sqlVal{}, x.unsupported()
	case tIdent:
	default:
		return sqlVal{}, x.unsupported()
	}
	switch strings.ToUpper(t.text) {
	case "TRUE", "FALSE":
		x.next()
		return sqlVal{strings.ToLower(t.text), boolType}, nil
	case "NULL":
		x.next()
		return sqlVal{"null", nil}, nil
	case "CASE":
		return x.caseWhen()
	case "INTERVAL":
		x.next()
		d, err := x.interval()
		if err != nil {
			return sqlVal{}, err
		}
		return sqlVal{fmt.Sprintf("duration(%q)", d.String()), nil}, nil
	case "CAST":
		return x.cast()
	case "ARRAY", "MAP", "ROW":
		if n := x.toks[x.i+1]; n.is("[") || n.is("(") {
			return sqlVal{}, x.errf("unsupported Flink SQL construct %s%s...%s (a value constructor) in a computed column (supported: %s)",
				strings.ToUpper(t.text), n.text, map[string]string{"[": "]", "(": ")"}[n.text], ComputedSQL)
		}
	}
	if f, ok := niladic[strings.ToUpper(t.text)]; ok && !x.toks[x.i+1].is("(") {
		x.next()
		return f, nil
	}
	if !x.toks[x.i+1].is("(") {
		x.next()
		return x.column(t.text), nil
	}
	return x.call()
}

// caseWhen translates CASE WHEN; a condition that is NULL (or fails on a
// NULL operand) is not true, as in SQL: the CEL function sql_true, which
// package schema/expr declares, says so.
func (x *sqlTranslator) caseWhen() (sqlVal, error) {
	x.next()
	if !x.cur().is("WHEN") {
		return sqlVal{}, x.errf("unsupported Flink SQL construct: CASE value WHEN (write CASE WHEN value = ... THEN)")
	}
	var conds, vals []string
	var typ *Type
	for x.accept("WHEN") {
		c, err := x.or()
		if err != nil {
			return sqlVal{}, err
		}
		if err := x.expect("THEN"); err != nil {
			return sqlVal{}, err
		}
		v, err := x.or()
		if err != nil {
			return sqlVal{}, err
		}
		if typ == nil {
			typ = v.t
		}
		conds, vals = append(conds, c.cel), append(vals, v.cel)
	}
	out := "null"
	if x.accept("ELSE") {
		e, err := x.or()
		if err != nil {
			return sqlVal{}, err
		}
		out = e.cel
	}
	if err := x.expect("END"); err != nil {
		return sqlVal{}, err
	}
	for i := len(conds) - 1; i >= 0; i-- {
		out = "(sql_true(" + conds[i] + ") ? " + vals[i] + " : " + out + ")"
	}
	if typ != nil && typ.Kind == KindChar {
		typ = typeOf(KindVarchar)
	}
	return sqlVal{out, typ}, nil
}
