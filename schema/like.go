package schema

import (
	"fmt"
	"strings"
)

// likeFeature is a feature of Flink's LIKE clause: what a merging strategy
// applies to (SqlTableLike.FeatureOption).
type likeFeature string

// The features of a LIKE clause. PARTITIONS and DISTRIBUTION are accepted as
// Flink accepts them; connectd tables have neither (PARTITIONED BY and
// DISTRIBUTED BY are refused), so they merge nothing.
const (
	likeAll          likeFeature = "ALL"
	likeConstraints  likeFeature = "CONSTRAINTS"
	likeDistribution likeFeature = "DISTRIBUTION"
	likeGenerated    likeFeature = "GENERATED"
	likeMetadata     likeFeature = "METADATA"
	likeOptions      likeFeature = "OPTIONS"
	likePartitions   likeFeature = "PARTITIONS"
	likeWatermarks   likeFeature = "WATERMARKS"
)

var likeFeatures = []likeFeature{likeAll, likeConstraints, likeDistribution, likeGenerated, likeMetadata, likeOptions, likePartitions, likeWatermarks}

// mergeStrategy is how a feature of the base table is merged into the new
// one (SqlTableLike.MergingStrategy).
type mergeStrategy string

const (
	// including takes the base table's entries and fails on a duplicate.
	including mergeStrategy = "INCLUDING"
	// excluding leaves the base table's entries out.
	excluding mergeStrategy = "EXCLUDING"
	// overwriting takes the base table's entries; the new table's win on a
	// duplicate.
	overwriting mergeStrategy = "OVERWRITING"
)

// defaultLikeStrategies are Flink's defaults (MergeTableLikeUtil): INCLUDING
// ALL OVERWRITING OPTIONS.
var defaultLikeStrategies = map[likeFeature]mergeStrategy{
	likeConstraints: including, likeDistribution: including, likeGenerated: including,
	likeMetadata: including, likeOptions: overwriting, likePartitions: including, likeWatermarks: including,
}

// likeClause is `LIKE base [( strategy feature ... )]`.
type likeClause struct {
	base    string
	basePos pos
	// strategies holds a strategy for every feature but ALL.
	strategies map[likeFeature]mergeStrategy
	// decl is where the statement declares its parts, for errors.
	decl declPositions
}

// declPositions is where a CREATE TABLE statement declares its parts.
type declPositions struct {
	columns    map[string]pos
	options    map[string]pos
	primaryKey pos
	watermark  pos
}

// likeClause parses `LIKE name [( ... )]` as Flink's parser and
// SqlTableLike.validate do: each feature at most once, and OVERWRITING not
// for ALL, CONSTRAINTS, PARTITIONS or DISTRIBUTION.
func (p *parser) likeClause() (*likeClause, error) {
	p.next() // LIKE
	l := &likeClause{basePos: p.cur().pos, decl: p.decl, strategies: map[likeFeature]mergeStrategy{}}
	var err error
	if l.base, err = p.qualifiedName("the name of the table to copy (LIKE base)"); err != nil {
		return nil, err
	}
	given := map[likeFeature]mergeStrategy{}
	var order []likeFeature
	if p.accept("(") {
		for !p.accept(")") {
			optPos := p.cur()
			var strategy mergeStrategy
			switch {
			case p.accept("INCLUDING"):
				strategy = including
			case p.accept("EXCLUDING"):
				strategy = excluding
			case p.accept("OVERWRITING"):
				strategy = overwriting
			default:
				return nil, p.errf("expected INCLUDING, EXCLUDING, OVERWRITING or \")\" in the LIKE options, found %s", p.cur().describe())
			}
			featTok := p.cur()
			var feature likeFeature
			for _, f := range likeFeatures {
				if featTok.is(string(f)) {
					feature = f
				}
			}
			if feature == "" {
				return nil, p.errf("expected ALL, CONSTRAINTS, DISTRIBUTION, GENERATED, METADATA, OPTIONS, PARTITIONS or WATERMARKS after %s, found %s", strategy, featTok.describe())
			}
			p.next()
			at := func(msg string) error {
				return &SyntaxError{Line: optPos.pos.line, Column: optPos.pos.col, Msg: "LIKE " + l.base + ": " + msg}
			}
			if _, dup := given[feature]; dup {
				return nil, at(fmt.Sprintf("%s %s: each like option feature can be declared only once (as in Flink)", strategy, feature))
			}
			if strategy == overwriting && (feature == likeAll || feature == likeConstraints || feature == likePartitions || feature == likeDistribution) {
				return nil, at(fmt.Sprintf("illegal merging strategy 'OVERWRITING' for '%s' option (as in Flink: OVERWRITING applies to GENERATED, METADATA, OPTIONS and WATERMARKS)", feature))
			}
			given[feature] = strategy
			order = append(order, feature)
		}
	}
	// Flink's computeMergingStrategies: the defaults, then ALL for every
	// feature, then each feature given.
	for f, s := range defaultLikeStrategies {
		l.strategies[f] = s
	}
	if s, ok := given[likeAll]; ok {
		for f := range l.strategies {
			l.strategies[f] = s
		}
	}
	for _, f := range order {
		if f != likeAll {
			l.strategies[f] = given[f]
		}
	}
	return l, nil
}

// merge returns the table derived by t's LIKE clause from its base, which
// must be one of the tables defined before t. It follows Flink's
// MergeTableLikeUtil: physical columns of the base always come first, its
// computed and metadata columns, watermark, primary key and options as the
// strategies say; the new table's comment is the table's comment.
func (l *likeClause) merge(t *Table, before []*Table) (*Table, error) {
	base, err := l.find(before)
	if err != nil {
		return nil, err
	}
	errAt := func(at pos, format string, args ...any) error {
		return &SyntaxError{Line: at.line, Column: at.col, Msg: fmt.Sprintf("LIKE %s: ", l.base) + fmt.Sprintf(format, args...)}
	}
	out := &Table{Name: t.Name, Comment: t.Comment, Options: map[string]string{}}
	for _, c := range base.Columns {
		switch {
		case c.Kind == Computed && l.strategies[likeGenerated] == excluding:
		case c.Kind == Metadata && l.strategies[likeMetadata] == excluding:
		default:
			c.Type = c.Type.clone()
			out.Columns = append(out.Columns, c)
		}
	}
	for _, c := range t.Columns {
		if c.Kind != Physical {
			continue
		}
		if _, dup := out.Column(c.Name); dup {
			return nil, errAt(l.decl.columns[c.Name], "a column named '%s' already exists in the base table (as in Flink, a physical column cannot replace a column of the base table)", c.Name)
		}
	}
	// In Flink's order: per column, a clash with the base table, then what
	// a computed column reads.
	for _, c := range t.Columns {
		existing, dup := out.Column(c.Name)
		if dup && c.Kind != Physical {
			at := l.decl.columns[c.Name]
			feature, what := likeGenerated, "generated"
			if c.Kind == Metadata {
				feature, what = likeMetadata, "metadata"
			}
			if existing.Kind != c.Kind {
				return nil, errAt(at, "a column named '%s' already exists in the base table; %s columns can only overwrite other %s columns (as in Flink)", c.Name, c.Kind, c.Kind)
			}
			if l.strategies[feature] != overwriting {
				return nil, errAt(at, "a %s column named '%s' already exists in the base table; you might want to specify EXCLUDING %s or OVERWRITING %s (as in Flink)", what, c.Name, feature, feature)
			}
		}
		if c.Kind == Computed {
			if err := l.checkComputedRefs(c, t, base, errAt); err != nil {
				return nil, err
			}
		}
		if dup && c.Kind != Physical {
			*existing = c // in the base column's place, as Flink does
		} else {
			out.Columns = append(out.Columns, c)
		}
	}
	if base.Watermark != nil && l.strategies[likeWatermarks] != excluding {
		wm := *base.Watermark
		out.Watermark = &wm
	}
	if wm := t.Watermark; wm != nil {
		if b := out.Watermark; b != nil {
			if b.Column != wm.Column {
				return nil, errAt(l.decl.watermark, "the base table has a WATERMARK FOR %s and this table one FOR %s; a table has one watermark (Flink: multiple watermark definitions are not supported); EXCLUDING WATERMARKS leaves the base table's out", b.Column, wm.Column)
			}
			if l.strategies[likeWatermarks] != overwriting {
				return nil, errAt(l.decl.watermark, "there already exists a watermark spec for column '%s' in the base table; you might want to specify EXCLUDING WATERMARKS or OVERWRITING WATERMARKS (as in Flink)", wm.Column)
			}
		}
		if notInScope(t, base, wm.Column) {
			return nil, errAt(l.decl.watermark, "the rowtime attribute field '%s' is not defined in the table schema: it is a %s column of the base table, "+
				"which a watermark of this statement cannot use (as in Flink: it uses the base table's physical columns and this statement's columns)",
				wm.Column, mustColumn(base, wm.Column).Kind)
		}
		out.Watermark = wm
	}
	if base.PrimaryKey != nil && l.strategies[likeConstraints] == including {
		out.PrimaryKey = &PrimaryKey{Name: base.PrimaryKey.Name, Columns: append([]string(nil), base.PrimaryKey.Columns...)}
	}
	if t.PrimaryKey != nil {
		if out.PrimaryKey != nil {
			return nil, errAt(l.decl.primaryKey, "the base table already has a primary key; you might want to specify EXCLUDING CONSTRAINTS (as in Flink)")
		}
		// Only the columns of this statement become NOT NULL by being in
		// its primary key; a nullable column of the base table stays
		// nullable, and Flink refuses the key.
		for _, name := range t.PrimaryKey.Columns {
			if _, own := t.Column(name); own {
				continue
			}
			if c, ok := out.Column(name); ok && c.Type != nil && !c.Type.NotNull {
				return nil, errAt(l.decl.primaryKey, "invalid primary key: column '%s' of the base table is nullable (as in Flink: only the columns "+
					"of this statement become NOT NULL by being in its primary key)", name)
			}
		}
		out.PrimaryKey = t.PrimaryKey
	}
	if l.strategies[likeOptions] != excluding {
		for k, v := range base.Options {
			out.Options[k] = v
		}
	}
	for _, k := range sortedKeys(t.Options) {
		if v, dup := out.Options[k]; dup && l.strategies[likeOptions] != overwriting {
			return nil, errAt(l.decl.options[k], "there already exists an option ['%s' -> '%s'] in the base table; you might want to specify EXCLUDING OPTIONS or OVERWRITING OPTIONS (as in Flink)", k, v)
		}
		out.Options[k] = t.Options[k]
	}
	return out, nil
}

// checkComputedRefs refuses what Flink's MergeTableLikeUtil cannot
// resolve in a computed column c of the new statement t: it reads the base
// table's physical columns and t's physical and metadata columns; the base
// table's computed and metadata columns are not in scope for it (nor for a
// watermark of t, which may use t's computed columns too).
func (l *likeClause) checkComputedRefs(c Column, t, base *Table, errAt func(pos, string, ...any) error) error {
	_, refs, err := TranslateSQL(c.Expr)
	if err != nil {
		return nil // Table.Validate reports it
	}
	for _, r := range refs {
		if notInScope(t, base, r) {
			return errAt(l.decl.columns[c.Name], "column %s AS %s: unknown identifier '%s': it is a %s column of the base table, which a computed column "+
				"of this statement cannot read (as in Flink: it reads the base table's physical columns and this statement's physical and metadata columns)",
				c.Name, c.Expr, r, mustColumn(base, r).Kind)
		}
	}
	return nil
}

// notInScope reports whether name is a computed or metadata column of the
// base table that the new statement t does not declare itself.
func notInScope(t, base *Table, name string) bool {
	if _, own := t.Column(name); own {
		return false
	}
	c, inBase := base.Column(name)
	return inBase && c.Kind != Physical
}

func mustColumn(t *Table, name string) *Column {
	c, _ := t.Column(name)
	return c
}

// find returns the base table among the tables defined before: by its
// name, or by the last part of a qualified name when that is unique (as
// Catalog.Table finds tables).
func (l *likeClause) find(before []*Table) (*Table, error) {
	var found []*Table
	for _, b := range before {
		if b.Name == l.base {
			return b, nil
		}
		if i := strings.LastIndexByte(b.Name, '.'); i >= 0 && b.Name[i+1:] == l.base {
			found = append(found, b)
		}
	}
	errAt := func(format string, args ...any) error {
		return &SyntaxError{Line: l.basePos.line, Column: l.basePos.col, Msg: fmt.Sprintf(format, args...)}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		names := make([]string, len(before))
		for i, b := range before {
			names[i] = b.Name
		}
		list := "none"
		if len(names) > 0 {
			list = strings.Join(names, ", ")
		}
		return nil, errAt("LIKE %s: no table %s is defined before this statement in the same catalog or ddl (defined before: %s)", l.base, l.base, list)
	}
	return nil, errAt("LIKE %s: the table name is ambiguous; qualify it", l.base)
}

// clone returns a deep copy of t (nil for nil).
func (t *Type) clone() *Type {
	if t == nil {
		return nil
	}
	c := *t
	c.Elem, c.Key, c.Value = t.Elem.clone(), t.Key.clone(), t.Value.clone()
	if t.Fields != nil {
		c.Fields = make([]Field, len(t.Fields))
		for i, f := range t.Fields {
			c.Fields[i] = Field{Name: f.Name, Type: f.Type.clone()}
		}
	}
	return &c
}
