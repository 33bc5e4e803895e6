package pgtype

import (
	"time"
)

// This file parses the text forms of date, timestamp, timestamptz and time
// in PostgreSQL's ISO DateStyle (the default): "2000-01-01",
// "2000-01-01 12:34:56.789", "2000-01-01 12:34:56+05:30", " BC" suffixes,
// "infinity" and "-infinity".

// parseTimestamp parses a text date, timestamp or timestamptz.
func parseTimestamp(t *typeInfo, src []byte) (Timestamp, error) {
	switch string(src) {
	case "infinity":
		return Timestamp{InfinityModifier: Infinity, Valid: true}, nil
	case "-infinity":
		return Timestamp{InfinityModifier: NegativeInfinity, Valid: true}, nil
	}
	bad := func() (Timestamp, error) {
		return Timestamp{}, decodeErr(t, 0, "%q is not an ISO %s", clip(src), t.name)
	}
	s := src
	bc := false
	if n := len(s); n > 3 && string(s[n-3:]) == " BC" {
		bc, s = true, s[:n-3]
	}
	y, s, ok := parseDigits(s, 1, 7)
	if !ok || y == 0 || len(s) == 0 || s[0] != '-' {
		return bad() // there is no year 0, AD or BC: the server refuses it
	}
	mo, s, ok := parseDigits(s[1:], 2, 2)
	if !ok || len(s) == 0 || s[0] != '-' {
		return bad()
	}
	d, s, ok := parseDigits(s[1:], 2, 2)
	if !ok || mo < 1 || mo > 12 || d < 1 || d > 31 {
		return bad()
	}
	if bc {
		y = 1 - y
	}
	var us int64
	offset := 0
	if t.kind != kindDate {
		if len(s) == 0 || (s[0] != ' ' && s[0] != 'T') {
			return bad()
		}
		us, s, ok = parseClock(s[1:])
		if !ok {
			return bad()
		}
		if t.kind == kindTimestamptz {
			offset, s, ok = parseOffset(s)
			if !ok {
				return bad()
			}
		}
	}
	if len(s) != 0 {
		return bad()
	}
	tm := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
	if tm.Day() != d {
		return bad() // February 30th and the like
	}
	tm = tm.Add(time.Duration(us) * time.Microsecond).Add(-time.Duration(offset) * time.Second)
	return Timestamp{Time: tm, Valid: true}, nil
}

// parseDigits reads between min and max decimal digits from s.
func parseDigits(s []byte, min, max int) (int, []byte, bool) {
	v, n := 0, 0
	for n < len(s) && n < max && s[n] >= '0' && s[n] <= '9' {
		v = v*10 + int(s[n]-'0')
		n++
	}
	if n < min || (n < len(s) && n == max && s[n] >= '0' && s[n] <= '9') {
		return 0, s, false
	}
	return v, s[n:], true
}

// parseClock reads HH:MM:SS[.ffffff] and returns it in microseconds;
// 24:00:00 is allowed, as PostgreSQL allows it.
func parseClock(s []byte) (int64, []byte, bool) {
	h, s, ok := parseDigits(s, 2, 2)
	if !ok || len(s) == 0 || s[0] != ':' {
		return 0, s, false
	}
	m, s, ok := parseDigits(s[1:], 2, 2)
	if !ok || len(s) == 0 || s[0] != ':' {
		return 0, s, false
	}
	sec, s, ok := parseDigits(s[1:], 2, 2)
	if !ok {
		return 0, s, false
	}
	frac := 0
	if len(s) > 0 && s[0] == '.' {
		n := len(s)
		frac, s, ok = parseDigits(s[1:], 1, 6)
		if !ok {
			return 0, s, false
		}
		for i := n - 1 - len(s); i < 6; i++ {
			frac *= 10
		}
	}
	if h > 24 || m > 59 || sec > 60 {
		return 0, s, false
	}
	us := int64(h)*3600e6 + int64(m)*60e6 + int64(sec)*1e6 + int64(frac)
	if us > 24*3600e6 {
		return 0, s, false
	}
	return us, s, true
}

// parseOffset reads a UTC offset +HH[:MM[:SS]] and returns it in seconds.
// An offset of 16 hours or more is refused, as the server refuses it
// (maxTimetzOffset: offsets run from -15:59:59 to +15:59:59).
func parseOffset(s []byte) (int, []byte, bool) {
	if len(s) == 0 || (s[0] != '+' && s[0] != '-') {
		return 0, s, false
	}
	sign := 1
	if s[0] == '-' {
		sign = -1
	}
	h, s, ok := parseDigits(s[1:], 2, 2)
	if !ok || h*3600 >= maxTimetzOffset {
		return 0, s, false
	}
	secs := h * 3600
	for _, mul := range []int{60, 1} {
		if len(s) == 0 || s[0] != ':' {
			break
		}
		var v int
		v, s, ok = parseDigits(s[1:], 2, 2)
		if !ok || v > 59 {
			return 0, s, false
		}
		secs += v * mul
	}
	return sign * secs, s, true
}
