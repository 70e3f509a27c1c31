// Package expr compiles and evaluates CEL expressions over the rows of a
// table: the expressions of the cel processor and the computed columns
// (`col AS expr`) of a table.
//
// # Variables
//
//   - every column of the table whose name is a CEL identifier, as a
//     top-level variable of the column's type (computed columns included,
//     with their expression's type);
//   - `row`: the whole row, map(string, dyn); the only way to read a column
//     whose name is not a CEL identifier (row["my-col"]), and, without a
//     table, the only way to read the row at all;
//   - `meta`: the message metadata, map(string, dyn);
//   - `kafka_timestamp`: kafka_timestamp_ms as a CEL timestamp, or null
//     when the message has none.
//
// # Types
//
// Row values (see package schema) map to CEL as: strings to string,
// BOOLEAN to bool, TINYINT..BIGINT to int, FLOAT and DOUBLE to double,
// DECIMAL to double (json.Number in the row; the double may round beyond
// 15-17 significant digits), DATE, TIME, TIMESTAMP and TIMESTAMP_LTZ to
// timestamp, BYTES to bytes, ARRAY to list, MAP and ROW to map, NULL to null.
// Nullable scalar columns are declared as CEL nullable (wrapper) types, so
// `x != null && x > 5` type-checks; ARRAY, MAP and ROW columns are tested
// for null through the row: `row.tags != null`. Without a table, a
// json.Number is an int when it is integral and a double otherwise.
//
// Results map back the same way: timestamp to time.Time, bytes to []byte,
// duration to its string ("1.5s"), null to nil, lists to []any, maps to
// map[string]any.
//
// The function sql_true(cond) is declared in every environment (see
// FuncSQLTrue), and so are the sql_* functions that computed columns
// translate Flink's functions to (sqlfuncs.go): NULL in, NULL out, in the
// table's `table.local-time-zone` (Clock).
//
// CEL has no implicit numeric conversions: `amount * 2` on a DOUBLE or
// DECIMAL column does not type-check; write `amount * 2.0` or
// `amount * double(n)`. Comparisons across int and double (`amount > 2`) are
// allowed.
package expr

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"

	"github.com/connectd/connectd/schema"
)

// Names of the variables beside the columns.
const (
	VarRow            = "row"
	VarMeta           = "meta"
	VarKafkaTimestamp = "kafka_timestamp"
)

// Env is a CEL environment for the rows of one table (or of no table).
type Env struct {
	env      *cel.Env
	columns  []string // columns declared as variables, in table order
	types    map[string]*schema.Type
	typed    []typedColumn // the entries of types, in table order
	computed []computedColumn
}

// typedColumn is a physical or metadata column that Activation coerces.
type typedColumn struct {
	name string
	typ  *schema.Type
	what string // "column <name>", for Coerce's errors
}

// computedColumn is a compiled computed column.
type computedColumn struct {
	name string
	sql  string // the Flink SQL expression
	prg  *Program
	refs []string
	typ  *schema.Type // the result's Flink type; nil when unknown
}

// Input is what an expression sees besides the row.
type Input struct {
	Meta map[string]any
	// KafkaTimestamp is kafka_timestamp_ms; nil when absent.
	KafkaTimestamp *time.Time
}

func baseOptions(c Clock) []cel.EnvOption {
	return append(sqlFunctions(c),
		cel.Variable(VarRow, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable(VarMeta, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable(VarKafkaTimestamp, cel.TimestampType),
		cel.CrossTypeNumericComparisons(true),
		ext.Strings(),
		cel.Function(FuncSQLTrue, cel.Overload("sql_true_dyn", []*cel.Type{cel.DynType}, cel.BoolType,
			cel.OverloadIsNonStrict(), cel.UnaryBinding(sqlTrue))),
	)
}

// FuncSQLTrue is the CEL function sql_true(cond): true when cond is true;
// false when it is false, null, or fails on a null or mistyped operand
// (CEL's "no such overload"), as SQL treats an UNKNOWN condition in WHERE
// and CASE WHEN. Other failures (division by zero) stay errors.
const FuncSQLTrue = "sql_true"

func sqlTrue(v ref.Val) ref.Val {
	if e, ok := v.(*types.Err); ok {
		if strings.HasPrefix(e.String(), "no such overload") {
			return types.False
		}
		return e
	}
	return types.Bool(v == types.True)
}

// NewEnv returns the environment of table t (nil: no table), with its
// computed columns translated from Flink SQL, type-checked and compiled.
// Errors name the column.
func NewEnv(t *schema.Table) (*Env, error) {
	return NewEnvClock(t, Clock{})
}

// NewEnvClock is NewEnv with the clock of PROCTIME() and the other
// functions of the current time (Clock.Now; tests fix it). The zone is the
// table's `table.local-time-zone` unless c.Zone is set.
func NewEnvClock(t *schema.Table, c Clock) (*Env, error) {
	e := &Env{types: map[string]*schema.Type{}}
	if t != nil && c.Zone == nil {
		loc, err := t.LocalTimeZone()
		if err != nil {
			return nil, err
		}
		c.Zone = loc
	}
	opts := baseOptions(c)
	if t == nil {
		env, err := cel.NewEnv(opts...)
		if err != nil {
			return nil, err
		}
		e.env = env
		return e, nil
	}
	var computed []schema.Column
	for _, c := range t.Columns {
		if c.Name == VarRow || c.Name == VarMeta || c.Name == VarKafkaTimestamp {
			return nil, fmt.Errorf("table %s: column %s: the name is taken by a CEL variable (%s, %s, %s); rename the column", t.Name, c.Name, VarRow, VarMeta, VarKafkaTimestamp)
		}
		if c.Kind == schema.Computed {
			computed = append(computed, c)
			continue
		}
		e.types[c.Name] = c.Type
		e.typed = append(e.typed, typedColumn{name: c.Name, typ: c.Type, what: "column " + c.Name})
		if schema.CELIdent(c.Name) {
			e.columns = append(e.columns, c.Name)
			opts = append(opts, cel.Variable(c.Name, celType(c.Type)))
		}
	}
	base, err := cel.NewEnv(opts...)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	e.env = base
	var errs []error
	for _, c := range computed {
		tr, err := schema.TranslateComputed(c.Expr, schema.IntLiterals, t)
		if err != nil {
			errs = append(errs, fmt.Errorf("table %s: column %s AS %s: %w", t.Name, c.Name, c.Expr, err))
			continue
		}
		celSrc, refs := tr.CEL, tr.Columns
		prg, err := e.Compile(celSrc, nil)
		if err != nil {
			// SQL `1 + vat` on a DECIMAL vat: CEL wants 1.0.
			if dbl, dblErr := schema.TranslateComputed(c.Expr, schema.DoubleLiterals, t); dblErr == nil && dbl.CEL != celSrc {
				if prgDbl, dblErr := e.Compile(dbl.CEL, nil); dblErr == nil {
					prg, celSrc, err = prgDbl, dbl.CEL, nil
				}
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("table %s: column %s AS %s (CEL: %s): %w", t.Name, c.Name, c.Expr, celSrc, err))
			continue
		}
		e.computed = append(e.computed, computedColumn{name: c.Name, sql: c.Expr, prg: prg, refs: refs, typ: tr.Type})
		if schema.CELIdent(c.Name) {
			e.columns = append(e.columns, c.Name)
			opts = append(opts, cel.Variable(c.Name, prg.ast.OutputType()))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(computed) > 0 {
		if e.env, err = cel.NewEnv(opts...); err != nil {
			return nil, fmt.Errorf("table %s: %w", t.Name, err)
		}
	}
	return e, nil
}

// celType is the CEL type of a column type.
func celType(t *schema.Type) *cel.Type {
	var ct *cel.Type
	scalar := true
	switch {
	case t.IsString():
		ct = cel.StringType
	case t.Kind == schema.KindBoolean:
		ct = cel.BoolType
	case t.Kind == schema.KindTinyint, t.Kind == schema.KindSmallint, t.Kind == schema.KindInt, t.Kind == schema.KindBigint:
		ct = cel.IntType
	case t.Kind == schema.KindFloat, t.Kind == schema.KindDouble, t.Kind == schema.KindDecimal:
		ct = cel.DoubleType
	case t.IsBinary():
		ct = cel.BytesType
	case t.Kind == schema.KindDate, t.Kind == schema.KindTime, t.IsTimestamp():
		return cel.TimestampType // CEL compares timestamps with null as they are
	case t.Kind == schema.KindArray:
		return cel.ListType(celType(t.Elem))
	case t.Kind == schema.KindMap:
		return cel.MapType(cel.StringType, celType(t.Value))
	default: // ROW
		scalar = false
		ct = cel.MapType(cel.StringType, cel.DynType)
	}
	if scalar && !t.NotNull {
		return cel.NullableType(ct)
	}
	return ct
}

// Program is a compiled expression.
type Program struct {
	// Source is the CEL text.
	Source string
	ast    *cel.Ast
	prg    cel.Program
}

// Compile parses and type-checks src. want, when not nil, is the type the
// result must have (dyn results are accepted and checked at evaluation).
// The error carries CEL's line:column and a caret under the problem.
func (e *Env) Compile(src string, want *cel.Type) (*Program, error) {
	ast, iss := e.env.Compile(src)
	if iss.Err() != nil {
		return nil, errors.New(strings.ReplaceAll(iss.Err().Error(), "<input>:", ""))
	}
	if want != nil {
		out := ast.OutputType()
		if !want.IsAssignableType(out) && !out.IsExactType(cel.DynType) && !(want == cel.BoolType && cel.NullableType(cel.BoolType).IsAssignableType(out)) {
			return nil, fmt.Errorf("the expression is %s, want %s", out, want)
		}
	}
	prg, err := e.env.Program(ast, cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return nil, err
	}
	return &Program{Source: src, ast: ast, prg: prg}, nil
}

// Activation returns the variables of a row. Values of the table's
// physical and metadata columns are first coerced to the column type
// (schema.Coerce: a DECIMAL given as a string, a timestamp as RFC 3339
// text); a value that does not coerce is an error naming the column. row is
// not modified.
func (e *Env) Activation(row map[string]any, in Input) (map[string]any, error) {
	converted := make(map[string]any, len(row)+len(e.types))
	for k, v := range row {
		converted[k] = v
	}
	for _, c := range e.typed {
		v, err := schema.Coerce(c.typ, row[c.name], c.what)
		if err != nil {
			return nil, err
		}
		converted[c.name] = v
	}
	for k, v := range converted {
		converted[k] = toCEL(e.types[k], v)
	}
	act := make(map[string]any, len(e.columns)+3)
	for _, name := range e.columns {
		v, ok := converted[name]
		if !ok || v == nil {
			v = types.NullValue
		}
		act[name] = v
	}
	meta := make(map[string]any, len(in.Meta))
	for k, v := range in.Meta {
		meta[k] = toCEL(nil, v)
	}
	act[VarRow] = converted
	act[VarMeta] = meta
	if in.KafkaTimestamp != nil {
		act[VarKafkaTimestamp] = *in.KafkaTimestamp
	} else {
		act[VarKafkaTimestamp] = types.NullValue
	}
	return act, nil
}

// Eval evaluates the program and returns its result as a row value.
func (p *Program) Eval(act map[string]any) (any, error) {
	v, _, err := p.prg.Eval(act)
	if err != nil {
		if strings.HasPrefix(err.Error(), "no such overload") {
			return nil, fmt.Errorf("%w (an operand is NULL or of an unexpected type; guard nullable columns: col != null && ...)", err)
		}
		return nil, err
	}
	return FromCEL(v)
}

// EvalComputed sets the computed columns of row. As in Flink SQL, where a
// function of NULL is NULL, a computed column whose evaluation fails while
// a column it reads is NULL is NULL; other failures are errors naming the
// column.
func (e *Env) EvalComputed(row map[string]any, in Input) error {
	if len(e.computed) == 0 {
		return nil
	}
	act, err := e.Activation(row, in)
	if err != nil {
		return err
	}
	for _, c := range e.computed {
		v, err := c.prg.Eval(act)
		if err != nil {
			if !readsNull(row, c.refs) {
				return fmt.Errorf("computed column %s AS %s: %w", c.name, c.sql, err)
			}
			v = nil
		}
		row[c.name] = v
	}
	return nil
}

func readsNull(row map[string]any, refs []string) bool {
	for _, r := range refs {
		if row[r] == nil {
			return true
		}
	}
	return false
}

// toCEL converts a row value of type t (nil: unknown) for CEL.
func toCEL(t *schema.Type, v any) any {
	switch v := v.(type) {
	case nil:
		return types.NullValue
	case json.Number:
		if t == nil || t.Kind != schema.KindDecimal && t.Kind != schema.KindDouble && t.Kind != schema.KindFloat {
			if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				return i
			}
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return string(v)
		}
		return f
	case int:
		return int64(v)
	case int32:
		return int64(v)
	case float32:
		return float64(v)
	case []any:
		var elem *schema.Type
		if t != nil && t.Kind == schema.KindArray {
			elem = t.Elem
		}
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = toCEL(elem, x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			var ft *schema.Type
			if t != nil && t.Kind == schema.KindMap {
				ft = t.Value
			} else if t != nil && t.Kind == schema.KindRow {
				for _, f := range t.Fields {
					if f.Name == k {
						ft = f.Type
					}
				}
			}
			out[k] = toCEL(ft, x)
		}
		return out
	}
	return v
}

// FromCEL converts a CEL value to a row value.
func FromCEL(v ref.Val) (any, error) {
	switch v := v.(type) {
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(v), nil
	case types.Int:
		return int64(v), nil
	case types.Uint:
		return uint64(v), nil
	case types.Double:
		return float64(v), nil
	case types.String:
		return string(v), nil
	case types.Bytes:
		return []byte(v), nil
	case types.Timestamp:
		return v.Time.UTC(), nil
	case types.Duration:
		return v.Duration.String(), nil
	case *types.Err:
		return nil, v
	}
	switch x := v.(type) {
	case traits.Mapper:
		out := map[string]any{}
		it := x.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			key, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("map key %v is %s; want string keys", k, k.Type())
			}
			val, err := FromCEL(x.Get(k))
			if err != nil {
				return nil, err
			}
			out[string(key)] = val
		}
		return out, nil
	case traits.Lister:
		out := []any{}
		it := x.Iterator()
		for it.HasNext() == types.True {
			val, err := FromCEL(it.Next())
			if err != nil {
				return nil, err
			}
			out = append(out, val)
		}
		return out, nil
	}
	if v.Value() == nil {
		return nil, nil
	}
	return v.Value(), nil
}

// CompileFilter compiles a boolean expression (a WHERE clause).
func (e *Env) CompileFilter(src string) (*Program, error) { return e.Compile(src, cel.BoolType) }

// CompileMap compiles an expression that produces a row: a map with string
// keys (a SELECT list).
func (e *Env) CompileMap(src string) (*Program, error) {
	return e.Compile(src, cel.MapType(cel.StringType, cel.DynType))
}
