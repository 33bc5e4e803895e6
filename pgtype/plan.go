package pgtype

import (
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strconv"
)

// ScanPlan decodes one column value into a destination of one fixed
// dynamic type. Plans are made by Map.PlanScan, hold no mutable state and
// are safe for concurrent use.
type ScanPlan interface {
	// Scan decodes src (nil means SQL NULL) into dst, which has the
	// dynamic type the plan was made for. Scan never retains src; only a
	// *sql.RawBytes destination aliases it.
	Scan(src []byte, dst any) error
}

// planFunc adapts a function to ScanPlan.
type planFunc func(src []byte, dst any) error

// Scan calls f.
func (f planFunc) Scan(src []byte, dst any) error { return f(src, dst) }

// ErrNull is matched (errors.Is) by the error for SQL NULL scanned into a
// destination that cannot hold NULL: "cannot scan NULL into *int32".
var ErrNull = errors.New("cannot scan NULL")

// ErrOutOfRange is matched (errors.Is) by the error for a value that does
// not fit its destination: "cannot scan int8 value 40000 into *int16: out
// of range".
var ErrOutOfRange = errors.New("out of range")

// ErrUnsupportedDest is wrapped by PlanScan's error for a destination type
// the column's type cannot be scanned into.
var ErrUnsupportedDest = errors.New("unsupported destination type")

// UnknownTypeError is PlanScan's error for a value of a type this Map does
// not know (a user type not registered: pgline's Conn.LoadType registers
// an enum, composite, domain or range) and a destination only its codec
// could fill, a struct say. It matches ErrUnsupportedDest (errors.Is).
//
// The Map knows a type by its OID only; Name is the type's name as the
// server's catalog gives it (format_type, schema-qualified when not on
// the search_path), set by pgline where it looks the name up (see
// pgline's Row.Scan), else "". The error reads
//
//	pgtype: cannot scan OID 20481, a type this Map does not know (register it: Conn.LoadType for an enum, composite, domain or range), into *main.Address: unsupported destination type
//
// or, named,
//
//	pgtype: cannot scan address (OID 20481), a type this Map does not know (register it: Conn.LoadType(ctx, "address") for an enum, composite, domain or range), into *main.Address: unsupported destination type
type UnknownTypeError struct {
	OID  uint32
	Name string // the catalog's name of the type, "" when not looked up
	Dest string // Go destination type, "*main.Address"
}

// Error returns the text above.
func (e *UnknownTypeError) Error() string {
	const hint = "a type this Map does not know (register it: Conn.LoadType"
	const kinds = " for an enum, composite, domain or range), into "
	oid := strconv.FormatUint(uint64(e.OID), 10)
	if e.Name == "" {
		return "pgtype: cannot scan OID " + oid + ", " + hint + kinds + e.Dest + ": " + ErrUnsupportedDest.Error()
	}
	return "pgtype: cannot scan " + e.Name + " (OID " + oid + "), " + hint + "(ctx, " + strconv.Quote(e.Name) + ")" + kinds + e.Dest + ": " + ErrUnsupportedDest.Error()
}

// Unwrap returns ErrUnsupportedDest.
func (e *UnknownTypeError) Unwrap() error { return ErrUnsupportedDest }

// nullError reports NULL scanned into a destination that cannot hold it.
type nullError struct{ dst string }

func (e *nullError) Error() string        { return "cannot scan NULL into " + e.dst }
func (e *nullError) Is(target error) bool { return target == ErrNull }

func errNull(dst any) error { return &nullError{dst: fmt.Sprintf("%T", dst)} }

// ScanError reports a value that cannot be decoded into a destination.
type ScanError struct {
	Type  string // PostgreSQL type name, "int8"
	Value string // the value, when short enough to show; may be empty
	Dest  string // Go destination type, "*int16"
	Err   error  // the reason: ErrOutOfRange, a syntax error, ...
}

// Error returns "cannot scan int8 value 40000 into *int16: out of range".
func (e *ScanError) Error() string {
	s := "cannot scan " + e.Type
	if e.Value != "" {
		s += " value " + e.Value
	}
	return s + " into " + e.Dest + ": " + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *ScanError) Unwrap() error { return e.Err }

func scanErr(t *typeInfo, value string, dst any, err error) error {
	if len(value) > 64 {
		value = value[:61] + "..."
	}
	return &ScanError{Type: t.name, Value: value, Dest: fmt.Sprintf("%T", dst), Err: err}
}

// DecodeError reports bytes that are not a valid encoding of their type.
type DecodeError struct {
	Type   string // PostgreSQL type name
	Format int16  // 0 text, 1 binary
	Reason string
}

// Error returns "invalid int4 value (binary format): 3 bytes, want 4":
// the type named once, its wire format after it (a text column scanned
// into an int reads "invalid text value (text format): ...", not "text
// text").
func (e *DecodeError) Error() string {
	f := "binary"
	if e.Format == 0 {
		f = "text"
	}
	return "invalid " + e.Type + " value (" + f + " format): " + e.Reason
}

func decodeErr(t *typeInfo, format int16, reason string, args ...any) error {
	if len(args) > 0 {
		reason = fmt.Sprintf(reason, args...)
	}
	return &DecodeError{Type: t.name, Format: format, Reason: reason}
}

func errLen(t *typeInfo, n int) error {
	return decodeErr(t, 1, "%d bytes, want %d", n, t.size)
}

// target returns dst as *T, or an error when dst is a nil *T or not a *T
// at all (a plan used with another destination type than it was made for).
func target[T any](dst any) (*T, error) {
	d, ok := dst.(*T)
	if !ok || d == nil {
		return nil, fmt.Errorf("pgtype: scan destination %T is nil or not the %T the plan was made for", dst, d)
	}
	return d, nil
}

// PlanScan returns a plan that decodes values of type oid in format (0
// text, 1 binary) into destinations of dst's dynamic type, which must be a
// non-nil pointer. Precedence: a dst implementing sql.Scanner gets the
// database/sql driver value; *any gets DecodeValue's result;
// *sql.RawBytes aliases the bytes; **T sets nil for NULL and otherwise
// allocates a T; a type of this package with a Valid field (Text,
// Numeric, ...) is set to its zero value for NULL and otherwise decoded as
// its value; then the type's own destinations; then *string and
// *[]byte get the value's text form, and named types (type ID int64) are
// handled by their underlying kind.
func (m *Map) PlanScan(oid uint32, format int16, dst any) (ScanPlan, error) {
	if format != 0 && format != 1 {
		return nil, fmt.Errorf("pgtype: unknown format code %d", format)
	}
	t := m.typeOf(oid)
	rt := reflect.TypeOf(dst)
	if rt == nil || rt.Kind() != reflect.Pointer {
		return nil, fmt.Errorf("pgtype: cannot scan %s into %T: destination is not a pointer", t.name, dst)
	}
	if reflect.ValueOf(dst).IsNil() {
		return nil, fmt.Errorf("pgtype: cannot scan %s into nil %T", t.name, dst)
	}
	if v, ok := dst.(validDest); ok {
		return m.validPlan(oid, format, v)
	}
	return m.planScan(t, oid, format, dst, rt)
}

// planScan is PlanScan for a non-nil pointer dst of type rt, from the
// sql.Scanner rule on. This package's types with a Valid field are
// Scanners for database/sql but decode through their own plans here.
func (m *Map) planScan(t *typeInfo, oid uint32, format int16, dst any, rt reflect.Type) (ScanPlan, error) {
	if _, ok := dst.(sql.Scanner); ok {
		if _, own := dst.(validDest); !own {
			return m.scannerPlan(t, format), nil
		}
	}
	switch dst.(type) {
	case *any:
		return m.anyPlan(t, format), nil
	case *sql.RawBytes:
		return rawBytesPlan, nil
	}
	if rt.Elem().Kind() == reflect.Pointer {
		return m.pointerPlan(oid, format, rt)
	}
	if p := m.planKind(t, format, dst); p != nil {
		if k := inlineKind(t, format, dst); k != InlineNone {
			return inlinePlan{p, k}, nil
		}
		return p, nil
	}
	switch dst.(type) {
	case *string:
		return m.stringPlan(t, format), nil
	case *[]byte:
		return m.bytesPlan(t, format), nil
	}
	if p, err := m.unknownArrayPlan(t, format, dst); p != nil || err != nil {
		return p, err
	}
	if p := m.reflectPlan(oid, format, rt); p != nil {
		return p, nil
	}
	if _, known := m.lookup(oid); !known {
		return nil, &UnknownTypeError{OID: oid, Dest: rt.String()}
	}
	return nil, fmt.Errorf("pgtype: cannot scan %s (OID %d) into %T: %w", t.name, oid, dst, ErrUnsupportedDest)
}

// planKind returns the plan of t's own codec for dst, or nil.
func (m *Map) planKind(t *typeInfo, format int16, dst any) ScanPlan {
	if format == 1 && !t.known {
		return nil // binary form of an unknown type: only raw destinations
	}
	switch t.kind {
	case kindBool:
		return planBool(t, format, dst)
	case kindInt:
		return planInt(t, format, dst)
	case kindFloat:
		return planFloat(t, format, dst)
	case kindNumeric:
		return planNumeric(t, format, dst)
	case kindText:
		return planText(t, format, dst)
	case kindBytea:
		return planBytea(t, format, dst)
	case kindUUID:
		return planUUID(t, format, dst)
	case kindDate, kindTimestamp, kindTimestamptz:
		return planTimestamp(t, format, dst)
	case kindTime:
		return planTime(t, format, dst)
	case kindInterval:
		return planInterval(t, format, dst)
	case kindJSON, kindJSONB:
		return planJSON(t, format, dst)
	case kindArray:
		return m.planArray(t, format, dst)
	case kindInet:
		return planInet(t, format, dst)
	case kindMacaddr:
		return planMacaddr(t, format, dst)
	case kindRange:
		return m.planRange(t, format, dst)
	case kindHstore:
		return planHstore(t, format, dst)
	case kindComposite:
		return m.planComposite(t, format, dst)
	case kindPoint, kindLseg, kindBox, kindPath, kindPolygon, kindLine, kindCircle:
		return planGeo(t, format, dst)
	case kindBits:
		return planBits(t, format, dst)
	case kindTimetz:
		return planTimetz(t, format, dst)
	case kindMultirange:
		return m.planMultirange(t, format, dst)
	case kindCodec:
		return t.codec.PlanScan(format, dst)
	}
	return nil
}

// rawBytesPlan aliases src: the bytes stay valid only until the next read,
// as sql.RawBytes documents.
var rawBytesPlan = planFunc(func(src []byte, dst any) error {
	d, err := target[sql.RawBytes](dst)
	if err != nil {
		return err
	}
	*d = src
	return nil
})

// anyPlan stores DecodeValue's result.
func (m *Map) anyPlan(t *typeInfo, format int16) ScanPlan {
	return planFunc(func(src []byte, dst any) error {
		d, err := target[any](dst)
		if err != nil {
			return err
		}
		v, err := m.decodeValue(t, format, src)
		if err != nil {
			return err
		}
		*d = v
		return nil
	})
}

// stringPlan stores the text form of any value into *string.
func (m *Map) stringPlan(t *typeInfo, format int16) ScanPlan {
	return planFunc(func(src []byte, dst any) error {
		d, err := target[string](dst)
		if err != nil {
			return err
		}
		if src == nil {
			return errNull(dst)
		}
		b, err := m.appendText(nil, t, format, src)
		if err != nil {
			return err
		}
		*d = string(b)
		return nil
	})
}

// bytesPlan stores a copy of the text form of any value into *[]byte.
func (m *Map) bytesPlan(t *typeInfo, format int16) ScanPlan {
	return nilablePlan(func(src []byte) ([]byte, error) { return m.appendText(nil, t, format, src) })
}

// errPlanType reports a plan used with a destination of another type.
func errPlanType(dst any, want reflect.Type) error {
	return fmt.Errorf("pgtype: scan destination %T is not the %s the plan was made for", dst, want)
}

// unknownArrayPlan plans a value of a type this Map does not know, in
// text, into a slice destination (*[]string, *[]*string, ...): its text
// is read as an array literal of text elements. It is how the array of an
// enum nobody registered (whose OID only the database knows) scans into
// []string; a value that is no array literal is an error.
//
// Elements of a []byte kind ([][]byte, []*[]byte, []sql.RawBytes) are
// refused: the element type is unknown, and its text is not the bytes a
// []byte promises when it is a domain over bytea (whose array column
// comes described with the array's own OID, unlike a scalar column,
// which comes with the base type's): '\x0102' would scan as those six
// characters rather than the bytes 1 and 2.
func (m *Map) unknownArrayPlan(t *typeInfo, format int16, dst any) (ScanPlan, error) {
	if t.known || format != 0 {
		return nil, nil
	}
	st := reflect.TypeOf(dst).Elem()
	if st.Kind() != reflect.Slice || st.Elem().Kind() == reflect.Uint8 {
		return nil, nil
	}
	leaf := st.Elem()
	for leaf.Kind() == reflect.Slice && leaf.Elem().Kind() != reflect.Uint8 {
		leaf = leaf.Elem()
	}
	for leaf.Kind() == reflect.Pointer {
		leaf = leaf.Elem()
	}
	if leaf.Kind() == reflect.Slice && leaf.Elem().Kind() == reflect.Uint8 {
		return nil, fmt.Errorf("pgtype: cannot scan %s into %T: the elements of an array of a type this Map does not know come as text, not as the bytes of a domain over bytea; scan into []string, or register the type (pgline: Conn.LoadType): %w", t.name, dst, ErrUnsupportedDest)
	}
	at := &typeInfo{oid: t.oid, base: t.base, name: t.name, kind: kindArray, elem: m.typeOf(TextOID)}
	return m.planArray(at, format, dst), nil
}
