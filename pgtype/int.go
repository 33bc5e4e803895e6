package pgtype

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// integer is every Go integer type.
type integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// decodeInt decodes an int2, int4, int8 or oid value.
func decodeInt(t *typeInfo, format int16, src []byte) (int64, error) {
	if format == 0 {
		return parseInt(t, src)
	}
	if len(src) != t.size {
		return 0, errLen(t, len(src))
	}
	switch t.size {
	case 2:
		return int64(int16(binary.BigEndian.Uint16(src))), nil
	case 4:
		if t.base == OIDOID {
			return int64(binary.BigEndian.Uint32(src)), nil
		}
		return int64(int32(binary.BigEndian.Uint32(src))), nil
	default:
		return int64(binary.BigEndian.Uint64(src)), nil
	}
}

var errSyntax = errors.New("invalid syntax")

// parseInt parses a decimal integer in text form without allocating.
func parseInt(t *typeInfo, src []byte) (int64, error) {
	s := src
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 20 {
		return 0, decodeErr(t, 0, "%q is not an integer", clip(src))
	}
	var u uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, decodeErr(t, 0, "%q is not an integer", clip(src))
		}
		if u > (1<<64-1)/10 {
			return 0, decodeErr(t, 0, "%q is out of range", clip(src))
		}
		u = u*10 + uint64(c-'0')
		if u < uint64(c-'0') {
			return 0, decodeErr(t, 0, "%q is out of range", clip(src))
		}
	}
	if neg {
		if u > 1<<63 {
			return 0, decodeErr(t, 0, "%q is out of range", clip(src))
		}
		return -int64(u), nil
	}
	if u > 1<<63-1 {
		return 0, decodeErr(t, 0, "%q is out of range", clip(src))
	}
	return int64(u), nil
}

// clip shortens a value for an error message.
func clip(b []byte) string {
	if len(b) > 64 {
		return string(b[:61]) + "..."
	}
	return string(b)
}

// fitInt converts v to T, reporting whether it fits.
func fitInt[T integer](v int64) (T, bool) {
	var zero T
	if v < 0 && ^zero > 0 { // T is unsigned
		return 0, false
	}
	r := T(v)
	if int64(r) != v || (r < 0) != (v < 0) {
		return 0, false
	}
	return r, true
}

// intPlan decodes with dec and stores into *T with a range check.
func intPlan[T integer](t *typeInfo, dec func([]byte) (int64, error)) ScanPlan {
	return planFunc(func(src []byte, dst any) error {
		d, err := target[T](dst)
		if err != nil {
			return err
		}
		if src == nil {
			return errNull(dst)
		}
		v, err := dec(src)
		if err != nil {
			if ve, ok := err.(*valueError); ok {
				return scanErr(t, ve.value, dst, ve.err)
			}
			return err
		}
		r, ok := fitInt[T](v)
		if !ok {
			return scanErr(t, strconv.FormatInt(v, 10), dst, ErrOutOfRange)
		}
		*d = r
		return nil
	})
}

// intDestPlan returns the plan for the integer destinations, or nil when
// dst is not a pointer to a Go integer type.
func intDestPlan(t *typeInfo, dec func([]byte) (int64, error), dst any) ScanPlan {
	switch dst.(type) {
	case *int64:
		return intPlan[int64](t, dec)
	case *int32:
		return intPlan[int32](t, dec)
	case *int16:
		return intPlan[int16](t, dec)
	case *int8:
		return intPlan[int8](t, dec)
	case *int:
		return intPlan[int](t, dec)
	case *uint64:
		return intPlan[uint64](t, dec)
	case *uint32:
		return intPlan[uint32](t, dec)
	case *uint16:
		return intPlan[uint16](t, dec)
	case *uint8:
		return intPlan[uint8](t, dec)
	case *uint:
		return intPlan[uint](t, dec)
	}
	return nil
}

// planInt plans int2, int4, int8 and oid into Go integers and *string.
func planInt(t *typeInfo, format int16, dst any) ScanPlan {
	dec := func(src []byte) (int64, error) { return decodeInt(t, format, src) }
	if format == 1 && t.size == 4 && t.base != OIDOID {
		dec = func(src []byte) (int64, error) { // the common case, without the switch
			if len(src) != 4 {
				return 0, errLen(t, len(src))
			}
			return int64(int32(binary.BigEndian.Uint32(src))), nil
		}
	}
	if p := intDestPlan(t, dec, dst); p != nil {
		return p
	}
	if _, ok := dst.(*string); ok {
		return planFunc(func(src []byte, dst any) error {
			d, err := target[string](dst)
			if err != nil {
				return err
			}
			if src == nil {
				return errNull(dst)
			}
			v, err := dec(src)
			if err != nil {
				return err
			}
			*d = strconv.FormatInt(v, 10)
			return nil
		})
	}
	return nil
}

// valueError is a decoder's reason why a value does not fit the integer
// destination; the plan turns it into a ScanError naming the destination.
type valueError struct {
	value string
	err   error
}

func (e *valueError) Error() string { return e.value + ": " + e.err.Error() }
