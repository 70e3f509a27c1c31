package table

import (
	"strings"
	"testing"
)

// The local_time_zone field is the table option table.local-time-zone; a
// different value in both is an error naming both, a bad zone names the
// field, and without a table the field is an error.
func TestLocalTimeZoneField(t *testing.T) {
	t.Parallel()
	ddl := "CREATE TABLE t (a INT) WITH ('format' = 'json'%s)"
	tb, err := Raw{DDL: strings.Replace(ddl, "%s", "", 1), LocalTimeZone: "Asia/Kolkata"}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if loc, err := tb.LocalTimeZone(); err != nil || loc.String() != "Asia/Kolkata" {
		t.Fatalf("zone %v, %v; want Asia/Kolkata", loc, err)
	}
	// The processors' path (table_decode, table_encode) applies it too.
	pc, err := build(processorRaw{Raw: Raw{DDL: strings.Replace(ddl, "%s", "", 1), LocalTimeZone: "Asia/Kolkata"}, onError: "fail"})
	if err != nil {
		t.Fatal(err)
	}
	if loc, err := pc.Table.LocalTimeZone(); err != nil || loc.String() != "Asia/Kolkata" {
		t.Fatalf("processor: zone %v, %v; want Asia/Kolkata", loc, err)
	}
	if _, err := (Raw{DDL: strings.Replace(ddl, "%s", ", 'table.local-time-zone' = 'Asia/Kolkata'", 1), LocalTimeZone: "Asia/Kolkata"}).Resolve(); err != nil {
		t.Fatalf("agreeing field and option: %v", err)
	}
	for _, tc := range []struct {
		raw  Raw
		want string
	}{
		{Raw{DDL: strings.Replace(ddl, "%s", ", 'table.local-time-zone' = 'UTC'", 1), LocalTimeZone: "Asia/Kolkata"},
			`field local_time_zone: "Asia/Kolkata" contradicts option 'table.local-time-zone' = 'UTC' of table t`},
		{Raw{DDL: strings.Replace(ddl, "%s", "", 1), LocalTimeZone: "EST"}, `field local_time_zone: time zone "EST": want a full name`},
		{Raw{LocalTimeZone: "UTC"}, "field local_time_zone: only used with a table"},
		{Raw{DDL: strings.Replace(ddl, "%s", ", 'table.local-time-zone' = 'Mars/Base'", 1)}, "option 'table.local-time-zone' = 'Mars/Base': time zone \"Mars/Base\": unknown zone"},
	} {
		if _, err := tc.raw.Resolve(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.raw, err, tc.want)
		}
	}
}
