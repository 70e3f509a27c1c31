package schema

import (
	"strings"
	"testing"
)

// Every option connectd maps is documented in optionDocs, every entry of
// optionDocs is an option connectd maps, and no refused option is also
// mapped: docs/flink-options.md lists exactly what connectd does.
func TestOptionDocsCoverTheOptions(t *testing.T) {
	t.Parallel()
	known := map[string]bool{}
	for _, opts := range connectorOptions {
		for k := range opts {
			known[k] = true
		}
	}
	for f, opts := range formatOptions {
		for k := range opts {
			known[f+"."+k] = true
		}
	}
	for k := range known {
		if strings.TrimSpace(optionDocs[k]) == "" {
			t.Errorf("option %s has no entry in optionDocs (schema/optiondocs.go): say what connectd does with it", k)
		}
	}
	for k := range optionDocs {
		if !known[k] {
			t.Errorf("optionDocs documents %s, which no connector or format option table holds", k)
		}
	}
	for k := range refusedOptions {
		if known[k] {
			t.Errorf("option %s is both mapped and refused", k)
		}
	}
	for k := range refusedValues {
		opt, val, _ := strings.Cut(k, " = ")
		if !known[opt] {
			t.Errorf("refused value %s: %s is not a mapped option", k, opt)
		}
		for c, opts := range connectorOptions {
			if chk, ok := opts[opt]; ok && chk(val) == nil {
				t.Errorf("refused value %s is accepted by connector %q", k, c)
			}
		}
	}
}
