package pgtype

import (
	"encoding/binary"
	"time"
)

// Time is a PostgreSQL time (time of day without time zone): microseconds
// since midnight, from 0 to 24:00:00 inclusive. It is the default Go type
// of time (DecodeValue); *time.Duration destinations work too.
type Time struct {
	Microseconds int64
	Valid        bool // false for NULL (see Text)
}

// String returns the PostgreSQL text form, "15:04:05.999999".
func (t Time) String() string { return string(appendClock(nil, t.Microseconds)) }

// Duration returns t as the time since midnight.
func (t Time) Duration() time.Duration { return time.Duration(t.Microseconds) * time.Microsecond }

// decodeTime decodes a time value: int64 microseconds since midnight in
// binary, HH:MM:SS[.ffffff] in text.
func decodeTime(t *typeInfo, format int16, src []byte) (int64, error) {
	if format == 0 {
		us, rest, ok := parseClock(src)
		if !ok || len(rest) != 0 {
			return 0, decodeErr(t, 0, "%q is not a time of day", clip(src))
		}
		return us, nil
	}
	if len(src) != 8 {
		return 0, errLen(t, len(src))
	}
	us := int64(binary.BigEndian.Uint64(src))
	if us < 0 || us > 24*3600e6 {
		return 0, decodeErr(t, 1, "%d microseconds is not a time of day", us)
	}
	return us, nil
}

// planTime plans time into *time.Duration and *Time.
func planTime(t *typeInfo, format int16, dst any) ScanPlan {
	switch dst.(type) {
	case *time.Duration:
		return valuePlan(func(src []byte) (time.Duration, error) {
			us, err := decodeTime(t, format, src)
			return time.Duration(us) * time.Microsecond, err
		})
	case *Time:
		return valuePlan(func(src []byte) (Time, error) {
			us, err := decodeTime(t, format, src)
			return Time{Microseconds: us, Valid: true}, err
		})
	}
	return nil
}
