package raw_test

import (
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
	if _, err := raw.New(rowType(t, "n INT"), raw.Options{}); err == nil || !strings.Contains(err.Error(), "column n: type INT is not supported") {
		t.Errorf("INT: %v", err)
	}
	if _, err := raw.ParseOptions(map[string]string{"charset": "UTF-16"}); err == nil || !strings.Contains(err.Error(), "'charset' = 'UTF-16'") {
		t.Errorf("charset: %v", err)
	}
	f, _ := raw.New(rowType(t, "s STRING"), raw.Options{})
	if _, err := f.Decode([]byte{0xff}); err == nil || !strings.Contains(err.Error(), "column s: the record is not valid UTF-8") {
		t.Errorf("invalid UTF-8: %v", err)
	}
	if data, err := f.Encode(map[string]any{"s": nil}); err != nil || len(data) != 0 {
		t.Errorf("NULL: %q, %v", data, err)
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
