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

// sameTextBinary reports whether t's binary form is its text form, so that
// text bytes may stand inside a binary array or composite: the text types
// this Map knows (text, varchar, bpchar, name, unknown, citext, registered
// enums and domains over them) and json. A type the Map does not know is
// handled as text but its binary form is its own (money, pg_lsn, xid, an
// extension type): its text must go in a text literal, for the server to
// parse with the type's input function.
func sameTextBinary(t *typeInfo) bool { return t.known && (t.kind == kindText || t.kind == kindJSON) }

// encodeTextArray encodes a slice as a text array literal {{a,"b c"},{NULL,d}}
// (elements separated by arrayDelim(elem)), for the server to parse: an
// element encoded in binary goes as its text form (binaryToText).
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
			text, err := m.binaryToText(elem, buf[elemStart:])
			if err != nil {
				return buf[:start], 0, false, encErr(t, arg, fmt.Errorf("element %d: %w", i, err))
			}
			buf = append(buf[:elemStart], text...)
		}
		buf = quoteArrayElem(buf, elemStart, delim)
	}
	for range max(len(sh.dims), 1) {
		buf = append(buf, '}')
	}
	return buf, 0, false, nil
}

// errBinaryUnknown is binaryToText's error for a type the Map does not
// know.
var errBinaryUnknown = errors.New("a []byte for a type this package does not know is that type's binary form, which cannot go in a text literal: pass a string for the value's text, or register the type (pgline: Conn.LoadType)")

// binaryToText returns the text form of bin, the binary encoding of a
// value of t, for a text array or composite literal that the server's
// input functions parse. Only types whose binary form this Map decodes
// have one: not a type it does not know (whose []byte argument is the
// type's own binary form), nor a Codec type (whose text is its own), nor
// a type made of them.
func (m *Map) binaryToText(t *typeInfo, bin []byte) ([]byte, error) {
	if !t.known {
		return nil, errBinaryUnknown
	}
	if !decodesBinary(t, 0) {
		return nil, fmt.Errorf("%s has only a binary encoding here, and the literal is text (another value can only go as text)", t.name)
	}
	return m.appendText(nil, t, 1, bin)
}

// decodesBinary reports whether appendText gives the text form of t's
// binary values: t and the types it is made of are known, and none is a
// Codec type.
func decodesBinary(t *typeInfo, depth int) bool {
	if !t.known || t.kind == kindCodec || depth > maxTypeDepth {
		return false
	}
	if t.elem != nil && !decodesBinary(t.elem, depth+1) {
		return false
	}
	for _, f := range t.fields {
		if !decodesBinary(f, depth+1) {
			return false
		}
	}
	return true
}
