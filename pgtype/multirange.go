package pgtype

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
)

// Binary multirange layout (multirange_send, PostgreSQL 14 and later):
// int32 range count, then each range as int32 length and its range_send
// bytes (range.go). Text: {} or {[1,3),[5,7)}, the ranges' text forms
// between braces, separated by commas, white space allowed around them.

// Multirange is a value of a multirange type (PostgreSQL 14 and later),
// its ranges in order: int4multirange scans into Multirange[int32],
// int8multirange into Multirange[int64], nummultirange into
// Multirange[Numeric], tsmultirange, tstzmultirange and datemultirange
// into Multirange[time.Time] or Multirange[Timestamp]. T is any type the
// range type's subtype scans into and encodes from, as for Range; a
// []Range[T] works as well. An empty multirange is an empty, non-nil
// Multirange; NULL scans as nil, and a nil Multirange encodes as NULL. The
// server sorts and merges the ranges it receives and drops empty ones:
// int4multirange {[5,7),[1,3),[3,4)} comes back as {[1,4),[5,7)}.
type Multirange[T any] []Range[T]

// multirangeArg gives the encoder the ranges of a Multirange[T].
type multirangeArg interface {
	multirangeLen() int
	multirangeAt(i int) any // a *Range[T]
}

func (mr Multirange[T]) multirangeLen() int     { return len(mr) }
func (mr Multirange[T]) multirangeAt(i int) any { return &mr[i] }

var (
	rangeScannerType = reflect.TypeFor[rangeScanner]()
	rangeArgType     = reflect.TypeFor[rangeArg]()
)

// multirangeElems validates a multirange value and calls f with the bytes
// of each range in order: range_send bytes in binary, a range literal in
// text. count is called first with the number of ranges, which has been
// checked against the size of src.
func multirangeElems(t *typeInfo, format int16, src []byte, count func(int) error, f func(i int, r []byte) error) error {
	if format == 0 {
		n, err := splitMultirange(t, src, nil)
		if err != nil {
			return err
		}
		if err := count(n); err != nil {
			return err
		}
		_, err = splitMultirange(t, src, f)
		return err
	}
	if len(src) < 4 {
		return decodeErr(t, 1, "%d bytes, want at least 4", len(src))
	}
	n := int32(binary.BigEndian.Uint32(src))
	rest := src[4:]
	if n < 0 || int64(n) > int64(len(rest)/5) { // a range takes at least 5 bytes
		return decodeErr(t, 1, "%d ranges in %d bytes", n, len(rest))
	}
	if err := count(int(n)); err != nil {
		return err
	}
	for i := range int(n) {
		if len(rest) < 4 {
			return decodeErr(t, 1, "truncated at range %d", i)
		}
		l := int32(binary.BigEndian.Uint32(rest))
		rest = rest[4:]
		if l < 0 || int64(l) > int64(len(rest)) {
			return decodeErr(t, 1, "range %d has length %d with %d bytes left", i, l, len(rest))
		}
		if err := f(i, rest[:l:l]); err != nil {
			return err
		}
		rest = rest[l:]
	}
	if len(rest) != 0 {
		return decodeErr(t, 1, "%d bytes after the last range", len(rest))
	}
	return nil
}

// States of splitMultirange, after the server's multirange_in.
const (
	mrBefore = iota
	mrIn
	mrEscaped
	mrQuoted
	mrQuotedEscaped
	mrAfter
	mrDone
)

// emptyRange is the text of an empty range.
var emptyRange = []byte("empty")

// splitMultirange splits the text of a multirange into its range
// literals (quotes and escapes kept, for parseRange), calling f (when not
// nil) for each, and returns their number. It follows the server's
// multirange_in: white space is allowed anywhere outside the ranges, and
// a range ends at the first ] or ) outside quotes and escapes.
func splitMultirange(t *typeInfo, src []byte, f func(i int, r []byte) error) (int, error) {
	bad := func(why string) (int, error) {
		return 0, decodeErr(t, 0, "%s in %q", why, clip(src))
	}
	i := 0
	for i < len(src) && isSpace(src[i]) {
		i++
	}
	if i == len(src) || src[i] != '{' {
		return bad("missing {")
	}
	n, start, state := 0, 0, mrBefore
	yield := func(r []byte) error {
		if f != nil {
			if err := f(n, r); err != nil {
				return err
			}
		}
		n++
		return nil
	}
	for i++; state != mrDone; i++ {
		if i == len(src) {
			return bad("unexpected end")
		}
		c := src[i]
		if isSpace(c) {
			continue
		}
		switch state {
		case mrBefore:
			switch {
			case c == '[' || c == '(':
				start, state = i, mrIn
			case c == '}' && n == 0:
				state = mrDone
			case hasPrefixFold(src[i:], "empty"):
				if err := yield(emptyRange); err != nil {
					return 0, err
				}
				i += len("empty") - 1
				state = mrAfter
			default:
				return bad("expected a range")
			}
		case mrIn:
			switch c {
			case ']', ')':
				if err := yield(src[start : i+1 : i+1]); err != nil {
					return 0, err
				}
				state = mrAfter
			case '"':
				state = mrQuoted
			case '\\':
				state = mrEscaped
			}
		case mrEscaped:
			state = mrIn
		case mrQuoted:
			switch {
			case c == '"' && i+1 < len(src) && src[i+1] == '"':
				i++
			case c == '"':
				state = mrIn
			case c == '\\':
				state = mrQuotedEscaped
			}
		case mrQuotedEscaped:
			state = mrQuoted
		case mrAfter:
			switch c {
			case ',':
				state = mrBefore
			case '}':
				state = mrDone
			default:
				return bad("expected a comma or }")
			}
		}
	}
	for i < len(src) && isSpace(src[i]) {
		i++
	}
	if i != len(src) {
		return bad("junk after }")
	}
	return n, nil
}

// rangeOfMultirange returns the range type of the multirange type t (its
// elem: set for the built-in ones when the table is made, and by
// RegisterMultirange).
func (m *Map) rangeOfMultirange(t *typeInfo) (*typeInfo, error) {
	if t.elem == nil {
		return nil, fmt.Errorf("pgtype: %s has no range type", t.name)
	}
	return t.elem, nil
}

// planMultirange plans a multirange into a pointer to a slice of any
// Range[T] the range type scans into: *Multirange[T] or *[]Range[T]. The
// range plan is made once.
func (m *Map) planMultirange(t *typeInfo, format int16, dst any) ScanPlan {
	rt := reflect.TypeOf(dst)
	st := rt.Elem()
	if st.Kind() != reflect.Slice || !reflect.PointerTo(st.Elem()).Implements(rangeScannerType) {
		return nil
	}
	rangeT, err := m.rangeOfMultirange(t)
	var elemPlan ScanPlan
	if err == nil {
		elemPlan, err = m.PlanScan(rangeT.oid, format, reflect.New(st.Elem()).Interface())
	}
	if err != nil {
		err = fmt.Errorf("pgtype: cannot scan %s into %s: %w", t.name, rt, err)
		return planFunc(func([]byte, any) error { return err })
	}
	return planFunc(func(src []byte, dst any) error {
		if reflect.TypeOf(dst) != rt {
			return errPlanType(dst, rt)
		}
		v := reflect.ValueOf(dst).Elem()
		if src == nil {
			v.SetZero()
			return nil
		}
		var s reflect.Value
		err := multirangeElems(t, format, src,
			func(n int) error {
				s = reflect.MakeSlice(st, n, n)
				return nil
			},
			func(i int, r []byte) error {
				if err := elemPlan.Scan(r, s.Index(i).Addr().Interface()); err != nil {
					return fmt.Errorf("range %d: %w", i, err)
				}
				return nil
			})
		if err != nil {
			return err
		}
		v.Set(s)
		return nil
	})
}

// decodeMultirangeValue decodes a multirange into Multirange[any], its
// ranges' bounds the subtype's default Go values.
func (m *Map) decodeMultirangeValue(t *typeInfo, format int16, src []byte) (any, error) {
	rangeT, err := m.rangeOfMultirange(t)
	if err != nil {
		return nil, err
	}
	var out Multirange[any]
	err = multirangeElems(t, format, src,
		func(n int) error {
			out = make(Multirange[any], n)
			return nil
		},
		func(i int, r []byte) error {
			v, err := m.decodeRangeValue(rangeT, format, r)
			if err != nil {
				return fmt.Errorf("range %d: %w", i, err)
			}
			out[i] = v.(Range[any])
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// appendMultirangeText appends the server's text form of a multirange.
func (m *Map) appendMultirangeText(b []byte, t *typeInfo, format int16, src []byte) ([]byte, error) {
	rangeT, err := m.rangeOfMultirange(t)
	if err != nil {
		return nil, err
	}
	b = append(b, '{')
	err = multirangeElems(t, format, src, func(int) error { return nil }, func(i int, r []byte) error {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		b, err = m.appendRangeText(b, rangeT, format, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// errNullRange is the reason for a nil range in a multirange argument.
var errNullRange = errors.New("a range of a multirange is NULL")

// encodeMultirangeArg encodes a Multirange[T]; a pointer to one is
// followed (nil is NULL), and a nil Multirange is NULL.
func (m *Map) encodeMultirangeArg(t *typeInfo, arg any, mr multirangeArg, buf []byte, depth int) ([]byte, int16, bool, error) {
	rv := reflect.ValueOf(arg)
	if rv.Kind() == reflect.Pointer {
		return m.encodeReflect(t, arg, buf, depth)
	}
	if rv.IsNil() {
		return buf, 1, true, nil
	}
	return m.encodeMultirange(t, arg, mr.multirangeLen(), mr.multirangeAt, buf, depth)
}

// encodeRangeSlice encodes a slice of Range[T] (any type implementing
// rangeArg) for a multirange parameter; ok is false for other arguments.
func (m *Map) encodeRangeSlice(t *typeInfo, arg any, rv reflect.Value, buf []byte, depth int) (out []byte, format int16, null, ok bool, err error) {
	if t.kind != kindMultirange || rv.Kind() != reflect.Slice || !rv.Type().Elem().Implements(rangeArgType) {
		return buf, 0, false, false, nil
	}
	if rv.IsNil() {
		return buf, 1, true, true, nil
	}
	out, format, null, err = m.encodeMultirange(t, arg, rv.Len(), func(i int) any { return rv.Index(i).Interface() }, buf, depth)
	return out, format, null, true, err
}

// encodeMultirange encodes the n ranges at(0) … at(n-1) of a multirange
// argument for a multirange parameter: binary, or a text literal when a
// range can only be sent as text. For another parameter type the argument
// is encoded as the slice it is (an array of ranges).
func (m *Map) encodeMultirange(t *typeInfo, arg any, n int, at func(i int) any, buf []byte, depth int) ([]byte, int16, bool, error) {
	if t.kind != kindMultirange {
		return m.encodeReflect(t, arg, buf, depth)
	}
	rangeT, err := m.rangeOfMultirange(t)
	if err != nil {
		return buf, 0, false, encErr(t, arg, err)
	}
	if n > math.MaxInt32 {
		return buf, 0, false, encErr(t, arg, fmt.Errorf("%d ranges: %w", n, ErrOutOfRange))
	}
	start := len(buf)
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	for i := range n {
		lenPos := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		out, format, null, err := m.encode(rangeT, at(i), buf, depth+1)
		switch {
		case err != nil:
			return buf[:start], 0, false, encErr(t, arg, fmt.Errorf("range %d: %w", i, err))
		case null:
			return buf[:start], 0, false, encErr(t, arg, fmt.Errorf("range %d: %w", i, errNullRange))
		case format == 0:
			return m.encodeMultirangeText(t, rangeT, arg, n, at, buf[:start], depth)
		}
		buf = out
		size := len(buf) - lenPos - 4
		if size > math.MaxInt32 {
			return buf[:start], 0, false, encErr(t, arg, fmt.Errorf("range %d too large", i))
		}
		binary.BigEndian.PutUint32(buf[lenPos:], uint32(size))
	}
	return buf, 1, false, nil
}

// encodeMultirangeText encodes a multirange as a text literal: ranges
// encoded in binary (those without bounds, or with bounds of a binary
// argument type) are turned into their text form.
func (m *Map) encodeMultirangeText(t, rangeT *typeInfo, arg any, n int, at func(i int) any, buf []byte, depth int) ([]byte, int16, bool, error) {
	start := len(buf)
	buf = append(buf, '{')
	var tmp []byte
	for i := range n {
		if i > 0 {
			buf = append(buf, ',')
		}
		out, format, null, err := m.encode(rangeT, at(i), tmp[:0], depth+1)
		switch {
		case err != nil:
			return buf[:start], 0, false, encErr(t, arg, fmt.Errorf("range %d: %w", i, err))
		case null:
			return buf[:start], 0, false, encErr(t, arg, fmt.Errorf("range %d: %w", i, errNullRange))
		case format == 0:
			buf = append(buf, out...)
		default:
			text, err := m.appendRangeText(buf, rangeT, 1, out)
			if err != nil {
				return buf[:start], 0, false, encErr(t, arg, fmt.Errorf("range %d: %w", i, err))
			}
			buf = text
		}
		tmp = out
	}
	return append(buf, '}'), 0, false, nil
}
