package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/halt"
	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/table"
	"github.com/connectd/connectd/schema"
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
	startFrom    StartFrom
	startTS      int64 // -1: unset
	startOffsets map[topicPartition]int64
	stopAt       StopAt
	stopTS       int64 // -1: unset
	stopOffsets  map[topicPartition]int64
	discovery    *time.Duration
}

var (
	startModes = map[string]StartFrom{
		"earliest-offset": StartEarliest, "latest-offset": StartLatest, "group-offsets": StartCommitted,
		"timestamp": StartTimestamp, "specific-offsets": StartOffsets,
	}
	boundedModes = map[string]StopAt{
		"unbounded": StopNone, "latest-offset": StopLatest, "timestamp": StopTimestamp, "specific-offsets": StopOffsets,
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
	if v, ok := o[schema.OptGroupID]; ok {
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
			cf.Addf(fieldStopAt, "option '%s' = '%s' is not supported by connectd (want unbounded, latest-offset, timestamp or specific-offsets)", schema.OptBoundedMode, v)
		}
		s.stopAt = stop
		if y, ok := set[fieldStopAt]; ok && known && fmt.Sprint(y) != string(stop) {
			cf.Add(fieldStopAt, y, schema.OptBoundedMode, v)
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
	fieldStartFrom:         string(defaultStartFrom),
	fieldStopAt:            string(defaultStopAt),
	fieldDiscoveryInterval: defaultDiscoveryInterval,
}

// tableDerivable are the fields a table can set.
var tableDerivable = []string{fieldTopics, fieldTopicPattern, fieldPartitions, kafkaconn.FieldSeedBrokers, fieldConsumerGroup,
	fieldStartFrom, fieldStartTimestamp, fieldStartOffsets, fieldStopAt, fieldStopTimestamp, fieldStopOffsets, fieldDiscoveryInterval}

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
	if s.stopTS >= 0 {
		c.StopTimestamp = s.stopTS
	}
	if s.stopOffsets != nil {
		c.StopOffsets = s.stopOffsets
	}
	if s.discovery != nil {
		c.DiscoveryInterval = *s.discovery
	}
	// The row needs the key, the position (for errors) and the metadata
	// columns the table declares (recordOf reads them back).
	c.Metadata |= metaBitKey | metaBitTopic | metaBitPartition | metaBitOffset | metaBitTombstone | metaBitTimestampMs
	for _, col := range c.Table.Table().Columns {
		if col.Kind != schema.Metadata {
			continue
		}
		name := table.MetadataName(col.MetadataKey)
		if name == "" {
			name = metaHeaders
		}
		set, err := parseMetaSet([]string{name})
		if err != nil {
			return fmt.Errorf("field %s: column %s: %w", table.FieldTable, col.Name, err)
		}
		c.Metadata |= set
	}
	return nil
}

// tableInput decodes the messages of a kafka_source into rows of its table.
type tableInput struct {
	service.BatchInput
	codec   *table.Codec
	headers bool // a metadata column reads the headers
	bad     *table.Bad
	run     *halt.Run
	// stopped is set when a bad record under on_error fail stopped the
	// run: nothing more is read.
	stopped atomic.Bool
	// src is set when the event time comes from the row (watermark column
	// or expression): rows are stamped after decoding (stampRows).
	src    *source
	column string
	expr   *eventTimeExpr
}

func newTableInput(in service.BatchInput, c Config, mgr *service.Resources) *tableInput {
	ti := &tableInput{BatchInput: in, codec: c.Table, headers: c.Table.ReadsHeaders(),
		bad: table.NewBad("kafka_source", c.OnError, mgr), run: halt.For(mgr)}
	if src, ok := in.(*source); ok && c.Watermark.Enabled && (c.Watermark.Column != "" || c.Watermark.expr != nil) {
		ti.src, ti.column, ti.expr = src, c.Watermark.Column, c.Watermark.expr
	}
	return ti
}

// ReadBatch decodes each message of the next batch. A batch whose records
// are all skipped is acknowledged at once and the next one is read.
//
// A record that does not decode under on_error fail stops the run
// (table.Bad): its batch is nacked and none of it is delivered, so no
// offset at or after the bad record can be committed, and ReadBatch then
// waits for the shutdown that the stop starts (ctx ends).
func (in *tableInput) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	for {
		if in.stopped.Load() {
			<-ctx.Done()
			return nil, nil, ctx.Err()
		}
		batch, ack, err := in.BatchInput.ReadBatch(ctx)
		if err != nil {
			return nil, nil, err
		}
		out := make(service.MessageBatch, 0, len(batch))
		for _, msg := range batch {
			kept, stop := in.decode(ctx, msg)
			if stop {
				in.stopped.Store(true)
				_ = ack(ctx, in.run.Err())
				<-ctx.Done()
				return nil, nil, ctx.Err()
			}
			out = append(out, kept...)
		}
		if in.src != nil {
			in.stamp(out)
		}
		if len(out) == 0 {
			if err := ack(ctx, nil); err != nil {
				return nil, nil, err
			}
			continue
		}
		return out, ack, nil
	}
}

// stamp sets the event time of each decoded row from the watermark column;
// a row without a usable value (null, errored) gets no event time.
func (in *tableInput) stamp(batch service.MessageBatch) {
	times := make([]int64, len(batch))
	ok := make([]bool, len(batch))
	for i, msg := range batch {
		if msg.GetError() != nil {
			continue
		}
		v, err := msg.AsStructured()
		if err != nil {
			continue
		}
		row, _ := v.(map[string]any)
		if in.expr != nil {
			times[i], ok[i] = in.expr.eval(row, msg)
		} else {
			times[i], ok[i] = eventTimeOf(row[in.column])
		}
	}
	in.src.stampRows(batch, times, ok)
}

// decode turns msg into its row, or applies on_error; stop is true when a
// bad record stopped the run.
func (in *tableInput) decode(ctx context.Context, msg *service.Message) (out service.MessageBatch, stop bool) {
	rec, err := recordOf(msg, in.headers)
	if err != nil {
		return in.bad.Handle(msg, table.Locate(msg), err)
	}
	row, err := in.codec.Decode(ctx, rec)
	if errors.Is(err, table.ErrSkipped) {
		in.bad.Skipped()
		return nil, false
	}
	if err != nil {
		return in.bad.Handle(msg, table.Locate(msg), err)
	}
	msg.SetStructuredMut(row)
	return service.MessageBatch{msg}, false
}

// recordOf reads back the record of a message built by recordMessage;
// headers says whether to collect the record headers. Once the session
// hands its fetched records over, table.Codec.DecodeKafka decodes them
// without this detour.
func recordOf(msg *service.Message, headers bool) (table.Record, error) {
	r := table.Record{LeaderEpoch: -1}
	value, err := msg.AsBytes()
	if err != nil {
		return r, err
	}
	if tomb, _ := msg.MetaGetMut(metaTombstone); tomb != true {
		r.Value = value
		if r.Value == nil {
			r.Value = []byte{}
		}
	}
	if k, ok := msg.MetaGetMut(metaKey); ok {
		if s, _ := k.(string); s != "" {
			r.Key = []byte(s)
		}
	}
	r.Topic, _ = metaValue[string](msg, metaTopic)
	if p, ok := metaValue[int](msg, metaPartition); ok {
		r.Partition = int32(p)
	}
	r.Offset, _ = metaValue[int64](msg, metaOffset)
	if ms, ok := metaValue[int64](msg, metaTimestampMs); ok {
		r.Timestamp, r.HasTimestamp = time.UnixMilli(ms), true
	}
	r.TimestampType, _ = metaValue[string](msg, metaTimestampType)
	if e, ok := metaValue[int](msg, metaLeaderEpoch); ok {
		r.LeaderEpoch = int32(e)
	}
	if headers {
		r.Headers = table.MessageHeaders(msg)
	}
	return r, nil
}

func metaValue[T any](msg *service.Message, key string) (T, bool) {
	v, ok := msg.MetaGetMut(key)
	t, isT := v.(T)
	return t, ok && isT
}
