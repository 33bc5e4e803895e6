package pgtype

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"strconv"
)

// Binary array layout (array_send): int32 ndim, int32 flags (1 when
// there are NULLs), uint32 element type OID, ndim × (int32 length, int32
// lower bound), then each element in row-major order as int32 length (-1
// for NULL) and bytes. An empty array has ndim 0. Text layout:
// {{1,NULL},{"a \"b\"",x}}, optionally preceded by bounds such as
// [0:1][1:2]=. Lower bounds are not kept in Go slices: decoding ignores
// them and encoding always sends 1; a value's text form (appendText, the
// driver value of package stdlib) writes them as the server does.

// appendArrayBounds appends the bounds decoration of the text form
// ("[0:1][1:2]=") of an array value when a lower bound is not 1, as the
// server writes it, so that a text form read back puts each element at
// its index. The value is checked by arrayElems, not here: a malformed
// header appends nothing.
func appendArrayBounds(b []byte, format int16, src []byte) []byte {
	if format == 0 {
		if len(src) > 0 && src[0] == '[' {
			if i := bytes.IndexByte(src, '='); i > 0 {
				return append(b, src[:i+1]...)
			}
		}
		return b
	}
	if len(src) < 12 {
		return b
	}
	ndim := int(int32(binary.BigEndian.Uint32(src)))
	if ndim <= 0 || ndim > maxArrayDims || len(src) < 12+8*ndim {
		return b
	}
	ones := true
	for d := range ndim {
		ones = ones && int32(binary.BigEndian.Uint32(src[16+8*d:])) == 1
	}
	if ones {
		return b
	}
	for d := range ndim {
		n := int64(int32(binary.BigEndian.Uint32(src[12+8*d:])))
		lo := int64(int32(binary.BigEndian.Uint32(src[16+8*d:])))
		b = append(b, '[')
		b = strconv.AppendInt(b, lo, 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, lo+n-1, 10)
		b = append(b, ']')
	}
	return append(b, '=')
}

// maxArrayDims is the largest ndim the server produces (MAXDIM).
const maxArrayDims = 6

// arrayElems validates an array value and calls f for each element in
// row-major order (nil for NULL). dims is called first, before any
// element, with the length of each dimension (none for an empty array),
// so that the caller can allocate; the element count (the product) has
// been checked against the size of src.
func arrayElems(t *typeInfo, format int16, src []byte, dims func([]int) error, f func(i int, elem []byte) error) error {
	if format == 0 {
		d, err := parseTextArray(t, src, nil)
		if err != nil {
			return err
		}
		if err := dims(d); err != nil {
			return err
		}
		_, err = parseTextArray(t, src, f)
		return err
	}
	if len(src) < 12 {
		return decodeErr(t, 1, "%d bytes, want at least 12", len(src))
	}
	ndim := int32(binary.BigEndian.Uint32(src))
	flags := int32(binary.BigEndian.Uint32(src[4:]))
	elemOID := binary.BigEndian.Uint32(src[8:])
	if ndim < 0 || ndim > maxArrayDims {
		return decodeErr(t, 1, "%d dimensions, want 0 to %d", ndim, maxArrayDims)
	}
	if flags != 0 && flags != 1 {
		return decodeErr(t, 1, "flags %d", flags)
	}
	if elemOID != t.elem.oid {
		return decodeErr(t, 1, "element type OID %d, want %d", elemOID, t.elem.oid)
	}
	rest := src[12:]
	if len(rest) < 8*int(ndim) {
		return decodeErr(t, 1, "truncated dimensions")
	}
	var dimBuf [maxArrayDims]int
	d := dimBuf[:ndim]
	count := 1
	for i := range d {
		l := int32(binary.BigEndian.Uint32(rest[8*i:]))
		if l < 0 {
			return decodeErr(t, 1, "dimension %d has length %d", i+1, l)
		}
		d[i] = int(l)
	}
	rest = rest[8*ndim:]
	for _, l := range d {
		if l == 0 { // no elements: the server normalises this to ndim 0
			count, d = 0, nil
			break
		}
		count *= l
		if count > len(rest)/4 { // every element takes at least 4 bytes
			return decodeErr(t, 1, "%v elements in %d bytes", d, len(rest))
		}
	}
	if ndim == 0 {
		count = 0
	}
	if err := dims(d); err != nil {
		return err
	}
	for i := 0; i < count; i++ {
		if len(rest) < 4 {
			return decodeErr(t, 1, "truncated at element %d", i)
		}
		l := int32(binary.BigEndian.Uint32(rest))
		rest = rest[4:]
		var elem []byte
		switch {
		case l == -1:
		case l < 0 || int64(l) > int64(len(rest)):
			return decodeErr(t, 1, "element %d has length %d with %d bytes left", i, l, len(rest))
		default:
			elem, rest = rest[:l:l], rest[l:]
		}
		if err := f(i, elem); err != nil {
			return err
		}
	}
	if len(rest) != 0 {
		return decodeErr(t, 1, "%d bytes after the last element", len(rest))
	}
	return nil
}

// arrayBraces returns how many sub-arrays close (and reopen) before
// element i > 0 of an array of dimensions dims, in row-major order.
func arrayBraces(dims []int, i int) int {
	n, block := 0, 1
	for k := len(dims) - 1; k > 0; k-- {
		block *= dims[k]
		if i%block != 0 {
			break
		}
		n++
	}
	return n
}

// appendArrayText appends the text form of an array (without bounds
// decoration), calling elemText for each non-NULL element.
func appendArrayText(b []byte, t *typeInfo, format int16, src []byte, elemText func(b []byte, elem []byte) ([]byte, error)) ([]byte, error) {
	b = appendArrayBounds(b, format, src)
	var dims []int
	delim := arrayDelim(t.elem)
	err := arrayElems(t, format, src,
		func(d []int) error {
			dims = append(dims, d...)
			for range max(len(d), 1) {
				b = append(b, '{')
			}
			return nil
		},
		func(i int, elem []byte) error {
			if i > 0 {
				n := arrayBraces(dims, i)
				for range n {
					b = append(b, '}')
				}
				b = append(b, delim)
				for range n {
					b = append(b, '{')
				}
			}
			if elem == nil {
				b = append(b, "NULL"...)
				return nil
			}
			start := len(b)
			var err error
			if b, err = elemText(b, elem); err != nil {
				return err
			}
			b = quoteArrayElem(b, start, delim)
			return nil
		})
	if err != nil {
		return nil, err
	}
	for range max(len(dims), 1) {
		b = append(b, '}')
	}
	return b, nil
}

// planArray plans an array into a slice (*[]E), or into nested slices
// (*[][]E …) for a multi-dimensional array: each element goes through the
// element type's plan for *E, so NULL elements need a pointer (or other
// NULL-capable) element type. The deepest nesting whose innermost element
// type the element type scans into is used, so [][]byte is a
// one-dimensional bytea[] destination; arrays of json and composite types
// are one-dimensional in Go ([][]any for a composite[]). An array with another number of
// dimensions than the destination is an error, except that an empty
// array scans into any depth. NULL sets the slice to nil.
func (m *Map) planArray(t *typeInfo, format int16, dst any) ScanPlan {
	rt := reflect.TypeOf(dst)
	st := rt.Elem()
	if st.Kind() != reflect.Slice || st.Elem().Kind() == reflect.Uint8 {
		return nil
	}
	levels := []reflect.Type{st}
	for e := st.Elem(); e.Kind() == reflect.Slice && e.Elem().Kind() != reflect.Uint8 && len(levels) < maxArrayDims; e = e.Elem() {
		levels = append(levels, e)
	}
	if sliceValued(t.elem) {
		levels = levels[:1] // [][]any for a composite[] is one dimension of []any
	}
	for depth := len(levels); depth >= 1; depth-- {
		leaf := levels[depth-1].Elem()
		if elemPlan, err := m.PlanScan(t.elem.oid, format, reflect.New(leaf).Interface()); err == nil {
			return arrayPlan(t, format, rt, levels[:depth], elemPlan)
		}
	}
	return nil
}

func arrayPlan(t *typeInfo, format int16, rt reflect.Type, levels []reflect.Type, elemPlan ScanPlan) ScanPlan {
	st := levels[0]
	return planFunc(func(src []byte, dst any) error {
		if reflect.TypeOf(dst) != rt {
			return errPlanType(dst, rt)
		}
		v := reflect.ValueOf(dst).Elem()
		if src == nil {
			v.SetZero()
			return nil
		}
		var (
			top    reflect.Value
			leaves []reflect.Value
			last   int
		)
		err := arrayElems(t, format, src,
			func(dims []int) error {
				if len(dims) == 0 {
					top = reflect.MakeSlice(st, 0, 0)
					return nil
				}
				if len(dims) != len(levels) {
					return scanErr(t, "", dst, fmt.Errorf("array has %d dimensions, the destination %d", len(dims), len(levels)))
				}
				if len(dims) == 1 {
					top = reflect.MakeSlice(st, dims[0], dims[0])
					return nil
				}
				top = makeNested(levels, dims, &leaves)
				last = dims[len(dims)-1]
				return nil
			},
			func(i int, elem []byte) error {
				var e reflect.Value
				if leaves == nil {
					e = top.Index(i)
				} else {
					e = leaves[i/last].Index(i % last)
				}
				if err := elemPlan.Scan(elem, e.Addr().Interface()); err != nil {
					return &ArrayElemError{Index: i, Err: err}
				}
				return nil
			})
		if err != nil {
			return err
		}
		v.Set(top)
		return nil
	})
}

// makeNested makes nested slices of types levels and lengths dims, and
// appends the innermost ones to leaves in order.
func makeNested(levels []reflect.Type, dims []int, leaves *[]reflect.Value) reflect.Value {
	s := reflect.MakeSlice(levels[0], dims[0], dims[0])
	if len(dims) == 1 {
		*leaves = append(*leaves, s)
		return s
	}
	for i := range dims[0] {
		s.Index(i).Set(makeNested(levels[1:], dims[1:], leaves))
	}
	return s
}

// decodeArrayValue decodes an array into []any of the element defaults,
// nested []any for more than one dimension.
func (m *Map) decodeArrayValue(t *typeInfo, format int16, src []byte) (any, error) {
	var (
		top    []any
		leaves [][]any
		last   int
	)
	err := arrayElems(t, format, src,
		func(dims []int) error {
			if len(dims) == 0 {
				top = []any{}
				return nil
			}
			top = makeNestedAny(dims, &leaves)
			last = dims[len(dims)-1]
			return nil
		},
		func(i int, elem []byte) error {
			v, err := m.decodeValue(t.elem, format, elem)
			leaves[i/last][i%last] = v
			return err
		})
	if err != nil {
		return nil, err
	}
	return top, nil
}

func makeNestedAny(dims []int, leaves *[][]any) []any {
	s := make([]any, dims[0])
	if len(dims) == 1 {
		*leaves = append(*leaves, s)
		return s
	}
	for i := range s {
		s[i] = makeNestedAny(dims[1:], leaves)
	}
	return s
}

// ArrayElemError reports the array element that could not be scanned.
type ArrayElemError struct {
	Index int // 0-based, in row-major order for a multi-dimensional array
	Err   error
}

// Error returns "array element 3: cannot scan NULL into *int32".
func (e *ArrayElemError) Error() string {
	return "array element " + itoa(e.Index) + ": " + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *ArrayElemError) Unwrap() error { return e.Err }

func itoa(i int) string { return string(appendPadded(nil, i, 1)) }

// arrayDelim is the separator of the elements of an array of elem in its
// text form (pg_type.typdelim): a semicolon for box, whose values hold
// commas, and a comma for every other type.
func arrayDelim(elem *typeInfo) byte {
	if elem != nil && elem.kind == kindBox {
		return ';'
	}
	return ','
}

// sliceValued reports whether values of t are Go slices (json documents,
// composite values as []any, multiranges), so that nested slices are not
// dimensions of an array of t: such arrays are one-dimensional in Go.
func sliceValued(t *typeInfo) bool {
	return t.kind == kindJSON || t.kind == kindJSONB || t.kind == kindComposite || t.kind == kindMultirange
}
