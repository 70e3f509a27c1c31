package tablespec

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/redpanda-data/benthos/v4/public/service"
	"gopkg.in/yaml.v3"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/expr"
	"github.com/connectd/connectd/schema/format"
)

// raw is a processor config before validation.
type raw struct {
	table     any // object: the YAML form; string: a table name
	catalog   string
	ddl       string
	format    string
	hasFormat bool
	options   any
	onError   string
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
	return build(r)
}

// build validates a raw config, reporting every problem at once (those of
// the format and its options only once the table resolves).
func build(r raw) (*Config, error) {
	t, err := r.resolveTable()
	if err != nil {
		return nil, err
	}
	var errs []error
	c := &Config{Table: t}
	if slices.ContainsFunc(t.Columns, func(col schema.Column) bool { return col.Kind == schema.Computed }) {
		// type-check computed columns, also at lint time
		if c.Computed, err = expr.NewEnv(t); err != nil {
			errs = append(errs, fmt.Errorf("field %s: %w", FieldTable, err))
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
		errs = append(errs, fmt.Errorf("field %s: the table %s names no format (option 'format' or 'value.format'); set %s", FieldFormat, t.Name, FieldFormat))
	}
	c.Options = opts
	optionsOK := true
	if r.options != nil {
		m, ok := r.options.(map[string]any)
		if !ok {
			optionsOK = false
			errs = append(errs, fmt.Errorf("field %s: want an object of format options, got %T", FieldOptions, r.options))
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			switch v := m[k]; v.(type) {
			case string, bool, int, int64, float64:
				c.Options[k] = fmt.Sprint(v)
			default:
				optionsOK = false
				errs = append(errs, fmt.Errorf("field %s.%s: want a scalar value, got %T", FieldOptions, k, v))
			}
		}
	}
	switch c.OnError = Policy(r.onError); c.OnError {
	case PolicyFail, PolicySkip, PolicyDeadLetter:
	default:
		errs = append(errs, fmt.Errorf("field %s: unknown value %q (want fail, skip or dead_letter)", FieldOnError, r.onError))
	}
	if optionsOK && c.Format != "" {
		if c.Codec, err = format.New(c.Format, t.PhysicalRowType(), c.Options); err != nil {
			errs = append(errs, fmt.Errorf("field %s: %w", FieldFormat, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
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
		if _, isMap := r.table.(map[string]any); !isMap {
			got := "a list"
			if _, isList := r.table.([]any); !isList {
				got = fmt.Sprintf("%v", r.table)
			}
			return nil, fmt.Errorf("field %s: want an object (the YAML form) or a table name, got %s", FieldTable, got)
		}
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
