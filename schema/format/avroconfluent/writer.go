package avroconfluent

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/connectd/connectd/schema"
)

// node is one position of a writer schema, with named references resolved,
// so that goavro's native values can be read against the table's types.
type node struct {
	typ      string // null, boolean, int, long, float, double, bytes, string, record, enum, array, map, fixed, union
	logical  string
	name     string // full name of a record, enum or fixed
	fields   []field
	items    *node // array
	values   *node // map
	branches []*node
	scale    int
	key      string // unionKey, set once parsed (setKeys)
}

type field struct {
	name string
	typ  *node
}

// unionKey is goavro's key of a union member in native values.
func (n *node) unionKey() string {
	switch n.typ {
	case "record", "enum", "fixed":
		return n.name
	}
	if n.logical != "" && goavroLogical(n) {
		return n.typ + "." + n.logical
	}
	return n.typ
}

// goavroLogical reports whether goavro decodes the logical type of n (and
// names the union member type.logical).
func goavroLogical(n *node) bool {
	switch n.typ + "." + n.logical {
	case "int.date", "int.time-millis", "long.time-micros", "long.timestamp-millis", "long.timestamp-micros",
		"bytes.decimal", "fixed.decimal", "string.uuid":
		return true
	}
	return false
}

// parseWriter parses a writer schema (already accepted by goavro).
func parseWriter(text string) (*node, error) {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, err
	}
	p := &writerParser{named: map[string]*node{}}
	n, err := p.parse(v, "")
	if err != nil {
		return nil, err
	}
	n.setKeys(map[*node]bool{})
	return n, nil
}

// setKeys sets key on n and the nodes under it (named types may recur).
func (n *node) setKeys(seen map[*node]bool) {
	if n == nil || seen[n] {
		return
	}
	seen[n] = true
	n.key = n.unionKey()
	for _, f := range n.fields {
		f.typ.setKeys(seen)
	}
	n.items.setKeys(seen)
	n.values.setKeys(seen)
	for _, b := range n.branches {
		b.setKeys(seen)
	}
}

type writerParser struct{ named map[string]*node }

func fullName(name, namespace string) string {
	if strings.Contains(name, ".") || namespace == "" {
		return name
	}
	return namespace + "." + name
}

func (p *writerParser) parse(v any, ns string) (*node, error) {
	switch x := v.(type) {
	case string:
		switch x {
		case "null", "boolean", "int", "long", "float", "double", "bytes", "string":
			return &node{typ: x}, nil
		}
		if n, ok := p.named[fullName(x, ns)]; ok {
			return n, nil
		}
		if n, ok := p.named[x]; ok {
			return n, nil
		}
		return nil, fmt.Errorf("unknown type %q", x)
	case []any:
		n := &node{typ: "union"}
		for _, b := range x {
			bn, err := p.parse(b, ns)
			if err != nil {
				return nil, err
			}
			n.branches = append(n.branches, bn)
		}
		return n, nil
	case map[string]any:
		t, _ := x["type"].(string)
		lt, _ := x["logicalType"].(string)
		switch t {
		case "record", "error", "enum", "fixed":
			name, _ := x["name"].(string)
			if nsv, ok := x["namespace"].(string); ok && !strings.Contains(name, ".") {
				ns = nsv
			}
			full := fullName(name, ns)
			if i := strings.LastIndexByte(full, '.'); i >= 0 {
				ns = full[:i]
			}
			n := &node{typ: t, name: full, logical: lt}
			if t == "error" {
				n.typ = "record"
			}
			if s, ok := x["scale"].(float64); ok {
				n.scale = int(s)
			}
			p.named[full] = n
			if n.typ == "record" {
				fields, _ := x["fields"].([]any)
				for _, f := range fields {
					fm, _ := f.(map[string]any)
					fname, _ := fm["name"].(string)
					ft, err := p.parse(fm["type"], ns)
					if err != nil {
						return nil, fmt.Errorf("field %s: %w", fname, err)
					}
					n.fields = append(n.fields, field{name: fname, typ: ft})
				}
			}
			return n, nil
		case "array":
			items, err := p.parse(x["items"], ns)
			if err != nil {
				return nil, err
			}
			return &node{typ: t, items: items}, nil
		case "map":
			values, err := p.parse(x["values"], ns)
			if err != nil {
				return nil, err
			}
			return &node{typ: t, values: values}, nil
		}
		if t == "" { // {"type": {...}}
			return p.parse(x["type"], ns)
		}
		n, err := p.parse(t, ns)
		if err != nil {
			return nil, err
		}
		if lt == "" {
			return n, nil
		}
		c := *n
		c.logical = lt
		if s, ok := x["scale"].(float64); ok {
			c.scale = int(s)
		}
		return &c, nil
	}
	return nil, fmt.Errorf("unexpected schema %T", v)
}

// describe names a writer type in errors.
func (n *node) describe() string {
	switch {
	case n.typ == "union":
		names := make([]string, len(n.branches))
		for i, b := range n.branches {
			names[i] = b.describe()
		}
		return "[" + strings.Join(names, ", ") + "]"
	case n.name != "":
		return n.typ + " " + n.name
	case n.logical != "":
		return n.typ + " (" + n.logical + ")"
	}
	return n.typ
}

// toRow converts goavro's native value v, written with writer type n, to
// the value rows of table type t hold. Conversions are Avro's schema
// resolution rules (int -> long, float, double; long -> float, double;
// float -> double; string <-> bytes; enum -> string), narrowed to the
// table's integer range, and logical types to the table's time and decimal
// types.
func toRow(t *schema.Type, n *node, v any, path string) (any, error) {
	if n.typ == "union" {
		if v == nil {
			return schema.Coerce(t, nil, "field "+path)
		}
		u, ok := v.(map[string]any)
		if !ok || len(u) != 1 {
			return nil, fmt.Errorf("field %s: malformed union value %T", path, v)
		}
		for _, b := range n.branches { // a lookup per branch costs less than ranging over u
			if inner, ok := u[b.key]; ok {
				return toRow(t, b, inner, path)
			}
		}
		for k := range u {
			return nil, fmt.Errorf("field %s: union member %q is not in the writer schema", path, k)
		}
	}
	if n.typ == "null" || v == nil {
		return schema.Coerce(t, nil, "field "+path)
	}
	incompatible := func() error {
		return fmt.Errorf("field %s: the writer schema's %s cannot be read as %s", path, n.describe(), t)
	}
	switch t.Kind {
	case schema.KindBoolean:
		if _, ok := v.(bool); ok && n.typ == "boolean" {
			return v, nil
		}
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt, schema.KindBigint:
		var i int64
		switch x := v.(type) {
		case int32:
			i = int64(x)
		case int64:
			i = x
		default:
			return nil, incompatible()
		}
		if n.logical != "" && goavroLogical(n) {
			return nil, incompatible()
		}
		if err := schema.CheckIntRange(t.Kind, i); err != nil {
			return nil, fmt.Errorf("field %s: %w", path, err)
		}
		return i, nil
	case schema.KindFloat, schema.KindDouble:
		var f float64
		switch x := v.(type) {
		case int32:
			f = float64(x)
		case int64:
			f = float64(x)
		case float32:
			f = float64(x)
		case float64:
			if t.Kind == schema.KindFloat {
				return nil, incompatible() // Avro does not narrow double to float
			}
			f = x
		default:
			return nil, incompatible()
		}
		if n.logical != "" && goavroLogical(n) {
			return nil, incompatible()
		}
		return f, nil
	case schema.KindChar, schema.KindVarchar:
		switch x := v.(type) {
		case string:
			return v, nil // as is: boxing x again would allocate
		case []byte:
			if n.typ == "bytes" && n.logical == "" {
				return string(x), nil
			}
		}
	case schema.KindBinary, schema.KindVarbinary:
		switch x := v.(type) {
		case []byte:
			if n.logical == "" {
				return append([]byte{}, x...), nil
			}
		case string:
			if n.typ == "string" && n.logical == "" {
				return []byte(x), nil
			}
		}
	case schema.KindDecimal:
		if r, ok := v.(*big.Rat); ok {
			if n.scale > t.Scale {
				return nil, fmt.Errorf("field %s: the writer's decimal scale %d is larger than %s's", path, n.scale, t)
			}
			d, err := schema.ParseDecimal(r.FloatString(t.Scale), t.Precision, t.Scale)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", path, err)
			}
			return d, nil
		}
	case schema.KindDate:
		if d, ok := v.(time.Time); ok && n.logical == "date" {
			return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC), nil
		}
	case schema.KindTime:
		if d, ok := v.(time.Duration); ok {
			return schema.TruncateTime(time.Unix(0, 0).UTC().Add(d), t.Precision), nil
		}
	case schema.KindTimestamp, schema.KindTimestampLTZ:
		if ts, ok := v.(time.Time); ok && strings.HasPrefix(n.logical, "timestamp-") {
			return schema.TruncateTimestamp(ts, t.Precision), nil
		}
	case schema.KindArray:
		list, ok := v.([]any)
		if !ok || n.typ != "array" {
			return nil, incompatible()
		}
		// goavro's list and maps are this record's alone: converted in
		// place. An element's path is built only for an error, by
		// converting it again.
		for i, e := range list {
			var err error
			if list[i], err = toRow(t.Elem, n.items, e, path); err != nil {
				_, err = toRow(t.Elem, n.items, e, fmt.Sprintf("%s[%d]", path, i))
				return nil, err
			}
		}
		return list, nil
	case schema.KindMap:
		m, ok := v.(map[string]any)
		if !ok || n.typ != "map" {
			return nil, incompatible()
		}
		if !t.Key.IsString() {
			return nil, fmt.Errorf("field %s: Avro map keys are strings; %s has %s keys", path, t, t.Key)
		}
		for k, e := range m {
			var err error
			if m[k], err = toRow(t.Value, n.values, e, path); err != nil {
				_, err = toRow(t.Value, n.values, e, fmt.Sprintf("%s[%q]", path, k))
				return nil, err
			}
		}
		return m, nil
	case schema.KindRow:
		m, ok := v.(map[string]any)
		if !ok || n.typ != "record" {
			return nil, incompatible()
		}
		return recordToRow(t, n, m, path)
	}
	return nil, incompatible()
}

// recordToRow reads the table's fields by name from a record; a field that
// the writer does not have is NULL (an error when NOT NULL), as Avro's
// resolution with a null default.
//
// goavro's map m is this record's alone: it becomes the row, converted in
// place, without the writer's fields that the table does not have.
func recordToRow(t *schema.Type, n *node, m map[string]any, path string) (map[string]any, error) {
	out := m
	for _, f := range t.Fields {
		fpath := f.Name
		if path != "" {
			fpath = path + "." + f.Name
		}
		var wf *node
		for i := range n.fields {
			if n.fields[i].name == f.Name {
				wf = n.fields[i].typ
				break
			}
		}
		if wf == nil {
			if f.Type.NotNull {
				return nil, fmt.Errorf("field %s: the writer schema has no such field and the column is NOT NULL", fpath)
			}
			out[f.Name] = nil
			continue
		}
		v, err := toRow(f.Type, wf, m[f.Name], fpath)
		if err != nil {
			return nil, err
		}
		out[f.Name] = v
	}
	if len(out) != len(t.Fields) { // every field is in out: extra keys are the writer's
		for k := range out {
			if !slices.ContainsFunc(t.Fields, func(f schema.Field) bool { return f.Name == k }) {
				delete(out, k)
			}
		}
	}
	return out, nil
}
