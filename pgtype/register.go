package pgtype

import (
	"errors"
	"fmt"
)

// Registration gives the Map the OIDs of types that have none fixed:
// enums, domains, composite types, extension types such as hstore, and
// their arrays. Find the OIDs with
//
//	SELECT oid, typarray FROM pg_type WHERE typname = 'mood'
//
// (or 'mood'::regtype::oid), or let pgline's Conn.LoadType read them from
// the catalog. Registering is safe while the Map is in use; plans made
// before keep the descriptions they were made with, so register a type
// before the statements that use it. Registering an OID again replaces
// the earlier registration; the OIDs of built-in types cannot be
// registered. An arrayOID of 0 registers no array type.

// Type describes a user type for RegisterType.
type Type struct {
	Name     string // the PostgreSQL name, for messages and TypeName
	OID      uint32
	ArrayOID uint32 // the OID of its array type, or 0
	Codec    Codec
}

// RegisterType registers a user type with its own Codec, and its array
// type when t.ArrayOID is not 0.
func (m *Map) RegisterType(t Type) error {
	if t.Codec == nil {
		return fmt.Errorf("pgtype: RegisterType %s: nil Codec", t.Name)
	}
	return m.register(&typeInfo{oid: t.OID, base: t.OID, name: t.Name, kind: kindCodec, codec: t.Codec, known: true}, t.ArrayOID)
}

// RegisterEnum registers an enum type: its labels scan into *string (and
// *[]byte) and encode from string, in binary format, whose bytes are the
// label.
func (m *Map) RegisterEnum(name string, oid, arrayOID uint32) error {
	return m.register(&typeInfo{oid: oid, base: oid, name: name, kind: kindText, known: true}, arrayOID)
}

// RegisterDomain registers a domain over baseOID, a type the Map knows:
// the domain's values decode and encode as the base type's. Result
// columns of a domain type already come described with the base type's
// OID, so this matters for parameters ($1::mydomain) and for arrays and
// composite fields of the domain.
func (m *Map) RegisterDomain(name string, oid, arrayOID, baseOID uint32) error {
	return m.update(func(tt typeTable) error {
		base, ok := tt[baseOID]
		if !ok {
			return fmt.Errorf("pgtype: RegisterDomain %s: base type OID %d is not known; register it first", name, baseOID)
		}
		d := *base
		d.oid, d.name = oid, name
		return register(tt, &d, arrayOID)
	})
}

// RegisterComposite registers a composite type (CREATE TYPE … AS, or a
// table's row type) with the type OIDs of its fields in order (from
// SELECT atttypid FROM pg_attribute WHERE attrelid = 'mytype'::regclass
// AND attnum > 0 AND NOT attisdropped ORDER BY attnum). Field types must
// be registered first. Its values scan into a pointer to a struct, whose
// exported fields take the fields in order, and into *[]any; they encode
// from such a struct or []any. A composite with a field type the Map does
// not know is requested in text format.
func (m *Map) RegisterComposite(name string, oid, arrayOID uint32, fieldOIDs ...uint32) error {
	return m.update(func(tt typeTable) error {
		fields := make([]*typeInfo, len(fieldOIDs))
		for i, f := range fieldOIDs {
			fields[i] = tt.typeOf(f)
		}
		return register(tt, &typeInfo{oid: oid, base: oid, name: name, kind: kindComposite, fields: fields, known: true}, arrayOID)
	})
}

// RegisterRange registers a range type (CREATE TYPE … AS RANGE) over
// subtypeOID, a type the Map knows: its values scan into *Range[T] for
// any T the subtype scans into, and encode from Range[T].
func (m *Map) RegisterRange(name string, oid, arrayOID, subtypeOID uint32) error {
	return m.update(func(tt typeTable) error {
		sub, ok := tt[subtypeOID]
		if !ok {
			return fmt.Errorf("pgtype: RegisterRange %s: subtype OID %d is not known; register it first", name, subtypeOID)
		}
		return register(tt, &typeInfo{oid: oid, base: oid, name: name, kind: kindRange, elem: sub, known: true}, arrayOID)
	})
}

// RegisterMultirange registers a multirange type over rangeOID, a range
// type the Map knows (PostgreSQL 14 makes one for each range type: for
// CREATE TYPE floatrange AS RANGE, floatmultirange). Its values scan into
// *Multirange[T] and *[]Range[T] and encode from them.
func (m *Map) RegisterMultirange(name string, oid, arrayOID, rangeOID uint32) error {
	return m.update(func(tt typeTable) error {
		r, ok := tt[rangeOID]
		if !ok || r.kind != kindRange {
			return fmt.Errorf("pgtype: RegisterMultirange %s: OID %d is not a range type the Map knows; register it first", name, rangeOID)
		}
		return register(tt, &typeInfo{oid: oid, base: oid, name: name, kind: kindMultirange, elem: r, known: true}, arrayOID)
	})
}

// RegisterArray registers arrayOID as the array type of elemOID, a type
// the Map knows (the other Register methods take the array OID too; this
// is for arrays registered apart from their element type).
func (m *Map) RegisterArray(arrayOID, elemOID uint32) error {
	return m.update(func(tt typeTable) error {
		elem, ok := tt[elemOID]
		if !ok {
			return fmt.Errorf("pgtype: RegisterArray: element type OID %d is not known; register it first", elemOID)
		}
		if err := checkOID(tt, arrayOID); err != nil {
			return fmt.Errorf("pgtype: RegisterArray %s[]: %w", elem.name, err)
		}
		tt[arrayOID] = &typeInfo{oid: arrayOID, base: arrayOID, name: elem.name + "[]", kind: kindArray, elem: elem, known: true}
		return nil
	})
}

// RegisterName registers the OID of a type this package has a codec for
// but whose OID is not fixed because an extension creates it: "hstore"
// (map[string]*string) and "citext" (text).
func (m *Map) RegisterName(name string, oid, arrayOID uint32) error {
	var k kind
	switch name {
	case "hstore":
		k = kindHstore
	case "citext":
		k = kindText
	default:
		return fmt.Errorf("pgtype: RegisterName: no codec for type %q (known: hstore, citext)", name)
	}
	return m.register(&typeInfo{oid: oid, base: oid, name: name, kind: k, known: true}, arrayOID)
}

// errBuiltin is the reason a built-in OID cannot be registered.
var errBuiltin = errors.New("is a built-in type")

func checkOID(tt typeTable, oid uint32) error {
	if oid == 0 {
		return errors.New("OID 0")
	}
	if isBuiltin(oid) {
		return fmt.Errorf("OID %d (%s) %w", oid, tt.typeOf(oid).name, errBuiltin)
	}
	return nil
}

// IsBuiltin reports whether oid is one of the built-in types of this
// package or their arrays: those every Map knows, which cannot be
// registered.
func IsBuiltin(oid uint32) bool { return isBuiltin(oid) }

func isBuiltin(oid uint32) bool {
	for _, t := range builtinTypes {
		if t.oid == oid || t.arrayOID == oid {
			return true
		}
	}
	for _, r := range builtinRanges {
		if r.oid == oid || r.arrayOID == oid {
			return true
		}
	}
	return false
}

// register registers t on m.
func (m *Map) register(t *typeInfo, arrayOID uint32) error {
	return m.update(func(tt typeTable) error { return register(tt, t, arrayOID) })
}

// register adds t and its array type to tt after checking their OIDs.
func register(tt typeTable, t *typeInfo, arrayOID uint32) error {
	if err := checkOID(tt, t.oid); err != nil {
		return fmt.Errorf("pgtype: register %s: %w", t.name, err)
	}
	if arrayOID != 0 {
		if err := checkOID(tt, arrayOID); err != nil {
			return fmt.Errorf("pgtype: register %s[]: %w", t.name, err)
		}
		if arrayOID == t.oid {
			return fmt.Errorf("pgtype: register %s: the array OID is the type's OID", t.name)
		}
	}
	tt.add(t, arrayOID)
	return nil
}
