package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/table"
	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/registry"
)

// A kafka_sink with a table (fields table, catalog, ddl) takes its topic,
// brokers, delivery guarantee, transactional id prefix and partitioner from
// the table's WITH options, and encodes each message's row into the record,
// as Flink's KafkaDynamicSink: the value with the table's format (without
// the key columns under `value.fields-include` = EXCEPT_KEY), the key from
// the key columns (key.fields, or the PRIMARY KEY) with key.format, and the
// record timestamp and headers from the writable metadata columns.

// tableSettings are the kafka_sink settings a table derives; a zero field is
// not set by the table.
type tableSettings struct {
	topic       string
	brokers     []string
	guarantee   DeliveryGuarantee
	txnPrefix   string
	partitioner Partitioner
	// flushRows and flushInterval are upsert-kafka's buffer flush
	// (sink.buffer-flush.*), applied as the batching policy; 0: unset.
	flushRows     int
	flushInterval time.Duration
	// conn is what the table sets of the connection (brokers, security,
	// client id, ...), applied by kafkaconn.
	conn kafkaconn.TableConn
	// props are the producer's Kafka client properties, by the field each
	// sets (tableProperties); linger and batchBytes set batching.
	props      map[string]any
	linger     *time.Duration
	batchBytes int
}

// tableProperties map the producer's Kafka client properties onto the
// kafka_sink fields with the same meaning: the field, and the value of the
// field for a property value (a time.Duration, an int or a string). The
// connection's properties are kafkaconn's (kafkaconn.Properties);
// enable.idempotence, linger.ms and batch.size are handled in deriveTable.
var tableProperties = map[string]struct {
	field string
	value func(v string) (any, error)
}{
	schema.PropTransactionTimeoutMs: {FieldTransactionTimeout, millisOf},
	schema.PropCompressionType:      {FieldCompression, func(v string) (any, error) { return strings.ToLower(strings.TrimSpace(v)), nil }},
	schema.PropAcks:                 {FieldAcks, func(v string) (any, error) { return string(parseAcks(v)), nil }},
	schema.PropMaxRequestSize:       {FieldMaxMessageBytes, func(v string) (any, error) { return strconv.Atoi(strings.TrimSpace(v)) }},
	schema.PropDeliveryTimeoutMs:    {FieldTimeout, millisOf},
	schema.PropAllowAutoCreate:      {FieldAutoCreateTopics, func(v string) (any, error) { return strconv.ParseBool(strings.TrimSpace(strings.ToLower(v))) }},
}

// tablePropertiesElsewhere are the producer properties deriveTable applies
// itself.
var tablePropertiesElsewhere = []string{schema.PropEnableIdempotence, schema.PropLingerMs, schema.PropBatchSize}

func millisOf(v string) (any, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return time.Duration(n) * time.Millisecond, err
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
	case string:
		if fmt.Sprint(y) == "-1" && w == string(AcksAll) {
			return true
		}
	}
	return fmt.Sprint(y) == fmt.Sprint(want)
}

// deriveProperties applies the producer's Kafka client properties of t to
// s, recording in cf every one that contradicts a written field (set) or
// the delivery guarantee.
func deriveProperties(t *schema.Table, s *tableSettings, set map[string]any, cf *table.Conflicts) {
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
			continue // schema's check of the option reports it
		}
		if y, ok := set[p.field]; ok && !sameAs(y, val) {
			cf.Add(p.field, y, schema.PropertyPrefix+name, v)
		}
		s.props[p.field] = val
	}
	// The delivery guarantee in force: the table's, else the field's.
	guarantee, guaranteeFrom := DeliveryAtLeastOnce, "the default "+FieldDeliveryGuarantee
	if y, ok := set[FieldDeliveryGuarantee]; ok {
		guarantee, guaranteeFrom = parseDeliveryGuarantee(fmt.Sprint(y)), "field "+FieldDeliveryGuarantee
	}
	if s.guarantee != "" {
		guarantee, guaranteeFrom = s.guarantee, fmt.Sprintf("option '%s'", schema.OptDeliveryGuarantee)
	}
	idempotent := guarantee == DeliveryAtLeastOnce || guarantee == DeliveryExactlyOnce
	if v, ok := table.Property(t, schema.PropEnableIdempotence); ok {
		on := strings.EqualFold(v, "true")
		switch {
		case on && !idempotent:
			cf.Addf(FieldDeliveryGuarantee, "option 'properties.%s' = '%s' contradicts delivery guarantee %s (%s), which writes without idempotence; "+
				"the idempotent producer is %s", schema.PropEnableIdempotence, v, guarantee, guaranteeFrom, DeliveryAtLeastOnce)
		case !on && idempotent:
			cf.Addf(FieldDeliveryGuarantee, "option 'properties.%s' = '%s' contradicts delivery guarantee %s (%s), which needs the idempotent producer "+
				"(exactly-once transactions need it; at-least-once keeps per-partition order across retries with it); for a producer "+
				"without idempotence use delivery guarantee %s", schema.PropEnableIdempotence, v, guarantee, guaranteeFrom, DeliveryNone)
		}
	}
	if a, ok := s.props[FieldAcks]; ok && idempotent && a != string(AcksAll) {
		v, _ := table.Property(t, schema.PropAcks)
		cf.Addf(FieldAcks, "option 'properties.%s' = '%s' contradicts delivery guarantee %s (%s), which needs acks = all (the idempotent producer)",
			schema.PropAcks, v, guarantee, guaranteeFrom)
	}
	for _, name := range []string{schema.PropLingerMs, schema.PropBatchSize} {
		v, ok := table.Property(t, name)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue // schema's check of the option reports it
		}
		switch {
		case guarantee == DeliveryExactlyOnce:
			cf.Addf(FieldBatching, "option 'properties.%s' is not used with delivery guarantee %s (%s): records from kafka_source "+
				"flow into transactions committed every field %s (Flink's checkpoint interval), and each batch of another input is "+
				"one transaction whose size field %s sets", name, guarantee, guaranteeFrom, FieldCommitInterval, FieldBatching)
			continue
		case s.flushRows > 0:
			cf.Addf(FieldBatching, "options 'properties.%s' and '%s' both set the batching; set one", name, schema.OptSinkBufferFlushMaxRows)
			continue
		}
		if y, ok := set[FieldBatching]; ok {
			cf.Add(FieldBatching, y, schema.PropertyPrefix+name, v)
		}
		if name == schema.PropLingerMs {
			d := time.Duration(n) * time.Millisecond
			s.linger = &d
		} else {
			s.batchBytes = int(n)
		}
	}
}

// deriveTable maps the WITH options of t onto kafka_sink settings and
// reports every YAML field in set (the fields the user wrote) that
// contradicts them. Used by the constructor and by the lint rule.
func deriveTable(t *schema.Table, codec *table.Codec, set map[string]any) (s tableSettings, errs []error) {
	cf := table.NewConflicts(t)
	o := t.Options
	if v, ok := o[schema.OptTopicPattern]; ok {
		cf.Addf(FieldTopic, "option '%s' = '%s' is for reading; a sink table needs one 'topic'", schema.OptTopicPattern, v)
	}
	if v, ok := o[schema.OptTopic]; ok {
		topics := table.SplitList(v, ";")
		if len(topics) != 1 {
			cf.Addf(FieldTopic, "option '%s' = '%s': a sink writes one topic", schema.OptTopic, v)
		} else {
			s.topic = topics[0]
		}
		if y, ok := set[FieldTopic]; ok && fmt.Sprint(y) != s.topic {
			cf.Add(FieldTopic, y, schema.OptTopic, v)
		}
	}
	if v, ok := o[schema.OptBootstrapServers]; ok {
		s.brokers = table.SplitList(v, ",")
		if y, ok := set[kafkaconn.FieldSeedBrokers]; ok && !table.SameSet(table.StringList(y), s.brokers) {
			cf.Add(kafkaconn.FieldSeedBrokers, y, schema.OptBootstrapServers, v)
		}
	}
	if v, ok := o[schema.OptDeliveryGuarantee]; ok {
		s.guarantee = parseDeliveryGuarantee(v)
		if y, ok := set[FieldDeliveryGuarantee]; ok && parseDeliveryGuarantee(fmt.Sprint(y)) != s.guarantee {
			cf.Add(FieldDeliveryGuarantee, y, schema.OptDeliveryGuarantee, v)
		}
	}
	if v, ok := o[schema.OptTransactionalIDPrefix]; ok {
		s.txnPrefix = v
		if y, ok := set[FieldTransactionalIDPrefix]; ok && fmt.Sprint(y) != v {
			cf.Add(FieldTransactionalIDPrefix, y, schema.OptTransactionalIDPrefix, v)
		}
	}
	if v, ok := o[schema.OptSinkPartitioner]; ok {
		s.partitioner = parsePartitioner(v)
		if y, ok := set[FieldPartitioner]; ok && parsePartitioner(fmt.Sprint(y)) != s.partitioner {
			cf.Add(FieldPartitioner, y, schema.OptSinkPartitioner, v)
		}
	}
	if v, ok := o[schema.OptSinkBufferFlushMaxRows]; ok {
		n, _ := strconv.Atoi(strings.TrimSpace(v))
		d, _ := schema.ParseFlinkDuration(o[schema.OptSinkBufferFlushInterval])
		s.flushRows, s.flushInterval = n, d
		if y, ok := set[FieldBatching]; ok && n > 0 {
			cf.Add(FieldBatching, y, schema.OptSinkBufferFlushMaxRows+"' / '"+schema.OptSinkBufferFlushInterval, v+"' / '"+o[schema.OptSinkBufferFlushInterval])
		}
	}
	if codec != nil {
		if y, ok := set[FieldKey]; ok && codec.HasKey() {
			cf.Add(FieldKey, y, schema.OptKeyFields, strings.Join(t.KeyFields(), ";"))
		}
		ts, headers, err := codec.WritableMetadata()
		if err != nil {
			defer func() { errs = append(errs, fmt.Errorf("field %s: %w", table.FieldTable, err)) }()
		}
		if y, ok := set[FieldTimestampMs]; ok && ts != "" {
			cf.Add(FieldTimestampMs, y, "column "+ts+" METADATA FROM", "timestamp")
		}
		if y, ok := set[FieldMetadata]; ok && headers != "" {
			cf.Add(FieldMetadata, y, "column "+headers+" METADATA FROM", "headers")
		}
	}
	deriveProperties(t, &s, set, cf)
	errs = append(errs, cf.Errs()...)
	if _, ok := set[kafkaconn.FieldSeedBrokers]; !ok && len(s.brokers) == 0 {
		errs = append(errs, fmt.Errorf("field %s: at least one broker address is required, here or in option '%s' of table %s",
			kafkaconn.FieldSeedBrokers, schema.OptBootstrapServers, t.Name))
	}
	if _, ok := set[FieldTopic]; !ok && s.topic == "" {
		errs = append(errs, fmt.Errorf("field %s: required, here or in option '%s' of table %s", FieldTopic, schema.OptTopic, t.Name))
	}
	return s, errs
}

// tableFieldDefaults are the defaults of the fields a table can set: a
// config holds defaults (parsed, and as the lint rule sees it), so a field
// equal to its default counts as not written.
var tableFieldDefaults = map[string]string{
	FieldDeliveryGuarantee:     string(DeliveryAtLeastOnce),
	FieldTransactionalIDPrefix: "",
	FieldPartitioner:           string(PartitionerDefault),
	FieldTransactionTimeout:    defaultTransactionTimeout,
	FieldCompression:           string(CompressionNone),
	FieldMaxMessageBytes:       strconv.Itoa(defaultMaxMessageBytes),
	FieldTimeout:               defaultTimeout,
	FieldAutoCreateTopics:      "true",
}

// tableDerivable are the fields a table can set.
var tableDerivable = []string{FieldTopic, kafkaconn.FieldSeedBrokers, FieldDeliveryGuarantee, FieldTransactionalIDPrefix,
	FieldPartitioner, FieldKey, FieldTimestampMs, FieldMetadata,
	FieldTransactionTimeout, FieldCompression, FieldAcks, FieldMaxMessageBytes, FieldTimeout, FieldAutoCreateTopics}

// writtenFields returns the table-derivable fields of conf that the user set.
func writtenFields(conf *service.ParsedConfig) (map[string]any, error) {
	m, err := table.ParsedFields(conf, append(tableDerivable, FieldBatching))
	if err != nil {
		return nil, err
	}
	return written(m), nil
}

// written returns the table-derivable fields of a config (parsed, or as the
// lint rule sees it) that the user set; batching counts when it batches.
func written(m map[string]any) map[string]any {
	set := table.Written(m, tableDerivable, tableFieldDefaults)
	if b, ok := m[FieldBatching].(map[string]any); ok {
		for _, k := range []string{"count", "byte_size", "period", "check"} {
			if v := fmt.Sprint(b[k]); b[k] != nil && v != "0" && v != "" {
				set[FieldBatching] = b
			}
		}
	}
	return set
}

// tableFromParsed resolves the table of conf and its settings; a nil codec
// without a table.
func tableFromParsed(conf *service.ParsedConfig) (*table.Codec, tableSettings, error) {
	t, err := table.ResolveKafkaParsed(conf)
	if t == nil || err != nil {
		return nil, tableSettings{}, err
	}
	set, err := writtenFields(conf)
	if err != nil {
		return nil, tableSettings{}, err
	}
	codec, err := table.NewCodec(t)
	if err != nil {
		return nil, tableSettings{}, fmt.Errorf("field %s: %w", table.FieldTable, err)
	}
	s, errs := deriveTable(t, codec, set)
	return codec, s, errors.Join(errs...)
}

// applyTable sets the fields that the table derives; deriveTable has
// reported any contradiction with a written field. maxInFlightSet says
// whether max_in_flight was written (its default depends on the guarantee).
func (c *Config) applyTable(s tableSettings, maxInFlightSet bool) error {
	if s.topic != "" {
		topic, err := service.NewInterpolatedString(s.topic)
		if err != nil {
			return fmt.Errorf("field %s: option '%s': %w", table.FieldTable, schema.OptTopic, err)
		}
		c.Topic = topic
	}
	if s.brokers != nil {
		c.Conn.SeedBrokers = s.brokers
	}
	if s.guarantee != "" {
		c.DeliveryGuarantee = s.guarantee
		if !maxInFlightSet {
			c.MaxInFlight = defaultMaxInFlight
			if c.DeliveryGuarantee == DeliveryExactlyOnce {
				c.MaxInFlight = 1
			}
		}
	}
	if s.txnPrefix != "" {
		c.TransactionalIDPrefix = s.txnPrefix
	}
	if s.partitioner != "" {
		c.Partitioner = s.partitioner
	}
	for field, v := range s.props {
		switch field {
		case FieldTransactionTimeout:
			c.TransactionTimeout = v.(time.Duration)
		case FieldCompression:
			c.Compression = Compression(v.(string))
		case FieldAcks:
			c.Acks = Acks(v.(string))
		case FieldMaxMessageBytes:
			c.MaxMessageBytes = v.(int)
		case FieldTimeout:
			c.Timeout = v.(time.Duration)
		case FieldAutoCreateTopics:
			c.AllowAutoTopicCreation = v.(bool)
		default:
			return fmt.Errorf("field %s: table property for field %s is not applied (a connectd bug)", table.FieldTable, field)
		}
	}
	if s.linger != nil || s.batchBytes > 0 {
		// Flink's linger.ms and batch.size: the producer waits up to
		// linger for more records, or until a batch holds batch.size
		// bytes. connectd's producer sends a write at once, and the
		// write is what batching gathers.
		c.Batching.Count, c.Batching.ByteSize, c.Batching.Period = defaultBatchCount, defaultBatchBytes, defaultBatchPeriod
		if s.linger != nil {
			c.Batching.Period = s.linger.String()
		}
		if s.batchBytes > 0 {
			c.Batching.ByteSize = s.batchBytes
		}
		if s.linger != nil && *s.linger == 0 {
			// No wait: each input batch is written as it comes.
			c.Batching = service.BatchPolicy{Count: 1}
		}
	}
	if s.flushRows > 0 {
		// Flink's upsert-kafka buffer; connectd does not reduce a batch
		// to the last row per key (the topic's compaction does).
		c.Batching.Count = s.flushRows
		c.Batching.Period = s.flushInterval.String()
	}
	return nil
}

// tableTimeout bounds the schema registry calls of one record's encoding.
const tableTimeout = 30 * time.Second

// fillFromTable sets the value, key, timestamp and headers of r from the
// row of msg.
func fillFromTable(codec *table.Codec, msg *service.Message, r *kgo.Record) error {
	v, err := msg.AsStructured()
	if err != nil {
		return fmt.Errorf("table %s: the message is not a row: %w", codec.Table().Name, err)
	}
	row, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("table %s: want an object (a row), got %T", codec.Table().Name, v)
	}
	del := false
	if t, ok := msg.MetaGetMut(table.MetaTombstone); ok {
		del = t == true || fmt.Sprint(t) == "true"
	}
	ctx, cancel := context.WithTimeout(context.Background(), tableTimeout)
	defer cancel()
	enc, err := codec.Encode(ctx, row, r.Topic, del)
	if err != nil {
		err = fmt.Errorf("table %s: topic %q: %w", codec.Table().Name, r.Topic, err)
		if errors.Is(err, registry.ErrIncompatible) {
			// The table's schema breaks the subject's compatibility
			// level: no record of the table can be written until the
			// table or the registry changes.
			err = kafkaconn.WithClass(err, kafkaconn.Permanent)
		}
		return err
	}
	r.Value = enc.Value
	if codec.HasKey() {
		r.Key = enc.Key
	}
	if !enc.Timestamp.IsZero() {
		r.Timestamp = enc.Timestamp
	}
	if enc.Headers != nil {
		r.Headers = r.Headers[:0]
		for _, h := range enc.Headers {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: string(h[0]), Value: h[1]})
		}
	}
	return nil
}
