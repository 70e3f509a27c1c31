package schema

import (
	"fmt"
	"strings"
)

// The Kafka record key of a table, as Flink's Kafka table factories derive
// it, with one connectd extension: a PRIMARY KEY on the plain `kafka`
// connector.
//
// Flink refuses a PRIMARY KEY on the `kafka` connector with an insert-only
// format ("cannot guarantee the semantics"). connectd accepts it, because a
// table like the seed's `kafka_sink` (device_id as PRIMARY KEY, values in
// avro-confluent) means "key the records by device_id": the key columns are
// the PRIMARY KEY columns (`key.fields`, when given, must name the same
// columns in the same order), and when `key.format` is absent and the key is
// one character-string or binary column, the key is that column's bytes
// (format `raw`). Rows are still inserts: deletes and tombstones are the
// `upsert-kafka` connector's.

// KeyFields returns the columns that form the Kafka key: `key.fields`
// (semicolon-separated), else the PRIMARY KEY columns (upsert-kafka, and
// kafka with a PRIMARY KEY). nil when the records have no key columns.
func (t *Table) KeyFields() []string {
	if v, ok := t.Options[OptKeyFields]; ok {
		var out []string
		for _, name := range strings.Split(v, ";") {
			if name = strings.TrimSpace(name); name != "" {
				out = append(out, name)
			}
		}
		return out
	}
	if t.PrimaryKey != nil && !t.changelogValue() {
		return append([]string(nil), t.PrimaryKey.Columns...)
	}
	return nil
}

// changelogValue reports whether the table's value format is a changelog
// format: Flink accepts a PRIMARY KEY on such a `kafka` table (the key of
// the changed rows, for its planner), and it does not form the Kafka key.
func (t *Table) changelogValue() bool {
	name, _, ok := t.FormatOf()
	return ok && IsChangelogFormat(name) && t.Options[OptConnector] != ConnectorUpsertKafka
}

// KeyFormatOf returns the key format and its options without the
// `key.<format>.` prefix. Without `key.format`, a key of one character-string
// or binary column (a PRIMARY KEY on the kafka connector) is `raw`. ok is false
// when the table has no key columns or no key format can be derived.
func (t *Table) KeyFormatOf() (name string, opts map[string]string, ok bool) {
	fields := t.KeyFields()
	if len(fields) == 0 {
		return "", nil, false
	}
	name, ok = t.Options[OptKeyFormat]
	if !ok {
		if !t.rawKeyable(fields) {
			return "", nil, false
		}
		return FormatRaw, map[string]string{}, true
	}
	opts = map[string]string{}
	for k, v := range t.Options {
		if rest, found := strings.CutPrefix(k, "key."+name+"."); found {
			opts[rest] = v
		}
	}
	return name, opts, true
}

// rawKeyable reports whether the key columns are one STRING/CHAR or
// BYTES/BINARY column, which the raw format writes as is.
func (t *Table) rawKeyable(fields []string) bool {
	if len(fields) != 1 {
		return false
	}
	c, ok := t.Column(fields[0])
	return ok && c.Type != nil && (c.Type.IsString() || c.Type.IsBinary())
}

// ValueFieldsExceptKey reports whether `value.fields-include` is EXCEPT_KEY:
// the value holds the physical columns that are not key columns.
func (t *Table) ValueFieldsExceptKey() bool {
	return t.Options[OptValueFieldsInclude] == OptValueFieldsIncludeExcpt
}

// validatePrimaryKeyAsKey checks a PRIMARY KEY on the kafka connector: the
// key columns are the PRIMARY KEY columns, and the key needs a format.
func (t *Table) validatePrimaryKeyAsKey() []error {
	if t.changelogValue() {
		return nil // as in Flink: the PRIMARY KEY of a CDC table is not the Kafka key
	}
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("table %s: "+format, append([]any{t.Name}, args...)...))
	}
	pk := strings.Join(t.PrimaryKey.Columns, ";")
	if v, ok := t.Options[OptKeyFields]; ok && strings.Join(t.KeyFields(), ";") != pk {
		add("option 'key.fields' = '%s' differs from the PRIMARY KEY (%s): with a PRIMARY KEY on the kafka connector the key columns are the PRIMARY KEY columns; "+
			"drop 'key.fields' or make it '%s'", v, strings.Join(t.PrimaryKey.Columns, ", "), pk)
	}
	if _, ok := t.Options[OptKeyFormat]; !ok && !t.rawKeyable(t.PrimaryKey.Columns) {
		add("option 'key.format' is required: the PRIMARY KEY columns (%s) form the Kafka key, and only a key of one STRING or BYTES column defaults to 'raw'",
			strings.Join(t.PrimaryKey.Columns, ", "))
	}
	return errs
}
