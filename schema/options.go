package schema

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Connector names connectd knows in the `connector` option.
const (
	ConnectorKafka       = "kafka"
	ConnectorUpsertKafka = "upsert-kafka"
)

// Format names connectd knows in the `format`, `key.format` and
// `value.format` options. A format's encoder and decoder live in
// schema/format; a format listed here without one there is reported by the
// component that needs it.
const (
	FormatJSON          = "json"
	FormatCSV           = "csv"
	FormatRaw           = "raw"
	FormatAvro          = "avro"
	FormatAvroConfluent = "avro-confluent"
	FormatProtobuf      = "protobuf"
)

// Option names of the Kafka connectors that connectd maps to its components.
const (
	OptConnector               = "connector"
	OptTopic                   = "topic"
	OptTopicPattern            = "topic-pattern"
	OptBootstrapServers        = "properties.bootstrap.servers"
	OptGroupID                 = "properties.group.id"
	OptFormat                  = "format"
	OptKeyFormat               = "key.format"
	OptValueFormat             = "value.format"
	OptKeyFields               = "key.fields"
	OptKeyFieldsPrefix         = "key.fields-prefix"
	OptValueFieldsInclude      = "value.fields-include"
	OptStartupMode             = "scan.startup.mode"
	OptStartupSpecificOffsets  = "scan.startup.specific-offsets"
	OptStartupTimestampMillis  = "scan.startup.timestamp-millis"
	OptBoundedMode             = "scan.bounded.mode"
	OptBoundedSpecificOffsets  = "scan.bounded.specific-offsets"
	OptBoundedTimestampMillis  = "scan.bounded.timestamp-millis"
	OptPartitionDiscovery      = "scan.topic-partition-discovery.interval"
	OptWatermarkIdleTimeout    = "scan.watermark.idle-timeout"
	OptWatermarkEmitStrategy   = "scan.watermark.emit.strategy"
	OptWatermarkAlignGroup     = "scan.watermark.alignment.group"
	OptWatermarkAlignMaxDrift  = "scan.watermark.alignment.max-drift"
	OptWatermarkAlignInterval  = "scan.watermark.alignment.update-interval"
	OptDeliveryGuarantee       = "sink.delivery-guarantee"
	OptTransactionalIDPrefix   = "sink.transactional-id-prefix"
	OptSinkPartitioner         = "sink.partitioner"
	OptSinkBufferFlushMaxRows  = "sink.buffer-flush.max-rows"
	OptSinkBufferFlushInterval = "sink.buffer-flush.interval"
	OptValueFieldsIncludeAll   = "ALL"
	OptValueFieldsIncludeExcpt = "EXCEPT_KEY"
)

// check validates one option value; it returns a description of what is
// allowed when the value is wrong.
type check func(v string) error

func enum(values ...string) check {
	return func(v string) error {
		for _, x := range values {
			if v == x {
				return nil
			}
		}
		return fmt.Errorf("want one of %s", strings.Join(values, ", "))
	}
}

func nonEmpty(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("must not be empty")
	}
	return nil
}

func boolean(v string) error {
	if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
		return fmt.Errorf("want true or false")
	}
	return nil
}

func int64Value(v string) error {
	if _, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
		return fmt.Errorf("want an integer")
	}
	return nil
}

func anyString(string) error { return nil }

var specificOffset = regexp.MustCompile(`^\s*partition\s*:\s*[0-9]+\s*,\s*offset\s*:\s*[0-9]+\s*$`)

// specificOffsets checks Flink's `partition:0,offset:42;partition:1,offset:300`.
func specificOffsets(v string) error {
	for _, entry := range strings.Split(strings.TrimSuffix(strings.TrimSpace(v), ";"), ";") {
		if !specificOffset.MatchString(entry) {
			return fmt.Errorf("want entries like partition:0,offset:42 separated by semicolons, got %q", entry)
		}
	}
	return nil
}

func regex(v string) error {
	if _, err := regexp.Compile(v); err != nil {
		return fmt.Errorf("not a regular expression: %w", err)
	}
	return nil
}

// singleChar accepts one character, or a backslash escape such as `\t`.
func singleChar(v string) error {
	if _, err := ParseCharOption(v); err != nil {
		return err
	}
	return nil
}

// ParseCharOption reads a one-character option value as Flink's csv format
// does: one character, or `\t`, `\n`, `\r`, `\\`, `\'`, `\"`, `\0`, `\uXXXX`.
func ParseCharOption(v string) (rune, error) {
	if strings.HasPrefix(v, `\`) && len(v) > 1 {
		switch v {
		case `\t`:
			return '\t', nil
		case `\n`:
			return '\n', nil
		case `\r`:
			return '\r', nil
		case `\\`:
			return '\\', nil
		case `\'`:
			return '\'', nil
		case `\"`:
			return '"', nil
		case `\0`:
			return 0, nil
		}
		if len(v) == 6 && v[1] == 'u' {
			n, err := strconv.ParseUint(v[2:], 16, 16)
			if err == nil {
				return rune(n), nil
			}
		}
		return 0, fmt.Errorf("want a single character, got %q", v)
	}
	if utf8.RuneCountInString(v) != 1 {
		return 0, fmt.Errorf("want a single character, got %q", v)
	}
	r, _ := utf8.DecodeRuneInString(v)
	return r, nil
}

// duration accepts Flink durations ("1 min", "30 s", "500ms") and Go ones.
func duration(v string) error {
	if _, err := ParseFlinkDuration(v); err != nil {
		return err
	}
	return nil
}

var flinkDuration = regexp.MustCompile(`^\s*([0-9]+)\s*([a-zA-Zµ]*)\s*$`)

// ParseFlinkDuration parses a duration as Flink's TimeUtils.parseDuration
// does ("1 min", "10s", "500 ms", "2 h"; a bare number is milliseconds), and
// also accepts Go durations ("1m30s").
func ParseFlinkDuration(v string) (time.Duration, error) {
	m := flinkDuration.FindStringSubmatch(v)
	if m == nil {
		if d, err := time.ParseDuration(strings.TrimSpace(v)); err == nil && d >= 0 {
			return d, nil
		}
		return 0, fmt.Errorf("want a duration such as \"1 min\", \"30 s\" or \"500 ms\", got %q", v)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("duration %q out of range", v)
	}
	var unit time.Duration
	switch strings.ToLower(m[2]) {
	case "ns", "nano", "nanos", "nanosecond", "nanoseconds":
		unit = time.Nanosecond
	case "µs", "us", "micro", "micros", "microsecond", "microseconds":
		unit = time.Microsecond
	case "", "ms", "milli", "millis", "millisecond", "milliseconds":
		unit = time.Millisecond
	case "s", "sec", "secs", "second", "seconds":
		unit = time.Second
	case "m", "min", "minute", "minutes":
		unit = time.Minute
	case "h", "hour", "hours":
		unit = time.Hour
	case "d", "day", "days":
		unit = 24 * time.Hour
	default:
		return 0, fmt.Errorf("unknown duration unit %q in %q (want ms, s, min, h or d)", m[2], v)
	}
	if n > int64(1<<62)/int64(unit) {
		return 0, fmt.Errorf("duration %q out of range", v)
	}
	return time.Duration(n) * unit, nil
}

// connectorOptions are the WITH options connectd maps for each connector.
var connectorOptions = map[string]map[string]check{
	ConnectorKafka: {
		OptConnector:              nonEmpty,
		OptTopic:                  nonEmpty,
		OptTopicPattern:           regex,
		OptBootstrapServers:       nonEmpty,
		OptGroupID:                nonEmpty,
		OptFormat:                 formatName,
		OptKeyFormat:              formatName,
		OptValueFormat:            formatName,
		OptKeyFields:              nonEmpty,
		OptKeyFieldsPrefix:        anyString,
		OptValueFieldsInclude:     enum(OptValueFieldsIncludeAll, OptValueFieldsIncludeExcpt),
		OptStartupMode:            enum("earliest-offset", "latest-offset", "group-offsets", "timestamp", "specific-offsets"),
		OptStartupSpecificOffsets: specificOffsets,
		OptStartupTimestampMillis: int64Value,
		OptBoundedMode:            boundedMode,
		OptBoundedSpecificOffsets: specificOffsets,
		OptBoundedTimestampMillis: int64Value,
		OptPartitionDiscovery:     duration,
		OptWatermarkIdleTimeout:   duration,
		OptWatermarkEmitStrategy:  emitStrategy,
		OptWatermarkAlignGroup:    nonEmpty,
		OptWatermarkAlignMaxDrift: duration,
		OptWatermarkAlignInterval: duration,
		OptDeliveryGuarantee:      enum("none", "at-least-once", "exactly-once"),
		OptTransactionalIDPrefix:  nonEmpty,
		OptSinkPartitioner:        enum("default", "fixed", "round-robin"),
		OptLocalTimeZone:          timeZone,
	},
	ConnectorUpsertKafka: {
		OptConnector:               nonEmpty,
		OptTopic:                   nonEmpty,
		OptBootstrapServers:        nonEmpty,
		OptGroupID:                 nonEmpty,
		OptKeyFormat:               formatName,
		OptValueFormat:             formatName,
		OptKeyFieldsPrefix:         anyString,
		OptValueFieldsInclude:      enum(OptValueFieldsIncludeAll, OptValueFieldsIncludeExcpt),
		OptDeliveryGuarantee:       enum("none", "at-least-once", "exactly-once"),
		OptTransactionalIDPrefix:   nonEmpty,
		OptSinkBufferFlushMaxRows:  int64Value,
		OptSinkBufferFlushInterval: duration,
		OptLocalTimeZone:           timeZone,
		OptBoundedMode:             boundedMode,
		OptBoundedSpecificOffsets:  specificOffsets,
		OptBoundedTimestampMillis:  int64Value,
	},
	// No connector: a table used only to decode and encode records, e.g.
	// with the table_decode processor on a file input.
	"": {
		OptFormat:        formatName,
		OptLocalTimeZone: timeZone,
	},
}

// formatOptions are the options of each format, without the format prefix.
var formatOptions = map[string]map[string]check{
	FormatJSON: {
		"fail-on-missing-field":          boolean,
		"ignore-parse-errors":            boolean,
		"timestamp-format.standard":      enum("SQL", "ISO-8601"),
		"map-null-key.mode":              enum("FAIL", "DROP", "LITERAL"),
		"map-null-key.literal":           anyString,
		"encode.decimal-as-plain-number": boolean,
		"encode.ignore-null-fields":      boolean,
	},
	FormatCSV: {
		"field-delimiter":                         singleChar,
		"disable-quote-character":                 boolean,
		"quote-character":                         singleChar,
		"allow-comments":                          boolean,
		"ignore-parse-errors":                     boolean,
		"array-element-delimiter":                 nonEmptyRaw,
		"escape-character":                        singleChar,
		"null-literal":                            anyString,
		"write-bigdecimal-in-scientific-notation": boolean,
	},
	FormatRaw: {
		"charset":    charsetName,
		"endianness": enumFold("big-endian", "little-endian"),
	},
	FormatAvro: {},
	FormatAvroConfluent: {
		"url":                           nonEmpty,
		"subject":                       nonEmpty,
		"basic-auth.credentials-source": enum("USER_INFO", "URL"),
		"basic-auth.user-info":          anyString,
		"auto.register.schemas":         boolean,
		// The older spellings of url and subject, which Flink still
		// accepts (fallback keys of its options).
		"schema-registry.url":     nonEmpty,
		"schema-registry.subject": nonEmpty,
	},
	FormatProtobuf: {
		"descriptor-file":           nonEmpty,
		"message-name":              nonEmpty,
		"message-class-name":        protobufMessageClass,
		"ignore-parse-errors":       boolean,
		"read-default-values":       boolean,
		"write-null-string-literal": anyString,
	},
}

// protobufMessageClass refuses Flink's protobuf.message-class-name: a
// compiled Java class has no meaning in a Go binary.
func protobufMessageClass(string) error {
	return fmt.Errorf("names a compiled Java class, which connectd cannot load: give the schema as " +
		"'protobuf.descriptor-file' (a .proto file or a descriptor set from protoc --descriptor_set_out) and the message as " +
		"'protobuf.message-name' (its full name, e.g. shop.v1.Order)")
}

func nonEmptyRaw(v string) error {
	if v == "" {
		return fmt.Errorf("must not be empty")
	}
	return nil
}

func formatName(v string) error {
	if _, ok := formatOptions[v]; !ok {
		return fmt.Errorf("unknown format (want one of %s)", strings.Join(sortedKeys(formatOptions), ", "))
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// validateOptions checks every WITH option: known for the connector and
// well-formed, format options belonging to a chosen format, and the
// cross-option rules of Flink's Kafka table factories.
func (t *Table) validateOptions() []error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("table %s: "+format, append([]any{t.Name}, args...)...))
	}
	connector := t.Options[OptConnector]
	known, ok := connectorOptions[connector]
	if !ok {
		add("option 'connector' = '%s': unknown connector (want kafka or upsert-kafka)", connector)
		return errs
	}
	// Format prefixes in use: "json." for 'format' = 'json', "value.json."
	// and "key.csv." for 'value.format' / 'key.format'.
	prefixes := map[string]string{}
	if f, ok := t.Options[OptFormat]; ok {
		prefixes[f+"."] = f
	}
	if f, ok := t.Options[OptValueFormat]; ok {
		prefixes["value."+f+"."] = f
	}
	if f, ok := t.Options[OptKeyFormat]; ok {
		prefixes["key."+f+"."] = f
	}
	for _, k := range sortedKeys(t.Options) {
		v := t.Options[k]
		if c, ok := known[k]; ok {
			if err := c(v); err != nil {
				add("option '%s' = '%s': %v", k, v, err)
			}
			continue
		}
		matched := false
		for prefix, f := range prefixes {
			if name, ok := strings.CutPrefix(k, prefix); ok {
				if c, ok := formatOptions[f][name]; ok {
					matched = true
					if err := c(v); err != nil {
						add("option '%s' = '%s': %v", k, v, err)
					}
				}
			}
		}
		if matched {
			continue
		}
		if err, isProperty := checkProperty(k, v); isProperty {
			if connector == "" {
				add("option '%s' is not supported by connectd for connector '%s'", k, connectorLabel(connector))
			} else if err != nil {
				add("%v", err)
			}
			continue
		}
		if reason, ok := refusedOptions[k]; ok {
			add("option '%s' is not supported by connectd: %s", k, reason)
			continue
		}
		add("option '%s' is not supported by connectd for connector '%s'", k, connectorLabel(connector))
	}
	for _, prefix := range sortedKeys(prefixes) {
		opts := map[string]string{}
		for k, v := range t.Options {
			if name, ok := strings.CutPrefix(k, prefix); ok {
				opts[name] = v
			}
		}
		for _, p := range formatRules(prefixes[prefix], prefix, opts) {
			add("%s", p)
		}
	}
	errs = append(errs, t.validateConnector(connector)...)
	return errs
}

func connectorLabel(c string) string {
	if c == "" {
		return "(none)"
	}
	return c
}

// validateConnector applies the cross-option rules of Flink's
// KafkaDynamicTableFactory and UpsertKafkaDynamicTableFactory.
func (t *Table) validateConnector(connector string) []error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("table %s: "+format, append([]any{t.Name}, args...)...))
	}
	o := t.Options
	_, hasFormat := o[OptFormat]
	_, hasValueFormat := o[OptValueFormat]
	if hasFormat && hasValueFormat {
		add("options 'format' and 'value.format' are alternatives; set only one")
	}
	if connector == "" {
		return errs
	}
	_, hasTopic := o[OptTopic]
	_, hasPattern := o[OptTopicPattern]
	switch connector {
	case ConnectorKafka:
		if hasTopic && hasPattern {
			add("options 'topic' and 'topic-pattern' are alternatives; set only one")
		}
		if !hasFormat && !hasValueFormat {
			add("option 'format' (or 'value.format') is required")
		}
		if _, ok := o[OptKeyFields]; ok {
			if _, ok := o[OptKeyFormat]; !ok && t.PrimaryKey == nil {
				add("option 'key.fields' needs 'key.format'")
			}
			for _, name := range strings.Split(o[OptKeyFields], ";") {
				if c, ok := t.Column(strings.TrimSpace(name)); !ok || c.Kind != Physical {
					add("option 'key.fields': %q is not a physical column", strings.TrimSpace(name))
				}
			}
		} else if _, ok := o[OptKeyFormat]; ok && t.PrimaryKey == nil {
			add("option 'key.format' needs 'key.fields' (the columns that form the Kafka key)")
		}
		if t.PrimaryKey != nil {
			// connectd's extension (kafkakey.go): the PRIMARY KEY
			// columns form the Kafka key.
			errs = append(errs, t.validatePrimaryKeyAsKey()...)
		}
		mode := o[OptStartupMode]
		if _, ok := o[OptStartupSpecificOffsets]; ok != (mode == "specific-offsets") {
			add("option 'scan.startup.specific-offsets' goes with 'scan.startup.mode' = 'specific-offsets' and is required by it")
		}
		if _, ok := o[OptStartupTimestampMillis]; ok != (mode == "timestamp") {
			add("option 'scan.startup.timestamp-millis' goes with 'scan.startup.mode' = 'timestamp' and is required by it")
		}
		errs = append(errs, t.validateBounded()...)
	case ConnectorUpsertKafka:
		errs = append(errs, t.validateBounded()...)
		if !hasTopic {
			add("option 'topic' is required by upsert-kafka")
		}
		if _, ok := o[OptKeyFormat]; !ok {
			add("option 'key.format' is required by upsert-kafka")
		}
		if !hasValueFormat {
			add("option 'value.format' is required by upsert-kafka")
		}
		if t.PrimaryKey == nil {
			add("upsert-kafka needs a PRIMARY KEY (...) NOT ENFORCED: its columns form the Kafka key")
		}
		rows, hasRows := o[OptSinkBufferFlushMaxRows]
		interval, hasInterval := o[OptSinkBufferFlushInterval]
		n, _ := strconv.ParseInt(strings.TrimSpace(rows), 10, 64)
		d, _ := ParseFlinkDuration(interval)
		if hasRows && n < 0 {
			add("option 'sink.buffer-flush.max-rows' must not be negative")
		}
		if (hasRows || hasInterval) && (n > 0) != (d > 0) {
			add("options 'sink.buffer-flush.max-rows' and 'sink.buffer-flush.interval' go together: both above zero to buffer, or both zero (as in Flink)")
		}
	}
	if _, ok := o[OptKeyFieldsPrefix]; ok && !t.ValueFieldsExceptKey() {
		add("option 'key.fields-prefix' needs 'value.fields-include' = 'EXCEPT_KEY'")
	}
	if o[OptDeliveryGuarantee] == "exactly-once" {
		if _, ok := o[OptTransactionalIDPrefix]; !ok {
			add("option 'sink.delivery-guarantee' = 'exactly-once' needs 'sink.transactional-id-prefix'")
		}
	}
	return errs
}

// FormatOf returns the value format of the table and its options with the
// format prefix removed ("json.ignore-parse-errors" -> "ignore-parse-errors").
// ok is false when the table names no format.
func (t *Table) FormatOf() (name string, opts map[string]string, ok bool) {
	prefix := ""
	name, ok = t.Options[OptFormat]
	if !ok {
		name, ok = t.Options[OptValueFormat]
		prefix = "value."
	}
	if !ok {
		return "", nil, false
	}
	opts = map[string]string{}
	for k, v := range t.Options {
		if rest, found := strings.CutPrefix(k, prefix+name+"."); found {
			opts[rest] = v
		}
	}
	return name, opts, true
}

// ValidateFormatOptions checks options of format (without prefix) as
// Validate does for a table's WITH options.
func ValidateFormatOptions(format string, opts map[string]string) error {
	known, ok := formatOptions[format]
	if !ok {
		return fmt.Errorf("format %q: unknown format (want one of %s)", format, strings.Join(sortedKeys(formatOptions), ", "))
	}
	var errs []string
	for _, k := range sortedKeys(opts) {
		c, ok := known[k]
		if !ok {
			errs = append(errs, fmt.Sprintf("format %s: option '%s' is not supported (supported: %s)", format, k, strings.Join(sortedKeys(known), ", ")))
			continue
		}
		if err := c(opts[k]); err != nil {
			errs = append(errs, fmt.Sprintf("format %s: option '%s' = '%s': %v", format, k, opts[k], err))
		}
	}
	for _, p := range formatRules(format, "", opts) {
		errs = append(errs, fmt.Sprintf("format %s: %s", format, p))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// validateBounded applies Flink's validateScanBoundedMode, which both Kafka
// connectors share: the offsets and the timestamp go with their mode.
func (t *Table) validateBounded() []error {
	var errs []error
	o := t.Options
	bmode := o[OptBoundedMode]
	if _, ok := o[OptBoundedSpecificOffsets]; ok != (bmode == "specific-offsets") {
		errs = append(errs, fmt.Errorf("table %s: option 'scan.bounded.specific-offsets' goes with 'scan.bounded.mode' = 'specific-offsets' and is required by it", t.Name))
	}
	if _, ok := o[OptBoundedTimestampMillis]; ok != (bmode == "timestamp") {
		errs = append(errs, fmt.Errorf("table %s: option 'scan.bounded.timestamp-millis' goes with 'scan.bounded.mode' = 'timestamp' and is required by it", t.Name))
	}
	return errs
}

// boundedMode checks 'scan.bounded.mode'. With 'group-offsets' the
// read ends at the offsets committed in 'properties.group.id', which
// kafka_source then reads as its stop_group, not as the group it resumes
// from and commits to.
func boundedMode(v string) error {
	return enum("unbounded", "latest-offset", "timestamp", "specific-offsets", "group-offsets")(v)
}

// formatRules are the cross-option rules of a format's factory, on its
// options without the prefix; each problem names the options, with prefix
// ("csv.", "value.csv.", or "" for the bare names).
func formatRules(format, prefix string, opts map[string]string) []string {
	var out []string
	switch format {
	case FormatCSV:
		// CsvFormatFactory.validateFormatOptions.
		if _, quote := opts["quote-character"]; quote && strings.EqualFold(opts["disable-quote-character"], "true") {
			out = append(out, fmt.Sprintf("options '%[1]squote-character' and '%[1]sdisable-quote-character' = 'true' cannot be set together "+
				"(as in Flink: a format cannot define a quote character and disable quoting at the same time)", prefix))
		}
	case FormatAvroConfluent:
		for _, pair := range [][2]string{{"url", "schema-registry.url"}, {"subject", "schema-registry.subject"}} {
			v, ok := opts[pair[0]]
			old, hasOld := opts[pair[1]]
			if ok && hasOld && v != old {
				out = append(out, fmt.Sprintf("options '%s%s' = '%s' and '%s%s' = '%s' (its older spelling) disagree; set one", prefix, pair[0], v, prefix, pair[1], old))
			}
		}
	}
	return out
}
