package table

import (
	"os"

	"github.com/connectd/connectd/schema"
)

// RawFromMap reads the table fields of a component config as a document
// check sees it (plain YAML values, before the component parses them).
func RawFromMap(m map[string]any) Raw {
	r := Raw{Table: m[FieldTable]}
	r.Catalog, _ = m[FieldCatalog].(string)
	r.DDL, _ = m[FieldDDL].(string)
	r.LocalTimeZone, _ = m[FieldLocalTimeZone].(string)
	return r
}

// LintResolve is ResolveKafka for a document check that looks across
// components: a catalog file that does not exist (relative to the linter's
// working directory) is not its problem (the component's own validator
// reports it). ok is false when nothing can be checked.
func (r Raw) LintResolve() (t *schema.Table, ok bool, err error) {
	if r.Catalog != "" {
		if _, statErr := os.Stat(r.Catalog); statErr != nil {
			return nil, false, nil
		}
	}
	t, err = r.ResolveKafka()
	return t, t != nil, err
}
