package tablespec

import (
	"errors"
	"fmt"
	"slices"

	"github.com/redpanda-data/benthos/v4/public/bloblang"
	"github.com/redpanda-data/benthos/v4/public/service"
	"gopkg.in/yaml.v3"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/expr"
	"github.com/connectd/connectd/schema/format"
)

// LintRule checks the table source fields (a table from exactly one of the
// three forms) and then, with the lint method LintMethod, the table itself:
// DDL syntax with line and column, column types, WITH options, the format
// and its options. A catalog file is read only when the processor starts.
var LintRule = `
let has_table = this.table != null
let inline = this.table.type().or("") == "object"
let named = this.table.type().or("") == "string"
let has_catalog = this.catalog.or("") != ""
let has_ddl = this.ddl.or("") != ""
let structural = [
  if !$has_table && !$has_ddl && !$has_catalog { "field table: a table is required: inline (an object), or a name with catalog or ddl, or ddl alone" } else { null },
  if $has_table && !$inline && !$named { "field table: want an object (the YAML form) or a table name, got %s".format(this.table.type()) } else { null },
  if $inline && ($has_catalog || $has_ddl) { "field table: an inline table excludes catalog and ddl" } else { null },
  if $has_catalog && $has_ddl { "field catalog: catalog and ddl are alternatives; set one" } else { null },
  if $has_catalog && !$named { "field table: catalog needs the name of a table in it" } else { null },
  if this.options != null && this.options.type() != "object" { "field options: want an object of format options" } else { null },
].filter(e -> e != null)
root = if $structural.length() > 0 { $structural } else { this.` + LintMethod + `() }
`

// LintMethod is the Bloblang method that the lint rule calls on a
// table_decode / table_encode config; it returns the config's problems.
const LintMethod = "connectd_table_problems"

// The method is registered before any spec is built: Benthos copies the
// global Bloblang environment when a component's lint rule is parsed.
func init() {
	spec := bloblang.NewPluginSpec().
		Category("connectd").
		Description("Returns the problems of a table_decode or table_encode config (an object) as a list of strings: " +
			"DDL syntax errors with line and column, invalid columns, unsupported WITH options and format options. " +
			"Used by the lint rules of those processors; a catalog file is not read.")
	if err := bloblang.RegisterMethodV2(LintMethod, spec, func(*bloblang.ParsedParams) (bloblang.Method, error) {
		return func(v any) (any, error) {
			m, ok := v.(map[string]any)
			if !ok {
				return []any{}, nil
			}
			if _, err := build(rawFromMap(m), false); err != nil {
				return []any{err.Error()}, nil
			}
			return []any{}, nil
		}, nil
	}); err != nil {
		panic(err)
	}
}

// raw is a processor config before validation, from a parsed config or from
// the plain value a lint rule sees.
type raw struct {
	table     any // object: the YAML form; string: a table name
	catalog   string
	ddl       string
	format    string
	hasFormat bool
	options   any
	onError   string
}

func rawFromMap(m map[string]any) raw {
	r := raw{table: m[FieldTable], options: m[FieldOptions], onError: string(PolicyFail)}
	r.catalog, _ = m[FieldCatalog].(string)
	r.ddl, _ = m[FieldDDL].(string)
	if f, ok := m[FieldFormat].(string); ok {
		r.format, r.hasFormat = f, true
	}
	if p, ok := m[FieldOnError].(string); ok {
		r.onError = p
	}
	return r
}

func rawFromParsed(conf *service.ParsedConfig) (raw, error) {
	var r raw
	var err error
	if conf.Contains(FieldTable) {
		if r.table, err = conf.FieldAny(FieldTable); err != nil {
			return r, err
		}
	}
	r.catalog, _ = conf.FieldString(FieldCatalog)
	r.ddl, _ = conf.FieldString(FieldDDL)
	if conf.Contains(FieldFormat) {
		if r.format, err = conf.FieldString(FieldFormat); err != nil {
			return r, err
		}
		r.hasFormat = true
	}
	if conf.Contains(FieldOptions) {
		if r.options, err = conf.FieldAny(FieldOptions); err != nil {
			return r, err
		}
	}
	r.onError, err = conf.FieldString(FieldOnError)
	return r, err
}

// FromParsed reads and validates the table, the format and the policy, and
// builds the codec. Errors name the field.
func FromParsed(conf *service.ParsedConfig) (*Config, error) {
	r, err := rawFromParsed(conf)
	if err != nil {
		return nil, err
	}
	return build(r, true)
}

// build validates a raw config; readCatalog false skips configs that name a
// catalog file (lint time).
func build(r raw, readCatalog bool) (*Config, error) {
	if r.catalog != "" && !readCatalog {
		return nil, nil
	}
	t, err := r.resolveTable()
	if err != nil {
		return nil, err
	}
	c := &Config{Table: t}
	if slices.ContainsFunc(t.Columns, func(col schema.Column) bool { return col.Kind == schema.Computed }) {
		// type-check computed columns, also at lint time
		if c.Computed, err = expr.NewEnv(t); err != nil {
			return nil, fmt.Errorf("field %s: %w", FieldTable, err)
		}
	}
	name, opts, ok := t.FormatOf()
	switch {
	case r.hasFormat:
		c.Format = r.format
		if c.Format != name {
			opts = map[string]string{}
		}
	case ok:
		c.Format = name
	default:
		return nil, fmt.Errorf("field %s: the table %s names no format (option 'format' or 'value.format'); set %s", FieldFormat, t.Name, FieldFormat)
	}
	c.Options = opts
	if r.options != nil {
		m, ok := r.options.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("field %s: want an object of format options, got %T", FieldOptions, r.options)
		}
		for k, v := range m {
			switch v.(type) {
			case string, bool, int, int64, float64:
				c.Options[k] = fmt.Sprint(v)
			default:
				return nil, fmt.Errorf("field %s.%s: want a scalar value, got %T", FieldOptions, k, v)
			}
		}
	}
	switch c.OnError = Policy(r.onError); c.OnError {
	case PolicyFail, PolicySkip, PolicyDeadLetter:
	default:
		return nil, fmt.Errorf("field %s: unknown value %q (want fail, skip or dead_letter)", FieldOnError, r.onError)
	}
	if c.Codec, err = format.New(c.Format, t.PhysicalRowType(), c.Options); err != nil {
		return nil, fmt.Errorf("field %s: %w", FieldFormat, err)
	}
	return c, nil
}

// ResolveTable returns the table of a config's table, catalog and ddl
// fields, validated, without any format. Errors name the field.
func ResolveTable(table any, catalog, ddl string) (*schema.Table, error) {
	return raw{table: table, catalog: catalog, ddl: ddl}.resolveTable()
}

func (r raw) resolveTable() (*schema.Table, error) {
	name, named := r.table.(string)
	switch {
	case r.table != nil && !named:
		if r.catalog != "" || r.ddl != "" {
			return nil, fmt.Errorf("field %s: an inline table excludes %s and %s", FieldTable, FieldCatalog, FieldDDL)
		}
		data, err := yaml.Marshal(r.table)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", FieldTable, err)
		}
		t, err := schema.ParseTableYAML(data)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", FieldTable, err)
		}
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("field %s: %w", FieldTable, err)
		}
		return t, nil
	case r.catalog != "":
		if r.ddl != "" {
			return nil, fmt.Errorf("field %s: %s and %s are alternatives; set one", FieldCatalog, FieldCatalog, FieldDDL)
		}
		if !named || name == "" {
			return nil, fmt.Errorf("field %s: %s needs the name of a table in it", FieldTable, FieldCatalog)
		}
		cat, err := schema.LoadCatalog(r.catalog)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", FieldCatalog, err)
		}
		t, err := cat.Table(name)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", FieldTable, err)
		}
		return t, nil
	case r.ddl != "":
		tables, err := schema.ParseDDL(r.ddl)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", FieldDDL, err)
		}
		cat, err := schema.NewCatalog(tables...)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", FieldDDL, err)
		}
		if !named {
			if len(tables) != 1 {
				return nil, fmt.Errorf("field %s: %s holds %d tables; name one in %s", FieldTable, FieldDDL, len(tables), FieldTable)
			}
			name = tables[0].Name
		}
		t, err := cat.Table(name)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", FieldDDL, err)
		}
		return t, nil
	case named:
		return nil, fmt.Errorf("field %s: a table name needs %s or %s", FieldTable, FieldCatalog, FieldDDL)
	}
	return nil, errors.New("field table: a table is required: inline (an object), or a name with catalog or ddl, or ddl alone")
}
