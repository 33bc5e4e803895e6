package pgtype

import (
	"encoding/binary"
	"errors"
	"math"
	"time"
)

var errTimeRange = errors.New("time out of range")

// encodeTime encodes a time for date (the date in the time's location),
// timestamp (its wall clock), timestamptz (its instant), time (its wall
// clock's time of day) and timetz (that and its zone's offset)
// parameters.
func encodeTime(t *typeInfo, arg any, ts Timestamp, buf []byte) ([]byte, int16, bool, error) {
	switch t.kind {
	case kindDate:
		days := int32(0)
		switch ts.InfinityModifier {
		case Infinity:
			days = math.MaxInt32
		case NegativeInfinity:
			days = math.MinInt32
		default:
			d, ok := timeToDays(ts.Time)
			if !ok {
				return buf, 0, false, encErr(t, arg, errTimeRange)
			}
			days = d
		}
		return binary.BigEndian.AppendUint32(buf, uint32(days)), 1, false, nil
	case kindTimestamp, kindTimestamptz:
		us := int64(0)
		switch ts.InfinityModifier {
		case Infinity:
			us = math.MaxInt64
		case NegativeInfinity:
			us = math.MinInt64
		default:
			v, ok := timeToMicros(ts.Time, t.kind == kindTimestamp)
			if !ok {
				return buf, 0, false, encErr(t, arg, errTimeRange)
			}
			us = v
		}
		return binary.BigEndian.AppendUint64(buf, uint64(us)), 1, false, nil
	case kindTime:
		// The wall clock in the time's location, as pgx and lib/pq send it.
		if ts.InfinityModifier != Finite {
			return buf, 0, false, encErr(t, arg, errTimeRange)
		}
		return encodeTimeOfDay(t, arg, wallMicros(ts.Time), buf)
	case kindTimetz:
		// The wall clock and the zone's offset, as lib/pq sends it.
		if ts.InfinityModifier != Finite {
			return buf, 0, false, encErr(t, arg, errTimeRange)
		}
		return encodeTimetz(t, arg, timeTimetz(ts.Time), buf)
	}
	return buf, 0, false, encErr(t, arg, errUnsupported)
}

// wallMicros returns the microseconds since midnight of t's wall clock.
func wallMicros(t time.Time) int64 {
	h, m, s := t.Clock()
	return (int64(h)*3600+int64(m)*60+int64(s))*1e6 + int64(t.Nanosecond()/1000)
}

// encodeDuration encodes a time.Duration for interval (microseconds,
// truncated) and time (time since midnight) parameters.
func encodeDuration(t *typeInfo, arg any, d time.Duration, buf []byte) ([]byte, int16, bool, error) {
	switch t.kind {
	case kindInterval:
		return encodeInterval(t, arg, Interval{Microseconds: d.Microseconds()}, buf)
	case kindTime:
		return encodeTimeOfDay(t, arg, d.Microseconds(), buf)
	}
	return buf, 0, false, encErr(t, arg, errUnsupported)
}

// encodeInterval encodes an Interval for interval parameters.
func encodeInterval(t *typeInfo, arg any, iv Interval, buf []byte) ([]byte, int16, bool, error) {
	if t.kind != kindInterval {
		return buf, 0, false, encErr(t, arg, errUnsupported)
	}
	buf = binary.BigEndian.AppendUint64(buf, uint64(iv.Microseconds))
	buf = binary.BigEndian.AppendUint32(buf, uint32(iv.Days))
	return binary.BigEndian.AppendUint32(buf, uint32(iv.Months)), 1, false, nil
}

// encodeTimeOfDay encodes microseconds since midnight for time parameters.
func encodeTimeOfDay(t *typeInfo, arg any, us int64, buf []byte) ([]byte, int16, bool, error) {
	if t.kind != kindTime {
		return buf, 0, false, encErr(t, arg, errUnsupported)
	}
	if us < 0 || us > 24*3600e6 {
		return buf, 0, false, encErr(t, arg, errTimeRange)
	}
	return binary.BigEndian.AppendUint64(buf, uint64(us)), 1, false, nil
}
