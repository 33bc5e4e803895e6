package pgtype

import "strconv"

// Map is the codec registry: it knows the built-in types by OID and makes
// scan plans and encodings for them. Types without a fixed OID (hstore,
// enums, composite types, domains, extension types) are added with the
// Register methods, which must all be called before the Map is first
// used: from then on the Map is read-only and safe for concurrent use by
// multiple goroutines. Registering while the Map is in use is a data race.
type Map struct {
	types map[uint32]*typeInfo
}

// NewMap returns a Map that knows the built-in types listed in the package
// documentation. Any other OID (citext, enums, domains, extension types) is
// handled as text until it is registered.
func NewMap() *Map {
	m := &Map{types: make(map[uint32]*typeInfo, 2*(len(builtinTypes)+len(builtinRanges)))}
	for _, t := range builtinTypes {
		scalar := &typeInfo{oid: t.oid, base: t.oid, name: t.name, kind: t.kind, size: t.size, known: true}
		m.add(scalar, t.arrayOID)
	}
	for _, r := range builtinRanges {
		m.add(&typeInfo{oid: r.oid, base: r.oid, name: r.name, kind: kindRange, elem: m.types[r.sub], known: true}, r.arrayOID)
	}
	return m
}

// add records t and, when arrayOID is not 0, its array type.
func (m *Map) add(t *typeInfo, arrayOID uint32) {
	m.types[t.oid] = t
	if arrayOID != 0 {
		m.types[arrayOID] = &typeInfo{oid: arrayOID, base: arrayOID, name: t.name + "[]", kind: kindArray, elem: t, known: true}
	}
}

// typeOf returns the description of oid; unknown OIDs are text types named
// after their number.
func (m *Map) typeOf(oid uint32) *typeInfo {
	if t, ok := m.types[oid]; ok {
		return t
	}
	return &typeInfo{oid: oid, base: oid, name: "OID " + strconv.FormatUint(uint64(oid), 10), kind: kindText}
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
// otherwise (unregistered enums, composites and extension types, citext,
// any OID it does not know, a text-format Codec, and arrays, ranges and
// composites with such elements).
func (m *Map) ResultFormat(oid uint32) int16 {
	if t, ok := m.types[oid]; ok {
		return resultFormat(t, 0)
	}
	return 0
}

func resultFormat(t *typeInfo, depth int) int16 {
	if !t.known || depth > maxTypeDepth {
		return 0
	}
	switch t.kind {
	case kindCodec:
		return t.codec.ResultFormat()
	case kindArray, kindRange:
		return resultFormat(t.elem, depth+1)
	case kindComposite:
		for _, f := range t.fields {
			if resultFormat(f, depth+1) == 0 {
				return 0
			}
		}
	}
	return 1
}
