package schema_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/schema"
)

func TestParseDecimal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in        string
		p, s      int
		want, err string
	}{
		{"12.5", 10, 2, "12.50", ""},
		{"-0.0", 5, 2, "0.00", ""},
		{"-0.01", 5, 2, "-0.01", ""},
		{"007", 3, 0, "7", ""},
		{".5", 3, 1, "0.5", ""},
		{"5.", 3, 1, "5.0", ""},
		{"1.005", 5, 2, "1.01", ""},
		{"-1.005", 5, 2, "-1.01", ""},
		{"1.004", 5, 2, "1.00", ""},
		{"1.5e3", 6, 1, "1500.0", ""},
		{"1E-8", 10, 9, "0.000000010", ""},
		{"99999999999999999999999999999999999999", 38, 0, "99999999999999999999999999999999999999", ""},
		{"999.995", 5, 2, "", "does not fit DECIMAL(5, 2)"},
		{"1000", 5, 2, "", "does not fit"},
		{"1/2", 5, 2, "", "invalid decimal"},
		{"1e100000", 5, 2, "", "invalid decimal"},
		{"", 5, 2, "", "invalid decimal"},
		{"1.2.3", 5, 2, "", "invalid decimal"},
		{"NaN", 5, 2, "", "invalid decimal"},
	} {
		got, err := schema.ParseDecimal(tc.in, tc.p, tc.s)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseDecimal(%q, %d, %d): want error %q, got %v, %v", tc.in, tc.p, tc.s, tc.err, got, err)
			}
			continue
		}
		if err != nil || got != json.Number(tc.want) {
			t.Errorf("ParseDecimal(%q, %d, %d) = %v, %v; want %s", tc.in, tc.p, tc.s, got, err, tc.want)
		}
	}
}

func TestCoerce(t *testing.T) {
	t.Parallel()
	ts := time.Date(2026, 12, 2, 12, 13, 14, 123456789, time.UTC)
	for _, tc := range []struct {
		typ  string
		in   any
		want any
		err  string
	}{
		{"BIGINT", json.Number("42"), int64(42), ""},
		{"INT", 3.0, int64(3), ""},
		{"TINYINT", int64(200), nil, "200 is out of range for TINYINT"},
		{"FLOAT", 0.1, float64(float32(0.1)), ""},
		{"DECIMAL(4, 1)", 2.25, json.Number("2.3"), ""},
		{"TIMESTAMP(3)", ts, time.Date(2026, 12, 2, 12, 13, 14, 123000000, time.UTC), ""},
		{"TIMESTAMP_LTZ(0)", "2026-12-02T13:13:14.9+01:00", time.Date(2026, 12, 2, 12, 13, 14, 0, time.UTC), ""},
		{"TIMESTAMP(3)", json.Number("1764677594123"), time.UnixMilli(1764677594123).UTC(), ""},
		{"DATE", "2026-12-02", time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), ""},
		{"TIME(0)", ts, time.Date(1970, 1, 1, 12, 13, 14, 0, time.UTC), ""},
		{"BYTES", "AAE=", []byte{0, 1}, ""},
		{"STRING NOT NULL", nil, nil, "NULL in a NOT NULL column"},
		{"ARRAY<INT NOT NULL>", []any{1, nil}, nil, "x[1]: NULL in a NOT NULL column"},
		{"ROW<a INT>", map[string]any{"a": "1", "b": 2}, map[string]any{"a": int64(1)}, ""},
		{"BOOLEAN", "yes", nil, `cannot use string value "yes" as BOOLEAN`},
	} {
		typ, err := schema.ParseType(tc.typ)
		if err != nil {
			t.Fatal(err)
		}
		got, err := schema.Coerce(typ, tc.in, "x")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Coerce(%s, %#v): want error %q, got %#v, %v", tc.typ, tc.in, tc.err, got, err)
			}
			continue
		}
		if err != nil || !schema.Equal(got, tc.want) {
			t.Errorf("Coerce(%s, %#v) = %#v, %v; want %#v", tc.typ, tc.in, got, err, tc.want)
		}
	}
}
