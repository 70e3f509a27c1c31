// Package debezium is Flink's `debezium-json` format: Debezium's change
// event envelope (https://debezium.io/documentation/reference/stable/connectors/mysql.html#mysql-events),
// `{"before": row, "after": row, "source": {...}, "op": "c", "ts_ms": ...}`,
// optionally inside Kafka Connect's `{"schema": ..., "payload": ...}` when
// the connector runs with `value.converter.schemas.enable`
// (`debezium-json.schema-include`).
//
// Decoding follows Flink's DebeziumJsonDeserializationSchema: "c" (create)
// and "r" (snapshot read) give an insert of "after"; "u" an update-before of
// "before" and an update-after of "after"; "d" a delete of "before"; an
// empty record (a Kafka tombstone, which Debezium writes after a delete)
// gives no row. An update or delete without "before" is an error (a
// PostgreSQL table without REPLICA IDENTITY FULL). Encoding follows
// DebeziumJsonSerializationSchema: insert and update-after as
// `{"before":null,"after":row,"op":"c"}`, update-before and delete as
// `{"before":row,"after":null,"op":"d"}`.
package debezium

import (
	"errors"
	"fmt"
	"strings"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/changelog"
)

const name = schema.FormatDebeziumJSON

// Options are the debezium-json options beside those it shares with json
// (changelog.JSON).
type Options struct {
	// SchemaInclude reads records whose envelope is the "payload" of a
	// Kafka Connect `{"schema", "payload"}` object. Default false. Flink:
	// `debezium-json.schema-include`. Flink (and connectd) cannot write
	// it: a table that writes with it set is refused.
	SchemaInclude bool
}

// Format is the debezium-json codec of one ROW type.
type Format struct {
	json *changelog.JSON
	opts Options
	meta bool
}

// New returns the debezium-json codec for rows of type row, with Flink's
// options without the `debezium-json.` prefix.
func New(row *schema.Type, opts map[string]string) (*Format, error) {
	j, err := changelog.NewJSON(name, row, opts, "schema-include")
	if err != nil {
		return nil, err
	}
	return &Format{json: j, opts: Options{SchemaInclude: strings.EqualFold(opts["schema-include"], "true")}}, nil
}

// ReadMetadata makes DecodeChanges fill Change.Meta.
func (f *Format) ReadMetadata() { f.meta = true }

// REPLICA IDENTITY hint of Flink's error for an update or delete without
// "before".
const replicaIdentity = `the "before" field of a %s message is null: if the events come from Debezium's PostgreSQL connector, set REPLICA IDENTITY FULL on the table (ALTER TABLE ... REPLICA IDENTITY FULL)`

// DecodeChanges returns the changes of one Debezium event.
func (f *Format) DecodeChanges(data []byte) ([]changelog.Change, error) {
	return f.json.DecodeChanges(data, f.decode)
}

func (f *Format) decode(data []byte) ([]changelog.Change, error) {
	root, err := changelog.ParseObject(data)
	if err != nil {
		return nil, err
	}
	payload := root
	if f.opts.SchemaInclude {
		raw, ok := root["payload"]
		if !ok {
			return nil, errors.New(`no "payload" field (debezium-json.schema-include is true: want {"schema": ..., "payload": ...})`)
		}
		if payload, err = changelog.ParseObject(raw); err != nil {
			return nil, fmt.Errorf(`"payload": %w`, err)
		}
	}
	before, err := f.json.Row(payload, "before")
	if err != nil {
		return nil, err
	}
	after, err := f.json.Row(payload, "after")
	if err != nil {
		return nil, err
	}
	op, ok := payload.String("op")
	if !ok {
		return nil, errors.New(`no "op" field`)
	}
	var out []changelog.Change
	switch op {
	case "c", "r":
		if after == nil {
			return nil, fmt.Errorf(`the "after" field of an %q message is null`, op)
		}
		out = []changelog.Change{{Kind: changelog.Insert, Row: after}}
	case "u":
		if before == nil {
			return nil, fmt.Errorf(replicaIdentity, "UPDATE")
		}
		if after == nil {
			return nil, errors.New(`the "after" field of a "u" message is null`)
		}
		out = []changelog.Change{{Kind: changelog.UpdateBefore, Row: before}, {Kind: changelog.UpdateAfter, Row: after}}
	case "d":
		if before == nil {
			return nil, fmt.Errorf(replicaIdentity, "DELETE")
		}
		out = []changelog.Change{{Kind: changelog.Delete, Row: before}}
	default:
		return nil, fmt.Errorf(`unknown "op" value %q (want c, r, u or d)`, op)
	}
	if f.meta {
		m, err := f.metadata(root, payload)
		if err != nil {
			return nil, err
		}
		for i := range out {
			out[i].Meta = m
		}
	}
	return out, nil
}

// metadata reads the readable metadata of Flink's DebeziumJsonDecodingFormat.
func (f *Format) metadata(root, payload changelog.Object) (map[string]any, error) {
	m := map[string]any{"schema": nil}
	if s, ok := root.String("schema"); ok {
		m["schema"] = s
	}
	var err error
	if m["ingestion-timestamp"], err = payload.Millis("ts_ms", 1); err != nil {
		return nil, err
	}
	src, err := payload.StringMap("source")
	if err != nil {
		return nil, err
	}
	m["source.properties"] = nil
	m["source.timestamp"], m["source.database"], m["source.schema"], m["source.table"] = nil, nil, nil, nil
	if src != nil {
		m["source.properties"] = src
		m["source.database"], m["source.schema"], m["source.table"] = src["db"], src["schema"], src["table"]
		if ts, ok := src["ts_ms"].(string); ok {
			o := changelog.Object{"ts_ms": []byte(ts)}
			if m["source.timestamp"], err = o.Millis("ts_ms", 1); err != nil {
				return nil, fmt.Errorf(`"source": %w`, err)
			}
		}
	}
	return m, nil
}

// EncodeChange writes one row of the given kind as Flink does.
func (f *Format) EncodeChange(row map[string]any, kind changelog.Kind) ([]byte, error) {
	if f.opts.SchemaInclude {
		return nil, fmt.Errorf("format %s: writing with 'schema-include' = 'true' is not supported (Flink refuses it too)", name)
	}
	if row == nil {
		return nil, fmt.Errorf("format %s: want a row, got null", name)
	}
	if kind.IsRetract() {
		return f.json.Write(changelog.Member{Name: "before", Row: row}, changelog.Member{Name: "after"}, changelog.Member{Name: "op", Raw: []byte(`"d"`)})
	}
	return f.json.Write(changelog.Member{Name: "before"}, changelog.Member{Name: "after", Row: row}, changelog.Member{Name: "op", Raw: []byte(`"c"`)})
}

// SchemaInclude reports whether the codec reads the Kafka Connect
// `{"schema", "payload"}` envelope; Flink refuses it for writing.
func (f *Format) SchemaInclude() bool { return f.opts.SchemaInclude }

// Decode returns the row of the record's last change (the after image of
// an update), nil when it has none: the single-row view of Codec.
func (f *Format) Decode(data []byte) (map[string]any, error) {
	return changelog.Last(f.DecodeChanges(data))
}

// Encode writes row as an insert.
func (f *Format) Encode(row map[string]any) ([]byte, error) {
	return f.EncodeChange(row, changelog.Insert)
}
