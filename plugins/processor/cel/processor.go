package cel

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/table"
	"github.com/connectd/connectd/schema/expr"
)

// config is a parsed cel processor: the environment and the compiled
// expressions (nil when not set).
type config struct {
	env     *expr.Env
	filter  *expr.Program
	mapping *expr.Program
}

func configFromParsed(conf *service.ParsedConfig) (*config, error) {
	raw, err := table.RawFromParsed(conf)
	if err != nil {
		return nil, err
	}
	filter, _ := conf.FieldString(FieldFilter)
	mapping, _ := conf.FieldString(FieldMap)
	return newConfigRaw(raw, filter, mapping)
}

// newConfigRaw resolves the table (none when its fields are all unset,
// local_time_zone aside) and compiles the expressions, collecting every
// problem. Errors name the field; CEL errors carry line:column and a caret.
func newConfigRaw(raw table.Raw, filter, mapping string) (*config, error) {
	var errs []error
	if strings.TrimSpace(filter) == "" && strings.TrimSpace(mapping) == "" {
		errs = append(errs, fmt.Errorf("field %s: set %s, %s or both", FieldFilter, FieldFilter, FieldMap))
	}
	t, err := raw.Resolve() // nil: no table
	if err != nil {
		// The expressions are checked against the table.
		return nil, errors.Join(append(errs, err)...)
	}
	env, err := expr.NewEnv(t)
	if err != nil {
		return nil, errors.Join(append(errs, fmt.Errorf("field %s: %w", table.FieldTable, err))...)
	}
	c := &config{env: env}
	if strings.TrimSpace(filter) != "" {
		if c.filter, err = c.env.CompileFilter(filter); err != nil {
			errs = append(errs, fmt.Errorf("field %s: %w", FieldFilter, err))
		}
	}
	if strings.TrimSpace(mapping) != "" {
		if c.mapping, err = c.env.CompileMap(mapping); err != nil {
			errs = append(errs, fmt.Errorf("field %s: %w", FieldMap, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

type processor struct{ c *config }

func newProcessor(c *config) *processor { return &processor{c: c} }

// Process applies filter, then map. An evaluation error flags the message
// and lets it through unchanged.
func (p *processor) Process(_ context.Context, msg *service.Message) (service.MessageBatch, error) {
	act, err := p.c.env.Activation(table.RowOf(msg), table.ExprInput(msg))
	if err != nil {
		msg.SetError(fmt.Errorf("%s%s: the row does not fit the table: %w", component, table.Locate(msg), err))
		return service.MessageBatch{msg}, nil
	}
	if f := p.c.filter; f != nil {
		v, err := f.Eval(act)
		if err != nil {
			return flag(msg, FieldFilter, f, err)
		}
		switch keep := v.(type) {
		case bool:
			if !keep {
				return nil, nil
			}
		case nil: // NULL: as in SQL's WHERE, not true
			return nil, nil
		default:
			return flag(msg, FieldFilter, f, fmt.Errorf("the result is %T, want a bool", v))
		}
	}
	if m := p.c.mapping; m != nil {
		v, err := m.Eval(act)
		if err != nil {
			return flag(msg, FieldMap, m, err)
		}
		row, ok := v.(map[string]any)
		if !ok {
			return flag(msg, FieldMap, m, fmt.Errorf("the result is %T, want a map", v))
		}
		msg.SetStructuredMut(row)
	}
	return service.MessageBatch{msg}, nil
}

func flag(msg *service.Message, field string, p *expr.Program, err error) (service.MessageBatch, error) {
	msg.SetError(fmt.Errorf("%s%s: field %s: expression %q: %w", component, table.Locate(msg), field, p.Source, err))
	return service.MessageBatch{msg}, nil
}

func (p *processor) Close(context.Context) error { return nil }
