package schema

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ComputedSQL lists the Flink SQL that a computed column (`col AS expr`) may
// use; TranslateSQL turns it into CEL and rejects anything else.
const ComputedSQL = "column names (a.b for ROW fields), numbers, 'strings', TRUE, FALSE, NULL, " +
	"+ - * / %, || (string concatenation), = <> != < <= > >=, AND, OR, NOT, IS [NOT] NULL, IS [NOT] TRUE/FALSE, " +
	"x [NOT] IN (...), CASE WHEN ... THEN ... [ELSE ...] END, CAST(x AS STRING | INT | BIGINT | SMALLINT | TINYINT | " +
	"DOUBLE | FLOAT | DECIMAL | BOOLEAN | TIMESTAMP | TIMESTAMP_LTZ | BYTES), INTERVAL 'n' SECOND | MINUTE | HOUR | DAY, " +
	"UPPER, LOWER, TRIM, CHAR_LENGTH, CONCAT, TO_TIMESTAMP_LTZ(epoch, 0 | 3)"

// TranslateSQL translates a Flink SQL expression (the `AS expr` of a computed
// column) into a CEL expression, and returns the column names it reads. A
// column whose name is not a CEL identifier is read as row["name"]. An
// unsupported construct is an error that names it; see ComputedSQL.
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
	toks, err := lex(sql)
	if err != nil {
		return "", nil, err
	}
	x := &sqlTranslator{parser: parser{src: sql, toks: toks}, seen: map[string]bool{}, lits: lits}
	out, err := x.or()
	if err != nil {
		return "", nil, err
	}
	if x.cur().kind != tEOF {
		return "", nil, x.unsupported()
	}
	return out, x.cols, nil
}

type sqlTranslator struct {
	parser
	lits Literals
	cols []string
	seen map[string]bool
}

func (x *sqlTranslator) unsupported() error {
	return x.errf("unsupported Flink SQL construct %s in a computed column (supported: %s)", x.cur().describe(), ComputedSQL)
}

// peek2 reports whether the current and next tokens are a and b (two-character operators).
func (x *sqlTranslator) peek2(a, b string) bool {
	return x.cur().is(a) && x.toks[x.i+1].is(b) && x.toks[x.i+1].pos.off == x.cur().end
}

func (x *sqlTranslator) or() (string, error) {
	l, err := x.and()
	for err == nil && x.accept("OR") {
		var r string
		if r, err = x.and(); err == nil {
			l = l + " || " + r
		}
	}
	return l, err
}

func (x *sqlTranslator) and() (string, error) {
	l, err := x.not()
	for err == nil && x.accept("AND") {
		var r string
		if r, err = x.not(); err == nil {
			l = l + " && " + r
		}
	}
	return l, err
}

func (x *sqlTranslator) not() (string, error) {
	if x.accept("NOT") {
		e, err := x.not()
		return "!(" + e + ")", err
	}
	return x.cmp()
}

func (x *sqlTranslator) cmp() (string, error) {
	l, err := x.add()
	if err != nil {
		return "", err
	}
	switch {
	case x.accept("IS"):
		neg := x.accept("NOT")
		op := map[bool]string{false: " == ", true: " != "}[neg]
		switch {
		case x.accept("NULL"):
			return l + op + "null", nil
		case x.accept("TRUE"):
			return "(" + l + op + "true)", nil
		case x.accept("FALSE"):
			return "(" + l + op + "false)", nil
		}
		return "", x.unsupported()
	case x.cur().is("IN") || x.cur().is("NOT") && x.toks[x.i+1].is("IN"):
		neg := x.accept("NOT")
		x.next()
		if err := x.expect("("); err != nil {
			return "", err
		}
		var items []string
		for {
			e, err := x.or()
			if err != nil {
				return "", err
			}
			items = append(items, e)
			if x.accept(")") {
				break
			}
			if err := x.expect(","); err != nil {
				return "", err
			}
		}
		in := l + " in [" + strings.Join(items, ", ") + "]"
		if neg {
			return "!(" + in + ")", nil
		}
		return in, nil
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
	return l + " " + op + " " + r, err
}

func (x *sqlTranslator) add() (string, error) {
	l, err := x.mul()
	lString := false // l is the result of ||
	for err == nil {
		var op string
		switch {
		case x.peek2("|", "|"): // string concatenation, never addition
			x.next()
			x.next()
			var r string
			if r, err = x.mul(); err == nil {
				if !lString {
					l = strCat(l)
				}
				l, lString = l+" + "+strCat(r), true
			}
			continue
		case x.cur().is("+"), x.cur().is("-"):
			op, lString = x.cur().text, false
		default:
			return l, nil
		}
		x.next()
		var r string
		if r, err = x.mul(); err == nil {
			l = l + " " + op + " " + r
		}
	}
	return l, err
}

func (x *sqlTranslator) mul() (string, error) {
	l, err := x.unary()
	for err == nil && (x.cur().is("*") || x.cur().is("/") || x.cur().is("%")) {
		op := x.next().text
		var r string
		if r, err = x.unary(); err == nil {
			l = l + " " + op + " " + r
		}
	}
	return l, err
}

func (x *sqlTranslator) unary() (string, error) {
	if x.accept("-") {
		e, err := x.unary()
		return "-" + e, err
	}
	e, err := x.primary()
	for err == nil && x.cur().is(".") {
		x.next()
		var f string
		if f, err = x.ident("a ROW field name"); err == nil {
			if celIdent(f) {
				e += "." + f
			} else {
				e += "[" + strconv.Quote(f) + "]"
			}
		}
	}
	return e, err
}

// strCat is e as a string operand of ||: string literals and string(...)
// as they are, anything else through string().
func strCat(e string) string {
	if strings.HasPrefix(e, "string(") && strings.HasSuffix(e, ")") || strings.HasPrefix(e, `"`) && strings.HasSuffix(e, `"`) && strings.Count(e, `"`)-strings.Count(e, `\"`) == 2 {
		return e
	}
	return "string(" + e + ")"
}

var celIdentRE = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*$`)

// celReserved are CEL's reserved words and literals.
var celReserved = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true,
	"continue": true, "else": true, "for": true, "function": true, "if": true, "import": true, "let": true,
	"loop": true, "package": true, "namespace": true, "return": true, "var": true, "void": true, "while": true,
}

// celIdent reports whether name can be a CEL variable or field name.
func celIdent(name string) bool { return celIdentRE.MatchString(name) && !celReserved[name] }

// CELIdent reports whether a column name can be written as a CEL variable.
func CELIdent(name string) bool { return celIdent(name) }

func (x *sqlTranslator) column(name string) string {
	if !x.seen[name] {
		x.seen[name] = true
		x.cols = append(x.cols, name)
	}
	if celIdent(name) {
		return name
	}
	return "row[" + strconv.Quote(name) + "]"
}

func (x *sqlTranslator) primary() (string, error) {
	t := x.cur()
	switch t.kind {
	case tNumber:
		if strings.Count(t.text, ".") > 1 {
			return "", x.errf("bad number %s", t.text)
		}
		x.next()
		if strings.HasSuffix(t.text, ".") {
			return t.text + "0", nil
		}
		if x.lits == DoubleLiterals && !strings.Contains(t.text, ".") {
			return t.text + ".0", nil
		}
		return t.text, nil
	case tString:
		x.next()
		return strconv.Quote(t.text), nil
	case tQuotedIdent:
		x.next()
		return x.column(t.text), nil
	case tPunct:
		if x.accept("(") {
			e, err := x.or()
			if err != nil {
				return "", err
			}
			if err := x.expect(")"); err != nil {
				return "", err
			}
			return "(" + e + ")", nil
		}
		return "", x.unsupported()
	case tIdent:
	default:
		return "", x.unsupported()
	}
	switch strings.ToUpper(t.text) {
	case "TRUE", "FALSE", "NULL":
		x.next()
		return strings.ToLower(t.text), nil
	case "CASE":
		return x.caseWhen()
	case "INTERVAL":
		x.next()
		d, err := x.interval()
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("duration(%q)", d.String()), nil
	case "CAST":
		return x.cast()
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
func (x *sqlTranslator) caseWhen() (string, error) {
	x.next()
	if !x.cur().is("WHEN") {
		return "", x.errf("unsupported Flink SQL construct: CASE value WHEN (write CASE WHEN value = ... THEN)")
	}
	var conds, vals []string
	for x.accept("WHEN") {
		c, err := x.or()
		if err != nil {
			return "", err
		}
		if err := x.expect("THEN"); err != nil {
			return "", err
		}
		v, err := x.or()
		if err != nil {
			return "", err
		}
		conds, vals = append(conds, c), append(vals, v)
	}
	out := "null"
	if x.accept("ELSE") {
		e, err := x.or()
		if err != nil {
			return "", err
		}
		out = e
	}
	if err := x.expect("END"); err != nil {
		return "", err
	}
	for i := len(conds) - 1; i >= 0; i-- {
		out = "(sql_true(" + conds[i] + ") ? " + vals[i] + " : " + out + ")"
	}
	return out, nil
}

func (x *sqlTranslator) cast() (string, error) {
	x.next()
	if err := x.expect("("); err != nil {
		return "", err
	}
	e, err := x.or()
	if err != nil {
		return "", err
	}
	if err := x.expect("AS"); err != nil {
		return "", err
	}
	typTok := x.cur()
	typ, err := x.typ(0)
	if err != nil {
		return "", err
	}
	if err := x.expect(")"); err != nil {
		return "", err
	}
	var fn string
	switch {
	case (typ.IsString() || typ.IsBinary()) && (typ.Kind == KindChar || typ.Kind == KindBinary || typ.Length != MaxLength):
		return "", &SyntaxError{Line: typTok.pos.line, Column: typTok.pos.col,
			Msg: fmt.Sprintf("unsupported Flink SQL construct CAST(... AS %s) in a computed column: "+
				"Flink fits the value to the length (VARCHAR and VARBINARY cut it, CHAR and BINARY also pad it); cast to STRING or BYTES", typ)}
	case typ.IsString():
		fn = "string"
	case typ.Kind == KindTinyint, typ.Kind == KindSmallint, typ.Kind == KindInt, typ.Kind == KindBigint:
		fn = "int"
	case typ.Kind == KindFloat, typ.Kind == KindDouble, typ.Kind == KindDecimal:
		fn = "double"
	case typ.Kind == KindBoolean:
		fn = "bool"
	case typ.IsTimestamp():
		fn = "timestamp"
	case typ.IsBinary():
		fn = "bytes"
	default:
		return "", &SyntaxError{Line: typTok.pos.line, Column: typTok.pos.col,
			Msg: fmt.Sprintf("unsupported Flink SQL construct CAST(... AS %s) in a computed column (supported: %s)", typ, ComputedSQL)}
	}
	return fn + "(" + e + ")", nil
}

func (x *sqlTranslator) call() (string, error) {
	nameTok := x.next()
	x.next() // (
	var args []string
	if !x.accept(")") {
		for {
			e, err := x.or()
			if err != nil {
				return "", err
			}
			args = append(args, e)
			if x.accept(")") {
				break
			}
			if err := x.expect(","); err != nil {
				return "", err
			}
		}
	}
	name := strings.ToUpper(nameTok.text)
	bad := func(want string) error {
		return &SyntaxError{Line: nameTok.pos.line, Column: nameTok.pos.col,
			Msg: fmt.Sprintf("%s takes %s, got %d arguments", name, want, len(args))}
	}
	switch name {
	case "UPPER", "LOWER", "TRIM", "CHAR_LENGTH", "CHARACTER_LENGTH":
		if len(args) != 1 {
			return "", bad("one argument")
		}
		fn := map[string]string{"UPPER": "upperAscii", "LOWER": "lowerAscii", "TRIM": "trim", "CHAR_LENGTH": "size", "CHARACTER_LENGTH": "size"}[name]
		if fn == "size" {
			return "size(" + args[0] + ")", nil
		}
		return "(" + args[0] + ")." + fn + "()", nil
	case "CONCAT":
		if len(args) == 0 {
			return "", bad("at least one argument")
		}
		for i, a := range args {
			args[i] = strCat(a)
		}
		return "(" + strings.Join(args, " + ") + ")", nil
	case "TO_TIMESTAMP_LTZ":
		if len(args) != 2 {
			return "", bad("two arguments (epoch, precision 0 or 3)")
		}
		switch strings.TrimSuffix(args[1], ".0") {
		case "0":
			return "timestamp(int(" + args[0] + "))", nil
		case "3":
			return "(timestamp(0) + duration(string(int(" + args[0] + ")) + \"ms\"))", nil
		}
		return "", &SyntaxError{Line: nameTok.pos.line, Column: nameTok.pos.col, Msg: "TO_TIMESTAMP_LTZ: the precision must be the literal 0 or 3"}
	}
	return "", &SyntaxError{Line: nameTok.pos.line, Column: nameTok.pos.col,
		Msg: fmt.Sprintf("unsupported Flink SQL function %s in a computed column (supported: %s)", nameTok.text, ComputedSQL)}
}
