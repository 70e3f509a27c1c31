package schema

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // zones for table.local-time-zone on machines without /usr/share/zoneinfo
)

// OptLocalTimeZone is Flink's `table.local-time-zone`: the session time zone
// of TIMESTAMP_LTZ conversions and of the zone-dependent functions of
// computed columns (FROM_UNIXTIME, UNIX_TIMESTAMP, LOCALTIMESTAMP, CAST
// between TIMESTAMP and TIMESTAMP_LTZ, DATE_FORMAT of a TIMESTAMP_LTZ).
// Flink sets it per session (SET 'table.local-time-zone' = ...); connectd
// takes it as a table option. Default UTC (Flink's default is the JVM's
// zone; connectd's machines have no such thing to inherit).
const OptLocalTimeZone = "table.local-time-zone"

var gmtOffset = regexp.MustCompile(`^(?:GMT|UTC)?([+-])(\d{1,2})(?::?(\d{2}))?$`)

// ParseTimeZone reads a zone as Flink's table.local-time-zone: an IANA name
// (America/New_York), UTC, or a fixed offset GMT+08:00. Flink refuses
// abbreviations such as EST or CST, and so does connectd.
func ParseTimeZone(v string) (*time.Location, error) {
	v = strings.TrimSpace(v)
	if v == "" || strings.EqualFold(v, "UTC") || v == "GMT" || v == "Z" {
		return time.UTC, nil
	}
	if m := gmtOffset.FindStringSubmatch(v); m != nil {
		h, _ := strconv.Atoi(m[2])
		mins := 0
		if m[3] != "" {
			mins, _ = strconv.Atoi(m[3])
		}
		if h > 18 || mins > 59 {
			return nil, fmt.Errorf("time zone %q: the offset is out of range", v)
		}
		off := h*3600 + mins*60
		if m[1] == "-" {
			off = -off
		}
		return time.FixedZone(v, off), nil
	}
	if !strings.Contains(v, "/") {
		return nil, fmt.Errorf("time zone %q: want a full name such as 'America/New_York', 'UTC' or an offset 'GMT+08:00' (as Flink, no abbreviations)", v)
	}
	loc, err := time.LoadLocation(v)
	if err != nil {
		return nil, fmt.Errorf("time zone %q: unknown zone (want a full name such as 'America/New_York', 'UTC' or 'GMT+08:00')", v)
	}
	return loc, nil
}

func timeZone(v string) error {
	_, err := ParseTimeZone(v)
	return err
}

// LocalTimeZone is the table's `table.local-time-zone`, UTC when unset.
func (t *Table) LocalTimeZone() (*time.Location, error) {
	v, ok := t.Options[OptLocalTimeZone]
	if !ok {
		return time.UTC, nil
	}
	loc, err := ParseTimeZone(v)
	if err != nil {
		return nil, fmt.Errorf("table %s: option '%s': %w", t.Name, OptLocalTimeZone, err)
	}
	return loc, nil
}
