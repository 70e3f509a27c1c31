package table

// The Bloblang lint pieces of the table components, moved here unchanged
// from internal/kafkatable and plugins/processor/tablespec: they go when the
// components lint through their Go validators.

import (
	"os"

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

// RawFromMap reads the table fields of a config as a lint rule sees it.
func RawFromMap(m map[string]any) Raw {
	r := Raw{Table: m[FieldTable]}
	r.Catalog, _ = m[FieldCatalog].(string)
	r.DDL, _ = m[FieldDDL].(string)
	return r
}

// LintResolve is ResolveKafka at lint time: a catalog file that does not
// exist (relative to the linter's working directory) is not an error; the
// table is then checked when the component starts. ok is false when nothing
// can be checked.
func (r Raw) LintResolve() (t *schema.Table, ok bool, err error) {
	if r.Catalog != "" {
		if _, statErr := os.Stat(r.Catalog); statErr != nil {
			return nil, false, nil
		}
	}
	t, err = r.ResolveKafka()
	return t, t != nil, err
}

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

func rawFromMap(m map[string]any) processorRaw {
	r := processorRaw{Raw: RawFromMap(m), options: m[FieldOptions], onError: string(PolicyFail)}
	if f, ok := m[FieldFormat].(string); ok {
		r.format, r.hasFormat = f, true
	}
	if p, ok := m[FieldOnError].(string); ok {
		r.onError = p
	}
	return r
}
