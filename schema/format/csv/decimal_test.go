package csv

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/connectd/connectd/schema"
)

// DECIMAL text as Flink's csv format writes it: with
// csv.write-bigdecimal-in-scientific-notation = true, Java's
// BigDecimal.stripTrailingZeros (zero stays 0) then toString, whose texts
// here a JDK printed for these inputs; else the plain text with the
// column's scale, as it is.
func TestAppendBigDecimal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, sci string }{
		{"100000", "1E+5"},
		{"12.50", "12.5"},
		{"0.05", "0.05"},
		{"0", "0"},
		{"0.00", "0"},
		{"-0.000000000000000001", "-1E-18"},
		{"12345678901234567890.123456789012345678", "12345678901234567890.123456789012345678"},
		{"12345678.90", "12345678.9"},
		{"-99999999.99", "-99999999.99"},
		{"10", "1E+1"},
		{"1234.5", "1234.5"},
		{"0.0000001", "1E-7"},
		{"0.00000120", "0.0000012"},
		{"-100.00", "-1E+2"},
		{"0.000001", "0.000001"},
		{"1.000", "1"},
	} {
		if got := string(appendBigDecimal(nil, tc.in, true)); got != tc.sci {
			t.Errorf("%s scientific: got %s, want %s", tc.in, got, tc.sci)
		}
		if got := string(appendBigDecimal(nil, tc.in, false)); got != tc.in {
			t.Errorf("%s plain: got %s, want it as it is", tc.in, got)
		}
	}
}

// The option reaches the encoder: a DECIMAL(10, 2) column and an array of
// them. Unset and 'false' write the plain text with its scale, as Flink 2.2
// does (its factory reads the option only when set, whatever its
// documented default); 'true' the stripped scientific form.
func TestEncodeDecimalNotation(t *testing.T) {
	t.Parallel()
	tables, err := schema.ParseDDL(`CREATE TABLE t (d DECIMAL(10, 2), ds ARRAY<DECIMAL(10, 2)>) WITH ('format' = 'csv')`)
	if err != nil {
		t.Fatal(err)
	}
	row := map[string]any{"d": "100.00", "ds": []any{"12.50", "0.00"}}
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{nil, "100.00,12.50;0.00"},
		{map[string]string{"write-bigdecimal-in-scientific-notation": "true"}, "1E+2,12.5;0"},
		{map[string]string{"write-bigdecimal-in-scientific-notation": "false"}, "100.00,12.50;0.00"},
	} {
		o, err := ParseOptions(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		f, err := New(tables[0].PhysicalRowType(), o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.Encode(row)
		if err != nil || string(got) != tc.want {
			t.Errorf("%v: got %q, %v; want %q", tc.opts, got, err, tc.want)
		}
		back, err := f.Decode(got)
		if err != nil || back["d"] != json.Number("100.00") {
			t.Errorf("%v: %q reads back as %v, %v", tc.opts, got, back, err)
		}
	}
}

// Flink refuses a quote character together with disabled quoting
// (CsvFormatFactory), and so does connectd, naming both options.
func TestQuoteCharacterWithQuotingDisabled(t *testing.T) {
	t.Parallel()
	_, err := ParseOptions(map[string]string{"quote-character": "'", "disable-quote-character": "true"})
	if err == nil || !strings.Contains(err.Error(), "options 'quote-character' and 'disable-quote-character' = 'true' cannot be set together") {
		t.Fatalf("got %v", err)
	}
	for _, ok := range []map[string]string{{"quote-character": "'", "disable-quote-character": "false"}, {"disable-quote-character": "true"}} {
		if _, err := ParseOptions(ok); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
}
