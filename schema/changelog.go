package schema

import (
	"fmt"
	"regexp"
	"strings"
)

// Changelog formats: a record holds a change of a database row (Flink's
// flink-json CDC formats and flink-avro-confluent-registry's
// debezium-avro-confluent). Decoding one record gives zero or more rows,
// each with its change kind (Flink's RowKind); schema/format/changelog has
// the codecs.
const (
	FormatDebeziumJSON          = "debezium-json"
	FormatCanalJSON             = "canal-json"
	FormatMaxwellJSON           = "maxwell-json"
	FormatOggJSON               = "ogg-json"
	FormatDebeziumAvroConfluent = "debezium-avro-confluent"
)

// IsChangelogFormat reports whether format writes changes (insert,
// update-before, update-after, delete) rather than plain rows. Flink
// allows such a format only as the value format of a `kafka` table.
func IsChangelogFormat(format string) bool {
	_, ok := changelogMetadata[format]
	return ok
}

// javaRegex checks a Java regular expression option that connectd matches
// with Go's RE2 (`canal-json.database.include`).
func javaRegex(v string) error {
	if _, err := regexp.Compile(v); err != nil {
		return fmt.Errorf("not a regular expression connectd can run (RE2 syntax, no look-around or back-references): %w", err)
	}
	return nil
}

// changelogJSONOptions are the options every flink-json CDC format shares
// with `json` (Flink's JsonFormatOptions minus fail-on-missing-field), taken
// from the json format's own checks so both accept the same values.
func changelogJSONOptions(extra map[string]check) map[string]check {
	out := map[string]check{}
	for k, c := range formatOptions[FormatJSON] {
		if k == "fail-on-missing-field" {
			continue
		}
		out[k] = c
	}
	for k, c := range extra {
		out[k] = c
	}
	return out
}

func init() {
	formatOptions[FormatDebeziumJSON] = changelogJSONOptions(map[string]check{"schema-include": boolean})
	formatOptions[FormatCanalJSON] = changelogJSONOptions(map[string]check{"database.include": javaRegex, "table.include": javaRegex})
	formatOptions[FormatMaxwellJSON] = changelogJSONOptions(nil)
	formatOptions[FormatOggJSON] = changelogJSONOptions(nil)
	opts := map[string]check{}
	for k, c := range formatOptions[FormatAvroConfluent] {
		opts[k] = c
	}
	formatOptions[FormatDebeziumAvroConfluent] = opts
	changelogOptionDocs()
}

// changelogOptionDocs documents the changelog formats' options in
// optionDocs (docs/flink-options.md): the ones they share with json and
// avro-confluent as those say, and their own.
func changelogOptionDocs() {
	for _, f := range []string{FormatDebeziumJSON, FormatCanalJSON, FormatMaxwellJSON, FormatOggJSON} {
		for k := range formatOptions[f] {
			if d, ok := optionDocs[FormatJSON+"."+k]; ok {
				optionDocs[f+"."+k] = d + " (in the rows of the envelope, as `json." + k + "`)"
			}
		}
		optionDocs[f+".ignore-parse-errors"] = "a record that does not parse, or whose operation is unknown, gives no row (counted as skipped); a field that does not parse reads as NULL"
		if _, ok := formatOptions[f]["encode.ignore-null-fields"]; ok {
			optionDocs[f+".encode.ignore-null-fields"] = "NULL fields are left out of the written envelope (a null `before` or `after` too) and of its rows, as Flink's serializer"
		}
	}
	optionDocs[FormatDebeziumJSON+".schema-include"] = "records are Kafka Connect's `{\"schema\", \"payload\"}` (`value.converter.schemas.enable`); read only: a sink refuses it, as Flink (docs/changelog.md)"
	optionDocs[FormatCanalJSON+".database.include"] = "regular expression (RE2) the whole `database` must match; other records give no row"
	optionDocs[FormatCanalJSON+".table.include"] = "regular expression (RE2) the whole `table` must match; other records give no row"
	for k := range formatOptions[FormatDebeziumAvroConfluent] {
		if d, ok := optionDocs[FormatAvroConfluent+"."+k]; ok {
			optionDocs[FormatDebeziumAvroConfluent+"."+k] = d + " (for Debezium's Avro envelope)"
		}
	}
}

// changelogMetadata are the readable metadata keys of each changelog
// format, without the `value.` prefix a table names them with
// (`value.source.timestamp` is key `source.timestamp` of the value
// format), and their types as Flink declares them.
var changelogMetadata = map[string]map[string]string{
	FormatDebeziumJSON: {
		"schema":              "STRING",
		"ingestion-timestamp": "TIMESTAMP_LTZ(3)",
		"source.timestamp":    "TIMESTAMP_LTZ(3)",
		"source.database":     "STRING",
		"source.schema":       "STRING",
		"source.table":        "STRING",
		"source.properties":   "MAP<STRING, STRING>",
	},
	FormatCanalJSON: {
		"database":            "STRING",
		"table":               "STRING",
		"sql-type":            "MAP<STRING, INT>",
		"pk-names":            "ARRAY<STRING>",
		"ingestion-timestamp": "TIMESTAMP_LTZ(3)",
		"event-timestamp":     "TIMESTAMP_LTZ(3)",
	},
	FormatMaxwellJSON: {
		"database":            "STRING",
		"table":               "STRING",
		"primary-key-columns": "ARRAY<STRING>",
		"ingestion-timestamp": "TIMESTAMP_LTZ(3)",
	},
	FormatOggJSON: {
		"table":               "STRING",
		"primary-keys":        "ARRAY<STRING>",
		"ingestion-timestamp": "TIMESTAMP_LTZ(6)",
		"event-timestamp":     "TIMESTAMP_LTZ(6)",
	},
	FormatDebeziumAvroConfluent: {},
}

// FormatMetadata returns the readable metadata keys of a value format
// (without the `value.` prefix) and their types; nil for a format without
// any.
func FormatMetadata(format string) map[string]*Type {
	m := changelogMetadata[format]
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]*Type, len(m))
	for k, src := range m {
		t, err := ParseType(src)
		if err != nil {
			panic(fmt.Sprintf("schema: metadata %s of format %s: %v", k, format, err))
		}
		out[k] = t
	}
	return out
}

// formatMetadataKinds returns the type kinds a column may declare for a
// metadata key of the table's value format (`value.source.timestamp`);
// ok is false for a key that is not one.
func (t *Table) formatMetadataKinds(key string) (kinds []Kind, ok bool) {
	rest, found := strings.CutPrefix(key, "value.")
	if !found {
		return nil, false
	}
	name, _, hasFormat := t.FormatOf()
	if !hasFormat {
		return nil, false
	}
	src, ok := changelogMetadata[name][rest]
	if !ok {
		return nil, false
	}
	typ, err := ParseType(src)
	if err != nil {
		return nil, false
	}
	switch typ.Kind {
	case KindTimestampLTZ:
		return []Kind{KindTimestampLTZ, KindTimestamp}, true
	case KindVarchar:
		return []Kind{KindVarchar, KindChar}, true
	}
	return []Kind{typ.Kind}, true
}

// formatMetadataKeys returns the `value.*` metadata keys of the table's
// value format, for error messages.
func (t *Table) formatMetadataKeys() []string {
	name, _, ok := t.FormatOf()
	if !ok {
		return nil
	}
	var out []string
	for _, k := range sortedKeys(changelogMetadata[name]) {
		out = append(out, "value."+k)
	}
	return out
}

// validateChangelog applies Flink's rules for changelog formats: they are
// value formats of a `kafka` table (upsert-kafka and key formats need
// insert-only formats), and debezium-json cannot write its schema.
func (t *Table) validateChangelog() []error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("table %s: "+format, append([]any{t.Name}, args...)...))
	}
	if f := t.Options[OptKeyFormat]; IsChangelogFormat(f) {
		add("option 'key.format' = '%s': a key format must be insert-only (json, csv, avro, avro-confluent, raw); '%s' writes changes (as in Flink)", f, f)
	}
	name, _, ok := t.FormatOf()
	if !ok || !IsChangelogFormat(name) {
		return errs
	}
	if t.Options[OptConnector] == ConnectorUpsertKafka {
		add("option 'value.format' = '%s': upsert-kafka needs an insert-only value format, and '%s' writes changes; use connector 'kafka' (as in Flink)", name, name)
	}
	return errs
}

func kindIn(k Kind, kinds []Kind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}
