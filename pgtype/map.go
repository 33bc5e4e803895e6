package pgtype

import "strconv"

// Map is the codec registry: it knows the built-in types by OID and makes
// scan plans and encodings for them. A Map is safe for concurrent use by
// multiple goroutines; it is never modified after NewMap returns.
type Map struct {
	types map[uint32]*typeInfo
}

// NewMap returns a Map that knows the built-in types listed in the package
// documentation. Any other OID (citext, enums, domains, extension types) is
// handled as text.
func NewMap() *Map {
	m := &Map{types: make(map[uint32]*typeInfo, 2*len(builtinTypes))}
	for _, t := range builtinTypes {
		scalar := &typeInfo{oid: t.oid, name: t.name, kind: t.kind, size: t.size, known: true}
		m.types[t.oid] = scalar
		if t.arrayOID != 0 {
			m.types[t.arrayOID] = &typeInfo{oid: t.arrayOID, name: t.name + "[]", kind: kindArray, elem: scalar, known: true}
		}
	}
	return m
}

// typeOf returns the description of oid; unknown OIDs are text types named
// after their number.
func (m *Map) typeOf(oid uint32) *typeInfo {
	if t, ok := m.types[oid]; ok {
		return t
	}
	return &typeInfo{oid: oid, name: "OID " + strconv.FormatUint(uint64(oid), 10), kind: kindText}
}

// TypeName returns the PostgreSQL name of oid ("int8", "text[]"), or
// "OID n" for a type this Map does not know.
func (m *Map) TypeName(oid uint32) string { return m.typeOf(oid).name }

// ArrayElem returns the element type OID of the array type oid, and false
// when oid is not an array type this Map knows.
func (m *Map) ArrayElem(oid uint32) (uint32, bool) {
	if t, ok := m.types[oid]; ok && t.kind == kindArray {
		return t.elem.oid, true
	}
	return 0, false
}

// ResultFormat is the format to request for a result column of type oid:
// 1 (binary) when this package decodes the binary form of oid, 0 (text)
// otherwise (enums, citext, extension types, any OID it does not know).
func (m *Map) ResultFormat(oid uint32) int16 {
	if _, ok := m.types[oid]; ok {
		return 1
	}
	return 0
}
