package schema

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ParseDDL parses Flink SQL `CREATE TABLE` statements, separated by
// semicolons or simply one after the other. Keywords are case-insensitive,
// identifiers may be backquoted, strings are single-quoted with ” for a
// quote, and `--` and `/* */` are comments. Errors are *SyntaxError with a
// line and column. The tables are not validated; see Table.Validate.
func ParseDDL(src string) ([]*Table, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	var tables []*Table
	for {
		for p.accept(";") {
		}
		if p.cur().kind == tEOF {
			return tables, nil
		}
		if err := p.refuseStatement(); err != nil {
			return nil, err
		}
		t, like, err := p.createTable()
		if err != nil {
			return nil, err
		}
		if like != nil {
			if t, err = like.merge(t, tables); err != nil {
				return nil, err
			}
		}
		t.normalize()
		tables = append(tables, t)
	}
}

// ParseType parses a Flink SQL type such as `DECIMAL(10, 2) NOT NULL` or
// `ROW<id BIGINT, tags ARRAY<STRING>>`.
func ParseType(src string) (*Type, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	t, err := p.typ(0)
	if err != nil {
		return nil, err
	}
	if p.cur().kind != tEOF {
		return nil, p.errf("unexpected %s after the type", p.cur().describe())
	}
	return t, nil
}

// maxTypeDepth bounds the nesting of ARRAY, MAP and ROW types.
const maxTypeDepth = 64

type parser struct {
	src  string
	toks []token
	i    int
	// decl holds where the statement being parsed declares its parts, for
	// the errors of a LIKE clause.
	decl declPositions
}

func (p *parser) cur() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) accept(kw string) bool {
	if p.cur().is(kw) {
		p.next()
		return true
	}
	return false
}

func (p *parser) errf(format string, args ...any) error {
	t := p.cur()
	return &SyntaxError{Line: t.pos.line, Column: t.pos.col, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) expect(kws ...string) error {
	for _, kw := range kws {
		if !p.accept(kw) {
			return p.errf("expected %s, found %s", strings.ToUpper(kw), p.cur().describe())
		}
	}
	return nil
}

func (p *parser) ident(what string) (string, error) {
	t := p.cur()
	if t.kind == tIdent || t.kind == tQuotedIdent {
		p.next()
		return t.text, nil
	}
	return "", p.errf("expected %s, found %s", what, t.describe())
}

func (p *parser) str(what string) (string, error) {
	t := p.cur()
	if t.kind != tString {
		return "", p.errf("expected %s (a 'quoted string'), found %s", what, t.describe())
	}
	p.next()
	return t.text, nil
}

// createTable parses one CREATE TABLE statement. like is its LIKE clause,
// nil without one; the caller merges the base table in.
func (p *parser) createTable() (t *Table, like *likeClause, err error) {
	p.decl = declPositions{columns: map[string]pos{}, options: map[string]pos{}}
	if err := p.expect("CREATE"); err != nil {
		return nil, nil, err
	}
	p.accept("TEMPORARY")
	if err := p.expect("TABLE"); err != nil {
		return nil, nil, err
	}
	if p.accept("IF") {
		if err := p.expect("NOT", "EXISTS"); err != nil {
			return nil, nil, err
		}
	}
	namePos := p.cur().pos
	name, err := p.qualifiedName("a table name")
	if err != nil {
		return nil, nil, err
	}
	t = &Table{Name: name, Options: map[string]string{}}
	// The column list may be left out, as in Flink, when a LIKE clause
	// brings the columns: CREATE TABLE t WITH (...) LIKE base.
	hasColumnList := p.accept("(")
	if hasColumnList {
		for {
			if err := p.element(t); err != nil {
				return nil, nil, err
			}
			if p.accept(")") {
				break
			}
			if err := p.expect(","); err != nil {
				return nil, nil, p.errf("expected \",\" or \")\" after a column, found %s", p.cur().describe())
			}
		}
	} else if c := p.cur(); !c.is("WITH") && !c.is("AS") && !c.is("LIKE") && !c.is("COMMENT") {
		return nil, nil, p.errf("expected (, found %s", c.describe())
	}
	if p.accept("COMMENT") {
		if t.Comment, err = p.str("a table comment"); err != nil {
			return nil, nil, err
		}
	}
	if err := p.refuseTableClause(); err != nil {
		return nil, nil, err
	}
	if p.accept("WITH") {
		if err := p.options(t); err != nil {
			return nil, nil, err
		}
	}
	if err := p.refuseAsSelect(); err != nil {
		return nil, nil, err
	}
	if p.cur().is("LIKE") {
		if like, err = p.likeClause(); err != nil {
			return nil, nil, err
		}
	}
	if c := p.cur(); c.kind != tEOF && !c.is(";") && !c.is("CREATE") {
		return nil, nil, p.errf("expected the end of the statement, found %s", c.describe())
	}
	if !hasColumnList && like == nil {
		return nil, nil, &SyntaxError{Line: namePos.line, Column: namePos.col,
			Msg: fmt.Sprintf("CREATE TABLE %s has no column list: give the columns in (...), or LIKE a table to copy them from", name)}
	}
	return t, like, nil
}

// qualifiedName parses `name` or `cat.db.name`.
func (p *parser) qualifiedName(what string) (string, error) {
	name, err := p.ident(what)
	if err != nil {
		return "", err
	}
	for p.accept(".") {
		part, err := p.ident(what)
		if err != nil {
			return "", err
		}
		name += "." + part
	}
	return name, nil
}

func (p *parser) options(t *Table) error {
	if err := p.expect("("); err != nil {
		return err
	}
	if p.accept(")") {
		return nil
	}
	for {
		keyTok := p.cur()
		k, err := p.str("an option key")
		if err != nil {
			return err
		}
		if err := p.expect("="); err != nil {
			return err
		}
		v, err := p.str("an option value")
		if err != nil {
			return err
		}
		if _, dup := t.Options[k]; dup {
			return &SyntaxError{Line: keyTok.pos.line, Column: keyTok.pos.col, Msg: fmt.Sprintf("option '%s' is set twice", k)}
		}
		t.Options[k] = v
		p.decl.options[k] = keyTok.pos
		if p.accept(")") {
			return nil
		}
		if !p.accept(",") {
			return p.errf("expected \",\" or \")\" after an option, found %s", p.cur().describe())
		}
	}
}

func (p *parser) element(t *Table) error {
	c := p.cur()
	switch {
	case c.is("CONSTRAINT") || c.is("PRIMARY"):
		return p.primaryKey(t)
	case c.is("WATERMARK"):
		return p.watermark(t)
	}
	namePos := c.pos
	name, err := p.ident("a column name, PRIMARY KEY or WATERMARK")
	if err != nil {
		return err
	}
	if _, seen := p.decl.columns[name]; !seen {
		p.decl.columns[name] = namePos
	}
	col := Column{Name: name}
	if p.accept("AS") {
		col.Kind = Computed
		col.Expr, err = p.exprText()
		if err != nil {
			return err
		}
	} else {
		if col.Type, err = p.typ(0); err != nil {
			return err
		}
		if p.accept("METADATA") {
			col.Kind = Metadata
			if p.accept("FROM") {
				if col.MetadataKey, err = p.str("a metadata key"); err != nil {
					return err
				}
			}
			col.Virtual = p.accept("VIRTUAL")
		}
		if p.cur().is("CONSTRAINT") || p.cur().is("PRIMARY") {
			if t.PrimaryKey != nil {
				return p.errf("the table has more than one PRIMARY KEY")
			}
			pk := &PrimaryKey{Columns: []string{name}}
			p.decl.primaryKey = p.cur().pos
			if p.accept("CONSTRAINT") {
				if pk.Name, err = p.ident("a constraint name"); err != nil {
					return err
				}
			}
			if err := p.expect("PRIMARY", "KEY"); err != nil {
				return err
			}
			if err := p.notEnforced(); err != nil {
				return err
			}
			t.PrimaryKey = pk
		}
	}
	if p.accept("COMMENT") {
		if col.Comment, err = p.str("a column comment"); err != nil {
			return err
		}
	}
	t.Columns = append(t.Columns, col)
	return nil
}

func (p *parser) notEnforced() error {
	if p.cur().is("NOT") && p.toks[p.i+1].is("ENFORCED") {
		p.next()
		p.next()
		return nil
	}
	return p.errf("expected NOT ENFORCED: Flink does not enforce primary keys and requires saying so, found %s", p.cur().describe())
}

func (p *parser) primaryKey(t *Table) error {
	if t.PrimaryKey != nil {
		return p.errf("the table has more than one PRIMARY KEY")
	}
	pk := &PrimaryKey{}
	p.decl.primaryKey = p.cur().pos
	var err error
	if p.accept("CONSTRAINT") {
		if pk.Name, err = p.ident("a constraint name"); err != nil {
			return err
		}
	}
	if err := p.expect("PRIMARY", "KEY", "("); err != nil {
		return err
	}
	for {
		name, err := p.ident("a column name")
		if err != nil {
			return err
		}
		pk.Columns = append(pk.Columns, name)
		if p.accept(")") {
			break
		}
		if err := p.expect(","); err != nil {
			return err
		}
	}
	if err := p.notEnforced(); err != nil {
		return err
	}
	t.PrimaryKey = pk
	return nil
}

// watermark parses `WATERMARK FOR col AS col [- INTERVAL 'n' unit]`.
func (p *parser) watermark(t *Table) error {
	if t.Watermark != nil {
		return p.errf("the table has more than one WATERMARK")
	}
	p.decl.watermark = p.cur().pos
	p.next()
	if err := p.expect("FOR"); err != nil {
		return err
	}
	col, err := p.ident("the rowtime column")
	if err != nil {
		return err
	}
	if err := p.expect("AS"); err != nil {
		return err
	}
	exprStart := p.cur()
	exprIdx := p.i
	unsupported := func() error {
		p.i = exprIdx
		text, _ := p.exprText()
		return &SyntaxError{Line: exprStart.pos.line, Column: exprStart.pos.col, Msg: fmt.Sprintf(
			"WATERMARK FOR %s AS %s: connectd supports `%s - INTERVAL 'n' unit` (bounded out-of-orderness), `%s` (ascending) "+
				"or `SOURCE_WATERMARK()` (the source's own watermark)",
			col, text, col, col)}
	}
	if p.cur().is("SOURCE_WATERMARK") && p.toks[p.i+1].is("(") {
		p.next()
		p.next()
		if err := p.expect(")"); err != nil {
			return err
		}
		if c := p.cur(); !c.is(",") && !c.is(")") {
			return unsupported()
		}
		t.Watermark = &Watermark{Column: col, Source: true}
		return nil
	}
	if ref, err := p.ident("the rowtime column"); err != nil || ref != col {
		return unsupported()
	}
	wm := &Watermark{Column: col}
	if p.accept("-") {
		if !p.accept("INTERVAL") {
			return unsupported()
		}
		if wm.Delay, err = p.interval(); err != nil {
			return err
		}
	}
	if c := p.cur(); !c.is(",") && !c.is(")") {
		return unsupported()
	}
	t.Watermark = wm
	return nil
}

var (
	wholeRE   = regexp.MustCompile(`^[0-9]+$`)
	decimalRE = regexp.MustCompile(`^[0-9]+(\.[0-9]*)?$`)
)

// interval parses `'n' unit` after INTERVAL.
func (p *parser) interval() (time.Duration, error) {
	numTok := p.cur()
	n, err := p.str("the interval value")
	if err != nil {
		return 0, err
	}
	unitTok := p.cur()
	unit, err := p.ident("an interval unit")
	if err != nil {
		return 0, err
	}
	var d time.Duration
	switch strings.ToUpper(unit) {
	case "SECOND":
		d = time.Second
	case "MINUTE":
		d = time.Minute
	case "HOUR":
		d = time.Hour
	case "DAY":
		d = 24 * time.Hour
	default:
		return 0, &SyntaxError{Line: unitTok.pos.line, Column: unitTok.pos.col,
			Msg: fmt.Sprintf("interval unit %s: want SECOND, MINUTE, HOUR or DAY", unit)}
	}
	if p.accept("(") { // SECOND(3): the precision of the literal
		if p.cur().kind != tNumber {
			return 0, p.errf("expected the interval precision, found %s", p.cur().describe())
		}
		p.next()
		if err := p.expect(")"); err != nil {
			return 0, err
		}
	}
	// As Flink's (Calcite's) interval literals: digits, a fraction only
	// with SECOND, spaces around and a + sign allowed; not negative here.
	digits, want := wholeRE, "a non-negative whole number (a fraction only with SECOND)"
	if d == time.Second {
		digits, want = decimalRE, "a non-negative decimal number such as '5' or '0.5'"
	}
	v := strings.TrimPrefix(strings.TrimSpace(n), "+")
	if !digits.MatchString(v) {
		return 0, &SyntaxError{Line: numTok.pos.line, Column: numTok.pos.col,
			Msg: fmt.Sprintf("interval value '%s' %s: want %s", n, strings.ToUpper(unit), want)}
	}
	r, _ := new(big.Rat).SetString(strings.TrimSuffix(v, "."))
	r.Mul(r, new(big.Rat).SetInt64(int64(d)))
	if !r.IsInt() || r.Num().BitLen() > 62 {
		return 0, &SyntaxError{Line: numTok.pos.line, Column: numTok.pos.col,
			Msg: fmt.Sprintf("interval value '%s' %s is out of range or finer than a nanosecond", n, unit)}
	}
	return time.Duration(r.Num().Int64()), nil
}

// exprText consumes a SQL expression up to a "," or ")" or COMMENT outside
// parentheses and brackets, and returns its source text.
func (p *parser) exprText() (string, error) {
	start := p.cur()
	depth := 0
	end := start.pos.off
	for {
		t := p.cur()
		switch {
		case t.kind == tEOF:
			return "", p.errf("expression is not closed")
		case depth == 0 && (t.is(",") || t.is(")") || t.is("COMMENT")):
			text := strings.TrimSpace(p.src[start.pos.off:end])
			if text == "" {
				return "", p.errf("expected an expression, found %s", t.describe())
			}
			return text, nil
		case t.is("(") || t.is("["):
			depth++
		case t.is(")") || (t.is("]") && depth > 0):
			depth--
		}
		end = t.end
		p.next()
	}
}

// typ parses a type with its nullability, and Flink's postfix form
// `t ARRAY` of ARRAY<t>.
func (p *parser) typ(depth int) (*Type, error) {
	if depth > maxTypeDepth {
		return nil, p.errf("type nested more than %d levels deep", maxTypeDepth)
	}
	t, err := p.baseType(depth)
	if err != nil {
		return nil, err
	}
	p.nullability(t)
	for p.cur().is("ARRAY") {
		if depth+height(t)+1 > maxTypeDepth {
			return nil, p.errf("type nested more than %d levels deep", maxTypeDepth)
		}
		p.next()
		t = &Type{Kind: KindArray, Elem: t}
		p.nullability(t)
	}
	return t, nil
}

// height is how many levels of ARRAY, MAP and ROW t nests below itself.
func height(t *Type) int {
	kids := []*Type{t.Elem, t.Key, t.Value}
	for _, f := range t.Fields {
		kids = append(kids, f.Type)
	}
	h := 0
	for _, k := range kids {
		if k != nil {
			h = max(h, height(k)+1)
		}
	}
	return h
}

// nullability parses an optional NOT NULL or NULL after a type.
func (p *parser) nullability(t *Type) {
	if p.cur().is("NOT") && p.toks[p.i+1].is("NULL") {
		p.next()
		p.next()
		t.NotNull = true
	} else if p.accept("NULL") {
		t.NotNull = false
	}
}

func (p *parser) baseType(depth int) (*Type, error) {
	tok := p.cur()
	if tok.kind != tIdent {
		return nil, p.errf("expected a type, found %s", tok.describe())
	}
	p.next()
	t := &Type{}
	var err error
	switch strings.ToUpper(tok.text) {
	// Without a length, CHAR and BINARY are of length 1 and VARCHAR and
	// VARBINARY of the maximum length (STRING, BYTES), as in Flink SQL DDL
	// (FlinkTypeSystem.getDefaultPrecision).
	case "CHAR", "CHARACTER":
		t.Kind = KindChar
		def := 1
		if p.accept("VARYING") {
			t.Kind, def = KindVarchar, MaxLength
		}
		t.Length, err = p.optParam(def)
	case "VARCHAR":
		t.Kind = KindVarchar
		t.Length, err = p.optParam(MaxLength)
	case "STRING":
		t.Kind, t.Length = KindVarchar, MaxLength
	case "BOOLEAN":
		t.Kind = KindBoolean
	case "TINYINT":
		t.Kind = KindTinyint
	case "SMALLINT":
		t.Kind = KindSmallint
	case "INT", "INTEGER":
		t.Kind = KindInt
	case "BIGINT":
		t.Kind = KindBigint
	case "FLOAT":
		t.Kind = KindFloat
	case "DOUBLE":
		t.Kind = KindDouble
		p.accept("PRECISION")
	case "DECIMAL", "DEC", "NUMERIC":
		t.Kind, t.Precision, t.Scale = KindDecimal, DefaultDecimalPrecision, DefaultDecimalScale
		if p.accept("(") {
			if t.Precision, err = p.number(); err != nil {
				return nil, err
			}
			if p.accept(",") {
				if t.Scale, err = p.number(); err != nil {
					return nil, err
				}
			}
			err = p.expect(")")
		}
	case "DATE":
		t.Kind = KindDate
	case "TIME":
		t.Kind = KindTime
		if t.Precision, err = p.optParam(DefaultTimePrecision); err == nil && p.cur().is("WITHOUT") {
			err = p.expect("WITHOUT", "TIME", "ZONE")
		}
	case "TIMESTAMP":
		t.Kind = KindTimestamp
		if t.Precision, err = p.optParam(DefaultTimestampPrecision); err != nil {
			return nil, err
		}
		switch {
		case p.cur().is("WITHOUT"):
			err = p.expect("WITHOUT", "TIME", "ZONE")
		case p.cur().is("WITH"):
			if next := p.toks[p.i+1]; next.is("LOCAL") {
				t.Kind = KindTimestampLTZ
				err = p.expect("WITH", "LOCAL", "TIME", "ZONE")
			} else if next.is("TIME") {
				return nil, p.errf("TIMESTAMP WITH TIME ZONE is not supported by Flink; use TIMESTAMP_LTZ")
			}
		}
	case "TIMESTAMP_LTZ":
		t.Kind = KindTimestampLTZ
		t.Precision, err = p.optParam(DefaultTimestampPrecision)
	case "BINARY":
		t.Kind = KindBinary
		t.Length, err = p.optParam(1)
	case "VARBINARY":
		t.Kind = KindVarbinary
		t.Length, err = p.optParam(MaxLength)
	case "BYTES":
		t.Kind, t.Length = KindVarbinary, MaxLength
	case "ARRAY":
		t.Kind = KindArray
		if err = p.expect("<"); err != nil {
			return nil, err
		}
		if t.Elem, err = p.typ(depth + 1); err != nil {
			return nil, err
		}
		err = p.expect(">")
	case "MAP":
		t.Kind = KindMap
		if err = p.expect("<"); err != nil {
			return nil, err
		}
		if t.Key, err = p.typ(depth + 1); err != nil {
			return nil, err
		}
		if err = p.expect(","); err != nil {
			return nil, err
		}
		if t.Value, err = p.typ(depth + 1); err != nil {
			return nil, err
		}
		err = p.expect(">")
	case "ROW":
		t.Kind = KindRow
		err = p.rowFields(t, depth)
	default:
		return nil, &SyntaxError{Line: tok.pos.line, Column: tok.pos.col, Msg: fmt.Sprintf("unknown type %s", tok.text)}
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

func (p *parser) rowFields(t *Type, depth int) error {
	closer := ">"
	if p.accept("(") {
		closer = ")"
	} else if err := p.expect("<"); err != nil {
		return err
	}
	if p.accept(closer) {
		return nil
	}
	for {
		name, err := p.ident("a ROW field name")
		if err != nil {
			return err
		}
		ft, err := p.typ(depth + 1)
		if err != nil {
			return err
		}
		if p.cur().kind == tString { // field description
			p.next()
		}
		t.Fields = append(t.Fields, Field{Name: name, Type: ft})
		if p.accept(closer) {
			return nil
		}
		if err := p.expect(","); err != nil {
			return err
		}
	}
}

func (p *parser) number() (int, error) {
	t := p.cur()
	if t.kind != tNumber {
		return 0, p.errf("expected a number, found %s", t.describe())
	}
	n, err := strconv.Atoi(t.text)
	if err != nil || n < 0 {
		return 0, p.errf("expected a whole number, found %s", t.describe())
	}
	p.next()
	return n, nil
}

// optParam parses an optional `(n)`.
func (p *parser) optParam(def int) (int, error) {
	if !p.accept("(") {
		return def, nil
	}
	n, err := p.number()
	if err != nil {
		return 0, err
	}
	return n, p.expect(")")
}
