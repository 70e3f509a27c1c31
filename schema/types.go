// Package schema is connectd's table model: the columns, types, primary key,
// watermark and WITH options of a Flink table, written as Flink SQL
// `CREATE TABLE` DDL (package schema/ddl) or in YAML, and gathered in a
// Catalog that components look tables up in by name.
//
// Rows of a table are map[string]any keyed by column name, with these Go
// values (nil is SQL NULL in every type):
//
//	CHAR, VARCHAR, STRING                 string
//	BOOLEAN                               bool
//	TINYINT, SMALLINT, INT, BIGINT        int64 (range-checked for the type)
//	FLOAT                                 float64 holding a float32 value
//	DOUBLE                                float64
//	DECIMAL(p,s)                          json.Number, plain notation with exactly s fraction digits
//	DATE                                  time.Time, midnight UTC
//	TIME(p)                               time.Time on 1970-01-01 UTC
//	TIMESTAMP(p), TIMESTAMP_LTZ(p)        time.Time in UTC, truncated to p fraction digits
//	BINARY, VARBINARY, BYTES              []byte
//	ARRAY<T>                              []any
//	MAP<K,V>                              map[string]any (K must be a character string type)
//	ROW<...>                              map[string]any
//
// Coerce turns other usual Go values (from JSON documents, Bloblang) into
// these.
package schema

import (
	"fmt"
	"strings"
)

// Kind is the root of a logical type, as Flink's LogicalTypeRoot.
type Kind int

// Kinds of logical types.
const (
	KindInvalid Kind = iota
	KindChar
	KindVarchar // STRING is VARCHAR(2147483647)
	KindBoolean
	KindTinyint
	KindSmallint
	KindInt
	KindBigint
	KindFloat
	KindDouble
	KindDecimal
	KindDate
	KindTime
	KindTimestamp    // TIMESTAMP(p) [WITHOUT TIME ZONE]
	KindTimestampLTZ // TIMESTAMP_LTZ(p), TIMESTAMP(p) WITH LOCAL TIME ZONE
	KindBinary
	KindVarbinary // BYTES is VARBINARY(2147483647)
	KindArray
	KindMap
	KindRow
)

// MaxLength is the length of STRING and BYTES.
const MaxLength = 2147483647

// Defaults and bounds of type parameters, as in Flink.
const (
	DefaultDecimalPrecision   = 10
	DefaultDecimalScale       = 0
	MaxDecimalPrecision       = 38
	DefaultTimestampPrecision = 6
	DefaultTimePrecision      = 0
	MaxTimePrecision          = 9
)

// Type is a logical type. Length applies to CHAR, VARCHAR, BINARY and
// VARBINARY; Precision to DECIMAL, TIME, TIMESTAMP and TIMESTAMP_LTZ; Scale
// to DECIMAL. Elem is the element of an ARRAY, Key and Value of a MAP, Fields
// of a ROW.
type Type struct {
	Kind      Kind
	NotNull   bool
	Length    int
	Precision int
	Scale     int
	Elem      *Type
	Key       *Type
	Value     *Type
	Fields    []Field
}

// Field is a field of a ROW type.
type Field struct {
	Name string
	Type *Type
}

// IsString reports whether t is CHAR, VARCHAR or STRING.
func (t *Type) IsString() bool { return t.Kind == KindChar || t.Kind == KindVarchar }

// IsBinary reports whether t is BINARY, VARBINARY or BYTES.
func (t *Type) IsBinary() bool { return t.Kind == KindBinary || t.Kind == KindVarbinary }

// IsTimestamp reports whether t is TIMESTAMP or TIMESTAMP_LTZ.
func (t *Type) IsTimestamp() bool { return t.Kind == KindTimestamp || t.Kind == KindTimestampLTZ }

// String renders the type in Flink SQL, e.g. `DECIMAL(10, 2) NOT NULL`.
func (t *Type) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t *Type) write(b *strings.Builder) {
	switch t.Kind {
	case KindChar:
		fmt.Fprintf(b, "CHAR(%d)", t.Length)
	case KindVarchar:
		if t.Length == MaxLength {
			b.WriteString("STRING")
		} else {
			fmt.Fprintf(b, "VARCHAR(%d)", t.Length)
		}
	case KindBoolean:
		b.WriteString("BOOLEAN")
	case KindTinyint:
		b.WriteString("TINYINT")
	case KindSmallint:
		b.WriteString("SMALLINT")
	case KindInt:
		b.WriteString("INT")
	case KindBigint:
		b.WriteString("BIGINT")
	case KindFloat:
		b.WriteString("FLOAT")
	case KindDouble:
		b.WriteString("DOUBLE")
	case KindDecimal:
		fmt.Fprintf(b, "DECIMAL(%d, %d)", t.Precision, t.Scale)
	case KindDate:
		b.WriteString("DATE")
	case KindTime:
		fmt.Fprintf(b, "TIME(%d)", t.Precision)
	case KindTimestamp:
		fmt.Fprintf(b, "TIMESTAMP(%d)", t.Precision)
	case KindTimestampLTZ:
		fmt.Fprintf(b, "TIMESTAMP_LTZ(%d)", t.Precision)
	case KindBinary:
		fmt.Fprintf(b, "BINARY(%d)", t.Length)
	case KindVarbinary:
		if t.Length == MaxLength {
			b.WriteString("BYTES")
		} else {
			fmt.Fprintf(b, "VARBINARY(%d)", t.Length)
		}
	case KindArray:
		b.WriteString("ARRAY<")
		t.Elem.write(b)
		b.WriteString(">")
	case KindMap:
		b.WriteString("MAP<")
		t.Key.write(b)
		b.WriteString(", ")
		t.Value.write(b)
		b.WriteString(">")
	case KindRow:
		b.WriteString("ROW<")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(QuoteIdent(f.Name))
			b.WriteString(" ")
			f.Type.write(b)
		}
		b.WriteString(">")
	default:
		b.WriteString("INVALID")
	}
	if t.NotNull {
		b.WriteString(" NOT NULL")
	}
}

// QuoteIdent returns name as a Flink SQL identifier, backquoted when needed.
func QuoteIdent(name string) string {
	plain := name != ""
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain && !reserved[strings.ToUpper(name)] {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// reserved are words that must be backquoted as identifiers when printed.
var reserved = map[string]bool{
	"CREATE": true, "TABLE": true, "PRIMARY": true, "KEY": true, "WATERMARK": true, "FOR": true,
	"AS": true, "WITH": true, "NOT": true, "NULL": true, "METADATA": true, "FROM": true,
	"VIRTUAL": true, "CONSTRAINT": true, "TIMESTAMP": true, "TIME": true, "DATE": true,
	"INTERVAL": true, "COMMENT": true, "ROW": true, "ARRAY": true, "MAP": true,
	"SELECT": true, "WHERE": true, "GROUP": true, "ORDER": true, "BY": true, "USER": true,
	"VALUE": true, "OFFSET": true, "PARTITION": true, "LIKE": true, "IN": true, "IS": true,
	"AND": true, "OR": true, "CASE": true, "WHEN": true, "END": true, "TO": true, "ZONE": true,
	// Literals and words of computed-column expressions: a column `true`
	// printed bare would read back as the literal, `if` as the function.
	"TRUE": true, "FALSE": true, "IF": true, "CAST": true, "THEN": true, "ELSE": true, "UNKNOWN": true,
	"CURRENT_TIMESTAMP": true, "LOCALTIMESTAMP": true, "CURRENT_DATE": true, "CURRENT_TIME": true, "LOCALTIME": true,
}

// Validate checks type parameters against Flink's bounds; path names the
// column or field in errors.
func (t *Type) Validate(path string) error {
	switch t.Kind {
	case KindChar, KindVarchar, KindBinary, KindVarbinary:
		if t.Length < 1 {
			return fmt.Errorf("column %s: length of %s must be at least 1, got %d", path, t.kindName(), t.Length)
		}
	case KindDecimal:
		if t.Precision < 1 || t.Precision > MaxDecimalPrecision {
			return fmt.Errorf("column %s: DECIMAL precision must be between 1 and %d, got %d", path, MaxDecimalPrecision, t.Precision)
		}
		if t.Scale < 0 || t.Scale > t.Precision {
			return fmt.Errorf("column %s: DECIMAL scale must be between 0 and the precision %d, got %d", path, t.Precision, t.Scale)
		}
	case KindTime, KindTimestamp, KindTimestampLTZ:
		if t.Precision < 0 || t.Precision > MaxTimePrecision {
			return fmt.Errorf("column %s: %s precision must be between 0 and %d, got %d", path, t.kindName(), MaxTimePrecision, t.Precision)
		}
	case KindArray:
		return t.Elem.Validate(path + "[]")
	case KindMap:
		if err := t.Key.Validate(path + ".key"); err != nil {
			return err
		}
		if !t.Key.IsString() {
			return fmt.Errorf("column %s: MAP keys must be a character string type (STRING, VARCHAR, CHAR) in connectd, got %s", path, t.Key)
		}
		return t.Value.Validate(path + ".value")
	case KindRow:
		seen := map[string]bool{}
		for _, f := range t.Fields {
			if seen[f.Name] {
				return fmt.Errorf("column %s: ROW field %s appears twice", path, f.Name)
			}
			seen[f.Name] = true
			if err := f.Type.Validate(path + "." + f.Name); err != nil {
				return err
			}
		}
	case KindInvalid:
		return fmt.Errorf("column %s: no type", path)
	}
	return nil
}

func (t *Type) kindName() string {
	c := *t
	c.NotNull = false
	s := c.String()
	if i := strings.IndexAny(s, "(<"); i > 0 {
		return s[:i]
	}
	return s
}

// Equal reports whether two types are identical.
func (t *Type) Equal(o *Type) bool { return t.String() == o.String() }
