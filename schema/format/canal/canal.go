// Package canal is Flink's `canal-json` format: Alibaba Canal's flat
// message (https://github.com/alibaba/canal/wiki/Canal-Kafka-RocketMQ-QuickStart),
// `{"data": [row, ...], "old": [row, ...], "type": "UPDATE", "database":
// ..., "table": ..., "pkNames": [...], "sqlType": {...}, "es": ..., "ts": ...}`.
//
// Decoding follows Flink's CanalJsonDeserializationSchema: INSERT gives an
// insert per row of "data", DELETE a delete per row, UPDATE an
// update-before and an update-after per row, where the update-before row
// is "old"'s row with the fields "old" does not name taken from "data"
// (Canal writes only the changed fields in "old"); CREATE (DDL) and empty
// records give no row. With `canal-json.database.include` /
// `canal-json.table.include`, a record whose "database" / "table" does not
// match the regular expression (whole string) gives no row. Encoding
// follows CanalJsonSerializationSchema: `{"data":[row],"type":"INSERT"}`
// for an insert or update-after, "DELETE" for an update-before or delete.
package canal

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/changelog"
)

const name = schema.FormatCanalJSON

// Format is the canal-json codec of one ROW type.
type Format struct {
	json *changelog.JSON
	row  *schema.Type
	// database and table are `database.include` and `table.include`,
	// anchored (Java's Matcher.matches); nil when unset.
	database, table *regexp.Regexp
	meta            bool
}

// New returns the canal-json codec for rows of type row, with Flink's
// options without the `canal-json.` prefix.
func New(row *schema.Type, opts map[string]string) (*Format, error) {
	j, err := changelog.NewJSON(name, row, opts, "database.include", "table.include")
	if err != nil {
		return nil, err
	}
	f := &Format{json: j, row: row}
	var errs []error
	for opt, re := range map[string]**regexp.Regexp{"database.include": &f.database, "table.include": &f.table} {
		v, ok := opts[opt]
		if !ok {
			continue
		}
		if *re, err = regexp.Compile(`^(?:` + v + `)$`); err != nil {
			errs = append(errs, fmt.Errorf("format %s: option '%s' = '%s': %w", name, opt, v, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return f, nil
}

// ReadMetadata makes DecodeChanges fill Change.Meta.
func (f *Format) ReadMetadata() { f.meta = true }

// DecodeChanges returns the changes of one Canal message.
func (f *Format) DecodeChanges(data []byte) ([]changelog.Change, error) {
	return f.json.DecodeChanges(data, f.decode)
}

func (f *Format) decode(data []byte) ([]changelog.Change, error) {
	root, err := changelog.ParseObject(data)
	if err != nil {
		return nil, err
	}
	for _, filter := range []struct {
		field string
		re    *regexp.Regexp
	}{{"database", f.database}, {"table", f.table}} {
		if filter.re == nil {
			continue
		}
		v, ok := root.String(filter.field)
		if !ok {
			return nil, fmt.Errorf("no %q field to match against option '%s.include'", filter.field, filter.field)
		}
		if !filter.re.MatchString(v) {
			return nil, nil
		}
	}
	typ, ok := root.String("type")
	if !ok {
		return nil, errors.New(`no "type" field`)
	}
	var out []changelog.Change
	switch typ {
	case "INSERT", "DELETE":
		rows, err := f.json.RowList(root, "data")
		if err != nil {
			return nil, err
		}
		if rows == nil {
			return nil, fmt.Errorf(`the "data" field of an %s message is null`, typ)
		}
		kind := changelog.Insert
		if typ == "DELETE" {
			kind = changelog.Delete
		}
		for i, r := range rows {
			if r == nil {
				return nil, fmt.Errorf(`"data"[%d] is null`, i)
			}
			out = append(out, changelog.Change{Kind: kind, Row: r})
		}
	case "UPDATE":
		after, err := f.json.RowList(root, "data")
		if err != nil {
			return nil, err
		}
		before, err := f.json.RowList(root, "old")
		if err != nil {
			return nil, err
		}
		if after == nil || before == nil {
			return nil, errors.New(`an UPDATE message needs both "data" and "old"`)
		}
		if len(before) < len(after) {
			return nil, fmt.Errorf(`"old" has %d rows for the %d rows of "data"`, len(before), len(after))
		}
		changed := root.KeysAnywhere("old")
		for i, a := range after {
			b := before[i]
			if a == nil || b == nil {
				return nil, fmt.Errorf(`"data"[%d] or "old"[%d] is null`, i, i)
			}
			for _, fld := range f.row.Fields {
				// A field "old" does not name kept its value: Flink
				// asks Jackson's findValue over all of "old".
				if b[fld.Name] == nil && !changed[fld.Name] {
					b[fld.Name] = a[fld.Name]
				}
			}
			out = append(out, changelog.Change{Kind: changelog.UpdateBefore, Row: b}, changelog.Change{Kind: changelog.UpdateAfter, Row: a})
		}
	case "CREATE":
		return nil, nil // DDL: no row, as in Flink
	default:
		return nil, fmt.Errorf(`unknown "type" value %q (want INSERT, UPDATE, DELETE or CREATE)`, typ)
	}
	if f.meta && len(out) > 0 {
		m, err := metadata(root)
		if err != nil {
			return nil, err
		}
		for i := range out {
			out[i].Meta = m
		}
	}
	return out, nil
}

// metadata reads the readable metadata of Flink's CanalJsonDecodingFormat.
func metadata(root changelog.Object) (map[string]any, error) {
	m := map[string]any{"database": nil, "table": nil}
	if s, ok := root.String("database"); ok {
		m["database"] = s
	}
	if s, ok := root.String("table"); ok {
		m["table"] = s
	}
	var err error
	if m["pk-names"], err = root.Strings("pkNames"); err != nil {
		return nil, err
	}
	types, err := root.StringMap("sqlType")
	if err != nil {
		return nil, err
	}
	m["sql-type"] = nil
	if types != nil {
		m["sql-type"] = types // text values; the column's MAP<STRING, INT> coerces them
	}
	if m["ingestion-timestamp"], err = root.Millis("ts", 1); err != nil {
		return nil, err
	}
	if m["event-timestamp"], err = root.Millis("es", 1); err != nil {
		return nil, err
	}
	return m, nil
}

// EncodeChange writes one row of the given kind as Flink does.
func (f *Format) EncodeChange(row map[string]any, kind changelog.Kind) ([]byte, error) {
	if row == nil {
		return nil, fmt.Errorf("format %s: want a row, got null", name)
	}
	b, err := f.json.Rows.Encode(row)
	if err != nil {
		return nil, fmt.Errorf("format %s: %w", name, err)
	}
	data := append(append([]byte{'['}, b...), ']')
	typ := `"INSERT"`
	if kind.IsRetract() {
		typ = `"DELETE"`
	}
	return f.json.Write(changelog.Member{Name: "data", Raw: data}, changelog.Member{Name: "type", Raw: []byte(typ)})
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
