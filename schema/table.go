package schema

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ColumnKind says where a column's value comes from.
type ColumnKind int

// Kinds of columns, as in Flink's Column.
const (
	// Physical columns are read from and written to the record's key or value.
	Physical ColumnKind = iota
	// Metadata columns are connector metadata: `METADATA [FROM 'key'] [VIRTUAL]`.
	Metadata
	// Computed columns are `AS expr`: the Flink SQL text is kept in Expr and
	// translated to CEL (TranslateSQL, package schema/expr) to be evaluated
	// after decoding; Validate rejects SQL outside the supported subset.
	Computed
)

func (k ColumnKind) String() string {
	switch k {
	case Physical:
		return "physical"
	case Metadata:
		return "metadata"
	case Computed:
		return "computed"
	}
	return fmt.Sprintf("ColumnKind(%d)", int(k))
}

// Column is one column of a table.
type Column struct {
	Name string
	// Type is nil for computed columns, whose type is the expression's.
	Type *Type
	Kind ColumnKind
	// MetadataKey is the connector metadata key of a Metadata column: the
	// FROM key, or the column name when FROM is absent.
	MetadataKey string
	// Virtual metadata columns are read-only: they are not written on encode.
	Virtual bool
	// Expr is the SQL expression text of a Computed column.
	Expr    string
	Comment string
}

// PrimaryKey is `[CONSTRAINT name] PRIMARY KEY (cols) NOT ENFORCED`.
type PrimaryKey struct {
	Name    string
	Columns []string
}

// Watermark is `WATERMARK FOR column AS column - INTERVAL 'n' unit`: the
// event-time column and the bounded out-of-orderness delay.
type Watermark struct {
	Column string
	Delay  time.Duration
	// Source is `WATERMARK FOR col AS SOURCE_WATERMARK()`: the source's own
	// watermark (kafka_source's, from the record timestamps or its
	// watermark settings) instead of one derived from col; Delay is 0.
	Source bool
}

// Table is a table definition: Flink's CatalogTable.
type Table struct {
	// Name is the table name as written, possibly qualified (`cat.db.t`).
	Name       string
	Columns    []Column
	PrimaryKey *PrimaryKey
	Watermark  *Watermark
	// Options are the WITH options, keys as written (Flink keys are case-sensitive).
	Options map[string]string
	Comment string
}

// Column returns the column with the given name (case-sensitive, as Flink).
func (t *Table) Column(name string) (*Column, bool) {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i], true
		}
	}
	return nil, false
}

// PhysicalColumns returns the physical columns in declaration order.
func (t *Table) PhysicalColumns() []Column {
	out := make([]Column, 0, len(t.Columns))
	for _, c := range t.Columns {
		if c.Kind == Physical {
			out = append(out, c)
		}
	}
	return out
}

// PhysicalRowType returns the physical columns as a ROW type.
func (t *Table) PhysicalRowType() *Type {
	row := &Type{Kind: KindRow, NotNull: true}
	for _, c := range t.PhysicalColumns() {
		row.Fields = append(row.Fields, Field{Name: c.Name, Type: c.Type})
	}
	return row
}

// Validate checks the table as Flink's planner and Kafka table factory do,
// and collects every problem. Errors name the column or option.
func (t *Table) Validate() error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format, args...))
	}
	if t.Name == "" {
		add("table: a name is required")
	}
	if len(t.Columns) == 0 {
		add("table %s: at least one column is required", t.Name)
	}
	seen := map[string]bool{}
	for _, c := range t.Columns {
		if c.Name == "" {
			add("table %s: a column has no name", t.Name)
			continue
		}
		if seen[c.Name] {
			add("table %s: column %s is declared twice", t.Name, c.Name)
		}
		seen[c.Name] = true
		switch c.Kind {
		case Computed:
			var refs []string
			tr, err := TranslateComputed(c.Expr, IntLiterals, t)
			if err != nil {
				add("table %s: column %s AS %s: %w", t.Name, c.Name, c.Expr, err)
			} else {
				refs = tr.Columns
				errs = append(errs, t.validateComputedRowtime(c, tr)...)
			}
			for _, r := range refs {
				switch rc, ok := t.Column(r); {
				case !ok:
					add("table %s: column %s AS %s: no column %s", t.Name, c.Name, c.Expr, r)
				case rc.Kind == Computed:
					add("table %s: column %s AS %s: column %s is computed too; a computed column reads physical and metadata columns only (as in Flink)", t.Name, c.Name, c.Expr, r)
				}
			}
			continue
		case Metadata:
			if kinds, ok := t.formatMetadataKinds(c.MetadataKey); ok {
				// the value format's metadata (`value.source.timestamp`)
				if c.Type != nil && !kindIn(c.Type.Kind, kinds) {
					add("table %s: column %s: metadata %q cannot be declared as %s", t.Name, c.Name, c.MetadataKey, c.Type)
				}
			} else if MetadataType(c.MetadataKey) == nil {
				add("table %s: column %s: unknown metadata key %q (want one of %s)", t.Name, c.Name, c.MetadataKey, strings.Join(append(metadataKeys(), t.formatMetadataKeys()...), ", "))
			} else if err := validateMetadataType(c); err != nil {
				add("table %s: %w", t.Name, err)
			}
		}
		if c.Type == nil {
			add("table %s: column %s: no type", t.Name, c.Name)
			continue
		}
		if err := c.Type.Validate(c.Name); err != nil {
			errs = append(errs, fmt.Errorf("table %s: %w", t.Name, err))
		}
	}
	if pk := t.PrimaryKey; pk != nil {
		if len(pk.Columns) == 0 {
			add("table %s: PRIMARY KEY names no column", t.Name)
		}
		pkSeen := map[string]bool{}
		for _, name := range pk.Columns {
			c, ok := t.Column(name)
			switch {
			case pkSeen[name]:
				add("table %s: PRIMARY KEY names column %s twice", t.Name, name)
			case !ok:
				add("table %s: PRIMARY KEY column %s is not a column of the table", t.Name, name)
			case c.Kind != Physical:
				add("table %s: PRIMARY KEY column %s must be a physical column, it is a %s column", t.Name, name, c.Kind)
			}
			pkSeen[name] = true
		}
	}
	if wm := t.Watermark; wm != nil {
		c, ok := t.Column(wm.Column)
		switch {
		case !ok:
			add("table %s: WATERMARK FOR %s: no such column", t.Name, wm.Column)
		case c.Type == nil:
		case !c.Type.IsTimestamp() || c.Type.Precision > 3:
			add("table %s: WATERMARK FOR %s: the rowtime column must be TIMESTAMP(p) or TIMESTAMP_LTZ(p) with p <= 3, got %s", t.Name, wm.Column, c.Type)
		}
		if wm.Delay < 0 {
			add("table %s: WATERMARK FOR %s: the delay must not be negative, got %s", t.Name, wm.Column, wm.Delay)
		}
	}
	errs = append(errs, t.validateMetadataKeys()...)
	errs = append(errs, t.validateOptions()...)
	errs = append(errs, t.validateChangelog()...)
	return errors.Join(errs...)
}

func metadataKeys() []string {
	return []string{"headers", "leader-epoch", "offset", "partition", "timestamp", "timestamp-type", "topic"}
}

// normalize applies Flink's implicit rules: primary key columns are NOT NULL,
// and a metadata column without FROM uses its own name as the key.
func (t *Table) normalize() {
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Kind == Metadata && c.MetadataKey == "" {
			c.MetadataKey = c.Name
		}
	}
	if t.PrimaryKey != nil {
		for _, name := range t.PrimaryKey.Columns {
			if c, ok := t.Column(name); ok && c.Type != nil {
				c.Type.NotNull = true
			}
		}
	}
	if t.Options == nil {
		t.Options = map[string]string{}
	}
}
