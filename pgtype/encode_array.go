package pgtype

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
)

// encodeArray encodes a slice as a one-dimensional array with lower bound
// 1. Elements are encoded for the element type; the array is binary unless
// an element can only be sent as text (a Go string for an int8[]
// parameter), in which case the whole array is sent as a text literal. A
// slice for a parameter of a type this package does not know (an enum
// array) is sent as a text array literal.
func (m *Map) encodeArray(t *typeInfo, arg any, rv reflect.Value, buf []byte, depth int) ([]byte, int16, bool, error) {
	if t.kind != kindArray {
		if !t.known {
			return m.encodeTextArray(t, t, arg, rv, buf, depth)
		}
		return buf, 0, false, encErr(t, arg, errUnsupported)
	}
	elem := t.elem
	n := rv.Len()
	if n > math.MaxInt32 {
		return buf, 0, false, encErr(t, arg, fmt.Errorf("%d elements: %w", n, ErrOutOfRange))
	}
	start := len(buf)
	ndim := uint32(0)
	if n > 0 {
		ndim = 1
	}
	buf = binary.BigEndian.AppendUint32(buf, ndim)
	flagsPos := len(buf)
	buf = binary.BigEndian.AppendUint32(buf, 0)
	buf = binary.BigEndian.AppendUint32(buf, elem.oid)
	if n > 0 {
		buf = binary.BigEndian.AppendUint32(buf, uint32(n))
		buf = binary.BigEndian.AppendUint32(buf, 1)
	}
	for i := 0; i < n; i++ {
		lenPos := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		var (
			f    int16
			null bool
			err  error
		)
		buf, f, null, err = m.encode(elem, rv.Index(i).Interface(), buf, depth+1)
		if err != nil {
			return buf[:start], 0, false, fmt.Errorf("array element %d: %w", i, err)
		}
		if null {
			binary.BigEndian.PutUint32(buf[flagsPos:], 1)
			binary.BigEndian.PutUint32(buf[lenPos:], math.MaxUint32) // -1
			continue
		}
		if f == 0 && !sameTextBinary(elem) {
			return m.encodeTextArray(t, elem, arg, rv, buf[:start], depth)
		}
		size := len(buf) - lenPos - 4
		if size > math.MaxInt32 {
			return buf[:start], 0, false, encErr(t, arg, fmt.Errorf("element %d too large", i))
		}
		binary.BigEndian.PutUint32(buf[lenPos:], uint32(size))
	}
	return buf, 1, false, nil
}

// sameTextBinary reports whether t's binary form is its text form.
func sameTextBinary(t *typeInfo) bool { return t.kind == kindText || t.kind == kindJSON }

// encodeTextArray encodes a slice as a text array literal {a,"b c",NULL};
// every element must encode as text.
func (m *Map) encodeTextArray(t, elem *typeInfo, arg any, rv reflect.Value, buf []byte, depth int) ([]byte, int16, bool, error) {
	start := len(buf)
	buf = append(buf, '{')
	for i := 0; i < rv.Len(); i++ {
		if i > 0 {
			buf = append(buf, ',')
		}
		elemStart := len(buf)
		out, f, null, err := m.encode(elem, rv.Index(i).Interface(), buf, depth+1)
		if err != nil {
			return buf[:start], 0, false, fmt.Errorf("array element %d: %w", i, err)
		}
		buf = out
		if null {
			buf = append(buf, "NULL"...)
			continue
		}
		if f != 0 && !sameTextBinary(elem) {
			return buf[:start], 0, false, encErr(t, arg, fmt.Errorf("element %d has only a binary encoding while others are text", i))
		}
		buf = quoteArrayElem(buf, elemStart)
	}
	return append(buf, '}'), 0, false, nil
}
