// Package rowgen (for tests) makes random rows of a ROW type for the formats' property
// tests: the Go values decode returns, the other forms that schema.Coerce
// accepts (numbers as json.Number or strings, times in other locations or
// as text, ...), and now and then a NULL or a value of the wrong type, so
// that encoders meet their error paths too.
package rowgen

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/schema"
)

// Gen makes values; Invalid is the chance of a value that Coerce refuses
// (a NULL in a NOT NULL type, a wrong Go type, a number out of range).
type Gen struct {
	R       *rand.Rand
	Invalid float64
	// Canonical only: values of the row's own Go types (no alternative
	// forms), for formats that check against a library given those.
	Canonical bool
}

// New returns a generator seeded with seed.
func New(seed uint64) *Gen {
	return &Gen{R: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), Invalid: 0.01}
}

// Row makes a row of the ROW type t.
func (g *Gen) Row(t *schema.Type) map[string]any {
	m := make(map[string]any, len(t.Fields))
	for _, f := range t.Fields {
		if g.R.IntN(20) == 0 && !f.Type.NotNull {
			continue // absent: NULL
		}
		m[f.Name] = g.Value(f.Type, 0)
	}
	if g.R.IntN(10) == 0 {
		m["not_a_column"] = "extra"
	}
	return m
}

func (g *Gen) chance(p float64) bool { return g.R.Float64() < p }

var words = []string{"", "a", "héllo", "x,y", `q"uote`, "semi;colon", "line\nbreak", "#hash", "tab\t", "\x00\x01", "\xff\xfe", "null", "NULL", `back\slash`, "日本語", "  spaced  "}

func (g *Gen) str() string {
	if g.chance(0.5) {
		return words[g.R.IntN(len(words))]
	}
	n := g.R.IntN(30)
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(32 + g.R.IntN(95))
	}
	return string(b)
}

func (g *Gen) timeValue() time.Time {
	var sec int64
	switch g.R.IntN(5) {
	case 0:
		sec = g.R.Int64N(4102444800) // 1970..2100
	case 1:
		sec = -g.R.Int64N(62135596800) // back to year 1
	case 2:
		sec = g.R.Int64N(253402300799) // to 9999
	default:
		sec = 1733141594 + g.R.Int64N(1000)
	}
	ns := int64(0)
	switch g.R.IntN(4) {
	case 0:
		ns = g.R.Int64N(1e9)
	case 1:
		ns = g.R.Int64N(1000) * 1e6
	}
	ts := time.Unix(sec, ns).UTC()
	if !g.Canonical && g.chance(0.2) {
		ts = ts.In(time.FixedZone("X", (g.R.IntN(25)-12)*3600))
	}
	return ts
}

// Value makes a value of type t.
func (g *Gen) Value(t *schema.Type, depth int) any {
	if g.chance(g.Invalid) {
		switch g.R.IntN(3) {
		case 0:
			return nil // maybe NOT NULL
		case 1:
			return struct{ X int }{1}
		default:
			if t.Kind == schema.KindTinyint || t.Kind == schema.KindSmallint || t.Kind == schema.KindInt {
				return int64(math.MaxInt32) + 1
			}
			return map[bool]int{}
		}
	}
	if !t.NotNull && g.chance(0.1) {
		return nil
	}
	alt := !g.Canonical && g.chance(0.25)
	switch t.Kind {
	case schema.KindChar, schema.KindVarchar:
		s := g.str()
		if alt {
			return []byte(s)
		}
		return s
	case schema.KindBoolean:
		b := g.chance(0.5)
		if alt {
			return strconv.FormatBool(b)
		}
		return b
	case schema.KindTinyint, schema.KindSmallint, schema.KindInt, schema.KindBigint:
		var n int64
		switch t.Kind {
		case schema.KindTinyint:
			n = int64(int8(g.R.Uint32()))
		case schema.KindSmallint:
			n = int64(int16(g.R.Uint32()))
		case schema.KindInt:
			n = int64(int32(g.R.Uint32()))
		default:
			n = int64(g.R.Uint64()) >> g.R.IntN(64)
		}
		if g.chance(0.2) {
			n = int64(g.R.IntN(3) - 1)
		}
		if alt {
			switch g.R.IntN(3) {
			case 0:
				return json.Number(strconv.FormatInt(n, 10))
			case 1:
				return int(n)
			default:
				return strconv.FormatInt(n, 10)
			}
		}
		return n
	case schema.KindFloat, schema.KindDouble:
		var x float64
		switch g.R.IntN(8) {
		case 0:
			x = math.NaN()
		case 1:
			x = math.Inf(1 - 2*g.R.IntN(2))
		case 2:
			x = 0
		case 3:
			x = math.Float64frombits(g.R.Uint64())
			if math.IsNaN(x) {
				x = 1
			}
		default:
			x = (g.R.Float64() - 0.5) * math.Pow(10, float64(g.R.IntN(20)-5))
		}
		if t.Kind == schema.KindFloat && (g.Canonical || g.chance(0.5)) {
			x = float64(float32(x))
		}
		if alt && !math.IsNaN(x) && !math.IsInf(x, 0) {
			return json.Number(strconv.FormatFloat(x, 'g', -1, 64))
		}
		return x
	case schema.KindDecimal:
		digits := 1 + g.R.IntN(t.Precision)
		var b strings.Builder
		if g.chance(0.3) {
			b.WriteByte('-')
		}
		intDigits := digits - t.Scale
		if intDigits <= 0 {
			b.WriteByte('0')
		}
		for i := 0; i < intDigits; i++ {
			c := byte('0' + g.R.IntN(10))
			if i == 0 && c == '0' && intDigits > 1 {
				c = '1'
			}
			b.WriteByte(c)
		}
		if t.Scale > 0 {
			b.WriteByte('.')
			for i := 0; i < t.Scale; i++ {
				b.WriteByte(byte('0' + g.R.IntN(10)))
			}
		}
		d, err := schema.ParseDecimal(b.String(), t.Precision, t.Scale)
		if err != nil {
			return json.Number("0")
		}
		if alt {
			switch g.R.IntN(3) {
			case 0:
				return string(d)
			case 1:
				return json.Number(strings.TrimRight(string(d), "0")) // fewer fraction digits
			default:
				f, _ := strconv.ParseFloat(string(d), 64)
				return f
			}
		}
		return d
	case schema.KindDate:
		ts := g.timeValue()
		if alt {
			return ts // any time of day, any zone
		}
		return time.Date(ts.Year(), ts.Month(), ts.Day(), 0, 0, 0, 0, time.UTC)
	case schema.KindTime:
		ts := schema.TruncateTime(g.timeValue(), t.Precision)
		if alt {
			return schema.FormatTime(ts)
		}
		return ts
	case schema.KindTimestamp, schema.KindTimestampLTZ:
		ts := g.timeValue()
		if alt {
			if g.chance(0.5) {
				return ts.Format(time.RFC3339Nano)
			}
			return ts
		}
		return schema.TruncateTimestamp(ts, t.Precision)
	case schema.KindBinary, schema.KindVarbinary:
		b := []byte(g.str())
		if alt {
			return base64.StdEncoding.EncodeToString(b)
		}
		return b
	case schema.KindArray:
		n := g.R.IntN(5)
		if depth > 3 {
			n = 0
		}
		list := make([]any, n)
		for i := range list {
			list[i] = g.Value(t.Elem, depth+1)
		}
		return list
	case schema.KindMap:
		n := g.R.IntN(4)
		if depth > 3 {
			n = 0
		}
		m := make(map[string]any, n)
		for i := 0; i < n; i++ {
			m[g.str()] = g.Value(t.Value, depth+1)
		}
		return m
	case schema.KindRow:
		m := make(map[string]any, len(t.Fields))
		for _, f := range t.Fields {
			m[f.Name] = g.Value(f.Type, depth+1)
		}
		return m
	}
	return nil
}
