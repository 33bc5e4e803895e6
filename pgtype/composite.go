package pgtype

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
)

// Binary composite layout (record_send): int32 field count, then per
// field uint32 type OID, int32 length (-1 for NULL) and bytes. Text
// layout (record_out): (1,"a b",,"") — an empty unquoted field is NULL;
// a field is quoted when empty or holding "\(), or white space, with "
// and \ doubled inside the quotes.

// maxTypeDepth bounds nesting of composite, range and array types.
const maxTypeDepth = 16

// compositeFields validates a composite value and calls f for each field
// with its type (nil in text format when t has no registered fields: the
// field is then text) and bytes (nil for NULL). n is called first with
// the field count.
func (m *Map) compositeFields(t *typeInfo, format int16, src []byte, n func(int) error, f func(i int, ft *typeInfo, field []byte) error) error {
	if format == 0 {
		count, err := parseComposite(t, src, nil)
		if err != nil {
			return err
		}
		if t.fields != nil && count != len(t.fields) {
			return decodeErr(t, 0, "%d fields, want %d", count, len(t.fields))
		}
		if err := n(count); err != nil {
			return err
		}
		_, err = parseComposite(t, src, func(i int, field []byte) error {
			ft := textType
			if t.fields != nil {
				ft = t.fields[i]
			}
			return f(i, ft, field)
		})
		return err
	}
	if len(src) < 4 {
		return decodeErr(t, 1, "%d bytes, want at least 4", len(src))
	}
	count := int32(binary.BigEndian.Uint32(src))
	rest := src[4:]
	if count < 0 || int64(count) > int64(len(rest)/8) { // every field takes at least 8 bytes
		return decodeErr(t, 1, "%d fields in %d bytes", count, len(rest))
	}
	if t.fields != nil && int(count) != len(t.fields) {
		return decodeErr(t, 1, "%d fields, want %d", count, len(t.fields))
	}
	if err := n(int(count)); err != nil {
		return err
	}
	for i := 0; i < int(count); i++ {
		if len(rest) < 8 {
			return decodeErr(t, 1, "truncated at field %d", i+1)
		}
		oid := binary.BigEndian.Uint32(rest)
		l := int32(binary.BigEndian.Uint32(rest[4:]))
		rest = rest[8:]
		var field []byte
		switch {
		case l == -1:
		case l < 0 || int64(l) > int64(len(rest)):
			return decodeErr(t, 1, "field %d has length %d with %d bytes left", i+1, l, len(rest))
		default:
			field, rest = rest[:l:l], rest[l:]
		}
		var ft *typeInfo
		if t.fields != nil {
			ft = t.fields[i]
			if ft.oid != oid {
				return decodeErr(t, 1, "field %d has type OID %d, registered %d", i+1, oid, ft.oid)
			}
		} else {
			var err error
			if ft, err = m.recordFieldType(t, oid); err != nil {
				return &FieldError{Index: i, Err: err}
			}
		}
		if err := f(i, ft, field); err != nil {
			return err
		}
	}
	if len(rest) != 0 {
		return decodeErr(t, 1, "%d bytes after the last field", len(rest))
	}
	return nil
}

// recordFieldType returns the type of a field of the anonymous record t
// (record, whose field types come with each binary value) from the
// field's type OID. A nested anonymous record (or array of them) gets
// the record type of the next nesting level, so that recursion on
// untrusted nesting stops at maxTypeDepth. A field whose type this Map
// reads only in text (a type it does not know, such as money or an
// unregistered enum, or a type whose columns it requests in text) is an
// error: the record came in binary, and bytes of a binary form the Map
// cannot decode must not pass for the field's text.
func (m *Map) recordFieldType(t *typeInfo, oid uint32) (*typeInfo, error) {
	ft := m.typeOf(oid)
	switch {
	case isAnonymous(ft):
		level := t.nest + 1
		if level >= maxTypeDepth {
			return nil, decodeErr(t, 1, "records nested more than %d deep", maxTypeDepth)
		}
		n := &nestedRecordTypes()[level]
		if ft.kind == kindArray {
			return &n.array, nil
		}
		return &n.record, nil
	case resultFormat(ft, 0) == 0:
		name := ft.name // "OID 790" for a type the Map does not know
		if n, ok := builtinDatabaseTypeNames[oid]; ok && !ft.known {
			name = strings.ToLower(n) + " (" + name + ")"
		}
		return nil, fmt.Errorf("%w: type %s has no binary decoder here, and records are read in binary; cast the field to text in the query (ROW(x::text, ...)) or register its type (pgline: Conn.LoadType)", ErrRecordField, name)
	}
	return ft, nil
}

// ErrRecordField is matched (errors.Is) by the error for a field of an
// anonymous record (ROW(...), record) whose type this package cannot
// decode in binary, the format records are read in: a type the Map does
// not know (money, pg_lsn, an unregistered enum or domain), or one it
// reads only in text.
var ErrRecordField = errors.New("pgtype: cannot decode record field")

// nestedRecordTypes holds the record and record[] types of each nesting
// level of anonymous records inside anonymous records (level 0 is the
// built-in record type's); it is never modified once made.
var nestedRecordTypes = sync.OnceValue(func() *[maxTypeDepth]struct{ record, array typeInfo } {
	var n [maxTypeDepth]struct{ record, array typeInfo }
	for i := range n {
		n[i].record = typeInfo{oid: RecordOID, base: RecordOID, name: "record", kind: kindComposite, known: true, nest: i}
		n[i].array = typeInfo{oid: RecordArrayOID, base: RecordArrayOID, name: "record[]", kind: kindArray, elem: &n[i].record, known: true}
	}
	return &n
})

// isAnonymous reports whether t is record, or an array of record.
func isAnonymous(t *typeInfo) bool {
	if t.kind == kindArray {
		t = t.elem
	}
	return t.kind == kindComposite && t.fields == nil
}

// textType is the type of the fields of an unregistered composite in text
// format.
var textType = &typeInfo{oid: TextOID, base: TextOID, name: "text", kind: kindText, known: true}

// parseComposite parses the text form of a composite value, calling f
// (when not nil) with each field (nil for NULL), and returns the field
// count.
func parseComposite(t *typeInfo, src []byte, f func(i int, field []byte) error) (int, error) {
	if len(src) < 2 || src[0] != '(' || src[len(src)-1] != ')' {
		return 0, decodeErr(t, 0, "missing parentheses in %q", clip(src))
	}
	s := src[1 : len(src)-1]
	var scratch []byte
	n := 0
	for {
		scratch = scratch[:0]
		quoted := false
		i := 0
		if len(s) > 0 && s[0] != ',' && scratch == nil {
			scratch = []byte{}
		}
		for ; i < len(s) && (quoted || s[i] != ','); i++ {
			c := s[i]
			switch {
			case c == '"' && quoted && i+1 < len(s) && s[i+1] == '"':
				scratch = append(scratch, '"')
				i++
			case c == '"':
				quoted = !quoted
			case c == '\\':
				i++
				if i == len(s) {
					return 0, decodeErr(t, 0, "trailing backslash in %q", clip(src))
				}
				scratch = append(scratch, s[i])
			default:
				scratch = append(scratch, c)
			}
		}
		if quoted {
			return 0, decodeErr(t, 0, "unterminated quotes in %q", clip(src))
		}
		field := scratch
		if i == 0 {
			field = nil // an empty unquoted field is NULL
		}
		if f != nil {
			if err := f(n, field); err != nil {
				return 0, err
			}
		}
		n++
		if i == len(s) {
			return n, nil
		}
		s = s[i+1:]
	}
}

// appendQuoted appends text to b quoted as record_out and range_out do:
// when it is empty or holds a character of special or white space, in
// double quotes with " and \ doubled.
func appendQuoted(b, text []byte, special string) []byte {
	need := len(text) == 0
	for _, c := range text {
		if c == '"' || c == '\\' || c == ' ' || c >= '\t' && c <= '\r' || indexByte([]byte(special), c) >= 0 {
			need = true
			break
		}
	}
	if !need {
		return append(b, text...)
	}
	b = append(b, '"')
	for _, c := range text {
		if c == '"' || c == '\\' {
			b = append(b, c)
		}
		b = append(b, c)
	}
	return append(b, '"')
}

// appendCompositeText appends the text form of a composite value.
func (m *Map) appendCompositeText(b []byte, t *typeInfo, format int16, src []byte) ([]byte, error) {
	b = append(b, '(')
	var tmp []byte
	err := m.compositeFields(t, format, src, func(int) error { return nil }, func(i int, ft *typeInfo, field []byte) error {
		if i > 0 {
			b = append(b, ',')
		}
		if field == nil {
			return nil
		}
		var err error
		if tmp, err = m.appendText(tmp[:0], ft, format, field); err != nil {
			return err
		}
		b = appendQuoted(b, tmp, "(),")
		return nil
	})
	if err != nil {
		return nil, err
	}
	return append(b, ')'), nil
}

// decodeCompositeValue decodes a composite into []any of the field
// defaults.
func (m *Map) decodeCompositeValue(t *typeInfo, format int16, src []byte) (any, error) {
	var out []any
	err := m.compositeFields(t, format, src,
		func(n int) error { out = make([]any, n); return nil },
		func(i int, ft *typeInfo, field []byte) error {
			v, err := m.decodeValue(ft, format, field)
			out[i] = v
			return err
		})
	return out, err
}

// FieldError reports the composite field that could not be scanned or
// encoded.
type FieldError struct {
	Index int // 0-based
	Err   error
}

// Error returns "field 2: cannot scan NULL into *int32" (1-based, as in SQL).
func (e *FieldError) Error() string { return "field " + itoa(e.Index+1) + ": " + e.Err.Error() }

// Unwrap returns e.Err.
func (e *FieldError) Unwrap() error { return e.Err }

// structFields returns the indexes of the exported fields of st in order.
func structFields(st reflect.Type) []int {
	var idx []int
	for i := range st.NumField() {
		if st.Field(i).IsExported() {
			idx = append(idx, i)
		}
	}
	return idx
}

// planComposite plans a composite type into *[]any (the field defaults)
// and into a pointer to a struct, whose exported fields take the fields
// in order (their count must match). For a registered composite the
// field plans are made once; for record, whose field types come with each
// value, per value.
func (m *Map) planComposite(t *typeInfo, format int16, dst any) ScanPlan {
	rt := reflect.TypeOf(dst)
	if _, ok := dst.(*[]any); ok {
		return valuePlan(func(src []byte) ([]any, error) {
			v, err := m.decodeCompositeValue(t, format, src)
			if err != nil {
				return nil, err
			}
			return v.([]any), nil
		})
	}
	st := rt.Elem()
	if st.Kind() != reflect.Struct {
		return nil
	}
	idx := structFields(st)
	if t.fields != nil && len(idx) != len(t.fields) {
		err := fmt.Errorf("pgtype: cannot scan %s (%d fields) into %s: it has %d exported fields", t.name, len(t.fields), rt, len(idx))
		return planFunc(func([]byte, any) error { return err })
	}
	var plans []ScanPlan
	if t.fields != nil || format == 0 {
		plans = make([]ScanPlan, len(idx))
		for i, fi := range idx {
			ft := textType
			if t.fields != nil {
				ft = t.fields[i]
			}
			p, err := m.PlanScan(ft.oid, format, reflect.New(st.Field(fi).Type).Interface())
			if err != nil {
				err = &FieldError{Index: i, Err: err}
				return planFunc(func([]byte, any) error { return err })
			}
			plans[i] = p
		}
	}
	return planFunc(func(src []byte, dst any) error {
		if reflect.TypeOf(dst) != rt {
			return errPlanType(dst, rt)
		}
		if src == nil {
			return errNull(dst)
		}
		v := reflect.New(st).Elem()
		err := m.compositeFields(t, format, src,
			func(n int) error {
				if n != len(idx) {
					return scanErr(t, "", dst, fmt.Errorf("%d fields into %d exported struct fields", n, len(idx)))
				}
				return nil
			},
			func(i int, ft *typeInfo, field []byte) error {
				fv := v.Field(idx[i]).Addr().Interface()
				p := ScanPlan(nil)
				if plans != nil {
					p = plans[i]
				} else {
					var err error
					if p, err = m.PlanScan(ft.oid, format, fv); err != nil {
						return &FieldError{Index: i, Err: err}
					}
				}
				if err := p.Scan(field, fv); err != nil {
					return &FieldError{Index: i, Err: err}
				}
				return nil
			})
		if err != nil {
			return err
		}
		reflect.ValueOf(dst).Elem().Set(v)
		return nil
	})
}

// errNoFields is the reason for encoding into a composite type that was
// not registered with its fields (record).
var errNoFields = errors.New("the composite type's fields are unknown; register it with RegisterComposite")

// compositeArg returns the field values of a struct (exported fields in
// order) or []any argument; ok is false for other types.
func compositeArg(rv reflect.Value) (fields []any, ok bool) {
	switch rv.Kind() {
	case reflect.Struct:
		for _, i := range structFields(rv.Type()) {
			fields = append(fields, rv.Field(i).Interface())
		}
		return fields, true
	case reflect.Slice:
		if f, ok := rv.Interface().([]any); ok {
			return f, true
		}
	}
	return nil, false
}

// encodeComposite encodes the fields of a struct or []any argument for a
// registered composite type, in binary, or as a text literal when a field
// can only be sent as text.
func (m *Map) encodeComposite(t *typeInfo, arg any, fields []any, buf []byte, depth int) ([]byte, int16, bool, error) {
	if t.fields == nil {
		return buf, 0, false, encErr(t, arg, errNoFields)
	}
	if len(fields) != len(t.fields) {
		return buf, 0, false, encErr(t, arg, fmt.Errorf("%d fields, want %d", len(fields), len(t.fields)))
	}
	start := len(buf)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(fields)))
	for i, f := range fields {
		ft := t.fields[i]
		buf = binary.BigEndian.AppendUint32(buf, ft.oid)
		lenPos := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		out, format, null, err := m.encode(ft, f, buf, depth+1)
		if err != nil {
			return buf[:start], 0, false, encErr(t, arg, &FieldError{Index: i, Err: err})
		}
		buf = out
		if null {
			binary.BigEndian.PutUint32(buf[lenPos:], math.MaxUint32)
			continue
		}
		if format == 0 && !sameTextBinary(ft) {
			return m.encodeCompositeText(t, arg, fields, buf[:start], depth)
		}
		size := len(buf) - lenPos - 4
		if size > math.MaxInt32 {
			return buf[:start], 0, false, encErr(t, arg, fmt.Errorf("field %d too large", i+1))
		}
		binary.BigEndian.PutUint32(buf[lenPos:], uint32(size))
	}
	return buf, 1, false, nil
}

// encodeCompositeText encodes fields as a text literal (a,"b c",), for
// the server to parse: a field encoded in binary goes as its text form
// (binaryToText).
func (m *Map) encodeCompositeText(t *typeInfo, arg any, fields []any, buf []byte, depth int) ([]byte, int16, bool, error) {
	start := len(buf)
	buf = append(buf, '(')
	var tmp []byte
	for i, f := range fields {
		if i > 0 {
			buf = append(buf, ',')
		}
		ft := t.fields[i]
		out, format, null, err := m.encode(ft, f, tmp[:0], depth+1)
		if err != nil {
			return buf[:start], 0, false, encErr(t, arg, &FieldError{Index: i, Err: err})
		}
		tmp = out
		if null {
			continue
		}
		text := tmp
		if format != 0 && !sameTextBinary(ft) {
			if text, err = m.binaryToText(ft, tmp); err != nil {
				return buf[:start], 0, false, encErr(t, arg, &FieldError{Index: i, Err: err})
			}
		}
		buf = appendQuoted(buf, text, "(),")
	}
	return append(buf, ')'), 0, false, nil
}
