// Package ogg is Flink's `ogg-json` format: Oracle GoldenGate's JSON
// formatter (https://docs.oracle.com/en/middleware/goldengate/big-data/21.1/gadbd/using-json-formatter.html),
// `{"table": ..., "op_type": "U", "op_ts": ..., "current_ts": ..., "pos":
// ..., "primary_keys": [...], "before": row, "after": row}`.
//
// Decoding follows Flink's OggJsonDeserializationSchema: "I" gives an
// insert of "after", "U" an update-before of "before" and an update-after
// of "after", "D" a delete of "before"; an empty record gives no row; any
// other op_type (GoldenGate's "T" truncate) is an error unless
// `ogg-json.ignore-parse-errors`. An update or delete without "before" is an
// error (GoldenGate must capture before images). Encoding follows
// OggJsonSerializationSchema: `{"before":null,"after":row,"op_type":"I"}`
// for an insert or update-after, `{"before":row,"after":null,"op_type":"D"}`
// for an update-before or delete.
package ogg

import (
	"errors"
	"fmt"
	"time"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/changelog"
)

const name = schema.FormatOggJSON

// Format is the ogg-json codec of one ROW type.
type Format struct {
	json *changelog.JSON
	meta bool
}

// New returns the ogg-json codec for rows of type row, with Flink's options
// without the `ogg-json.` prefix.
func New(row *schema.Type, opts map[string]string) (*Format, error) {
	j, err := changelog.NewJSON(name, row, opts)
	if err != nil {
		return nil, err
	}
	return &Format{json: j}, nil
}

// ReadMetadata makes DecodeChanges fill Change.Meta.
func (f *Format) ReadMetadata() { f.meta = true }

const noBefore = `the "before" field of a %s record is null: GoldenGate must write before images (GETUPDATEBEFORES / NOCOMPRESSDELETES)`

// DecodeChanges returns the changes of one GoldenGate record.
func (f *Format) DecodeChanges(data []byte) ([]changelog.Change, error) {
	return f.json.DecodeChanges(data, f.decode)
}

func (f *Format) decode(data []byte) ([]changelog.Change, error) {
	root, err := changelog.ParseObject(data)
	if err != nil {
		return nil, err
	}
	before, err := f.json.Row(root, "before")
	if err != nil {
		return nil, err
	}
	after, err := f.json.Row(root, "after")
	if err != nil {
		return nil, err
	}
	op, ok := root.String("op_type")
	if !ok {
		return nil, errors.New(`no "op_type" field`)
	}
	var out []changelog.Change
	switch op {
	case "I":
		if after == nil {
			return nil, errors.New(`the "after" field of an "I" record is null`)
		}
		out = []changelog.Change{{Kind: changelog.Insert, Row: after}}
	case "U":
		if before == nil {
			return nil, fmt.Errorf(noBefore, "UPDATE")
		}
		if after == nil {
			return nil, errors.New(`the "after" field of a "U" record is null`)
		}
		out = []changelog.Change{{Kind: changelog.UpdateBefore, Row: before}, {Kind: changelog.UpdateAfter, Row: after}}
	case "D":
		if before == nil {
			return nil, fmt.Errorf(noBefore, "DELETE")
		}
		out = []changelog.Change{{Kind: changelog.Delete, Row: before}}
	default:
		return nil, fmt.Errorf(`unknown "op_type" value %q (want I, U or D)`, op)
	}
	if f.meta {
		m := map[string]any{"table": nil}
		if s, ok := root.String("table"); ok {
			m["table"] = s
		}
		if m["primary-keys"], err = root.Strings("primary_keys"); err != nil {
			return nil, err
		}
		// current_ts is ISO-8601 with a 'T' (2020-05-13T13:39:35.766000),
		// op_ts is SQL style (2020-05-13 15:40:06.000000); Flink reads both
		// as UTC wall-clock times, current_ts to the millisecond only
		// (DateTimeUtils.parseTimestampData with a pattern), op_ts whole.
		if m["ingestion-timestamp"], err = timestamp(root, "current_ts"); err != nil {
			return nil, err
		}
		if ts, ok := m["ingestion-timestamp"].(time.Time); ok {
			m["ingestion-timestamp"] = ts.Truncate(time.Millisecond)
		}
		if m["event-timestamp"], err = timestamp(root, "op_ts"); err != nil {
			return nil, err
		}
		for i := range out {
			out[i].Meta = m
		}
	}
	return out, nil
}

// timestamp reads a GoldenGate timestamp text, with 'T' or a space between
// date and time and up to nanoseconds; nil when absent or null.
func timestamp(root changelog.Object, field string) (any, error) {
	s, ok := root.String(field)
	if !ok {
		return nil, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if ts, err := time.Parse(layout, s); err == nil {
			return ts.UTC(), nil
		}
	}
	return nil, fmt.Errorf("%q: want a timestamp like 2020-05-13 15:40:06.000000, got %q", field, s)
}

// EncodeChange writes one row of the given kind as Flink does.
func (f *Format) EncodeChange(row map[string]any, kind changelog.Kind) ([]byte, error) {
	if row == nil {
		return nil, fmt.Errorf("format %s: want a row, got null", name)
	}
	if kind.IsRetract() {
		return f.json.Write(changelog.Member{Name: "before", Row: row}, changelog.Member{Name: "after"}, changelog.Member{Name: "op_type", Raw: []byte(`"D"`)})
	}
	return f.json.Write(changelog.Member{Name: "before"}, changelog.Member{Name: "after", Row: row}, changelog.Member{Name: "op_type", Raw: []byte(`"I"`)})
}

// Decode returns the row of the record's last change, nil when it has
// none: the single-row view of Codec.
func (f *Format) Decode(data []byte) (map[string]any, error) {
	return changelog.Last(f.DecodeChanges(data))
}

// Encode writes row as an insert.
func (f *Format) Encode(row map[string]any) ([]byte, error) {
	return f.EncodeChange(row, changelog.Insert)
}
