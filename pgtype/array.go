package pgtype

import (
	"encoding/binary"
	"reflect"
)

// Binary array layout (array_send): int32 ndim, int32 flags (1 when
// there are NULLs), uint32 element type OID, ndim × (int32 length, int32
// lower bound), then each element as int32 length (-1 for NULL) and bytes.
// An empty array has ndim 0. Text layout: {1,NULL,"a \"b\""}, optionally
// preceded by bounds such as [0:1]=.

// maxArrayDims is the largest ndim the server produces (MAXDIM).
const maxArrayDims = 6

// arrayElems validates an array value and calls f for each element in
// order (nil for NULL). n is called first with the element count, before
// any element, so that the caller can allocate. Only one-dimensional (and
// empty) arrays are supported.
func arrayElems(t *typeInfo, format int16, src []byte, n func(int) error, f func(i int, elem []byte) error) error {
	if format == 0 {
		count, err := parseTextArray(t, src, nil)
		if err != nil {
			return err
		}
		if err := n(count); err != nil {
			return err
		}
		_, err = parseTextArray(t, src, f)
		return err
	}
	if len(src) < 12 {
		return decodeErr(t, 1, "%d bytes, want at least 12", len(src))
	}
	ndim := int32(binary.BigEndian.Uint32(src))
	elemOID := binary.BigEndian.Uint32(src[8:])
	if ndim < 0 || ndim > maxArrayDims {
		return decodeErr(t, 1, "%d dimensions", ndim)
	}
	if ndim > 1 {
		return decodeErr(t, 1, "%d-dimensional arrays are not supported; only one-dimensional", ndim)
	}
	if elemOID != t.elem.oid {
		return decodeErr(t, 1, "element type OID %d, want %d", elemOID, t.elem.oid)
	}
	rest := src[12:]
	count := 0
	if ndim == 1 {
		if len(rest) < 8 {
			return decodeErr(t, 1, "truncated dimensions")
		}
		length := int32(binary.BigEndian.Uint32(rest))
		rest = rest[8:]
		if length < 0 || int64(length) > int64(len(rest)/4) { // every element takes at least 4 bytes
			return decodeErr(t, 1, "%d elements in %d bytes", length, len(rest))
		}
		count = int(length)
	}
	if err := n(count); err != nil {
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

// parseTextArray parses a one-dimensional text array, calling f (when not
// nil) for each element, and returns the number of elements.
func parseTextArray(t *typeInfo, src []byte, f func(i int, elem []byte) error) (int, error) {
	bad := func(why string) (int, error) { return 0, decodeErr(t, 0, "%s in %q", why, clip(src)) }
	s := src
	if len(s) > 0 && s[0] == '[' { // bounds decoration: [1:3]=
		i := indexByte(s, '=')
		if i < 0 {
			return bad("unterminated bounds")
		}
		if indexByte(s[1:i], '[') >= 0 {
			return bad("more than one dimension")
		}
		s = s[i+1:]
	}
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return bad("missing braces")
	}
	s = s[1 : len(s)-1]
	if len(trimSpace(s)) == 0 {
		return 0, nil
	}
	var scratch []byte
	n := 0
	for {
		s = trimSpace(s)
		var elem []byte
		if len(s) > 0 && s[0] == '"' {
			scratch = scratch[:0]
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
					if i == len(s) {
						break
					}
				}
				scratch = append(scratch, s[i])
			}
			if i >= len(s) {
				return bad("unterminated quoted element")
			}
			elem = scratch
			if elem == nil {
				elem = []byte{}
			}
			s = trimSpace(s[i+1:])
		} else {
			i := 0
			for i < len(s) && s[i] != ',' {
				if s[i] == '{' || s[i] == '}' || s[i] == '"' || s[i] == '\\' {
					return bad("nested or malformed element")
				}
				i++
			}
			elem = s[:i]
			for len(elem) > 0 && elem[len(elem)-1] == ' ' {
				elem = elem[:len(elem)-1]
			}
			if len(elem) == 0 {
				return bad("empty element")
			}
			if len(elem) == 4 && (elem[0]|0x20) == 'n' && (elem[1]|0x20) == 'u' && (elem[2]|0x20) == 'l' && (elem[3]|0x20) == 'l' {
				elem = nil
			}
			s = s[i:]
		}
		if f != nil {
			if err := f(n, elem); err != nil {
				return 0, err
			}
		}
		n++
		if len(s) == 0 {
			return n, nil
		}
		if s[0] != ',' {
			return bad("missing comma")
		}
		s = s[1:]
	}
}

// planArray plans a one-dimensional array into a slice (*[]E): each
// element goes through the element type's plan for *E, so NULL elements
// need a pointer (or other NULL-capable) element type. NULL sets the
// slice to nil.
func (m *Map) planArray(t *typeInfo, format int16, dst any) ScanPlan {
	rt := reflect.TypeOf(dst)
	st := rt.Elem()
	if st.Kind() != reflect.Slice || st.Elem().Kind() == reflect.Uint8 {
		return nil
	}
	elemPlan, err := m.PlanScan(t.elem.oid, format, reflect.New(st.Elem()).Interface())
	if err != nil {
		return nil
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
		err := arrayElems(t, format, src,
			func(n int) error { s = reflect.MakeSlice(st, n, n); return nil },
			func(i int, elem []byte) error {
				if err := elemPlan.Scan(elem, s.Index(i).Addr().Interface()); err != nil {
					return &ArrayElemError{Index: i, Err: err}
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

// ArrayElemError reports the array element that could not be scanned.
type ArrayElemError struct {
	Index int // 0-based
	Err   error
}

// Error returns "array element 3: cannot scan NULL into *int32".
func (e *ArrayElemError) Error() string {
	return "array element " + itoa(e.Index) + ": " + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *ArrayElemError) Unwrap() error { return e.Err }

func itoa(i int) string { return string(appendPadded(nil, i, 1)) }
