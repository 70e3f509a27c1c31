// Package kafkatable binds a Flink table to the kafka_source input and the
// kafka_sink output, as Flink's KafkaDynamicSource and KafkaDynamicSink do:
// the config fields that name the table (`table`, `catalog`, `ddl`), the
// check that a YAML field does not contradict a WITH option, and Codec,
// which turns a record's key, value and metadata into a typed row and back
// (key.format / key.fields / key.fields-prefix / value.fields-include,
// metadata columns, computed columns, upsert-kafka tombstones).
package kafkatable

import (
	"fmt"
	"sort"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/plugins/processor/tablespec"
	"github.com/connectd/connectd/schema"
)

// Field names of the table fields, the same in kafka_source and kafka_sink.
const (
	FieldTable   = tablespec.FieldTable
	FieldCatalog = tablespec.FieldCatalog
	FieldDDL     = tablespec.FieldDDL
)

// The examples of the table fields: `connectd create` writes the first
// example of each optional field into the config it prints, so together
// they make a table that a source and a sink can use as they are.
const (
	exampleTable = "events"
	exampleDDL   = "CREATE TABLE events (id STRING, amount DOUBLE) WITH ('connector' = 'kafka', 'topic' = 'events', " +
		"'properties.bootstrap.servers' = 'localhost:9092', 'properties.group.id' = 'events-reader', 'format' = 'json')"
)

// Fields returns the table fields of a component; role is "source" or
// "sink" and only changes the docs.
func Fields(role string) []*service.ConfigField {
	derive := "`topic` / `topic-pattern`, `properties.bootstrap.servers`, `properties.group.id`, `scan.startup.*`, `scan.bounded.*`, " +
		"`scan.topic-partition-discovery.interval`, the value format (`format` / `value.format` and their options) and the key " +
		"(`key.format`, `key.fields`, `key.fields-prefix`, `value.fields-include`)"
	if role == "sink" {
		derive = "`topic`, `properties.bootstrap.servers`, `sink.delivery-guarantee`, `sink.transactional-id-prefix`, `sink.partitioner`, " +
			"the value format (`format` / `value.format` and their options) and the key (`key.format`, `key.fields`, `key.fields-prefix`, " +
			"`value.fields-include`, or the PRIMARY KEY), and upsert-kafka's `sink.buffer-flush.max-rows` / `sink.buffer-flush.interval` (as `batching`)"
	}
	return []*service.ConfigField{
		service.NewAnyField(FieldTable).
			Description("The Flink table this " + role + " reads its settings from, as `CREATE TABLE ... WITH (...)` drives Flink's Kafka connector: " +
				"the name of a table in `catalog` or `ddl`, or the table inline in the YAML form (`name`, `columns`, `primary_key`, `watermark`, `options`). " +
				"The table's WITH options set " + derive + ". The table is the single source of truth: a field of this component that the " +
				"table also sets must agree with it (a contradiction is a config error naming the field and the option), and a WITH option " +
				"that connectd does not support is an error naming it. Options of the other direction (`sink.*` on a source, `scan.*` and " +
				"`properties.group.id` on a sink) are allowed and unused, since Flink tables serve both. Default: none (no table). " +
				"Flink: the table of `CREATE TABLE`.").
			Example(exampleTable).
			Optional(),
		service.NewStringField(FieldCatalog).
			Description("Path of a catalog file, relative to the working directory: `.sql` with Flink `CREATE TABLE` statements, or `.yaml` " +
				"with a `tables:` list in the YAML form, for example `./config/tables.sql`; `table` names the table. `connectd lint` reads it, " +
				"as a run does. Default: none. Flink: a catalog.").
			Optional(),
		service.NewStringField(FieldDDL).
			Description("Flink SQL `CREATE TABLE` statements, inline, instead of `catalog`; with several, `table` names the one to use. Default: none.").
			Example(exampleDDL).
			Optional(),
	}
}

// Raw is a component's table fields before resolution.
type Raw struct {
	Table   any
	Catalog string
	DDL     string
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
	return r, nil
}

// ResolveParsed returns the validated table of conf (see Resolve), nil when
// it names none.
func ResolveParsed(conf *service.ParsedConfig) (*schema.Table, error) {
	r, err := RawFromParsed(conf)
	if err != nil {
		return nil, err
	}
	return r.Resolve()
}

// ParsedFields returns the values of the fields among names that conf
// contains, keyed by name, for Written.
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

// Resolve returns the validated table, nil when the config names none.
// Every problem of the table is reported, unsupported WITH options
// included. The connector must be kafka or upsert-kafka.
func (r Raw) Resolve() (*schema.Table, error) {
	if !r.Set() {
		return nil, nil
	}
	t, err := tablespec.ResolveTable(r.Table, r.Catalog, r.DDL)
	if err != nil {
		return nil, err
	}
	switch c := t.Options[schema.OptConnector]; c {
	case schema.ConnectorKafka, schema.ConnectorUpsertKafka:
	default:
		return nil, fmt.Errorf("field %s: table %s: option 'connector' = '%s': want 'kafka' or 'upsert-kafka' for a Kafka component", FieldTable, t.Name, c)
	}
	return t, nil
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
	c.errs = append(c.errs, fmt.Errorf("field %s: %v contradicts option '%s' = '%s' of table %s; "+
		"the table is the single source of truth: drop %s or change the option", field, show(fieldValue), option, optValue, c.table, field))
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
// among names: a parsed config holds the defaults too, so a field equal to its default in defaults, null, an empty
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
