package javatime

import (
	"strings"
	"testing"
	"time"
)

func TestFormatParse(t *testing.T) {
	t.Parallel()
	at := time.Date(2024, 3, 5, 14, 7, 9, 123456789, time.UTC)
	for _, tc := range []struct{ pattern, text string }{
		{"yyyy-MM-dd HH:mm:ss", "2024-03-05 14:07:09"},
		{"yyyy-MM-dd HH:mm:ss.SSS", "2024-03-05 14:07:09.123"},
		{"yyyyMMddHHmmss", "20240305140709"},
		{"yy/M/d h:mm a", "24/3/5 2:07 PM"},
		{"EEE, d MMM yyyy", "Tue, 5 Mar 2024"},
		{"EEEE MMMM", "Tuesday March"},
		{"'at' HH 'o''clock'", "at 14 o'clock"},
	} {
		l, err := Compile(tc.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tc.pattern, err)
		}
		if got := l.Format(at); got != tc.text {
			t.Errorf("Format %s = %q, want %q", tc.pattern, got, tc.text)
		}
		if strings.Contains(tc.pattern, "E") {
			continue // the weekday does not set the date
		}
		back, err := l.Parse(tc.text, time.UTC)
		if err != nil {
			t.Errorf("Parse %s %q: %v", tc.pattern, tc.text, err)
		} else if got := l.Format(back); got != tc.text {
			t.Errorf("Parse %s %q gave %v, which formats as %q", tc.pattern, tc.text, back, got)
		}
	}
	l, _ := Compile("yyyy-MM-dd HH:mm:ss")
	for _, bad := range []string{"2024-02-30 00:00:00", "2024-03-05 24:00:00", "2024-03-05", "2024-03-05 14:07:09x", "x"} {
		if _, err := l.Parse(bad, time.UTC); err == nil {
			t.Errorf("Parse %q: want an error", bad)
		}
	}
	for _, p := range []string{"yyyy-MM-dd Q", "'open", "z"} {
		if _, err := Compile(p); err == nil {
			t.Errorf("Compile %q: want an error", p)
		}
	}
}

// A skipped wall clock lands past the gap by its distance into it, as
// java.time; a doubled one takes the earlier offset, and Later the later.
func TestDateAroundDST(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	if got := Date(2024, 3, 10, 2, 30, 0, 0, ny).UTC(); !got.Equal(time.Date(2024, 3, 10, 7, 30, 0, 0, time.UTC)) {
		t.Errorf("gap: %v, want 07:30Z", got)
	}
	fall := Date(2024, 11, 3, 1, 30, 0, 0, ny)
	if got := fall.UTC(); !got.Equal(time.Date(2024, 11, 3, 5, 30, 0, 0, time.UTC)) {
		t.Errorf("overlap: %v, want 05:30Z (the earlier offset)", got)
	}
	if got := Later(fall, ny).UTC(); !got.Equal(time.Date(2024, 11, 3, 6, 30, 0, 0, time.UTC)) {
		t.Errorf("Later(overlap): %v, want 06:30Z", got)
	}
	plain := Date(2024, 7, 1, 12, 0, 0, 0, ny)
	if got := Later(plain, ny); !got.Equal(plain) {
		t.Errorf("Later of an unambiguous time moved it: %v", got)
	}
}
