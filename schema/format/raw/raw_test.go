package raw_test

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/raw"
)

func rowType(t testing.TB, cols string) *schema.Type {
	t.Helper()
	tables, err := schema.ParseDDL("CREATE TABLE t (" + cols + ") WITH ('format' = 'raw')")
	if err != nil {
		t.Fatal(err)
	}
	return tables[0].PhysicalRowType()
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cols  string
		value any
	}{
		{"line STRING", "héllo, wörld\n"},
		{"line STRING", ""},
		{"line VARCHAR(3)", "abc"},
		{"payload BYTES", []byte{0, 0xff, 'x'}},
		{"payload BINARY(2)", []byte{}},
	} {
		f, err := raw.New(rowType(t, tc.cols), raw.Options{})
		if err != nil {
			t.Fatal(err)
		}
		name := strings.Fields(tc.cols)[0]
		data, err := f.Encode(map[string]any{name: tc.value})
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		if !schema.Equal(got, map[string]any{name: tc.value}) {
			t.Errorf("%s: got %#v", tc.cols, got)
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	if _, err := raw.New(rowType(t, "a STRING, b STRING"), raw.Options{}); err == nil || !strings.Contains(err.Error(), "exactly one physical column, got 2") {
		t.Errorf("two columns: %v", err)
	}
	if _, err := raw.New(rowType(t, "n DECIMAL(10, 2)"), raw.Options{}); err == nil || !strings.Contains(err.Error(), "column n: type DECIMAL(10, 2) is not supported") {
		t.Errorf("DECIMAL: %v", err)
	}
	if _, err := raw.ParseOptions(map[string]string{"charset": "EBCDIC-XYZ"}); err == nil || !strings.Contains(err.Error(), `'charset' = 'EBCDIC-XYZ': unsupported charset "EBCDIC-XYZ"`) {
		t.Errorf("charset: %v", err)
	}
	if _, err := raw.ParseOptions(map[string]string{"endianness": "middle-endian"}); err == nil || !strings.Contains(err.Error(), "'endianness' = 'middle-endian': want one of 'big-endian', 'little-endian'") {
		t.Errorf("endianness: %v", err)
	}
	f, _ := raw.New(rowType(t, "s STRING"), raw.Options{})
	if _, err := f.Decode([]byte{0xff}); err == nil || !strings.Contains(err.Error(), "column s: the record is not valid UTF-8") {
		t.Errorf("invalid UTF-8: %v", err)
	}
	if data, err := f.Encode(map[string]any{"s": nil}); err != nil || len(data) != 0 {
		t.Errorf("NULL: %q, %v", data, err)
	}
}

// raw.charset and raw.endianness, and the numeric columns of Flink's raw
// format: the expected bytes are what Java's String.getBytes and Flink's
// RawFormatSerializationSchema (MemorySegment put*BigEndian /
// LittleEndian) write.
func TestCharsetsAndNumbers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cols  string
		opts  map[string]string
		value any
		bytes string // hex
		back  any    // the decoded value, when it is not value
	}{
		{"s STRING", map[string]string{"charset": "UTF-16"}, "hé", "feff006800e9", nil},
		{"s STRING", map[string]string{"charset": "UTF-16"}, "", "", nil}, // no BOM without text, as Java
		{"s STRING", map[string]string{"charset": "utf-16le"}, "hé", "6800e900", nil},
		{"s STRING", map[string]string{"charset": "ISO-8859-1"}, "hé", "68e9", nil},
		{"s STRING", map[string]string{"charset": "latin1"}, "h€", "683f", "h?"}, // unmappable: '?', as Java
		{"s STRING", map[string]string{"charset": "Cp1252"}, "h€", "6880", nil},
		{"s STRING", map[string]string{"charset": "US-ASCII"}, "ok", "6f6b", nil},
		{"s STRING", map[string]string{"charset": "UTF-8"}, "hé", "68c3a9", nil},
		{"b BOOLEAN", nil, true, "01", nil},
		{"b BOOLEAN", nil, false, "00", nil},
		{"n TINYINT", nil, int64(-1), "ff", nil},
		{"n SMALLINT", nil, int64(258), "0102", nil},
		{"n SMALLINT", map[string]string{"endianness": "little-endian"}, int64(258), "0201", nil},
		{"n INT", nil, int64(-2), "fffffffe", nil},
		{"n INT", map[string]string{"endianness": "LITTLE-ENDIAN"}, int64(1), "01000000", nil},
		{"n BIGINT", nil, int64(1), "0000000000000001", nil},
		{"n BIGINT", map[string]string{"endianness": "little-endian"}, int64(-9223372036854775808), "0000000000000080", nil},
		{"x FLOAT", nil, 1.5, "3fc00000", nil},
		{"x DOUBLE", map[string]string{"endianness": "big-endian"}, -2.0, "c000000000000000", nil},
		{"x DOUBLE", map[string]string{"endianness": "little-endian"}, 1.0, "000000000000f03f", nil},
	} {
		o, err := raw.ParseOptions(tc.opts)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.cols, tc.opts, err)
		}
		f, err := raw.New(rowType(t, tc.cols), o)
		if err != nil {
			t.Fatalf("%s: %v", tc.cols, err)
		}
		name := strings.Fields(tc.cols)[0]
		data, err := f.Encode(map[string]any{name: tc.value})
		if err != nil || hex.EncodeToString(data) != tc.bytes {
			t.Errorf("%s %v: encode %v = %x, %v; want %s", tc.cols, tc.opts, tc.value, data, err, tc.bytes)
			continue
		}
		want := tc.value
		if tc.back != nil {
			want = tc.back
		}
		if got, err := f.Decode(data); err != nil || !schema.Equal(got, map[string]any{name: want}) {
			t.Errorf("%s %v: decode %x = %#v, %v; want %v", tc.cols, tc.opts, data, got, err, want)
		}
	}
	// A numeric record of another length, and a BOOLEAN byte other than 0 or 1.
	f, _ := raw.New(rowType(t, "n INT"), raw.Options{})
	if _, err := f.Decode([]byte{1, 2}); err == nil || !strings.Contains(err.Error(), "column n: a INT is 4 bytes, the record has 2") {
		t.Errorf("short INT: %v", err)
	}
	b, _ := raw.New(rowType(t, "b BOOLEAN"), raw.Options{})
	if got, err := b.Decode([]byte{2}); err != nil || got["b"] != true {
		t.Errorf("BOOLEAN 0x02: %v, %v", got, err)
	}
	// A value Coerce turns into the column's type: a string for an INT.
	if data, err := f.Encode(map[string]any{"n": "7"}); err != nil || hex.EncodeToString(data) != "00000007" {
		t.Errorf("INT from a string: %x, %v", data, err)
	}
}

// NULL is a record without a value (EncodesNull, DecodeNull), as in Flink's
// raw format; a string for a BYTES column is base64, as schema.Coerce reads
// it.
func TestNullValueAndBase64(t *testing.T) {
	t.Parallel()
	f, err := raw.New(rowType(t, "b BYTES"), raw.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !f.EncodesNull(map[string]any{"b": nil}) || f.EncodesNull(map[string]any{"b": []byte{}}) {
		t.Errorf("EncodesNull: want true for NULL only")
	}
	if row := f.DecodeNull(); len(row) != 1 || row["b"] != nil {
		t.Errorf("DecodeNull = %#v, want b NULL", row)
	}
	if data, err := f.Encode(map[string]any{"b": "AP8Q"}); err != nil || string(data) != "\x00\xff\x10" {
		t.Errorf("base64 text: %q, %v", data, err)
	}
	if _, err := f.Encode(map[string]any{"b": "not base64!"}); err == nil || !strings.Contains(err.Error(), "column b: a string for a binary column must be base64") {
		t.Errorf("bad base64: %v", err)
	}
}

// FuzzDecode: no panic; what decodes encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	str, _ := raw.New(rowType(f, "s STRING"), raw.Options{})
	bin, _ := raw.New(rowType(f, "b BYTES"), raw.Options{})
	f.Add([]byte("hello"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []*raw.Format{str, bin} {
			row, err := format.Decode(data)
			if err != nil {
				continue
			}
			enc, err := format.Encode(row)
			if err != nil || string(enc) != string(data) {
				t.Fatalf("round trip of %q: %q, %v", data, enc, err)
			}
		}
	})
}
