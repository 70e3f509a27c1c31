package table

import (
	"fmt"
	"slices"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/expr"
	"github.com/connectd/connectd/schema/format"
)

// ProcessorConfig is the parsed, validated table and format of the
// table_decode or table_encode processor.
type ProcessorConfig struct {
	Table   *schema.Table
	Format  string
	Options map[string]string // Flink format options without the format prefix
	OnError Policy
	Codec   format.Codec
	// Computed evaluates the table's computed columns; nil when it has none.
	Computed *expr.Env
}

// processorRaw is a processor config before validation, from a parsed
// config or from the plain value a lint rule sees.
type processorRaw struct {
	Raw
	format    string
	hasFormat bool
	options   any
	onError   string
}

func processorRawFromParsed(conf *service.ParsedConfig) (processorRaw, error) {
	var r processorRaw
	var err error
	if r.Raw, err = RawFromParsed(conf); err != nil {
		return r, err
	}
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

// ProcessorFromParsed reads and validates the table, the format and the
// policy of a processor (ProcessorFields), and builds the codec. Errors
// name the field.
func ProcessorFromParsed(conf *service.ParsedConfig) (*ProcessorConfig, error) {
	r, err := processorRawFromParsed(conf)
	if err != nil {
		return nil, err
	}
	return build(r, true)
}

// build validates a raw config; readCatalog false skips configs that name a
// catalog file (lint time).
func build(r processorRaw, readCatalog bool) (*ProcessorConfig, error) {
	if r.Catalog != "" && !readCatalog {
		return nil, nil
	}
	t, err := r.resolve()
	if err != nil {
		return nil, err
	}
	c := &ProcessorConfig{Table: t}
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
