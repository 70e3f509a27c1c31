package changelog

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	gojson "github.com/goccy/go-json"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/json"
)

// JSON is the part of a flink-json CDC format (debezium-json, canal-json,
// maxwell-json, ogg-json) that is the `json` format: the rows inside the
// envelope are read and written as the json format does, with the options
// the CDC format shares with it (`<format>.timestamp-format.standard`,
// `<format>.map-null-key.*`, `<format>.encode.decimal-as-plain-number`,
// `<format>.ignore-parse-errors`), as Flink builds its JSON
// (de)serialization schemas for them.
type JSON struct {
	// Name is the format's name, for errors.
	Name string
	// Rows reads and writes the rows inside the envelope.
	Rows *json.Format
	// IgnoreParseErrors skips a record that does not parse (no rows, no
	// error) and reads NULL for a field that does not. Default false.
	IgnoreParseErrors bool
	// IgnoreNullFields leaves NULL fields out of the written envelope
	// (`<format>.encode.ignore-null-fields`), when the json format
	// supports that option.
	IgnoreNullFields bool
}

// NewJSON validates the options of the CDC format name (without its
// prefix) and returns its json part for rows of type row; own are the
// format's options that are not json's (`schema-include`), which the
// caller reads.
func NewJSON(name string, row *schema.Type, opts map[string]string, own ...string) (*JSON, error) {
	if err := schema.ValidateFormatOptions(name, opts); err != nil {
		return nil, err
	}
	sub := make(map[string]string, len(opts))
	for k, v := range opts {
		isOwn := false
		for _, o := range own {
			isOwn = isOwn || k == o
		}
		if !isOwn {
			sub[k] = v
		}
	}
	jo, err := json.ParseOptions(sub)
	if err != nil {
		return nil, fmt.Errorf("format %s: %w", name, err)
	}
	f, err := json.New(row, jo)
	if err != nil {
		return nil, fmt.Errorf("format %s: %w", name, err)
	}
	return &JSON{
		Name: name, Rows: f, IgnoreParseErrors: jo.IgnoreParseErrors,
		IgnoreNullFields: strings.EqualFold(opts["encode.ignore-null-fields"], "true"),
	}, nil
}

// DecodeChanges runs decode on one record's bytes as every JSON changelog
// format reads a record: an empty record (a tombstone) has no changes, and
// a record decode fails on has none under ignore-parse-errors, else its
// error names the format.
func (j *JSON) DecodeChanges(data []byte, decode func([]byte) ([]Change, error)) ([]Change, error) {
	if len(data) == 0 {
		return nil, nil
	}
	out, err := decode(data)
	if err != nil {
		if j.IgnoreParseErrors {
			return nil, nil
		}
		return nil, fmt.Errorf("format %s: %w", j.Name, err)
	}
	return out, nil
}

// Object is a decoded JSON object whose members are left undecoded.
type Object map[string]gojson.RawMessage

// ParseObject reads data as one JSON object.
func ParseObject(data []byte) (Object, error) {
	var o Object
	if err := gojson.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if o == nil {
		return nil, errors.New("want a JSON object, got null")
	}
	return o, nil
}

// IsNull reports whether the member is absent or JSON null.
func (o Object) IsNull(name string) bool {
	raw, ok := o[name]
	return !ok || isNull(raw)
}

func isNull(raw []byte) bool { return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" }

// Row decodes member name as a row of the table; nil when it is absent or
// null.
func (j *JSON) Row(o Object, name string) (map[string]any, error) {
	raw, ok := o[name]
	if !ok || isNull(raw) {
		return nil, nil
	}
	return j.rowOf(raw, name)
}

func (j *JSON) rowOf(raw []byte, what string) (map[string]any, error) {
	row, err := j.Rows.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", what, err)
	}
	if row == nil { // ignore-parse-errors: not an object
		return nil, fmt.Errorf("%q is not a JSON object", what)
	}
	return row, nil
}

// RowList decodes member name, a JSON array of rows (canal's "data" and
// "old"); nil when it is absent or null.
func (j *JSON) RowList(o Object, name string) ([]map[string]any, error) {
	raw, ok := o[name]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var list []gojson.RawMessage
	if err := gojson.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("%q: want an array of rows: %w", name, err)
	}
	out := make([]map[string]any, len(list))
	for i, e := range list {
		if isNull(e) {
			continue
		}
		var err error
		if out[i], err = j.rowOf(e, fmt.Sprintf("%s[%d]", name, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// String reads member name as Flink's json format reads a STRING: the text
// of a JSON string, the JSON text of anything else; ok is false when it is
// absent or null.
func (o Object) String(name string) (s string, ok bool) {
	raw, present := o[name]
	if !present || isNull(raw) {
		return "", false
	}
	return textOf(raw), true
}

func textOf(raw []byte) string {
	var s string
	if raw[0] == '"' && gojson.Unmarshal(raw, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if stdjson.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// Int reads member name as a BIGINT (a JSON number, or a string holding
// one); ok is false when it is absent or null.
func (o Object) Int(name string) (n int64, ok bool, err error) {
	s, ok := o.String(name)
	if !ok {
		return 0, false, nil
	}
	n, err = strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%q: want an integer, got %q", name, s)
	}
	return n, true, nil
}

// Millis reads member name, epoch milliseconds, as a TIMESTAMP_LTZ(3)
// value; nil when absent or null. scale multiplies the number first (1000
// for maxwell's seconds).
func (o Object) Millis(name string, scale int64) (any, error) {
	n, ok, err := o.Int(name)
	if err != nil || !ok {
		return nil, err
	}
	return time.UnixMilli(n * scale).UTC(), nil
}

// Strings reads member name as an ARRAY<STRING>; nil when absent or null.
func (o Object) Strings(name string) (any, error) {
	raw, ok := o[name]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var list []gojson.RawMessage
	if err := gojson.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("%q: want an array: %w", name, err)
	}
	out := make([]any, len(list))
	for i, e := range list {
		if !isNull(e) {
			out[i] = textOf(e)
		}
	}
	return out, nil
}

// StringMap reads member name as a MAP<STRING, STRING> (values as Flink's
// json format reads a STRING); nil when absent or null.
func (o Object) StringMap(name string) (map[string]any, error) {
	raw, ok := o[name]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var m Object
	if err := gojson.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%q: want an object: %w", name, err)
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if isNull(v) {
			out[k] = nil
		} else {
			out[k] = textOf(v)
		}
	}
	return out, nil
}

// KeysAnywhere returns every object key found, at any depth, in member
// name: a field is in it when Jackson's JsonNode.findValue(field) != null,
// which Flink's canal-json and maxwell-json use to tell a field an update
// changed (it is in "old") from one it left alone.
func (o Object) KeysAnywhere(name string) map[string]bool {
	keys := map[string]bool{}
	raw, ok := o[name]
	if !ok {
		return keys
	}
	var v any
	if gojson.Unmarshal(raw, &v) != nil {
		return keys
	}
	collectKeys(v, keys)
	return keys
}

func collectKeys(v any, keys map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			keys[k] = true
			collectKeys(e, keys)
		}
	case []any:
		for _, e := range x {
			collectKeys(e, keys)
		}
	}
}

// Member is one member of an envelope being written.
type Member struct {
	Name string
	// Row is written with the json format when Raw is nil; a nil Row is
	// JSON null.
	Row map[string]any
	// Raw is written as is (already JSON), when not nil.
	Raw []byte
}

// Write builds an envelope object of members, in order. A member whose
// value is null is left out when IgnoreNullFields is set, as Flink's
// serializer does for the whole envelope row.
func (j *JSON) Write(members ...Member) ([]byte, error) {
	buf := make([]byte, 0, 256)
	buf = append(buf, '{')
	first := true
	for _, m := range members {
		var val []byte
		switch {
		case m.Raw != nil:
			val = m.Raw
		case m.Row != nil:
			b, err := j.Rows.Encode(m.Row)
			if err != nil {
				return nil, fmt.Errorf("format %s: %q: %w", j.Name, m.Name, err)
			}
			val = b
		default:
			if j.IgnoreNullFields {
				continue
			}
			val = []byte("null")
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = strconv.AppendQuote(buf, m.Name)
		buf = append(buf, ':')
		buf = append(buf, val...)
	}
	return append(buf, '}'), nil
}

// Quoted returns s as a JSON string, for Member.Raw.
func Quoted(s string) []byte {
	b, _ := gojson.Marshal(s)
	return b
}
