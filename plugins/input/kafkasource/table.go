package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/table"
	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/changelog"
)

// A kafka_source with a table (fields table, catalog, ddl) takes its
// subscription, brokers, group, start and stop offsets and discovery
// interval from the table's WITH options, and decodes each record into a
// typed row (the message becomes structured), as Flink's KafkaDynamicSource.

// fieldOnError is the bad-record policy of a table source.
const fieldOnError = table.FieldOnError

// tableFields are the fields of a table source.
func tableFields() []*service.ConfigField {
	return append(table.Fields(), table.OnErrorField("kafka_source", "decode").Advanced())
}

// tableSettings are the kafka_source settings a table derives; a zero
// field is not set by the table.
type tableSettings struct {
	topics       []string
	topicPattern string
	brokers      []string
	group        string
	stopGroup    string // the group of scan.bounded.mode = 'group-offsets'
	startFrom    StartFrom
	startTS      int64 // -1: unset
	startOffsets map[topicPartition]int64
	stopAt       StopAt
	stopTS       int64 // -1: unset
	stopOffsets  map[topicPartition]int64
	discovery    *time.Duration
	// conn is what the table sets of the connection (brokers, security,
	// client id, ...), applied by kafkaconn.
	conn kafkaconn.TableConn
	// props are the consumer's Kafka client properties, by the field
	// each sets (tableProperties).
	props map[string]any
}

// tableProperties map the consumer's Kafka client properties onto the
// kafka_source fields with the same meaning: the field, and the value of
// the field for a property value (a time.Duration, an int or a string).
// The connection's properties are kafkaconn's (kafkaconn.Properties).
var tableProperties = map[string]struct {
	field string
	value func(v string) (any, error)
}{
	schema.PropIsolationLevel:         {fieldIsolationLevel, lower},
	schema.PropAutoOffsetReset:        {fieldCommittedFallback, fallbackOf},
	schema.PropClientRack:             {fieldRackID, verbatim},
	schema.PropFetchMinBytes:          {fieldFetchMinBytes, integerOf},
	schema.PropFetchMaxWaitMs:         {fieldFetchMaxWait, millisOf},
	schema.PropMaxPartitionFetchBytes: {fieldFetchMaxPartitionBytes, integerOf},
	schema.PropFetchMaxBytes:          {fieldFetchMaxBytes, integerOf},
	schema.PropSessionTimeoutMs:       {fieldSessionTimeout, millisOf},
	schema.PropHeartbeatIntervalMs:    {fieldHeartbeatInterval, millisOf},
	schema.PropGroupInstanceID:        {fieldGroupInstanceID, verbatim},
	schema.PropMaxPollRecords:         {fieldBatchSize, integerOf},
	schema.PropGroupProtocol:          {fieldGroupProtocol, lower},
}

func lower(v string) (any, error)    { return strings.ToLower(strings.TrimSpace(v)), nil }
func verbatim(v string) (any, error) { return v, nil }
func integerOf(v string) (any, error) {
	return strconv.Atoi(strings.TrimSpace(v))
}
func millisOf(v string) (any, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return time.Duration(n) * time.Millisecond, err
}

// fallbackOf maps `auto.offset.reset` onto committed_fallback: Kafka's
// `none` throws when a partition has no offset, which is `error`.
func fallbackOf(v string) (any, error) {
	switch x := strings.ToLower(strings.TrimSpace(v)); x {
	case "none":
		return string(FallbackError), nil
	default:
		return x, nil
	}
}

// sameAs reports whether a written YAML field's value y equals the value a
// property gives it.
func sameAs(y, want any) bool {
	switch w := want.(type) {
	case time.Duration:
		d, err := time.ParseDuration(strings.TrimSpace(fmt.Sprint(y)))
		return err == nil && d == w
	case int:
		return fmt.Sprint(y) == strconv.Itoa(w)
	}
	return fmt.Sprint(y) == fmt.Sprint(want)
}

var (
	startModes = map[string]StartFrom{
		"earliest-offset": StartEarliest, "latest-offset": StartLatest, "group-offsets": StartCommitted,
		"timestamp": StartTimestamp, "specific-offsets": StartOffsets,
	}
	boundedModes = map[string]StopAt{
		"unbounded": StopNone, "latest-offset": StopLatest, "timestamp": StopTimestamp, "specific-offsets": StopOffsets,
		"group-offsets": StopCommitted,
	}
)

// deriveTable maps the WITH options of t onto kafka_source settings and
// reports every YAML field in set (the fields the user wrote, by name) that
// contradicts them. Used by the constructor and by the lint rule.
func deriveTable(t *schema.Table, set map[string]any) (tableSettings, []error) {
	s := tableSettings{startTS: -1, stopTS: -1}
	cf := table.NewConflicts(t)
	o := t.Options
	if v, ok := o[schema.OptTopic]; ok {
		s.topics = table.SplitList(v, ";")
		if y, ok := set[fieldTopics]; ok && !table.SameSet(splitTopics(table.StringList(y)), s.topics) {
			cf.Add(fieldTopics, y, schema.OptTopic, v)
		}
	}
	if v, ok := o[schema.OptTopicPattern]; ok {
		s.topicPattern = v
		if y, ok := set[fieldTopicPattern]; ok && fmt.Sprint(y) != v {
			cf.Add(fieldTopicPattern, y, schema.OptTopicPattern, v)
		}
	}
	for _, opt := range []string{schema.OptTopic, schema.OptTopicPattern} {
		v, ok := o[opt]
		if !ok {
			continue
		}
		for _, f := range []string{fieldTopics, fieldTopicPattern, fieldPartitions} {
			if y, ok := set[f]; ok && !(f == fieldTopics && opt == schema.OptTopic) && !(f == fieldTopicPattern && opt == schema.OptTopicPattern) {
				cf.Add(f, y, opt, v)
			}
		}
	}
	if v, ok := o[schema.OptBootstrapServers]; ok {
		s.brokers = table.SplitList(v, ",")
		if y, ok := set[kafkaconn.FieldSeedBrokers]; ok && !table.SameSet(table.StringList(y), s.brokers) {
			cf.Add(kafkaconn.FieldSeedBrokers, y, schema.OptBootstrapServers, v)
		}
	}
	if v, ok := o[schema.OptGroupID]; ok && o[schema.OptBoundedMode] == "group-offsets" {
		// Flink reads from its start mode up to the group's committed
		// offsets: the group is the bound here, not where this input
		// resumes and commits (that would end the read where it starts).
		s.stopGroup = v
		if y, ok := set[fieldStopGroup]; ok && fmt.Sprint(y) != v {
			cf.Add(fieldStopGroup, y, schema.OptGroupID, v)
		}
	} else if ok {
		s.group = v
		if y, ok := set[fieldConsumerGroup]; ok && fmt.Sprint(y) != v {
			cf.Add(fieldConsumerGroup, y, schema.OptGroupID, v)
		}
	}
	if o[schema.OptConnector] == schema.ConnectorUpsertKafka {
		// Flink's upsert-kafka source always reads the whole changelog.
		s.startFrom = StartEarliest
		if y, ok := set[fieldStartFrom]; ok && fmt.Sprint(y) != string(StartEarliest) {
			cf.Addf(fieldStartFrom, "%q contradicts option 'connector' = 'upsert-kafka', which reads from the earliest offset (as in Flink); drop %s",
				fmt.Sprint(y), fieldStartFrom)
		}
	}
	if v, ok := o[schema.OptStartupMode]; ok {
		s.startFrom = startModes[v]
		if y, ok := set[fieldStartFrom]; ok && fmt.Sprint(y) != string(s.startFrom) {
			cf.Add(fieldStartFrom, y, schema.OptStartupMode, v)
		}
	}
	if ms, ok := tableTimestamp(cf, set, fieldStartTimestamp, schema.OptStartupTimestampMillis, o); ok {
		s.startTS = ms
	}
	s.startOffsets = tableOffsets(cf, set, fieldStartOffsets, schema.OptStartupSpecificOffsets, o, s.topics)
	if v, ok := o[schema.OptBoundedMode]; ok {
		stop, known := boundedModes[v]
		if !known {
			cf.Addf(fieldStopAt, "option '%s' = '%s' is not supported by connectd (want unbounded, latest-offset, timestamp, specific-offsets or group-offsets)", schema.OptBoundedMode, v)
		}
		s.stopAt = stop
		if y, ok := set[fieldStopAt]; ok && known && fmt.Sprint(y) != string(stop) {
			cf.Add(fieldStopAt, y, schema.OptBoundedMode, v)
		}
	}
	if s.stopGroup != "" && s.startFrom == "" {
		if _, ok := set[fieldStartFrom]; !ok {
			cf.Addf(fieldStartFrom, "option '%s' = 'group-offsets' ends the read at the offsets committed in '%s' = '%s', and the default "+
				"'%s' (group-offsets) would start it there too: set '%s' (earliest-offset, latest-offset, timestamp or specific-offsets) "+
				"or field %s", schema.OptBoundedMode, schema.OptGroupID, s.stopGroup, schema.OptStartupMode, schema.OptStartupMode, fieldStartFrom)
		}
	}
	if ms, ok := tableTimestamp(cf, set, fieldStopTimestamp, schema.OptBoundedTimestampMillis, o); ok {
		s.stopTS = ms
	}
	s.stopOffsets = tableOffsets(cf, set, fieldStopOffsets, schema.OptBoundedSpecificOffsets, o, s.topics)
	if v, ok := o[schema.OptPartitionDiscovery]; ok {
		d, err := schema.ParseFlinkDuration(v)
		if err != nil {
			cf.Addf(fieldDiscoveryInterval, "option '%s': %v", schema.OptPartitionDiscovery, err)
		}
		s.discovery = &d
		if y, ok := set[fieldDiscoveryInterval]; ok {
			if yd, err := time.ParseDuration(strings.TrimSpace(fmt.Sprint(y))); err != nil || yd != d {
				cf.Add(fieldDiscoveryInterval, y, schema.OptPartitionDiscovery, v)
			}
		}
	}
	s.conn = table.KafkaConn(t)
	s.props = map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(tableProperties)) {
		v, ok := table.Property(t, name)
		if !ok {
			continue
		}
		p := tableProperties[name]
		val, err := p.value(v)
		if err != nil {
			// schema's check of the option reports it.
			continue
		}
		if y, ok := set[p.field]; ok && !sameAs(y, val) {
			cf.Add(p.field, y, schema.PropertyPrefix+name, v)
		}
		s.props[p.field] = val
	}
	errs := cf.Errs()
	if _, ok := set[kafkaconn.FieldSeedBrokers]; !ok && len(s.brokers) == 0 {
		errs = append(errs, fmt.Errorf("field %s: at least one broker address is required, here or in option '%s' of table %s",
			kafkaconn.FieldSeedBrokers, schema.OptBootstrapServers, t.Name))
	}
	return s, errs
}

// tableTimestamp reads a Flink timestamp option (milliseconds) that sets
// field, recording a bad value or a contradicting YAML field in cf. ok is
// false when the table does not set the option.
func tableTimestamp(cf *table.Conflicts, set map[string]any, field, opt string, o map[string]string) (ms int64, ok bool) {
	v, ok := o[opt]
	if !ok {
		return 0, false
	}
	ms, err := parseTimestamp(opt, v)
	if err != nil {
		cf.Addf(field, "option '%s': %v", opt, err)
	}
	if y, written := set[field]; written {
		if yms, err := parseTimestamp(field, y); err != nil || yms != ms {
			cf.Add(field, y, opt, v)
		}
	}
	return ms, true
}

// tableOffsets reads Flink's `partition:0,offset:42;...` option, which
// applies to the table's single topic.
func tableOffsets(cf *table.Conflicts, set map[string]any, field, opt string, o map[string]string, topics []string) map[topicPartition]int64 {
	v, ok := o[opt]
	if !ok {
		return nil
	}
	if len(topics) != 1 {
		cf.Addf(field, "option '%s' needs a table with exactly one 'topic'", opt)
		return nil
	}
	offs, err := parseOffsets(field, map[string]any{topics[0]: v})
	if err != nil {
		cf.Addf(field, "option '%s': %v", opt, err)
		return nil
	}
	if y, ok := set[field]; ok {
		ym, isMap := y.(map[string]any)
		yoffs, err := parseOffsets(field, ym)
		if !isMap || err != nil || !maps.Equal(yoffs, offs) {
			cf.Add(field, "the offsets given", opt, v)
		}
	}
	return offs
}

// tableFieldDefaults are the defaults of the fields a table can set: a
// config holds defaults (parsed, and as the lint rule sees it), so a field
// equal to its default counts as not written.
var tableFieldDefaults = map[string]string{
	fieldStartFrom:              string(defaultStartFrom),
	fieldStopAt:                 string(defaultStopAt),
	fieldDiscoveryInterval:      defaultDiscoveryInterval,
	fieldIsolationLevel:         string(defaultIsolationLevel),
	fieldCommittedFallback:      string(defaultCommittedFallback),
	fieldRackID:                 "",
	fieldFetchMinBytes:          strconv.Itoa(defaultFetchMinBytes),
	fieldFetchMaxWait:           defaultFetchMaxWait,
	fieldFetchMaxPartitionBytes: strconv.Itoa(defaultFetchMaxPartitionBytes),
	fieldFetchMaxBytes:          strconv.Itoa(defaultFetchMaxBytes),
	fieldSessionTimeout:         defaultSessionTimeout,
	fieldGroupInstanceID:        "",
	fieldBatchSize:              strconv.Itoa(defaultBatchSize),
	fieldGroupProtocol:          string(GroupProtocolClassic),
}

// tableDerivable are the fields a table can set.
var tableDerivable = []string{fieldTopics, fieldTopicPattern, fieldPartitions, kafkaconn.FieldSeedBrokers, fieldConsumerGroup,
	fieldStartFrom, fieldStartTimestamp, fieldStartOffsets, fieldStopAt, fieldStopTimestamp, fieldStopOffsets, fieldStopGroup, fieldDiscoveryInterval,
	fieldIsolationLevel, fieldCommittedFallback, fieldRackID, fieldFetchMinBytes, fieldFetchMaxWait, fieldFetchMaxPartitionBytes,
	fieldFetchMaxBytes, fieldSessionTimeout, fieldHeartbeatInterval, fieldGroupInstanceID, fieldBatchSize, fieldGroupProtocol}

// writtenFields returns the table-derivable fields of conf that the user set.
func writtenFields(conf *service.ParsedConfig) (map[string]any, error) {
	m, err := table.ParsedFields(conf, tableDerivable)
	if err != nil {
		return nil, err
	}
	return table.Written(m, tableDerivable, tableFieldDefaults), nil
}

// tableFromParsed resolves the table of conf and its settings; nil without
// a table.
func tableFromParsed(conf *service.ParsedConfig) (*table.Codec, tableSettings, error) {
	t, err := table.ResolveKafkaParsed(conf)
	if t == nil || err != nil {
		return nil, tableSettings{}, err
	}
	set, err := writtenFields(conf)
	if err != nil {
		return nil, tableSettings{}, err
	}
	s, errs := deriveTable(t, set)
	codec, err := table.NewCodec(t)
	if err != nil {
		errs = append(errs, fmt.Errorf("field %s: %w", table.FieldTable, err))
	}
	return codec, s, errors.Join(errs...)
}

// applyTable sets the fields that the table derives; deriveTable has
// reported any contradiction with a written field.
func (c *Config) applyTable(s tableSettings) error {
	if s.topics != nil {
		c.Topics = s.topics
	}
	if s.topicPattern != "" {
		re, err := regexp.Compile("^(?:" + s.topicPattern + ")$")
		if err != nil {
			return fmt.Errorf("field %s: option '%s': %w", table.FieldTable, schema.OptTopicPattern, err)
		}
		c.TopicPattern = re
	}
	if s.brokers != nil {
		c.Conn.SeedBrokers = s.brokers
	}
	if s.group != "" {
		c.ConsumerGroup = s.group
	}
	if s.startFrom != "" {
		c.StartFrom = s.startFrom
	}
	if s.startTS >= 0 {
		c.StartTimestamp = s.startTS
	}
	if s.startOffsets != nil {
		c.StartOffsets = s.startOffsets
	}
	if s.stopAt != "" {
		c.StopAt = s.stopAt
	}
	if s.stopGroup != "" {
		c.StopGroup = s.stopGroup
	}
	if s.stopTS >= 0 {
		c.StopTimestamp = s.stopTS
	}
	if s.stopOffsets != nil {
		c.StopOffsets = s.stopOffsets
	}
	if s.discovery != nil {
		c.DiscoveryInterval = *s.discovery
	}
	for field, v := range s.props {
		switch field {
		case fieldIsolationLevel:
			c.IsolationLevel = IsolationLevel(v.(string))
		case fieldCommittedFallback:
			c.CommittedFallback = CommittedFallback(v.(string))
		case fieldRackID:
			c.RackID = v.(string)
		case fieldFetchMinBytes:
			c.FetchMinBytes = v.(int)
		case fieldFetchMaxWait:
			c.FetchMaxWait = v.(time.Duration)
		case fieldFetchMaxPartitionBytes:
			c.FetchMaxPartitionBytes = v.(int)
		case fieldFetchMaxBytes:
			c.FetchMaxBytes = v.(int)
		case fieldSessionTimeout:
			c.SessionTimeout = v.(time.Duration)
		case fieldHeartbeatInterval:
			c.HeartbeatInterval = v.(time.Duration)
		case fieldGroupInstanceID:
			c.GroupInstanceID = v.(string)
		case fieldBatchSize:
			c.BatchSize = v.(int)
		case fieldGroupProtocol:
			c.GroupProtocol = GroupProtocol(v.(string))
		default:
			return fmt.Errorf("field %s: table property for field %s is not applied (a connectd bug)", table.FieldTable, field)
		}
	}
	if c.Table.Upsert() {
		// A delete is the row's kind (Flink's RowKind.DELETE), not
		// optional metadata: kafka_sink writes a tombstone for it.
		c.Metadata |= metaBitTombstone
	}
	return nil
}

// tableRows decodes the records of a table source into rows of its table,
// straight from the fetched records, as Flink's KafkaDynamicSource
// deserializes a ConsumerRecord: the metadata columns read the record, not
// the message metadata, so a message carries only the metadata_keys asked
// for. The readers decode side by side as they build their batches
// (fetchedBatch.prepare); a redelivered batch is decoded again.
type tableRows struct {
	codec *table.Codec
	bad   *table.Bad
}

// newTableRows returns the decoder of c's table, nil without one.
func newTableRows(c Config, mgr *service.Resources) *tableRows {
	if c.Table == nil {
		return nil
	}
	return &tableRows{codec: c.Table, bad: table.NewBad("kafka_source", c.OnError, mgr)}
}

// decode turns msg, the message of r, into r's row and returns it; nil
// when the format skips the record (a tombstone of a plain kafka table,
// `ignore-parse-errors`) or on_error skip drops it, msg flagged with the
// error under on_error dead_letter. A record of a changelog format
// (debezium-json, ...) may give several rows: out is the last, earlier
// the rows before it in order (copies of msg), each with its kind in
// row_kind metadata. stop: the record stopped the run (on_error fail); the
// caller hands out nothing at or after it. err is ctx's error if it ended
// while decoding (the record is not to blame).
func (t *tableRows) decode(ctx context.Context, r *kgo.Record, msg *service.Message) (out *service.Message, earlier []*service.Message, stop bool, err error) {
	if t.codec.Changelog() {
		var changes []changelog.Change
		changes, err = t.codec.DecodeChanges(ctx, table.FromKafka(r))
		if err == nil {
			last := len(changes) - 1
			for _, ch := range changes[:last] {
				m := msg.Copy()
				m.SetStructuredMut(ch.Row)
				m.MetaSetMut(table.MetaRowKind, ch.Kind.String())
				earlier = append(earlier, m)
			}
			msg.SetStructuredMut(changes[last].Row)
			msg.MetaSetMut(table.MetaRowKind, changes[last].Kind.String())
			return msg, earlier, false, nil
		}
	} else {
		var row map[string]any
		row, err = t.codec.DecodeKafka(ctx, r)
		if err == nil {
			msg.SetStructuredMut(row)
			return msg, nil, false, nil
		}
	}
	switch {
	case errors.Is(err, table.ErrSkipped):
		t.bad.Skipped()
		return nil, nil, false, nil
	case ctx.Err() != nil:
		return nil, nil, false, ctx.Err()
	}
	kept, stop := t.bad.Handle(msg, table.LocateRecord(r), err)
	if len(kept) == 0 {
		return nil, nil, stop, nil
	}
	return kept[0], nil, stop, nil
}

// withEarlierRows returns batch with the earlier rows of each record's
// message (built.earlier) put before it, each with that message's
// watermark stamps: the rows of one record share its position and its
// event time (that of its last row).
func withEarlierRows(batch service.MessageBatch, earlier [][]*service.Message) service.MessageBatch {
	n := len(batch)
	for _, e := range earlier {
		n += len(e)
	}
	out := make(service.MessageBatch, 0, n)
	for i, msg := range batch {
		if i < len(earlier) && msg != nil {
			for _, m := range earlier[i] {
				for _, k := range []string{metaEventTimeMs, metaWatermarkMs, metaLate} {
					if v, ok := msg.MetaGetMut(k); ok {
						m.MetaSetMut(k, v)
					}
				}
				out = append(out, m)
			}
		}
		out = append(out, msg)
	}
	return out
}
