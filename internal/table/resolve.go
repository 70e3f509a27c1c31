package table

import (
	"errors"
	"fmt"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"
	"gopkg.in/yaml.v3"

	"github.com/connectd/connectd/schema"
)

// Raw is a component's table fields before resolution.
type Raw struct {
	// Table is an object (the YAML form), a table name, or nil.
	Table   any
	Catalog string
	DDL     string
	// LocalTimeZone is the local_time_zone field; "" when unset.
	LocalTimeZone string
}

// Set reports whether the config names a table.
func (r Raw) Set() bool { return r.Table != nil || r.Catalog != "" || r.DDL != "" }

// RawFromParsed reads the table fields.
func RawFromParsed(conf *service.ParsedConfig) (Raw, error) {
	var r Raw
	var err error
	if conf.Contains(FieldTable) {
		if r.Table, err = conf.FieldAny(FieldTable); err != nil {
			return r, err
		}
	}
	if conf.Contains(FieldCatalog) {
		if r.Catalog, err = conf.FieldString(FieldCatalog); err != nil {
			return r, err
		}
	}
	if conf.Contains(FieldDDL) {
		if r.DDL, err = conf.FieldString(FieldDDL); err != nil {
			return r, err
		}
	}
	if conf.Contains(FieldLocalTimeZone) {
		if r.LocalTimeZone, err = conf.FieldString(FieldLocalTimeZone); err != nil {
			return r, err
		}
	}
	return r, nil
}

// Resolve returns the validated table, nil when the config names none.
// Errors name the field.
func (r Raw) Resolve() (*schema.Table, error) {
	if !r.Set() {
		if r.LocalTimeZone != "" {
			return nil, fmt.Errorf("field %s: only used with a table (fields %s, %s, %s)", FieldLocalTimeZone, FieldTable, FieldCatalog, FieldDDL)
		}
		return nil, nil
	}
	return r.resolve()
}

// applyTimeZone sets the table option table.local-time-zone from the
// local_time_zone field; a different value in both is an error naming both.
func (r Raw) applyTimeZone(t *schema.Table) (*schema.Table, error) {
	z := strings.TrimSpace(r.LocalTimeZone)
	if z == "" {
		return t, nil
	}
	if _, err := schema.ParseTimeZone(z); err != nil {
		return nil, fmt.Errorf("field %s: %w", FieldLocalTimeZone, err)
	}
	if v, ok := t.Options[schema.OptLocalTimeZone]; ok && v != z {
		return nil, fmt.Errorf("field %s: %q contradicts option '%s' = '%s' of table %s; set one", FieldLocalTimeZone, z, schema.OptLocalTimeZone, v, t.Name)
	}
	c := *t
	c.Options = make(map[string]string, len(t.Options)+1)
	for k, v := range t.Options {
		c.Options[k] = v
	}
	c.Options[schema.OptLocalTimeZone] = z
	return &c, nil
}

// ResolveKafka is Resolve for a Kafka component: the connector must be
// kafka or upsert-kafka. Every problem of the table is reported,
// unsupported WITH options included.
func (r Raw) ResolveKafka() (*schema.Table, error) {
	t, err := r.Resolve()
	if t == nil || err != nil {
		return nil, err
	}
	switch c := t.Options[schema.OptConnector]; c {
	case schema.ConnectorKafka, schema.ConnectorUpsertKafka:
	default:
		return nil, fmt.Errorf("field %s: table %s: option 'connector' = '%s': want 'kafka' or 'upsert-kafka' for a Kafka component", FieldTable, t.Name, c)
	}
	return t, nil
}

// ResolveKafkaParsed returns the validated table of a Kafka component's
// conf (see ResolveKafka), nil when it names none.
func ResolveKafkaParsed(conf *service.ParsedConfig) (*schema.Table, error) {
	r, err := RawFromParsed(conf)
	if err != nil {
		return nil, err
	}
	return r.ResolveKafka()
}

// resolve returns the table of exactly one of the three forms, validated,
// with the local_time_zone field applied; a config that names none is an
// error.
func (r Raw) resolve() (*schema.Table, error) {
	t, err := r.resolveForm()
	if err != nil {
		return nil, err
	}
	return r.applyTimeZone(t)
}

// resolveForm is resolve without the local_time_zone field.
func (r Raw) resolveForm() (*schema.Table, error) {
	name, named := r.Table.(string)
	switch {
	case r.Table != nil && !named:
		if _, isMap := r.Table.(map[string]any); !isMap {
			got := "a list"
			if _, isList := r.Table.([]any); !isList {
				got = fmt.Sprintf("%v", r.Table)
			}
			return nil, fmt.Errorf("field %s: want an object (the YAML form) or a table name, got %s", FieldTable, got)
		}
		if r.Catalog != "" || r.DDL != "" {
			return nil, fmt.Errorf("field %s: an inline table excludes %s and %s", FieldTable, FieldCatalog, FieldDDL)
		}
		data, err := yaml.Marshal(r.Table)
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
	case r.Catalog != "":
		if r.DDL != "" {
			return nil, fmt.Errorf("field %s: %s and %s are alternatives; set one", FieldCatalog, FieldCatalog, FieldDDL)
		}
		if !named || name == "" {
			return nil, fmt.Errorf("field %s: %s needs the name of a table in it", FieldTable, FieldCatalog)
		}
		cat, err := schema.LoadCatalog(r.Catalog)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", FieldCatalog, err)
		}
		t, err := cat.Table(name)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", FieldTable, err)
		}
		return t, nil
	case r.DDL != "":
		tables, err := schema.ParseDDL(r.DDL)
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
