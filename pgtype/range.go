package pgtype

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
)

// Binary range layout (range_send): uint8 flags (empty 0x01, lower bound
// inclusive 0x02, upper inclusive 0x04, lower unbounded 0x08, upper
// unbounded 0x10), then each bound present as int32 length and the
// subtype's binary bytes. Text: empty, [1,5), (,"2020-01-01 00:00:00"].

const (
	rangeEmpty = 0x01
	rangeLBInc = 0x02
	rangeUBInc = 0x04
	rangeLBInf = 0x08
	rangeUBInf = 0x10
)

// BoundType is the kind of one bound of a Range. The zero value is not a
// valid bound type: encoding a non-empty Range with it is an error.
type BoundType uint8

// The bound types.
const (
	Inclusive BoundType = iota + 1 // the bound value is in the range: [ or ]
	Exclusive                      // the bound value is not in the range: ( or )
	Unbounded                      // no bound: the range extends without end on this side
)

// String returns "inclusive", "exclusive", "unbounded" or "BoundType(n)".
func (b BoundType) String() string {
	switch b {
	case Inclusive:
		return "inclusive"
	case Exclusive:
		return "exclusive"
	case Unbounded:
		return "unbounded"
	}
	return "BoundType(" + itoa(int(b)) + ")"
}

// Range is a value of a range type: int4range into Range[int32],
// int8range into Range[int64], numrange into Range[Numeric] (or
// Range[string], Range[float64] …), tsrange, tstzrange and daterange into
// Range[time.Time] or Range[Timestamp] (which holds ±infinity bounds, not
// the same as Unbounded). T is any type the subtype scans into and
// encodes from. An empty range has Empty set and nothing else; an
// unbounded side has the zero T. The server canonicalises discrete
// ranges: int4range [1,5] comes back as [1,6).
type Range[T any] struct {
	Lower, Upper         T
	LowerType, UpperType BoundType
	Empty                bool
}

// rangeBounds gives the plan access to the bounds of a *Range[T].
func (r *Range[T]) rangeBounds() (lower, upper any) { return &r.Lower, &r.Upper }

func (r *Range[T]) setRange(lt, ut BoundType, empty bool) {
	var zero T
	if empty || lt == Unbounded {
		r.Lower = zero
	}
	if empty || ut == Unbounded {
		r.Upper = zero
	}
	r.LowerType, r.UpperType, r.Empty = lt, ut, empty
	if empty {
		r.LowerType, r.UpperType = 0, 0
	}
}

// rangeParts gives the encoder the parts of a Range[T].
func (r Range[T]) rangeParts() (lower, upper any, lt, ut BoundType, empty bool) {
	return r.Lower, r.Upper, r.LowerType, r.UpperType, r.Empty
}

type rangeScanner interface {
	rangeBounds() (lower, upper any)
	setRange(lt, ut BoundType, empty bool)
}

type rangeArg interface {
	rangeParts() (lower, upper any, lt, ut BoundType, empty bool)
}

// rangeValue is a decoded range: its flags and the bytes of its bounds
// (text format bounds are unescaped).
type rangeValue struct {
	flags        byte
	lower, upper []byte
}

func (r *rangeValue) types() (lt, ut BoundType) {
	lt, ut = Exclusive, Exclusive
	switch {
	case r.flags&rangeLBInf != 0:
		lt = Unbounded
	case r.flags&rangeLBInc != 0:
		lt = Inclusive
	}
	switch {
	case r.flags&rangeUBInf != 0:
		ut = Unbounded
	case r.flags&rangeUBInc != 0:
		ut = Inclusive
	}
	return lt, ut
}

// decodeRange splits a range value into its flags and bounds.
func decodeRange(t *typeInfo, format int16, src []byte) (rangeValue, error) {
	if format == 0 {
		return parseRange(t, src)
	}
	if len(src) < 1 {
		return rangeValue{}, decodeErr(t, 1, "no flags byte")
	}
	r := rangeValue{flags: src[0] & (rangeEmpty | rangeLBInc | rangeUBInc | rangeLBInf | rangeUBInf)}
	rest := src[1:]
	if r.flags&rangeEmpty != 0 {
		r.flags = rangeEmpty
	} else {
		for _, b := range []struct {
			inf byte
			dst *[]byte
		}{{rangeLBInf, &r.lower}, {rangeUBInf, &r.upper}} {
			if r.flags&b.inf != 0 {
				continue
			}
			if len(rest) < 4 {
				return rangeValue{}, decodeErr(t, 1, "truncated bound")
			}
			l := int32(binary.BigEndian.Uint32(rest))
			rest = rest[4:]
			if l < 0 || int64(l) > int64(len(rest)) {
				return rangeValue{}, decodeErr(t, 1, "bound of length %d with %d bytes left", l, len(rest))
			}
			*b.dst, rest = rest[:l:l], rest[l:]
		}
	}
	if len(rest) != 0 {
		return rangeValue{}, decodeErr(t, 1, "%d bytes after the bounds", len(rest))
	}
	return r, nil
}

// parseRange parses the text form of a range.
func parseRange(t *typeInfo, src []byte) (rangeValue, error) {
	bad := func(why string) (rangeValue, error) {
		return rangeValue{}, decodeErr(t, 0, "%s in %q", why, clip(src))
	}
	s := trimSpace(src)
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	if len(s) == 5 && (s[0]|0x20) == 'e' && (s[1]|0x20) == 'm' && (s[2]|0x20) == 'p' && (s[3]|0x20) == 't' && (s[4]|0x20) == 'y' {
		return rangeValue{flags: rangeEmpty}, nil
	}
	if len(s) < 3 {
		return bad("too short")
	}
	var r rangeValue
	switch s[0] {
	case '[':
		r.flags |= rangeLBInc
	case '(':
	default:
		return bad("missing [ or (")
	}
	switch s[len(s)-1] {
	case ']':
		r.flags |= rangeUBInc
	case ')':
	default:
		return bad("missing ] or )")
	}
	s = s[1 : len(s)-1]
	lower, rest, ok := parseRangeBound(s, ',')
	if !ok || len(rest) == 0 || rest[0] != ',' {
		return bad("malformed lower bound")
	}
	upper, rest, ok := parseRangeBound(rest[1:], 0)
	if !ok || len(rest) != 0 {
		return bad("malformed upper bound")
	}
	if lower == nil {
		r.flags = r.flags&^rangeLBInc | rangeLBInf
	}
	if upper == nil {
		r.flags = r.flags&^rangeUBInc | rangeUBInf
	}
	r.lower, r.upper = lower, upper
	return r, nil
}

// parseRangeBound parses one bound up to stop (0: the end), returning nil
// for an empty (unbounded) bound. Quotes group, "" inside quotes is a
// quote, and a backslash takes the next character literally.
func parseRangeBound(s []byte, stop byte) (bound, rest []byte, ok bool) {
	i := 0
	quoted := false
	for ; i < len(s) && (quoted || stop == 0 || s[i] != stop); i++ {
		c := s[i]
		switch {
		case c == '"' && quoted && i+1 < len(s) && s[i+1] == '"':
			bound = append(bound, '"')
			i++
		case c == '"':
			quoted = !quoted
			if bound == nil {
				bound = []byte{}
			}
		case c == '\\':
			i++
			if i == len(s) {
				return nil, nil, false
			}
			bound = append(bound, s[i])
		default:
			bound = append(bound, c)
		}
	}
	if quoted {
		return nil, nil, false
	}
	return bound, s[i:], true
}

// appendRangeText appends the server's text form of a range.
func (m *Map) appendRangeText(b []byte, t *typeInfo, format int16, src []byte) ([]byte, error) {
	r, err := decodeRange(t, format, src)
	if err != nil {
		return nil, err
	}
	if r.flags&rangeEmpty != 0 {
		return append(b, "empty"...), nil
	}
	lt, ut := r.types()
	if lt == Inclusive {
		b = append(b, '[')
	} else {
		b = append(b, '(')
	}
	var tmp []byte
	if lt != Unbounded {
		if tmp, err = m.appendText(tmp, t.elem, format, r.lower); err != nil {
			return nil, err
		}
		b = appendQuoted(b, tmp, "()[],")
	}
	b = append(b, ',')
	if ut != Unbounded {
		if tmp, err = m.appendText(tmp[:0], t.elem, format, r.upper); err != nil {
			return nil, err
		}
		b = appendQuoted(b, tmp, "()[],")
	}
	if ut == Inclusive {
		return append(b, ']'), nil
	}
	return append(b, ')'), nil
}

// planRange plans a range type into *Range[T] for any T the subtype
// scans into; the bound plan is made once.
func (m *Map) planRange(t *typeInfo, format int16, dst any) ScanPlan {
	rs, ok := dst.(rangeScanner)
	if !ok {
		return nil
	}
	rt := reflect.TypeOf(dst)
	proto, _ := rs.rangeBounds()
	bound, err := m.PlanScan(t.elem.oid, format, proto)
	if err != nil {
		err = fmt.Errorf("pgtype: cannot scan %s into %s: %w", t.name, rt, err)
		return planFunc(func([]byte, any) error { return err })
	}
	return planFunc(func(src []byte, dst any) error {
		if reflect.TypeOf(dst) != rt {
			return errPlanType(dst, rt)
		}
		if src == nil {
			return errNull(dst)
		}
		r, err := decodeRange(t, format, src)
		if err != nil {
			return err
		}
		rs := dst.(rangeScanner)
		lower, upper := rs.rangeBounds()
		lt, ut := r.types()
		empty := r.flags&rangeEmpty != 0
		if !empty && lt != Unbounded {
			if err := bound.Scan(r.lower, lower); err != nil {
				return fmt.Errorf("lower bound: %w", err)
			}
		}
		if !empty && ut != Unbounded {
			if err := bound.Scan(r.upper, upper); err != nil {
				return fmt.Errorf("upper bound: %w", err)
			}
		}
		rs.setRange(lt, ut, empty)
		return nil
	})
}

// decodeRangeValue decodes a range into Range[any] with the subtype's
// default Go values as bounds.
func (m *Map) decodeRangeValue(t *typeInfo, format int16, src []byte) (any, error) {
	r, err := decodeRange(t, format, src)
	if err != nil {
		return nil, err
	}
	var out Range[any]
	lt, ut := r.types()
	if r.flags&rangeEmpty != 0 {
		out.Empty = true
		return out, nil
	}
	out.LowerType, out.UpperType = lt, ut
	if lt != Unbounded {
		if out.Lower, err = m.decodeValue(t.elem, format, r.lower); err != nil {
			return nil, err
		}
	}
	if ut != Unbounded {
		if out.Upper, err = m.decodeValue(t.elem, format, r.upper); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// errNullBound is the reason for a nil bound value of a bounded side.
var errNullBound = errors.New("a bound is NULL; use Unbounded for a side without a bound")

// encodeRange encodes a Range[T] for a range parameter: binary, or a text
// literal when a bound can only be sent as text.
func (m *Map) encodeRange(t *typeInfo, arg any, ra rangeArg, buf []byte, depth int) ([]byte, int16, bool, error) {
	if rv := reflect.ValueOf(arg); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return buf, 1, true, nil
	}
	if t.kind != kindRange {
		return buf, 0, false, encErr(t, arg, errUnsupported)
	}
	lower, upper, lt, ut, empty := ra.rangeParts()
	if empty {
		return append(buf, rangeEmpty), 1, false, nil
	}
	var flags byte
	for _, b := range []struct {
		bt       BoundType
		inc, inf byte
	}{{lt, rangeLBInc, rangeLBInf}, {ut, rangeUBInc, rangeUBInf}} {
		switch b.bt {
		case Inclusive:
			flags |= b.inc
		case Exclusive:
		case Unbounded:
			flags |= b.inf
		default:
			return buf, 0, false, encErr(t, arg, fmt.Errorf("invalid bound type %v (set LowerType and UpperType, or Empty)", b.bt))
		}
	}
	start := len(buf)
	buf = append(buf, flags)
	for _, b := range []struct {
		v   any
		inf byte
	}{{lower, rangeLBInf}, {upper, rangeUBInf}} {
		if flags&b.inf != 0 {
			continue
		}
		lenPos := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		out, format, null, err := m.encode(t.elem, b.v, buf, depth+1)
		if err != nil {
			return buf[:start], 0, false, encErr(t, arg, err)
		}
		buf = out
		if null {
			return buf[:start], 0, false, encErr(t, arg, errNullBound)
		}
		if format == 0 && !sameTextBinary(t.elem) {
			return m.encodeRangeText(t, arg, flags, lower, upper, buf[:start], depth)
		}
		size := len(buf) - lenPos - 4
		if size > math.MaxInt32 {
			return buf[:start], 0, false, encErr(t, arg, errors.New("bound too large"))
		}
		binary.BigEndian.PutUint32(buf[lenPos:], uint32(size))
	}
	return buf, 1, false, nil
}

// encodeRangeText encodes a range as a text literal, for the server to
// parse: a bound encoded in binary goes as its text form (binaryToText).
func (m *Map) encodeRangeText(t *typeInfo, arg any, flags byte, lower, upper any, buf []byte, depth int) ([]byte, int16, bool, error) {
	start := len(buf)
	if flags&rangeLBInc != 0 {
		buf = append(buf, '[')
	} else {
		buf = append(buf, '(')
	}
	var tmp []byte
	for i, b := range []struct {
		v   any
		inf byte
	}{{lower, rangeLBInf}, {upper, rangeUBInf}} {
		if i == 1 {
			buf = append(buf, ',')
		}
		if flags&b.inf != 0 {
			continue
		}
		out, format, _, err := m.encode(t.elem, b.v, tmp[:0], depth+1)
		if err != nil {
			return buf[:start], 0, false, encErr(t, arg, err)
		}
		tmp = out
		text := tmp
		if format != 0 && !sameTextBinary(t.elem) {
			if text, err = m.binaryToText(t.elem, tmp); err != nil {
				return buf[:start], 0, false, encErr(t, arg, err)
			}
		}
		buf = appendQuoted(buf, text, "()[],")
	}
	if flags&rangeUBInc != 0 {
		return append(buf, ']'), 0, false, nil
	}
	return append(buf, ')'), 0, false, nil
}
