package pgtype

import (
	"strconv"
	"sync"
	"sync/atomic"
)

// Map is the codec registry: it knows the built-in types by OID and makes
// scan plans and encodings for them. Types without a fixed OID (hstore,
// enums, composite types, domains, extension types) are added with the
// Register methods. A Map is safe for concurrent use by multiple
// goroutines, registration included: a registration copies the Map's
// table and publishes the copy, so readers never wait and never see a
// half-made registration. Scan plans made before a registration keep the
// type descriptions they were made with.
type Map struct {
	types atomic.Pointer[typeTable]
	mu    sync.Mutex // serialises registrations
}

// typeTable maps OIDs to type descriptions. A published table is never
// modified: registrations write to a copy.
type typeTable map[uint32]*typeInfo

// builtinTable is the table of the built-in types, shared by every Map
// until its first registration.
var builtinTable = sync.OnceValue(func() *typeTable {
	t := make(typeTable, 2*(len(builtinTypes)+len(builtinRanges)))
	for _, b := range builtinTypes {
		t.add(&typeInfo{oid: b.oid, base: b.oid, name: b.name, kind: b.kind, size: b.size, known: true}, b.arrayOID)
	}
	for _, r := range builtinRanges {
		t.add(&typeInfo{oid: r.oid, base: r.oid, name: r.name, kind: kindRange, elem: t[r.sub], known: true}, r.arrayOID)
	}
	for _, b := range builtinTypes {
		if b.kind == kindMultirange {
			t[b.oid].elem = t[multirangeRange(b.oid)]
		}
	}
	return &t
})

// NewMap returns a Map that knows the built-in types listed in the package
// documentation. Any other OID (citext, enums, domains, extension types) is
// handled as text until it is registered.
func NewMap() *Map {
	m := new(Map)
	m.types.Store(builtinTable())
	return m
}

// Clone returns a Map that knows what m knows now. Registrations on
// either one later do not show in the other.
func (m *Map) Clone() *Map {
	c := new(Map)
	c.types.Store(m.types.Load())
	return c
}

// add records t and, when arrayOID is not 0, its array type.
func (tt typeTable) add(t *typeInfo, arrayOID uint32) {
	tt[t.oid] = t
	if arrayOID != 0 {
		tt[arrayOID] = &typeInfo{oid: arrayOID, base: arrayOID, name: t.name + "[]", kind: kindArray, elem: t, known: true}
	}
}

// update applies fn to a copy of m's table and publishes the copy when fn
// succeeds.
func (m *Map) update(fn func(tt typeTable) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.types.Load()
	tt := make(typeTable, len(old)+2)
	for k, v := range old {
		tt[k] = v
	}
	if err := fn(tt); err != nil {
		return err
	}
	m.types.Store(&tt)
	return nil
}

// lookup returns the description of oid, and false when m does not know it.
func (m *Map) lookup(oid uint32) (*typeInfo, bool) {
	t, ok := (*m.types.Load())[oid]
	return t, ok
}

// Known reports whether m has a codec for oid: a built-in or registered
// type. Unknown OIDs are handled as text.
func (m *Map) Known(oid uint32) bool {
	_, ok := m.lookup(oid)
	return ok
}

// typeOf returns the description of oid; unknown OIDs are text types named
// after their number.
func (m *Map) typeOf(oid uint32) *typeInfo { return (*m.types.Load()).typeOf(oid) }

func (tt typeTable) typeOf(oid uint32) *typeInfo {
	if t, ok := tt[oid]; ok {
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
	if t, ok := m.lookup(oid); ok && t.kind == kindArray {
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
	if t, ok := m.lookup(oid); ok {
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
	case kindArray, kindRange, kindMultirange:
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
