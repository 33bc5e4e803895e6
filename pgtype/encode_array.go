package pgtype

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
)

// arrayShape is the shape of a (possibly nested) slice argument.
type arrayShape struct {
	dims   []int           // nil for an empty array
	leaves []reflect.Value // the elements in row-major order; nil for a one-dimensional slice
	rv     reflect.Value   // the one-dimensional slice when leaves is nil
}

func (s *arrayShape) count() int {
	if s.dims == nil {
		return 0
	}
	if s.leaves == nil {
		return s.rv.Len()
	}
	return len(s.leaves)
}

func (s *arrayShape) elem(i int) any {
	if s.leaves == nil {
		return s.rv.Index(i).Interface()
	}
	return s.leaves[i].Interface()
}

// errNotRectangular is the reason of the EncodeError for nested slices of
// different lengths.
var errNotRectangular = errors.New("nested slices of different lengths: a multi-dimensional array must be rectangular")

// shapeOf finds the dimensions of rv: nested slices (not []byte, and not
// for json or composite elements, whose values may be slices) are dimensions, found
// from the first element at each level; every other sub-slice must have
// the same length.
func shapeOf(rv reflect.Value, elem *typeInfo) (arrayShape, error) {
	dims := []int{rv.Len()}
	for cur := rv; !sliceValued(elem) && cur.Len() > 0; {
		first := subSlice(cur.Index(0))
		if !first.IsValid() {
			break
		}
		if len(dims) == maxArrayDims {
			return arrayShape{}, fmt.Errorf("more than %d dimensions: %w", maxArrayDims, ErrOutOfRange)
		}
		dims = append(dims, first.Len())
		cur = first
	}
	for _, d := range dims {
		if d > math.MaxInt32 {
			return arrayShape{}, fmt.Errorf("%d elements: %w", d, ErrOutOfRange)
		}
	}
	sh := arrayShape{dims: dims, rv: rv}
	if len(dims) > 1 {
		if err := collectLeaves(rv, dims, 0, &sh.leaves); err != nil {
			return arrayShape{}, err
		}
	}
	for _, d := range dims {
		if d == 0 {
			return arrayShape{}, nil // no elements: an empty array
		}
	}
	return sh, nil
}

// subSlice returns v (or the value in the interface v) when it is a slice
// other than []byte, and the invalid Value otherwise.
func subSlice(v reflect.Value) reflect.Value {
	if v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Slice || v.Type().Elem().Kind() == reflect.Uint8 {
		return reflect.Value{}
	}
	return v
}

func collectLeaves(v reflect.Value, dims []int, level int, leaves *[]reflect.Value) error {
	if level > 0 {
		v = subSlice(v)
		if !v.IsValid() || v.Len() != dims[level] {
			return errNotRectangular
		}
	}
	if level == len(dims)-1 {
		for i := range v.Len() {
			*leaves = append(*leaves, v.Index(i))
		}
		return nil
	}
	for i := range v.Len() {
		if err := collectLeaves(v.Index(i), dims, level+1, leaves); err != nil {
			return err
		}
	}
	return nil
}

// encodeArray encodes a slice, or nested slices for a multi-dimensional
// array, with lower bounds 1. Elements are encoded for the element type;
// the array is binary unless an element can only be sent as text (a Go
// string for an int8[] parameter), in which case the whole array is sent
// as a text literal. A slice for a parameter of a type this package does
// not know (an enum array) is sent as a text array literal.
func (m *Map) encodeArray(t *typeInfo, arg any, rv reflect.Value, buf []byte, depth int) ([]byte, int16, bool, error) {
	if t.kind != kindArray {
		if !t.known {
			sh, err := shapeOf(rv, t)
			if err != nil {
				return buf, 0, false, encErr(t, arg, err)
			}
			return m.encodeTextArray(t, t, arg, &sh, buf, depth)
		}
		return buf, 0, false, encErr(t, arg, errUnsupported)
	}
	elem := t.elem
	sh, err := shapeOf(rv, elem)
	if err != nil {
		return buf, 0, false, encErr(t, arg, err)
	}
	start := len(buf)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(sh.dims)))
	flagsPos := len(buf)
	buf = binary.BigEndian.AppendUint32(buf, 0)
	buf = binary.BigEndian.AppendUint32(buf, elem.oid)
	for _, d := range sh.dims {
		buf = binary.BigEndian.AppendUint32(buf, uint32(d))
		buf = binary.BigEndian.AppendUint32(buf, 1)
	}
	n := sh.count()
	for i := 0; i < n; i++ {
		lenPos := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		var (
			f    int16
			null bool
			err  error
		)
		buf, f, null, err = m.encode(elem, sh.elem(i), buf, depth+1)
		if err != nil {
			return buf[:start], 0, false, fmt.Errorf("array element %d: %w", i, err)
		}
		if null {
			binary.BigEndian.PutUint32(buf[flagsPos:], 1)
			binary.BigEndian.PutUint32(buf[lenPos:], math.MaxUint32) // -1
			continue
		}
		if f == 0 && !sameTextBinary(elem) {
			return m.encodeTextArray(t, elem, arg, &sh, buf[:start], depth)
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

// encodeTextArray encodes a slice as a text array literal {{a,"b c"},{NULL,d}}
// (elements separated by arrayDelim(elem)); every element must encode as
// text.
func (m *Map) encodeTextArray(t, elem *typeInfo, arg any, sh *arrayShape, buf []byte, depth int) ([]byte, int16, bool, error) {
	start := len(buf)
	delim := arrayDelim(elem)
	for range max(len(sh.dims), 1) {
		buf = append(buf, '{')
	}
	n := sh.count()
	for i := 0; i < n; i++ {
		if i > 0 {
			k := arrayBraces(sh.dims, i)
			for range k {
				buf = append(buf, '}')
			}
			buf = append(buf, delim)
			for range k {
				buf = append(buf, '{')
			}
		}
		elemStart := len(buf)
		out, f, null, err := m.encode(elem, sh.elem(i), buf, depth+1)
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
		buf = quoteArrayElem(buf, elemStart, delim)
	}
	for range max(len(sh.dims), 1) {
		buf = append(buf, '}')
	}
	return buf, 0, false, nil
}
