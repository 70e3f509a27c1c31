package kafkatable

import (
	"github.com/redpanda-data/benthos/v4/public/bloblang"

	"github.com/connectd/connectd/schema"
)

// RegisterLintMethod registers the Bloblang method name that a component's
// lint rule calls on its config (`this.<name>()`): for a config with a
// table, it resolves the table and returns the problems problems finds, as
// strings; a table that does not resolve is the only problem; a config
// without a table has none. component names the caller in the docs.
//
// It returns true so that it can run in a package variable's initialiser:
// those run before init functions, where specs whose lint rules call the
// method are registered.
func RegisterLintMethod(name, component string, problems func(t *schema.Table, conf map[string]any) []error) bool {
	bloblang.MustRegisterMethodV2(name,
		bloblang.NewPluginSpec().
			Category("Connectd internal").
			Description("Returns the problems of a "+component+" config with a table as a list of strings. Used by "+
				component+"'s lint rule."),
		func(*bloblang.ParsedParams) (bloblang.Method, error) {
			return func(v any) (any, error) {
				m, ok := v.(map[string]any)
				if !ok {
					return []any{}, nil
				}
				t, ok, err := RawFromMap(m).LintResolve()
				if err != nil {
					return []any{err.Error()}, nil
				}
				out := []any{}
				if !ok {
					return out, nil
				}
				for _, e := range problems(t, m) {
					out = append(out, e.Error())
				}
				return out, nil
			}, nil
		})
	return true
}
