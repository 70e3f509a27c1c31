package table

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/expr"
	"github.com/connectd/connectd/schema/format"
	"github.com/connectd/connectd/schema/format/avroconfluent"
	"github.com/connectd/connectd/schema/format/changelog"
)

// Record is a Kafka record as Codec sees it. FromKafka makes one from a
// fetched record.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	// Key is nil for a null key.
	Key []byte
	// Value is nil for a tombstone.
	Value []byte
	// Timestamp is NO_TIMESTAMP (-1 ms) for a record without a timestamp
	// type (see recordTimestamp); HasTimestamp is false when it is not
	// known at all (the `timestamp` column is then NULL), never for a
	// fetched record.
	Timestamp    time.Time
	HasTimestamp bool
	// TimestampType is CreateTime, LogAppendTime or NoTimestampType, as
	// Kafka's Java client names them.
	TimestampType string
	// LeaderEpoch is -1 when unknown.
	LeaderEpoch int32
	Headers     []kgo.RecordHeader
}

// Timestamp types, as Kafka's Java client names them.
const (
	TimestampTypeCreate    = "CreateTime"
	TimestampTypeLogAppend = "LogAppendTime"
	TimestampTypeNone      = "NoTimestampType"
)

// FromKafka returns the Record of a fetched record; it shares r's key,
// value and headers.
func FromKafka(r *kgo.Record) Record {
	rec := Record{
		Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value,
		LeaderEpoch: r.LeaderEpoch, Headers: r.Headers, HasTimestamp: true,
	}
	rec.TimestampType, rec.Timestamp = recordTimestamp(r.Attrs.TimestampType(), r.Timestamp)
	return rec
}

// noTimestamp is Kafka's NO_TIMESTAMP (the Java client's
// RecordBatch.NO_TIMESTAMP): the timestamp of a record that has none.
const noTimestamp = -1

// recordTimestamp returns the timestamp type and timestamp of a fetched
// record, as Kafka's Java client reports them and Flink's `timestamp-type`
// and `timestamp` columns read them: tsType is kgo's (0 create time, 1 log
// append time, -1 none). A record without a timestamp type (a v0 message,
// written before Kafka 0.10) has the timestamp NO_TIMESTAMP, -1 ms, not
// NULL: Flink declares `timestamp` NOT NULL and reads record.timestamp().
func recordTimestamp(tsType int8, ts time.Time) (string, time.Time) {
	switch tsType {
	case 0:
		return TimestampTypeCreate, ts
	case 1:
		return TimestampTypeLogAppend, ts
	}
	return TimestampTypeNone, time.UnixMilli(noTimestamp)
}

// keyColumn is a key column: its table name and its field name in the key
// format (without key.fields-prefix).
type keyColumn struct {
	column, field string
}

type metaColumn struct {
	name, key string
	typ       *schema.Type
	virtual   bool
	// read gets its value from a record; what names it in errors.
	read func(Record) any
	what string
	// formatKey is the value format's metadata key of a `value.*` column
	// (`source.timestamp`); "" for the connector's metadata.
	formatKey string
}

// Codec turns records into rows of a table and rows into records.
type Codec struct {
	table  *schema.Table
	upsert bool
	// key is nil when records have no key columns.
	key     format.Codec
	keyRec  format.RecordCodec
	keyCols []keyColumn
	value   format.Codec
	valRec  format.RecordCodec
	// changes is value as a changelog codec; nil for an insert-only
	// value format. changesRec is changes as a ChangelogRecordCodec, or
	// nil.
	changes    format.ChangelogCodec
	changesRec format.ChangelogRecordCodec
	meta       []metaColumn
	// computed is nil without computed columns.
	computed *expr.Env
	// tsColumn and headersColumn are the writable metadata columns (not
	// VIRTUAL) of a sink; "" when absent.
	tsColumn, headersColumn string
	// zone is the table's table.local-time-zone: metadata `timestamp`
	// declared TIMESTAMP, DATE or TIME is its wall clock there.
	zone *time.Location
}

// NewCodec builds the key and value codecs of t (validated, connector kafka
// or upsert-kafka). Errors name the option.
func NewCodec(t *schema.Table) (*Codec, error) {
	c := &Codec{table: t, upsert: t.Options[schema.OptConnector] == schema.ConnectorUpsertKafka}
	var errs []error
	zone, err := t.LocalTimeZone()
	if err != nil {
		errs = append(errs, err)
	}
	c.zone = zone
	keyNames := t.KeyFields()
	if len(keyNames) > 0 {
		prefix := t.Options[schema.OptKeyFieldsPrefix]
		keyRow := &schema.Type{Kind: schema.KindRow, NotNull: true}
		for _, name := range keyNames {
			col, _ := t.Column(name)
			field, ok := strings.CutPrefix(name, prefix)
			if !ok || field == "" {
				errs = append(errs, fmt.Errorf("table %s: option 'key.fields-prefix' = '%s': key column %s does not start with it", t.Name, prefix, name))
			}
			c.keyCols = append(c.keyCols, keyColumn{column: name, field: field})
			keyRow.Fields = append(keyRow.Fields, schema.Field{Name: field, Type: col.Type})
		}
		name, opts, ok := t.KeyFormatOf()
		if !ok {
			errs = append(errs, fmt.Errorf("table %s: option 'key.format' is required for the key columns %s", t.Name, strings.Join(keyNames, ", ")))
		} else {
			k, err := newCodec(name, keyRow, opts, avroconfluent.PartKey)
			if err != nil {
				errs = append(errs, fmt.Errorf("table %s: option 'key.format' = '%s': %w", t.Name, name, err))
			}
			c.key = k
			c.keyRec, _ = k.(format.RecordCodec)
		}
	}
	valueRow := &schema.Type{Kind: schema.KindRow, NotNull: true}
	for _, col := range t.PhysicalColumns() {
		if t.ValueFieldsExceptKey() && slices.Contains(keyNames, col.Name) {
			continue
		}
		valueRow.Fields = append(valueRow.Fields, schema.Field{Name: col.Name, Type: col.Type})
	}
	name, opts, ok := t.FormatOf()
	if !ok {
		errs = append(errs, fmt.Errorf("table %s: option 'format' (or 'value.format') is required", t.Name))
	} else {
		v, err := newCodec(name, valueRow, opts, avroconfluent.PartValue)
		if err != nil {
			errs = append(errs, fmt.Errorf("table %s: option 'format' = '%s': %w", t.Name, name, err))
		}
		c.value = v
		c.valRec, _ = v.(format.RecordCodec)
		c.changes, _ = v.(format.ChangelogCodec)
		c.changesRec, _ = v.(format.ChangelogRecordCodec)
	}
	for _, col := range t.Columns {
		switch col.Kind {
		case schema.Metadata:
			mc := metaColumn{name: col.Name, key: col.MetadataKey, typ: col.Type, virtual: col.Virtual,
				read: metadataReader(col.MetadataKey), what: "metadata column " + col.Name}
			if k, ok := formatMetadataKey(t, col.MetadataKey); ok {
				mc.formatKey = k
				if c.changes != nil {
					c.changes.ReadMetadata()
				}
			}
			c.meta = append(c.meta, mc)
		case schema.Computed:
			if c.computed == nil {
				env, err := expr.NewEnv(t)
				if err != nil {
					errs = append(errs, fmt.Errorf("table %s: %w", t.Name, err))
				}
				c.computed = env
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// Table returns the codec's table.
func (c *Codec) Table() *schema.Table { return c.table }

// Upsert reports whether the table is an upsert-kafka table.
func (c *Codec) Upsert() bool { return c.upsert }

// HasKey reports whether the key is built from key columns.
func (c *Codec) HasKey() bool { return c.key != nil }

// newCodec builds a codec; an avro-confluent key uses the `<topic>-key`
// subject.
func newCodec(name string, row *schema.Type, opts map[string]string, part avroconfluent.Part) (format.Codec, error) {
	if name != schema.FormatAvroConfluent || part == avroconfluent.PartValue {
		return format.New(name, row, opts)
	}
	o, err := avroconfluent.ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	o.Part = part
	f, err := avroconfluent.New(row, o)
	if err != nil {
		return nil, err
	}
	return confluentKey{f}, nil
}

type confluentKey struct{ *avroconfluent.Format }

func (c confluentKey) DecodeRecord(ctx context.Context, data []byte, rec format.Record) (map[string]any, error) {
	return c.Format.DecodeRecord(ctx, data, avroconfluent.Record{Topic: rec.Topic})
}

func (c confluentKey) EncodeRecord(ctx context.Context, row map[string]any, rec format.Record) ([]byte, error) {
	return c.Format.EncodeRecord(ctx, row, avroconfluent.Record{Topic: rec.Topic})
}

// ErrSkipped is returned by Decode for a record that produces no row: the
// format's options say to skip it (`ignore-parse-errors`), or it is a
// tombstone of a plain kafka table (Flink drops those too) whose value
// format is not raw (format.NullValueCodec).
var ErrSkipped = errors.New("record skipped")

// DecodeKafka returns the row of a fetched record (see Decode): the way a
// source decodes, with no detour through message metadata.
func (c *Codec) DecodeKafka(ctx context.Context, r *kgo.Record) (map[string]any, error) {
	return c.Decode(ctx, FromKafka(r))
}

// Decode returns the row of a record: key columns from the key, physical
// columns from the value (the value wins for a column in both, as in
// Flink), metadata columns from the record, then computed columns. An
// upsert-kafka tombstone is a delete: the row holds the key columns, every
// other physical column is NULL. A table whose value format is a changelog
// format gives the row of the record's last change (DecodeChanges gives
// them all).
func (c *Codec) Decode(ctx context.Context, r Record) (map[string]any, error) {
	if c.changes != nil {
		rows, err := c.DecodeChanges(ctx, r)
		if err != nil {
			return nil, err
		}
		return rows[len(rows)-1].Row, nil
	}
	rec := format.Record{Topic: r.Topic}
	// Without key columns the value's row (a new map per record from
	// every format) becomes the row; else the row starts with the key.
	row, err := c.decodeKey(ctx, r, rec)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Value == nil && c.upsert:
		if row == nil {
			row = make(map[string]any, len(c.table.Columns))
		}
		for _, col := range c.table.PhysicalColumns() {
			if _, ok := row[col.Name]; !ok {
				row[col.Name] = nil
			}
		}
	case r.Value == nil:
		nv, ok := c.value.(format.NullValueCodec)
		if !ok {
			return nil, ErrSkipped
		}
		// raw: a tombstone is a row whose column is NULL, as in Flink.
		vr := nv.DecodeNull()
		if row == nil {
			row = vr
			break
		}
		for k, v := range vr {
			row[k] = v
		}
	default:
		var vr map[string]any
		var err error
		if c.valRec != nil {
			vr, err = c.valRec.DecodeRecord(ctx, r.Value, rec)
		} else {
			vr, err = c.value.Decode(r.Value)
		}
		if err != nil {
			return nil, fmt.Errorf("value: %w", err)
		}
		if vr == nil {
			return nil, ErrSkipped
		}
		if row == nil {
			row = vr
			break
		}
		for k, v := range vr {
			row[k] = v
		}
	}
	if err := c.finish(row, r, nil); err != nil {
		return nil, err
	}
	return row, nil
}

// decodeKey returns a new row holding the key columns of r; nil when the
// table has no key columns. ErrSkipped: the key format skips the record.
func (c *Codec) decodeKey(ctx context.Context, r Record, rec format.Record) (map[string]any, error) {
	if c.key == nil {
		return nil, nil
	}
	row := make(map[string]any, len(c.table.Columns))
	if len(r.Key) == 0 {
		for _, kc := range c.keyCols {
			row[kc.column] = nil
		}
		return row, nil
	}
	var kr map[string]any
	var err error
	if c.keyRec != nil {
		kr, err = c.keyRec.DecodeRecord(ctx, r.Key, rec)
	} else {
		kr, err = c.key.Decode(r.Key)
	}
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	if kr == nil {
		return nil, ErrSkipped
	}
	for _, kc := range c.keyCols {
		row[kc.column] = kr[kc.field]
	}
	return row, nil
}

// finish adds the metadata columns (from the record, or from formatMeta,
// the value format's metadata, for `value.*` keys) and the computed
// columns to row.
func (c *Codec) finish(row map[string]any, r Record, formatMeta map[string]any) error {
	for _, mc := range c.meta {
		var v any
		var err error
		if mc.formatKey != "" {
			v, err = schema.Coerce(mc.typ, formatMeta[mc.formatKey], mc.what)
		} else {
			v, err = schema.CastMetadata(mc.key, mc.typ, mc.read(r), c.zone, mc.what)
		}
		if err != nil {
			return err
		}
		row[mc.name] = v
	}
	if c.computed != nil {
		in := expr.Input{}
		if r.HasTimestamp {
			ts := r.Timestamp
			in.KafkaTimestamp = &ts
		}
		if err := c.computed.EvalComputed(row, in); err != nil {
			return err
		}
	}
	return nil
}

// WritableMetadata checks the metadata columns of a sink table: like
// Flink's KafkaDynamicSink, only `timestamp` and `headers` can be written;
// any other metadata column must be VIRTUAL. It returns the writable
// columns' names ("" when absent).
func (c *Codec) WritableMetadata() (timestamp, headers string, err error) {
	var errs []error
	for _, mc := range c.meta {
		if mc.virtual {
			continue
		}
		switch mc.key {
		case "timestamp":
			timestamp = mc.name
		case "headers":
			headers = mc.name
		default:
			errs = append(errs, fmt.Errorf("table %s: column %s: metadata '%s' is read-only (a sink writes 'timestamp' and 'headers'); declare it VIRTUAL",
				c.table.Name, mc.name, mc.key))
		}
	}
	c.tsColumn, c.headersColumn = timestamp, headers
	return timestamp, headers, errors.Join(errs...)
}

// Encoded is a record built from a row.
type Encoded struct {
	// Key is nil when the table has no key columns.
	Key []byte
	// Value is nil for a tombstone.
	Value []byte
	// Timestamp is zero when the row sets none.
	Timestamp time.Time
	// Headers are sorted by key; nil when the row sets none.
	Headers [][2][]byte
}

// Encode builds a record from row for topic: the key from the key columns
// (key.format), the value from the value columns (format), and the record
// timestamp and headers from the writable metadata columns (call
// WritableMetadata first). With upsert-kafka, del makes a tombstone: the key
// from the row's key columns and a null value; other tables ignore del.
func (c *Codec) Encode(ctx context.Context, row map[string]any, topic string, del bool) (Encoded, error) {
	return c.encode(ctx, row, topic, del, nil)
}

// encode is Encode; kind, when not nil, is the change kind a changelog
// value format writes.
func (c *Codec) encode(ctx context.Context, row map[string]any, topic string, del bool, kind *changelog.Kind) (Encoded, error) {
	var out Encoded
	rec := format.Record{Topic: topic}
	if row == nil {
		return out, errors.New("want an object (a row), got null")
	}
	if c.key != nil {
		kr := make(map[string]any, len(c.keyCols))
		for _, kc := range c.keyCols {
			kr[kc.field] = row[kc.column]
		}
		var err error
		if c.keyRec != nil {
			out.Key, err = c.keyRec.EncodeRecord(ctx, kr, rec)
		} else {
			out.Key, err = c.key.Encode(kr)
		}
		if err != nil {
			return out, fmt.Errorf("key: %w", err)
		}
	}
	if del && c.upsert {
		if c.key == nil {
			return out, errors.New("a delete needs the key columns")
		}
	} else if nv, ok := c.value.(format.NullValueCodec); ok && nv.EncodesNull(row) {
		// raw: NULL is a record without a value, as in Flink (out.Value
		// stays nil).
	} else {
		var err error
		switch {
		case kind != nil && c.changesRec != nil:
			out.Value, err = c.changesRec.EncodeChangeRecord(ctx, row, *kind, changelog.Record{Topic: topic})
		case kind != nil && c.changes != nil:
			out.Value, err = c.changes.EncodeChange(row, *kind)
		case c.valRec != nil:
			out.Value, err = c.valRec.EncodeRecord(ctx, row, rec)
		default:
			out.Value, err = c.value.Encode(row)
		}
		if err != nil {
			return out, fmt.Errorf("value: %w", err)
		}
		if out.Value == nil {
			out.Value = []byte{}
		}
	}
	if c.tsColumn != "" {
		col, _ := c.table.Column(c.tsColumn)
		v, err := schema.Coerce(col.Type, row[c.tsColumn], "metadata column "+c.tsColumn)
		if err != nil {
			return out, err
		}
		if ts, ok := v.(time.Time); ok {
			if col.Type.Kind != schema.KindTimestampLTZ { // a wall clock in table.local-time-zone
				ts = schema.ToLocalTimestamp(ts, c.zone)
			}
			out.Timestamp = ts
		}
	}
	if c.headersColumn != "" {
		col, _ := c.table.Column(c.headersColumn)
		v, err := schema.Coerce(col.Type, row[c.headersColumn], "metadata column "+c.headersColumn)
		if err != nil {
			return out, err
		}
		if m, ok := v.(map[string]any); ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				b, _ := m[k].([]byte)
				out.Headers = append(out.Headers, [2][]byte{[]byte(k), b})
			}
		}
	}
	return out, nil
}
