// Package javatime formats and parses times with the date-time patterns of
// Java (java.time.format.DateTimeFormatter, SimpleDateFormat) that Flink's
// time functions take: TO_TIMESTAMP(s, 'yyyy-MM-dd HH:mm:ss'),
// DATE_FORMAT(ts, 'yyyyMMdd'), FROM_UNIXTIME(n, ...), UNIX_TIMESTAMP(s, ...).
//
// The supported pattern letters are y (year), M (month: M and MM as numbers,
// MMM and MMMM as English names), d (day of month), H (hour 0-23), h (hour
// 1-12), m (minute), s (second), S (fraction of a second, one letter per
// digit), a (AM/PM) and E (day of week: E to EEE short, EEEE full). Text in
// single quotes is literal (” is a quote); any other character that is not
// a letter is literal. Other letters (zones, weeks, eras) are refused by
// Compile, naming them.
package javatime

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Layout is a compiled pattern.
type Layout struct {
	pattern string
	toks    []tok
}

type tok struct {
	letter byte   // 0: literal
	n      int    // repeat count
	lit    string // literal text
}

// Compile compiles a Java date-time pattern.
func Compile(pattern string) (*Layout, error) {
	l := &Layout{pattern: pattern}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			j := i + 1
			var b strings.Builder
			for {
				if j >= len(pattern) {
					return nil, fmt.Errorf("quote at position %d is not closed", i+1)
				}
				if pattern[j] == '\'' {
					if j+1 < len(pattern) && pattern[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(pattern[j])
				j++
			}
			if j == i+1 {
				b.WriteByte('\'') // '' outside quotes
			}
			l.toks = append(l.toks, tok{lit: b.String()})
			i = j + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(pattern) && pattern[j] == c {
				j++
			}
			if !strings.ContainsRune("yMdHhmsSaE", rune(c)) {
				return nil, fmt.Errorf("pattern letter '%c' is not supported (supported: y M d H h m s S a E, 'quoted text')", c)
			}
			l.toks = append(l.toks, tok{letter: c, n: j - i})
			i = j
		default:
			j := i
			for j < len(pattern) && pattern[j] != '\'' && !(pattern[j] >= 'a' && pattern[j] <= 'z' || pattern[j] >= 'A' && pattern[j] <= 'Z') {
				j++
			}
			l.toks = append(l.toks, tok{lit: pattern[i:j]})
			i = j
		}
	}
	return l, nil
}

func pad(b *strings.Builder, v, n int) {
	s := strconv.Itoa(v)
	for k := len(s); k < n; k++ {
		b.WriteByte('0')
	}
	b.WriteString(s)
}

// Format formats the wall clock of t (its own location).
func (l *Layout) Format(t time.Time) string {
	var b strings.Builder
	for _, k := range l.toks {
		switch k.letter {
		case 0:
			b.WriteString(k.lit)
		case 'y':
			if k.n == 2 {
				pad(&b, t.Year()%100, 2)
			} else {
				pad(&b, t.Year(), k.n)
			}
		case 'M':
			switch {
			case k.n >= 4:
				b.WriteString(t.Month().String())
			case k.n == 3:
				b.WriteString(t.Month().String()[:3])
			default:
				pad(&b, int(t.Month()), k.n)
			}
		case 'd':
			pad(&b, t.Day(), k.n)
		case 'H':
			pad(&b, t.Hour(), k.n)
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			pad(&b, h, k.n)
		case 'm':
			pad(&b, t.Minute(), k.n)
		case 's':
			pad(&b, t.Second(), k.n)
		case 'S':
			frac := fmt.Sprintf("%09d", t.Nanosecond())
			for len(frac) < k.n {
				frac += "0"
			}
			b.WriteString(frac[:k.n])
		case 'a':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'E':
			if k.n >= 4 {
				b.WriteString(t.Weekday().String())
			} else {
				b.WriteString(t.Weekday().String()[:3])
			}
		}
	}
	return b.String()
}

// Parse reads s, all of it, as the pattern's wall clock in loc. Fields the
// pattern lacks are the start of their range (1970-01-01 00:00:00).
func (l *Layout) Parse(s string, loc *time.Location) (time.Time, error) {
	year, month, day, hour, minute, sec, nsec := 1970, 1, 1, 0, 0, 0, 0
	pm, hasAMPM, h12 := false, false, -1
	i := 0
	fail := func() (time.Time, error) {
		return time.Time{}, fmt.Errorf("%q does not match the pattern '%s'", s, l.pattern)
	}
	for ti, k := range l.toks {
		if k.letter == 0 {
			if !strings.HasPrefix(s[i:], k.lit) {
				return fail()
			}
			i += len(k.lit)
			continue
		}
		switch k.letter {
		case 'a':
			switch {
			case strings.HasPrefix(strings.ToUpper(s[i:]), "AM"):
			case strings.HasPrefix(strings.ToUpper(s[i:]), "PM"):
				pm = true
			default:
				return fail()
			}
			hasAMPM = true
			i += 2
			continue
		case 'E':
			found := false
			for d := time.Sunday; d <= time.Saturday; d++ {
				name := d.String()
				if k.n < 4 {
					name = name[:3]
				}
				if strings.HasPrefix(s[i:], name) {
					i += len(name)
					found = true
					break
				}
			}
			if !found {
				return fail()
			}
			continue
		case 'M':
			if k.n >= 3 {
				found := false
				for m := time.January; m <= time.December; m++ {
					name := m.String()
					if k.n == 3 {
						name = name[:3]
					}
					if strings.HasPrefix(s[i:], name) {
						i += len(name)
						month = int(m)
						found = true
						break
					}
				}
				if !found {
					return fail()
				}
				continue
			}
		}
		// Numbers: a field followed by another number field takes exactly
		// its width; otherwise up to 9 digits (at least its width for y
		// and S, one for the others).
		adjacent := ti+1 < len(l.toks) && l.toks[ti+1].letter != 0 && l.toks[ti+1].letter != 'a' && l.toks[ti+1].letter != 'E'
		minW, maxW := 1, 9
		switch {
		case k.letter == 'S' || k.letter == 'y' && k.n == 2:
			minW, maxW = k.n, k.n
		case k.letter == 'y':
			minW = k.n
			if adjacent {
				maxW = k.n
			}
		case k.n >= 2 || adjacent:
			minW, maxW = k.n, k.n
			if k.n == 1 {
				minW, maxW = 1, 2
			}
		default:
			maxW = 2
		}
		j := i
		for j < len(s) && j-i < maxW && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j-i < minW {
			return fail()
		}
		v, _ := strconv.Atoi(s[i:j])
		switch k.letter {
		case 'y':
			if k.n == 2 {
				v += 2000
			}
			year = v
		case 'M':
			month = v
		case 'd':
			day = v
		case 'H':
			hour = v
		case 'h':
			h12 = v
		case 'm':
			minute = v
		case 's':
			sec = v
		case 'S':
			for w := j - i; w < 9; w++ {
				v *= 10
			}
			nsec = v
		}
		i = j
	}
	if i != len(s) {
		return fail()
	}
	if h12 >= 0 {
		if h12 < 1 || h12 > 12 {
			return fail()
		}
		hour = h12 % 12
	}
	if hasAMPM && pm && hour < 12 {
		hour += 12
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || sec > 59 {
		return fail()
	}
	return Date(year, time.Month(month), day, hour, minute, sec, nsec, loc), nil
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// Date is time.Date with java.time's rule for a wall clock that a
// daylight-saving transition skips (02:30 on the night clocks go from 02:00
// to 03:00): it is read with the offset before the gap, so it lands as far
// after the gap's start as it is after 02:00 (03:30 summer time). Go's
// time.Date picks an unspecified side. An ambiguous wall clock (clocks go
// back) takes the earlier offset in both.
func Date(year int, month time.Month, day, hour, min, sec, nsec int, loc *time.Location) time.Time {
	t := time.Date(year, month, day, hour, min, sec, nsec, loc)
	if t.Hour() == hour && t.Minute() == min && t.Day() == day {
		return t
	}
	// The offset just before the gap: that of the instant an hour
	// before t, which Go placed before the gap.
	_, before := t.Add(-time.Hour).Zone()
	wall := time.Date(year, month, day, hour, min, sec, nsec, time.UTC)
	return wall.Add(-time.Duration(before) * time.Second).In(loc)
}

// Later is t, or the later instant with the same wall clock in loc when
// that wall clock occurs twice (the hour clocks go back), as Java's
// SimpleDateFormat and GregorianCalendar read it (standard time).
func Later(t time.Time, loc *time.Location) time.Time {
	w := t.In(loc)
	for _, d := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		u := t.Add(d).In(loc)
		if u.Year() == w.Year() && u.YearDay() == w.YearDay() && u.Hour() == w.Hour() && u.Minute() == w.Minute() && u.Second() == w.Second() {
			return u
		}
	}
	return t
}
