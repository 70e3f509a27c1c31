// Package maxwell is Flink's `maxwell-json` format: Maxwell's daemon's
// change records (https://maxwells-daemon.io/dataformat/), `{"database":
// ..., "table": ..., "type": "update", "ts": <seconds>, "data": row, "old":
// {changed fields}, "primary_key_columns": [...]}`.
//
// Decoding follows Flink's MaxwellJsonDeserializationSchema: "insert" gives
// an insert of "data", "delete" a delete of "data", "update" an
// update-before and an update-after, where the update-before row is "old"
// with the fields it does not name taken from "data" (Maxwell writes only
// the changed fields in "old"); an empty record gives no row; any other
// type (Maxwell's "bootstrap-*", DDL) is an error unless
// `maxwell-json.ignore-parse-errors`. Encoding follows
// MaxwellJsonSerializationSchema: `{"data":row,"type":"insert"}` for an
// insert or update-after, "delete" for an update-before or delete.
package maxwell

import (
	"errors"
	"fmt"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/changelog"
)

const name = schema.FormatMaxwellJSON

// Format is the maxwell-json codec of one ROW type.
type Format struct {
	json *changelog.JSON
	row  *schema.Type
	meta bool
}

// New returns the maxwell-json codec for rows of type row, with Flink's
// options without the `maxwell-json.` prefix.
func New(row *schema.Type, opts map[string]string) (*Format, error) {
	j, err := changelog.NewJSON(name, row, opts)
	if err != nil {
		return nil, err
	}
	return &Format{json: j, row: row}, nil
}

// ReadMetadata makes DecodeChanges fill Change.Meta.
func (f *Format) ReadMetadata() { f.meta = true }

// DecodeChanges returns the changes of one Maxwell record.
func (f *Format) DecodeChanges(data []byte) ([]changelog.Change, error) {
	return f.json.DecodeChanges(data, f.decode)
}

func (f *Format) decode(data []byte) ([]changelog.Change, error) {
	root, err := changelog.ParseObject(data)
	if err != nil {
		return nil, err
	}
	typ, ok := root.String("type")
	if !ok {
		return nil, errors.New(`no "type" field`)
	}
	row, err := f.json.Row(root, "data")
	if err != nil {
		return nil, err
	}
	var out []changelog.Change
	switch typ {
	case "insert", "delete":
		if row == nil {
			return nil, fmt.Errorf(`the "data" field of a %q record is null`, typ)
		}
		kind := changelog.Insert
		if typ == "delete" {
			kind = changelog.Delete
		}
		out = []changelog.Change{{Kind: kind, Row: row}}
	case "update":
		before, err := f.json.Row(root, "old")
		if err != nil {
			return nil, err
		}
		if row == nil || before == nil {
			return nil, errors.New(`an "update" record needs both "data" and "old"`)
		}
		changed := root.KeysAnywhere("old")
		for _, fld := range f.row.Fields {
			if before[fld.Name] == nil && !changed[fld.Name] {
				before[fld.Name] = row[fld.Name]
			}
		}
		out = []changelog.Change{{Kind: changelog.UpdateBefore, Row: before}, {Kind: changelog.UpdateAfter, Row: row}}
	default:
		return nil, fmt.Errorf(`unknown "type" value %q (want insert, update or delete)`, typ)
	}
	if f.meta {
		m := map[string]any{"database": nil, "table": nil}
		if s, ok := root.String("database"); ok {
			m["database"] = s
		}
		if s, ok := root.String("table"); ok {
			m["table"] = s
		}
		if m["primary-key-columns"], err = root.Strings("primary_key_columns"); err != nil {
			return nil, err
		}
		// Maxwell's "ts" is in seconds.
		if m["ingestion-timestamp"], err = root.Millis("ts", 1000); err != nil {
			return nil, err
		}
		for i := range out {
			out[i].Meta = m
		}
	}
	return out, nil
}

// EncodeChange writes one row of the given kind as Flink does.
func (f *Format) EncodeChange(row map[string]any, kind changelog.Kind) ([]byte, error) {
	if row == nil {
		return nil, fmt.Errorf("format %s: want a row, got null", name)
	}
	typ := `"insert"`
	if kind.IsRetract() {
		typ = `"delete"`
	}
	return f.json.Write(changelog.Member{Name: "data", Row: row}, changelog.Member{Name: "type", Raw: []byte(typ)})
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
