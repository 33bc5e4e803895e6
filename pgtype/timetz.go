package pgtype

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Binary timetz layout (timetz_send): int64 microseconds since midnight
// of the local time (0 to 24:00:00 inclusive), then int32 the zone's
// offset in seconds WEST of UTC (-05:00 is 18000), less than 16 hours
// either way. Text: 23:04:05.123456-05, 00:00:01+05:30:15.

// Timetz is a PostgreSQL timetz value (time of day with time zone): the
// local time of day in microseconds since midnight, from 0 to 24:00:00
// inclusive, and the zone's offset in seconds EAST of UTC (+05:30 is
// 19800; the wire counts west, Timetz counts as time.Time does). It is
// the default Go type of timetz (DecodeValue), and keeps 24:00:00, which
// a time.Time shows as the next day.
type Timetz struct {
	Microseconds int64
	Offset       int32
}

// String returns the PostgreSQL text form, "15:04:05.999999+05:30".
func (t Timetz) String() string { return string(appendTimetzText(nil, t)) }

// Time returns t as a time.Time on 0000-01-01 (the date time.Parse gives
// a time of day) in a zone of t's offset: time.UTC for offset 0, an
// unnamed time.FixedZone otherwise. 24:00:00 is 0000-01-02 00:00:00.
func (t Timetz) Time() time.Time {
	loc := time.UTC
	if t.Offset != 0 {
		loc = time.FixedZone("", int(t.Offset))
	}
	return time.Date(0, 1, 1, 0, 0, 0, 0, loc).Add(time.Duration(t.Microseconds) * time.Microsecond)
}

// maxTimetzOffset is the server's TZDISP_LIMIT: offsets are less than 16
// hours either way.
const maxTimetzOffset = 16 * 3600

var errTimetzOffset = errors.New("zone offset of 16 hours or more")

// checkTimetz reports a Timetz the server would refuse.
func checkTimetz(v Timetz) error {
	if v.Microseconds < 0 || v.Microseconds > 24*3600e6 {
		return errTimeRange
	}
	if v.Offset <= -maxTimetzOffset || v.Offset >= maxTimetzOffset {
		return errTimetzOffset
	}
	return nil
}

// decodeTimetz decodes a timetz value.
func decodeTimetz(t *typeInfo, format int16, src []byte) (Timetz, error) {
	var v Timetz
	if format == 0 {
		us, rest, ok := parseClock(src)
		if !ok {
			return Timetz{}, decodeErr(t, 0, "%q is not a time of day with time zone", clip(src))
		}
		off, rest, ok := parseOffset(rest)
		if !ok || len(rest) != 0 || off <= -maxTimetzOffset || off >= maxTimetzOffset {
			return Timetz{}, decodeErr(t, 0, "%q is not a time of day with time zone", clip(src))
		}
		v = Timetz{Microseconds: us, Offset: int32(off)}
	} else {
		if len(src) != 12 {
			return Timetz{}, errLen(t, len(src))
		}
		v = Timetz{Microseconds: int64(binary.BigEndian.Uint64(src)), Offset: -int32(binary.BigEndian.Uint32(src[8:]))}
		if err := checkTimetz(v); err != nil {
			return Timetz{}, decodeErr(t, 1, "%v: %d microseconds, %d seconds west", err, v.Microseconds, -v.Offset)
		}
	}
	return v, nil
}

// appendTimetzText appends the server's text form of v: the clock, then
// the offset as ±HH, ±HH:MM or ±HH:MM:SS.
func appendTimetzText(b []byte, v Timetz) []byte {
	b = appendClock(b, v.Microseconds)
	off := int(v.Offset)
	if off < 0 {
		b = append(b, '-')
		off = -off
	} else {
		b = append(b, '+')
	}
	b = appendPadded(b, off/3600, 2)
	if off%3600 != 0 {
		b = append(b, ':')
		b = appendPadded(b, off/60%60, 2)
		if off%60 != 0 {
			b = append(b, ':')
			b = appendPadded(b, off%60, 2)
		}
	}
	return b
}

// appendTimetzValueText appends the text form of a binary or text value.
func appendTimetzValueText(b []byte, t *typeInfo, format int16, src []byte) ([]byte, error) {
	v, err := decodeTimetz(t, format, src)
	if err != nil {
		return nil, err
	}
	return appendTimetzText(b, v), nil
}

// planTimetz plans timetz into *Timetz and *time.Time (see Timetz.Time).
func planTimetz(t *typeInfo, format int16, dst any) ScanPlan {
	switch dst.(type) {
	case *Timetz:
		return valuePlan(func(src []byte) (Timetz, error) { return decodeTimetz(t, format, src) })
	case *time.Time:
		return valuePlan(func(src []byte) (time.Time, error) {
			v, err := decodeTimetz(t, format, src)
			if err != nil {
				return time.Time{}, err
			}
			return v.Time(), nil
		})
	}
	return nil
}

// timeTimetz returns the time of day of tm's wall clock and its zone's
// offset: what a time.Time is as a timetz.
func timeTimetz(tm time.Time) Timetz {
	_, off := tm.Zone()
	return Timetz{Microseconds: wallMicros(tm), Offset: int32(off)}
}

// encodeTimetz encodes v for timetz parameters, and as its text for text
// parameters.
func encodeTimetz(t *typeInfo, arg any, v Timetz, buf []byte) ([]byte, int16, bool, error) {
	if t.kind != kindTimetz && t.kind != kindText {
		return buf, 0, false, encErr(t, arg, errUnsupported)
	}
	if err := checkTimetz(v); err != nil {
		return buf, 0, false, encErr(t, arg, fmt.Errorf("%d microseconds, offset %d seconds: %w", v.Microseconds, v.Offset, err))
	}
	if t.kind == kindText {
		return appendTimetzText(buf, v), textFormat(t), false, nil
	}
	buf = binary.BigEndian.AppendUint64(buf, uint64(v.Microseconds))
	return binary.BigEndian.AppendUint32(buf, uint32(-v.Offset)), 1, false, nil
}
