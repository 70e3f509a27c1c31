package table

import (
	"fmt"
	"sort"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/schema"
)

// A Kafka component's table is the single source of truth: the YAML fields
// that it also sets (topics, brokers, group, ...) must agree with its WITH
// options. These helpers find the fields a user wrote and collect the
// contradictions.

// ParsedFields returns the values of the fields among names that conf
// contains, keyed by name: the form a lint rule sees, for Written.
func ParsedFields(conf *service.ParsedConfig, names []string) (map[string]any, error) {
	m := map[string]any{}
	for _, f := range names {
		if !conf.Contains(f) {
			continue
		}
		v, err := conf.FieldAny(f)
		if err != nil {
			return nil, err
		}
		m[f] = v
	}
	return m, nil
}

// Conflicts collects contradictions between YAML fields and table options.
type Conflicts struct {
	table string
	errs  []error
}

// NewConflicts returns a collector for table t.
func NewConflicts(t *schema.Table) *Conflicts { return &Conflicts{table: t.Name} }

// Add records that field (set to fieldValue in YAML) contradicts option
// (set to optValue in the table).
func (c *Conflicts) Add(field string, fieldValue any, option, optValue string) {
	c.errs = append(c.errs, Contradiction(c.table, field, fieldValue, option, optValue))
}

// Contradiction returns the error of a YAML field (set to fieldValue) that
// contradicts option (set to optValue) of table.
func Contradiction(table, field string, fieldValue any, option, optValue string) error {
	return fmt.Errorf("field %s: %v contradicts option '%s' = '%s' of table %s; "+
		"the table is the single source of truth: drop %s or change the option", field, show(fieldValue), option, optValue, table, field)
}

// KafkaConn returns what table t sets of a Kafka component's connection:
// its brokers and its Kafka client properties, with contradictions worded
// as Add words them. kafkaconn.FromParsedTable applies it.
func KafkaConn(t *schema.Table) kafkaconn.TableConn {
	tc := kafkaconn.TableConn{
		Table:      t.Name,
		Properties: t.Properties(),
		Contradiction: func(field string, fieldValue any, option, optValue string) error {
			return Contradiction(t.Name, field, fieldValue, option, optValue)
		},
	}
	if v, ok := t.Options[schema.OptBootstrapServers]; ok {
		tc.Brokers = SplitList(v, ",")
	}
	return tc
}

// Property returns the value of Kafka client property name (without the
// `properties.` prefix) of t, and whether t sets it.
func Property(t *schema.Table, name string) (string, bool) {
	v, ok := t.Options[schema.PropertyPrefix+name]
	return strings.TrimSpace(v), ok
}

// Addf records any other problem, prefixed with the field.
func (c *Conflicts) Addf(field, format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("field %s: table %s: %s", field, c.table, fmt.Sprintf(format, args...)))
}

// Errs returns the problems, sorted for stable messages.
func (c *Conflicts) Errs() []error {
	sort.SliceStable(c.errs, func(i, j int) bool { return c.errs[i].Error() < c.errs[j].Error() })
	return c.errs
}

func show(v any) string {
	switch v := v.(type) {
	case []string:
		return "[" + strings.Join(v, ", ") + "]"
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = fmt.Sprint(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case string:
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprint(v)
}

// SplitList splits a Flink list option (`topic` is `a;b`, bootstrap servers
// are `h1:9092,h2:9092`) on sep, trimming and dropping empty entries.
func SplitList(v, sep string) []string {
	var out []string
	for _, e := range strings.Split(v, sep) {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// StringList reads a YAML string list (as []any or []string) and splits each
// entry on commas, as the components do for topics and seed brokers.
func StringList(v any) []string {
	var entries []string
	switch v := v.(type) {
	case []string:
		entries = v
	case []any:
		for _, e := range v {
			entries = append(entries, fmt.Sprint(e))
		}
	case string:
		entries = []string{v}
	}
	var out []string
	for _, e := range entries {
		out = append(out, SplitList(e, ",")...)
	}
	return out
}

// SameSet reports whether a and b hold the same strings, in any order.
func SameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x := append([]string(nil), a...)
	y := append([]string(nil), b...)
	sort.Strings(x)
	sort.Strings(y)
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// Written returns the fields of a component config that the user wrote,
// among names: a parsed config (and the config a lint rule sees) holds the
// defaults too, so a field equal to its default in defaults, null, an empty
// string or an empty list counts as not written. A field explicitly set to
// its default therefore yields to the table rather than contradicting it.
func Written(m map[string]any, names []string, defaults map[string]string) map[string]any {
	set := map[string]any{}
	for _, f := range names {
		v, ok := m[f]
		if !ok || v == nil {
			continue
		}
		if empty(v) {
			continue
		}
		if def, ok := defaults[f]; ok && fmt.Sprint(v) == def {
			continue
		}
		set[f] = v
	}
	return set
}

// empty reports whether a config value holds nothing: null, "", an empty
// list, or an object of empty values (a metadata filter's defaults).
func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case []string:
		return len(x) == 0
	case map[string]any:
		for _, e := range x {
			if !empty(e) {
				return false
			}
		}
		return true
	}
	return false
}
