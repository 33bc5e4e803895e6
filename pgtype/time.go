package pgtype

import (
	"encoding/binary"
	"errors"
	"math"
	"time"
)

// Binary date is int32 days and binary timestamp/timestamptz int64
// microseconds since 2000-01-01 (UTC for timestamptz, wall clock for
// timestamp); the extreme values mean ±infinity.
const (
	pgEpochUnix = 946684800 // 2000-01-01 00:00:00 UTC in Unix seconds
	pgEpochDays = 10957     // 2000-01-01 in days since 1970-01-01
)

// InfinityModifier tells a finite value from PostgreSQL's infinity and
// -infinity (of date, timestamp, timestamptz and numeric).
type InfinityModifier int8

// The InfinityModifier values.
const (
	NegativeInfinity InfinityModifier = -1
	Finite           InfinityModifier = 0
	Infinity         InfinityModifier = 1
)

// String returns "infinity", "-infinity" or "finite".
func (m InfinityModifier) String() string {
	switch m {
	case Infinity:
		return "infinity"
	case NegativeInfinity:
		return "-infinity"
	}
	return "finite"
}

// Timestamp is a date, timestamp or timestamptz value that may be
// infinite: scan into it to read 'infinity' and '-infinity', which a
// *time.Time destination refuses. Time is the zero time.Time when
// InfinityModifier is not Finite. It is pgx's pgtype.Timestamp: NULL
// scans as the zero value, and the zero value is NULL as an argument.
type Timestamp struct {
	Time             time.Time
	InfinityModifier InfinityModifier
	Valid            bool // false for NULL (see Text)
}

// errInfinity is the reason an infinite value cannot go into a time.Time.
var errInfinity = errors.New("time.Time cannot hold infinity; scan into *pgtype.Timestamp")

// decodeTimestamp decodes a date, timestamp or timestamptz value. Finite
// values are returned in UTC (timestamp as its wall clock read as UTC).
func decodeTimestamp(t *typeInfo, format int16, src []byte) (Timestamp, error) {
	if format == 0 {
		return parseTimestamp(t, src)
	}
	if len(src) != t.size {
		return Timestamp{}, errLen(t, len(src))
	}
	if t.kind == kindDate {
		days := int32(binary.BigEndian.Uint32(src))
		switch days {
		case math.MaxInt32:
			return Timestamp{InfinityModifier: Infinity, Valid: true}, nil
		case math.MinInt32:
			return Timestamp{InfinityModifier: NegativeInfinity, Valid: true}, nil
		}
		return Timestamp{Time: time.Unix((int64(days)+pgEpochDays)*86400, 0).UTC(), Valid: true}, nil
	}
	us := int64(binary.BigEndian.Uint64(src))
	switch us {
	case math.MaxInt64:
		return Timestamp{InfinityModifier: Infinity, Valid: true}, nil
	case math.MinInt64:
		return Timestamp{InfinityModifier: NegativeInfinity, Valid: true}, nil
	}
	return Timestamp{Time: microsToTime(us), Valid: true}, nil
}

// microsToTime converts microseconds since 2000-01-01 UTC to a UTC time,
// with seconds and microseconds kept apart so that no year overflows.
func microsToTime(us int64) time.Time {
	sec, rem := us/1e6, us%1e6
	if rem < 0 {
		sec, rem = sec-1, rem+1e6
	}
	return time.Unix(sec+pgEpochUnix, rem*1000).UTC()
}

// timeToMicros converts t to microseconds since 2000-01-01 (nanoseconds
// truncated), reporting false when the result would not fit or would
// collide with ±infinity. wall selects t's wall clock instead of its instant.
func timeToMicros(t time.Time, wall bool) (int64, bool) {
	sec := t.Unix()
	if wall {
		_, off := t.Zone()
		sec += int64(off)
	}
	sec -= pgEpochUnix
	const limit = math.MaxInt64/1000000 - 1
	if sec > limit || sec < -limit {
		return 0, false
	}
	return sec*1e6 + int64(t.Nanosecond()/1000), true
}

// timeToDays returns the days since 2000-01-01 of t's date in t's location.
func timeToDays(t time.Time) (int32, bool) {
	y, m, d := t.Date()
	days := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix()/86400 - pgEpochDays
	if days >= math.MaxInt32 || days <= math.MinInt32 {
		return 0, false
	}
	return int32(days), true
}

// planTimestamp plans date, timestamp and timestamptz into *time.Time
// (infinity is an error) and *Timestamp.
func planTimestamp(t *typeInfo, format int16, dst any) ScanPlan {
	switch dst.(type) {
	case *time.Time:
		return planFunc(func(src []byte, dst any) error {
			d, err := target[time.Time](dst)
			if err != nil {
				return err
			}
			if src == nil {
				return errNull(dst)
			}
			ts, err := decodeTimestamp(t, format, src)
			if err != nil {
				return err
			}
			if ts.InfinityModifier != Finite {
				return scanErr(t, ts.InfinityModifier.String(), dst, errInfinity)
			}
			*d = ts.Time
			return nil
		})
	case *Timestamp:
		return planFunc(func(src []byte, dst any) error {
			d, err := target[Timestamp](dst)
			if err != nil {
				return err
			}
			if src == nil {
				return errNull(dst)
			}
			ts, err := decodeTimestamp(t, format, src)
			if err == nil {
				*d = ts
			}
			return err
		})
	}
	return nil
}

// appendTimestampText appends PostgreSQL's ISO text form: "2000-01-01",
// "2000-01-01 12:34:56.789", with "+00" for timestamptz (always UTC) and
// " BC" for years before 1.
func appendTimestampText(b []byte, t *typeInfo, ts Timestamp) []byte {
	if ts.InfinityModifier != Finite {
		return append(b, ts.InfinityModifier.String()...)
	}
	tm := ts.Time
	y, mo, d := tm.Date()
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	b = appendPadded(b, y, 4)
	b = append(b, '-')
	b = appendPadded(b, int(mo), 2)
	b = append(b, '-')
	b = appendPadded(b, d, 2)
	if t.kind != kindDate {
		b = append(b, ' ')
		us := int64(tm.Hour())*3600e6 + int64(tm.Minute())*60e6 + int64(tm.Second())*1e6 + int64(tm.Nanosecond()/1000)
		b = appendClock(b, us)
		if t.kind == kindTimestamptz {
			b = append(b, "+00"...)
		}
	}
	if bc {
		b = append(b, " BC"...)
	}
	return b
}

// appendPadded appends v in decimal with at least width digits.
func appendPadded(b []byte, v, width int) []byte {
	var s [20]byte
	i := len(s)
	for v >= 10 || width > 1 {
		i--
		s[i] = byte('0' + v%10)
		v /= 10
		width--
	}
	i--
	s[i] = byte('0' + v)
	return append(b, s[i:]...)
}

// appendClock appends HH:MM:SS[.ffffff] (trailing zeros of the fraction
// removed) for us microseconds, which must not be negative.
func appendClock(b []byte, us int64) []byte {
	b = appendPadded(b, int(us/3600e6), 2)
	b = append(b, ':')
	b = appendPadded(b, int(us/60e6%60), 2)
	b = append(b, ':')
	b = appendPadded(b, int(us/1e6%60), 2)
	if f := int(us % 1e6); f != 0 {
		b = append(b, '.')
		width := 6
		for f%10 == 0 {
			f /= 10
			width--
		}
		b = appendPadded(b, f, width)
	}
	return b
}
