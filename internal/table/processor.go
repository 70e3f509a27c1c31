package table

import (
	"errors"
	"fmt"
	"maps"
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

// processorRaw is a processor config before validation.
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
// name the field; every problem is reported at once (those of the format
// and its options only once the table resolves).
func ProcessorFromParsed(conf *service.ParsedConfig) (*ProcessorConfig, error) {
	r, err := processorRawFromParsed(conf)
	if err != nil {
		return nil, err
	}
	return build(r)
}

// build validates a raw config, reporting every problem at once.
func build(r processorRaw) (*ProcessorConfig, error) {
	t, err := r.resolve()
	if err != nil {
		return nil, err
	}
	var errs []error
	c := &ProcessorConfig{Table: t}
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
