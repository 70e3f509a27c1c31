package avro

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/linkedin/goavro/v2"

	"github.com/connectd/connectd/schema"
)

// Encode writes Avro binary from the typed row directly, in the schema that
// convert derives (goavro is kept for parsing that schema and for decoding):
// going through goavro's native values would need a map per non-NULL value
// of a nullable field (goavro.Union) and a *big.Rat per decimal. The bytes
// are goavro's for the same row (encode_test.go compares them on random
// rows), but for the order of map entries: sorted by key here, Go's map
// order in goavro.
//
//	null / union      ["null", T]: index 0 (NULL) or 1, zig-zag varint
//	int, long         zig-zag varint
//	float, double     IEEE 754 little endian, 4 and 8 bytes
//	string, bytes     length (long), then the bytes
//	decimal           bytes: the unscaled value, two's complement big endian, fewest bytes
//	date              int: days since 1970-01-01
//	time-millis       int: milliseconds since midnight
//	timestamp-millis  long: milliseconds since the epoch
//	array, map        blocks of at most goavro.MaxBlockCount items: count (long), items; then 0
//	record            the fields in order

// Encode writes a row as one Avro binary record (no header). The row may
// hold any value that schema.Coerce accepts.
func (f *Format) Encode(row map[string]any) ([]byte, error) {
	return f.AppendEncode(make([]byte, 0, 256), row)
}

// AppendEncode appends the Avro binary record of row (no header) to dst.
func (f *Format) AppendEncode(dst []byte, row map[string]any) ([]byte, error) {
	buf := dst
	for _, fld := range f.row.Fields {
		var err error
		if buf, err = appendValue(buf, fld.Type, row[fld.Name], fld.Name); err != nil {
			return nil, fmt.Errorf("format avro: field %w", err)
		}
	}
	return buf, nil
}

// appendValue writes v, a value of type t (with its union index when t is
// nullable). path names v in errors; the paths of elements, entries and
// fields are built only for an error, by writing the value again with its
// path.
func appendValue(buf []byte, t *schema.Type, v any, path string) ([]byte, error) {
	if v == nil {
		if t.NotNull {
			return nil, fmt.Errorf("%s: %w", path, schema.ErrNotNull)
		}
		return append(buf, 0), nil // union index 0: null
	}
	if !t.NotNull {
		buf = append(buf, 2) // union index 1, zig-zag
	}
	switch t.Kind {
	case schema.KindBoolean:
		if b, ok := v.(bool); ok {
			return appendBool(buf, b), nil
		}
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt, schema.KindBigint:
		if n, ok := v.(int64); ok && schema.IntInRange(t.Kind, n) {
			return appendLong(buf, n), nil
		}
	case schema.KindFloat, schema.KindDouble:
		if x, ok := v.(float64); ok {
			return appendFloat(buf, t.Kind, x), nil
		}
	case schema.KindChar, schema.KindVarchar:
		if s, ok := v.(string); ok {
			return append(appendLong(buf, int64(len(s))), s...), nil
		}
	case schema.KindBinary, schema.KindVarbinary:
		if b, ok := v.([]byte); ok {
			return append(appendLong(buf, int64(len(b))), b...), nil
		}
	case schema.KindArray:
		if list, ok := v.([]any); ok {
			return appendArray(buf, t, list, path)
		}
	case schema.KindMap:
		if m, ok := v.(map[string]any); ok {
			return appendMap(buf, t, m, path)
		}
	case schema.KindRow:
		if m, ok := v.(map[string]any); ok {
			return appendRecord(buf, t, m, path)
		}
	}
	// Other Go types, and the kinds whose row values Coerce checks
	// (DECIMAL, DATE, TIME, TIMESTAMP): Coerce returns a value of the row's
	// type, without allocating when v already is one.
	c, err := schema.Coerce(t, v, path)
	if err != nil {
		return nil, err
	}
	switch t.Kind {
	case schema.KindBoolean:
		return appendBool(buf, c.(bool)), nil
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt, schema.KindBigint:
		return appendLong(buf, c.(int64)), nil
	case schema.KindFloat, schema.KindDouble:
		return appendFloat(buf, t.Kind, c.(float64)), nil
	case schema.KindChar, schema.KindVarchar:
		s := c.(string)
		return append(appendLong(buf, int64(len(s))), s...), nil
	case schema.KindBinary, schema.KindVarbinary:
		b := c.([]byte)
		return append(appendLong(buf, int64(len(b))), b...), nil
	case schema.KindDecimal:
		return appendDecimal(buf, string(c.(json.Number)), path)
	case schema.KindDate:
		days := c.(time.Time).Unix() / 86400 // midnight UTC: exact
		if days < math.MinInt32 || days > math.MaxInt32 {
			return nil, fmt.Errorf("%s: date %s is out of the range of Avro's date (int days)", path, schema.FormatDate(c.(time.Time)))
		}
		return appendLong(buf, days), nil
	case schema.KindTime:
		tm := c.(time.Time)
		ms := int64(tm.Hour())*3600000 + int64(tm.Minute())*60000 + int64(tm.Second())*1000 + int64(tm.Nanosecond()/1e6)
		return appendLong(buf, ms), nil
	case schema.KindTimestamp:
		ts := c.(time.Time)
		// goavro's arithmetic: seconds and milliseconds, not UnixNano,
		// which overflows past 2262.
		return appendLong(buf, ts.Unix()*1e3+int64(ts.Nanosecond()/1e6)), nil
	case schema.KindArray:
		return appendArray(buf, t, c.([]any), path)
	case schema.KindMap:
		return appendMap(buf, t, c.(map[string]any), path)
	case schema.KindRow:
		return appendRecord(buf, t, c.(map[string]any), path)
	}
	return nil, fmt.Errorf("%s: type %s has no Avro encoding", path, t)
}

func appendBool(buf []byte, b bool) []byte {
	if b {
		return append(buf, 1)
	}
	return append(buf, 0)
}

// appendLong writes n zig-zag encoded as a varint (Avro's int and long).
func appendLong(buf []byte, n int64) []byte {
	u := uint64(n<<1) ^ uint64(n>>63)
	for u >= 0x80 {
		buf = append(buf, byte(u)|0x80)
		u >>= 7
	}
	return append(buf, byte(u))
}

func appendFloat(buf []byte, k schema.Kind, x float64) []byte {
	if k == schema.KindFloat {
		return binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(x)))
	}
	return binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
}

// appendDecimal writes a DECIMAL row value (plain notation with exactly the
// type's scale digits) as Avro's decimal bytes: the unscaled value in two's
// complement, big endian, in the fewest bytes (goavro's form: 0 is one zero
// byte).
func appendDecimal(buf []byte, d, path string) ([]byte, error) {
	neg := strings.HasPrefix(d, "-")
	digits := strings.TrimPrefix(d, "-")
	nd := len(digits)
	if strings.IndexByte(digits, '.') >= 0 {
		nd--
	}
	if nd <= 18 { // fits an int64
		var n int64
		for i := 0; i < len(digits); i++ {
			c := digits[i]
			if c == '.' {
				continue
			}
			if c < '0' || c > '9' {
				return nil, fmt.Errorf("%s: invalid decimal %q", path, d)
			}
			n = n*10 + int64(c-'0')
		}
		if neg {
			n = -n
		}
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(n))
		i := 0
		if n >= 0 {
			for i < 7 && b[i] == 0 && b[i+1]&0x80 == 0 {
				i++
			}
		} else {
			for i < 7 && b[i] == 0xff && b[i+1]&0x80 != 0 {
				i++
			}
		}
		buf = appendLong(buf, int64(8-i))
		return append(buf, b[i:]...), nil
	}
	n, ok := new(big.Int).SetString(strings.Replace(d, ".", "", 1), 10)
	if !ok {
		return nil, fmt.Errorf("%s: invalid decimal %q", path, d)
	}
	b := signedBytes(n)
	buf = appendLong(buf, int64(len(b)))
	return append(buf, b...), nil
}

var one = big.NewInt(1)

// signedBytes is n in two's complement, big endian, fewest bytes (goavro's
// toSignedBytes).
func signedBytes(n *big.Int) []byte {
	switch n.Sign() {
	case 0:
		return []byte{0}
	case 1:
		b := n.Bytes()
		if b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	length := uint(n.BitLen()/8+1) * 8
	b := new(big.Int).Add(n, new(big.Int).Lsh(one, length)).Bytes()
	if len(b) >= 2 && b[0] == 0xff && b[1]&0x80 != 0 {
		b = b[1:]
	}
	return b
}

// appendArray writes an array in blocks of at most goavro.MaxBlockCount
// items, as goavro does, then the 0 count.
func appendArray(buf []byte, t *schema.Type, list []any, path string) ([]byte, error) {
	for start := 0; start < len(list); {
		n := min(len(list)-start, int(goavro.MaxBlockCount))
		buf = appendLong(buf, int64(n))
		for i := start; i < start+n; i++ {
			var err error
			if buf, err = appendValue(buf, t.Elem, list[i], path); err != nil {
				_, err = appendValue(nil, t.Elem, list[i], schema.ElementPath(path, i))
				return nil, err
			}
		}
		start += n
	}
	return append(buf, 0), nil
}

// appendMap writes a map's entries sorted by key, in blocks as arrays.
func appendMap(buf []byte, t *schema.Type, m map[string]any, path string) ([]byte, error) {
	if len(m) == 0 {
		return append(buf, 0), nil
	}
	var keys []string
	if len(m) == 1 {
		for k := range m {
			keys = []string{k}
		}
	} else {
		keys = schema.SortedMapKeys(m)
	}
	for start := 0; start < len(keys); {
		n := min(len(keys)-start, int(goavro.MaxBlockCount))
		buf = appendLong(buf, int64(n))
		for _, k := range keys[start : start+n] {
			buf = append(appendLong(buf, int64(len(k))), k...)
			var err error
			if buf, err = appendValue(buf, t.Value, m[k], path); err != nil {
				_, err = appendValue(nil, t.Value, m[k], path+"."+k)
				return nil, err
			}
		}
		start += n
	}
	return append(buf, 0), nil
}

// appendRecord writes a ROW's fields in order; absent fields are NULL.
func appendRecord(buf []byte, t *schema.Type, m map[string]any, path string) ([]byte, error) {
	for _, f := range t.Fields {
		var err error
		if buf, err = appendValue(buf, f.Type, m[f.Name], path); err != nil {
			_, err = appendValue(nil, f.Type, m[f.Name], schema.FieldPath(path, f.Name))
			return nil, err
		}
	}
	return buf, nil
}
