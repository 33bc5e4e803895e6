package pgtype

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"time"
)

// Interval is a PostgreSQL interval: months, days and microseconds are
// kept apart, as the server keeps them (a month is not a fixed number of
// days, nor a day of hours across daylight saving changes). It is the
// default Go type of interval (DecodeValue).
type Interval struct {
	Months       int32
	Days         int32
	Microseconds int64
	Valid        bool // false for NULL (see Text)
}

// String returns the PostgreSQL text form (IntervalStyle postgres):
// "1 year 2 mons -3 days +04:05:06.5".
func (iv Interval) String() string { return string(appendIntervalText(nil, iv)) }

// Duration returns iv as a time.Duration, counting a day as 24 hours. An
// interval with months, or beyond time.Duration's ±292 years, is an error.
func (iv Interval) Duration() (time.Duration, error) {
	if iv.Months != 0 {
		return 0, errors.New("interval with months has no fixed duration")
	}
	// Days × 86400e6 does not fit an int64 for |Days| beyond 106751991,
	// and Microseconds may bring such a sum back into range, so the
	// whole days of Microseconds are moved to the day count first (both
	// stay far from int64's limits), and every step is checked.
	const usPerDay int64 = 86400e6
	days := int64(iv.Days) + iv.Microseconds/usPerDay // |days| < 2^31 + 2^27
	rem := iv.Microseconds % usPerDay                 // |rem| < usPerDay
	if days > math.MaxInt64/usPerDay || days < math.MinInt64/usPerDay {
		return 0, ErrOutOfRange
	}
	us, ok := addInt64(days*usPerDay, rem)
	if !ok || us > math.MaxInt64/1000 || us < math.MinInt64/1000 {
		return 0, ErrOutOfRange
	}
	return time.Duration(us) * time.Microsecond, nil
}

// addInt64 returns a+b, and false when the sum overflows int64.
func addInt64(a, b int64) (int64, bool) {
	s := a + b
	return s, (s > a) == (b > 0)
}

// decodeInterval decodes an interval: int64 microseconds, int32 days,
// int32 months in binary; the postgres IntervalStyle in text.
func decodeInterval(t *typeInfo, format int16, src []byte) (Interval, error) {
	if format == 0 {
		iv, ok := parseInterval(src)
		if !ok {
			return Interval{}, decodeErr(t, 0, "%q is not an interval in IntervalStyle postgres", clip(src))
		}
		iv.Valid = true
		return iv, nil
	}
	if len(src) != 16 {
		return Interval{}, errLen(t, len(src))
	}
	return Interval{
		Microseconds: int64(binary.BigEndian.Uint64(src)),
		Days:         int32(binary.BigEndian.Uint32(src[8:])),
		Months:       int32(binary.BigEndian.Uint32(src[12:])),
		Valid:        true,
	}, nil
}

// parseInterval parses "[N year[s]] [N mon[s]] [N day[s]] [±]HH:MM:SS[.f]".
func parseInterval(s []byte) (Interval, bool) {
	var iv Interval
	seen := false
	for len(s) > 0 {
		if s[0] == ' ' {
			s = s[1:]
			continue
		}
		end := 0
		for end < len(s) && s[end] != ' ' {
			end++
		}
		tok := s[:end]
		s = s[end:]
		if i := indexByte(tok, ':'); i >= 0 { // the time part
			neg := false
			if tok[0] == '-' || tok[0] == '+' {
				neg, tok = tok[0] == '-', tok[1:]
			}
			us, ok := parseHours(tok)
			if !ok || len(s) != 0 && len(trimSpace(s)) != 0 {
				return iv, false
			}
			if neg {
				us = -us
			}
			iv.Microseconds = us
			return iv, true
		}
		n, err := strconv.ParseInt(string(tok), 10, 32)
		if err != nil {
			return iv, false
		}
		s = trimSpace(s)
		end = 0
		for end < len(s) && s[end] != ' ' {
			end++
		}
		unit := string(s[:end])
		s = s[end:]
		switch unit {
		case "year", "years":
			m := n*12 + int64(iv.Months)
			if m > math.MaxInt32 || m < math.MinInt32 {
				return iv, false
			}
			iv.Months = int32(m)
		case "mon", "mons":
			m := n + int64(iv.Months)
			if m > math.MaxInt32 || m < math.MinInt32 {
				return iv, false
			}
			iv.Months = int32(m)
		case "day", "days":
			iv.Days = int32(n)
		default:
			return iv, false
		}
		seen = true
	}
	return iv, seen
}

// parseHours parses H+:MM:SS[.ffffff] where the hours may exceed 24.
func parseHours(s []byte) (int64, bool) {
	h, rest, ok := parseDigits(s, 1, 10)
	if !ok || len(rest) == 0 || rest[0] != ':' {
		return 0, false
	}
	// Reuse parseClock for MM:SS[.f] by giving it a zero hour.
	buf := append([]byte("00:"), rest[1:]...)
	us, rest, ok := parseClock(buf)
	if !ok || len(rest) != 0 || us >= 3600e6 || int64(h) > (math.MaxInt64-us)/3600e6 {
		return 0, false
	}
	return int64(h)*3600e6 + us, true
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	return b
}

// appendIntervalText appends the IntervalStyle postgres form of iv, as
// the server prints it.
func appendIntervalText(b []byte, iv Interval) []byte {
	start := len(b)
	before := false // the previous field was negative
	field := func(v int64, unit string) {
		if v == 0 {
			return
		}
		if len(b) > start {
			b = append(b, ' ')
		}
		if before && v > 0 {
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, v, 10)
		b = append(b, ' ')
		b = append(b, unit...)
		if v != 1 {
			b = append(b, 's')
		}
		before = v < 0
	}
	field(int64(iv.Months/12), "year")
	field(int64(iv.Months%12), "mon")
	field(int64(iv.Days), "day")
	us := iv.Microseconds
	if us != 0 || len(b) == start {
		if len(b) > start {
			b = append(b, ' ')
		}
		var mag uint64
		if us < 0 {
			b = append(b, '-')
			mag = uint64(-(us + 1)) + 1
		} else {
			if before {
				b = append(b, '+')
			}
			mag = uint64(us)
		}
		b = appendPadded(b, int(mag/3600e6), 2)
		b = append(b, ':')
		var tmp [24]byte
		b = append(b, appendClock(tmp[:0], int64(mag%3600e6))[3:]...) // without appendClock's zero hour
	}
	return b
}

// planInterval plans interval into *time.Duration (a day counts as 24
// hours; months are an error) and *Interval.
func planInterval(t *typeInfo, format int16, dst any) ScanPlan {
	switch dst.(type) {
	case *time.Duration:
		return valuePlan(func(src []byte) (time.Duration, error) {
			iv, err := decodeInterval(t, format, src)
			if err != nil {
				return 0, err
			}
			v, err := iv.Duration()
			if err != nil {
				return 0, scanErr(t, iv.String(), (*time.Duration)(nil), err)
			}
			return v, nil
		})
	case *Interval:
		return valuePlan(func(src []byte) (Interval, error) { return decodeInterval(t, format, src) })
	}
	return nil
}
