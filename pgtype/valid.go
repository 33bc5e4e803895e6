package pgtype

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"time"
)

// Values that may be NULL, with pgx's names and fields.
//
// Text, Int2, Int4, Int8, Float4, Float8, Bool, UUID, Date and Timestamptz
// have the fields of pgx's pgtype types of the same names, and Numeric,
// Timestamp, Interval and Time carry pgx's Valid field, so that code
// written for pgx (sqlc's generated models among it) ports by changing the
// import. Each is a sql.Scanner and a driver.Valuer too, for
// database/sql.
//
// One rule for all of them, kept by validPlan and checkValid: SQL NULL
// scans as the zero value (Valid false), any other value sets Valid. As an
// argument, the zero value is NULL, and a value with Valid false but
// something else set is an error, never a NULL: a value built without
// Valid: true (as Numeric, Timestamp, Interval and Time were before they
// had the field) would otherwise be stored as NULL without a word.

// Text is a text value that may be NULL (pgx's pgtype.Text).
type Text struct {
	String string
	Valid  bool
}

// Int2 is an int2 value that may be NULL (pgx's pgtype.Int2).
type Int2 struct {
	Int16 int16
	Valid bool
}

// Int4 is an int4 value that may be NULL (pgx's pgtype.Int4).
type Int4 struct {
	Int32 int32
	Valid bool
}

// Int8 is an int8 value that may be NULL (pgx's pgtype.Int8).
type Int8 struct {
	Int64 int64
	Valid bool
}

// Float4 is a float4 value that may be NULL (pgx's pgtype.Float4).
type Float4 struct {
	Float32 float32
	Valid   bool
}

// Float8 is a float8 value that may be NULL (pgx's pgtype.Float8).
type Float8 struct {
	Float64 float64
	Valid   bool
}

// Bool is a bool value that may be NULL (pgx's pgtype.Bool).
type Bool struct {
	Bool  bool
	Valid bool
}

// UUID is a uuid value that may be NULL (pgx's pgtype.UUID).
type UUID struct {
	Bytes [16]byte
	Valid bool
}

// Date is a date value that may be infinite or NULL (pgx's pgtype.Date):
// Time is its day at midnight UTC.
type Date struct {
	Time             time.Time
	InfinityModifier InfinityModifier
	Valid            bool
}

// Timestamptz is a timestamptz value that may be infinite or NULL (pgx's
// pgtype.Timestamptz). Values read from the server are in UTC.
type Timestamptz struct {
	Time             time.Time
	InfinityModifier InfinityModifier
	Valid            bool
}

// validDest is a scan destination with a Valid field.
type validDest interface {
	// scanDest returns where a value that is not NULL is decoded: a field
	// of the receiver, or the receiver itself for a type whose own plan
	// decodes it.
	scanDest() any
	// setValid sets Valid, after a value was decoded into scanDest.
	setValid()
	// setNull sets the receiver to its zero value.
	setNull()
}

// validArg is an argument with a Valid field whose value goes as an
// argument of another type.
type validArg interface {
	// argValue returns the argument to encode in its place, or null for
	// NULL, or checkValid's error.
	argValue() (v any, null bool, err error)
}

// checkValid applies the rule for an argument with a Valid field: valid
// is encoded, the zero value is NULL, and Valid false with something else
// set is an error.
func checkValid(valid, zero bool, arg any) (null bool, err error) {
	switch {
	case valid:
		return false, nil
	case zero:
		return true, nil
	}
	return false, fmt.Errorf("%T has a value but Valid is false: set Valid to true, or pass the zero value for NULL", arg)
}

// validPlan plans a destination with a Valid field: NULL sets the zero
// value, any other value is decoded into scanDest by its plan, then Valid
// is set.
func (m *Map) validPlan(oid uint32, format int16, dst validDest) (ScanPlan, error) {
	rt := reflect.TypeOf(dst)
	inner := dst.scanDest()
	var p ScanPlan
	var err error
	if reflect.TypeOf(inner) == rt {
		p, err = m.planScan(m.typeOf(oid), oid, format, inner, rt)
	} else {
		p, err = m.PlanScan(oid, format, inner)
	}
	if err != nil {
		if reflect.TypeOf(inner) != rt && errors.Is(err, ErrUnsupportedDest) {
			// Name the destination the caller gave, not its field.
			var ute *UnknownTypeError
			if errors.As(err, &ute) {
				return nil, &UnknownTypeError{OID: ute.OID, Dest: rt.String()}
			}
			return nil, fmt.Errorf("pgtype: cannot scan %s into %T: %w", m.typeOf(oid).name, dst, ErrUnsupportedDest)
		}
		return nil, err
	}
	return planFunc(func(src []byte, d any) error {
		v, ok := d.(validDest)
		if !ok || reflect.TypeOf(d) != rt || reflect.ValueOf(d).IsNil() {
			return errPlanType(d, rt)
		}
		if src == nil {
			v.setNull()
			return nil
		}
		if err := p.Scan(src, v.scanDest()); err != nil {
			return err
		}
		v.setValid()
		return nil
	}), nil
}

// textMap decodes the text handed to the Scan methods of the Valid types.
var textMap = NewMap()

// scanValid is the Scan method of the Valid types: nil is NULL; a string
// or []byte is the text form of a value of oid, as the server sends it;
// an int64, float64 or bool is read as its text; a time.Time goes into
// the time types.
func scanValid(oid uint32, src any, dst validDest) error {
	var text []byte
	switch v := src.(type) {
	case nil:
		dst.setNull()
		return nil
	case string:
		text = []byte(v)
	case []byte:
		text = v
	case int64:
		text = strconv.AppendInt(nil, v, 10)
	case float64:
		text = strconv.AppendFloat(nil, v, 'g', -1, 64)
	case bool:
		text = strconv.AppendBool(nil, v)
	case time.Time:
		if ts, ok := dst.scanDest().(*Timestamp); ok {
			*ts = Timestamp{Time: v, Valid: true}
			dst.setValid()
			return nil
		}
		return fmt.Errorf("pgtype: cannot scan time.Time into %T", dst)
	default:
		return fmt.Errorf("pgtype: cannot scan %T into %T", src, dst)
	}
	p, err := textMap.PlanScan(oid, 0, dst)
	if err != nil {
		return err
	}
	return p.Scan(text, dst)
}

// jsonValid is the MarshalJSON method of the Valid types: null, or v.
func jsonValid(valid bool, v any) ([]byte, error) {
	if !valid {
		return []byte("null"), nil
	}
	return json.Marshal(v)
}

// unjsonValid is the UnmarshalJSON method of the Valid types: null is
// NULL; anything else is unmarshalled into v, then Valid is set.
func unjsonValid(b []byte, dst validDest, v any) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		dst.setNull()
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return err
	}
	dst.setValid()
	return nil
}

// timestampValue is the driver.Value of a finite or infinite time.
func timestampValue(ts Timestamp) driver.Value {
	if ts.InfinityModifier != Finite {
		return ts.InfinityModifier.String()
	}
	return ts.Time
}

// timestampJSON marshals a time as RFC 3339, or "infinity", "-infinity".
func timestampJSON(ts Timestamp) ([]byte, error) {
	if !ts.Valid {
		return []byte("null"), nil
	}
	if ts.InfinityModifier != Finite {
		return json.Marshal(ts.InfinityModifier.String())
	}
	return json.Marshal(ts.Time)
}

// timestampUnJSON unmarshals timestampJSON's forms.
func timestampUnJSON(b []byte, ts *Timestamp) error {
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	switch {
	case s == nil:
		*ts = Timestamp{}
	case *s == "infinity":
		*ts = Timestamp{InfinityModifier: Infinity, Valid: true}
	case *s == "-infinity":
		*ts = Timestamp{InfinityModifier: NegativeInfinity, Valid: true}
	default:
		tm, err := time.Parse(time.RFC3339Nano, *s)
		if err != nil {
			return err
		}
		*ts = Timestamp{Time: tm, Valid: true}
	}
	return nil
}

func (v *Text) scanDest() any { return &v.String }
func (v *Text) setValid()     { v.Valid = true }
func (v *Text) setNull()      { *v = Text{} }
func (v Text) argValue() (any, bool, error) {
	null, err := checkValid(v.Valid, v == Text{}, v)
	return v.String, null, err
}

// Scan implements sql.Scanner.
func (v *Text) Scan(src any) error { return scanValid(TextOID, src, v) }

// Value implements driver.Valuer.
func (v Text) Value() (driver.Value, error) { return validValue(v) }

// MarshalJSON writes null or the string.
func (v Text) MarshalJSON() ([]byte, error) { return jsonValid(v.Valid, v.String) }

// UnmarshalJSON reads null or a string.
func (v *Text) UnmarshalJSON(b []byte) error { return unjsonValid(b, v, &v.String) }

func (v *Int2) scanDest() any { return &v.Int16 }
func (v *Int2) setValid()     { v.Valid = true }
func (v *Int2) setNull()      { *v = Int2{} }
func (v Int2) argValue() (any, bool, error) {
	null, err := checkValid(v.Valid, v == Int2{}, v)
	return v.Int16, null, err
}

// Scan implements sql.Scanner.
func (v *Int2) Scan(src any) error { return scanValid(Int2OID, src, v) }

// Value implements driver.Valuer.
func (v Int2) Value() (driver.Value, error) { return validValue(v) }

// MarshalJSON writes null or the number.
func (v Int2) MarshalJSON() ([]byte, error) { return jsonValid(v.Valid, v.Int16) }

// UnmarshalJSON reads null or a number.
func (v *Int2) UnmarshalJSON(b []byte) error { return unjsonValid(b, v, &v.Int16) }

func (v *Int4) scanDest() any { return &v.Int32 }
func (v *Int4) setValid()     { v.Valid = true }
func (v *Int4) setNull()      { *v = Int4{} }
func (v Int4) argValue() (any, bool, error) {
	null, err := checkValid(v.Valid, v == Int4{}, v)
	return v.Int32, null, err
}

// Scan implements sql.Scanner.
func (v *Int4) Scan(src any) error { return scanValid(Int4OID, src, v) }

// Value implements driver.Valuer.
func (v Int4) Value() (driver.Value, error) { return validValue(v) }

// MarshalJSON writes null or the number.
func (v Int4) MarshalJSON() ([]byte, error) { return jsonValid(v.Valid, v.Int32) }

// UnmarshalJSON reads null or a number.
func (v *Int4) UnmarshalJSON(b []byte) error { return unjsonValid(b, v, &v.Int32) }

func (v *Int8) scanDest() any { return &v.Int64 }
func (v *Int8) setValid()     { v.Valid = true }
func (v *Int8) setNull()      { *v = Int8{} }
func (v Int8) argValue() (any, bool, error) {
	null, err := checkValid(v.Valid, v == Int8{}, v)
	return v.Int64, null, err
}

// Scan implements sql.Scanner.
func (v *Int8) Scan(src any) error { return scanValid(Int8OID, src, v) }

// Value implements driver.Valuer.
func (v Int8) Value() (driver.Value, error) { return validValue(v) }

// MarshalJSON writes null or the number.
func (v Int8) MarshalJSON() ([]byte, error) { return jsonValid(v.Valid, v.Int64) }

// UnmarshalJSON reads null or a number.
func (v *Int8) UnmarshalJSON(b []byte) error { return unjsonValid(b, v, &v.Int64) }

func (v *Float4) scanDest() any { return &v.Float32 }
func (v *Float4) setValid()     { v.Valid = true }
func (v *Float4) setNull()      { *v = Float4{} }
func (v Float4) argValue() (any, bool, error) {
	null, err := checkValid(v.Valid, v == Float4{} && !signbit32(v.Float32), v)
	return v.Float32, null, err
}

// Scan implements sql.Scanner.
func (v *Float4) Scan(src any) error { return scanValid(Float4OID, src, v) }

// Value implements driver.Valuer.
func (v Float4) Value() (driver.Value, error) { return validValue(v) }

// MarshalJSON writes null or the number.
func (v Float4) MarshalJSON() ([]byte, error) { return jsonValid(v.Valid, v.Float32) }

// UnmarshalJSON reads null or a number.
func (v *Float4) UnmarshalJSON(b []byte) error { return unjsonValid(b, v, &v.Float32) }

func (v *Float8) scanDest() any { return &v.Float64 }
func (v *Float8) setValid()     { v.Valid = true }
func (v *Float8) setNull()      { *v = Float8{} }
func (v Float8) argValue() (any, bool, error) {
	null, err := checkValid(v.Valid, v == Float8{} && !signbit64(v.Float64), v)
	return v.Float64, null, err
}

// Scan implements sql.Scanner.
func (v *Float8) Scan(src any) error { return scanValid(Float8OID, src, v) }

// Value implements driver.Valuer.
func (v Float8) Value() (driver.Value, error) { return validValue(v) }

// MarshalJSON writes null or the number.
func (v Float8) MarshalJSON() ([]byte, error) { return jsonValid(v.Valid, v.Float64) }

// UnmarshalJSON reads null or a number.
func (v *Float8) UnmarshalJSON(b []byte) error { return unjsonValid(b, v, &v.Float64) }

func (v *Bool) scanDest() any { return &v.Bool }
func (v *Bool) setValid()     { v.Valid = true }
func (v *Bool) setNull()      { *v = Bool{} }
func (v Bool) argValue() (any, bool, error) {
	null, err := checkValid(v.Valid, v == Bool{}, v)
	return v.Bool, null, err
}

// Scan implements sql.Scanner.
func (v *Bool) Scan(src any) error { return scanValid(BoolOID, src, v) }

// Value implements driver.Valuer.
func (v Bool) Value() (driver.Value, error) { return validValue(v) }

// MarshalJSON writes null, true or false.
func (v Bool) MarshalJSON() ([]byte, error) { return jsonValid(v.Valid, v.Bool) }

// UnmarshalJSON reads null, true or false.
func (v *Bool) UnmarshalJSON(b []byte) error { return unjsonValid(b, v, &v.Bool) }

func (v *UUID) scanDest() any { return &v.Bytes }
func (v *UUID) setValid()     { v.Valid = true }
func (v *UUID) setNull()      { *v = UUID{} }
func (v UUID) argValue() (any, bool, error) {
	null, err := checkValid(v.Valid, v == UUID{}, v)
	return v.Bytes, null, err
}

// String returns the canonical form (8-4-4-4-12 hex digits), or "" when
// not Valid.
func (v UUID) String() string {
	if !v.Valid {
		return ""
	}
	return string(appendUUID(nil, v.Bytes))
}

// Scan implements sql.Scanner.
func (v *UUID) Scan(src any) error { return scanValid(UUIDOID, src, v) }

// Value implements driver.Valuer: the canonical string.
func (v UUID) Value() (driver.Value, error) {
	if _, null, err := v.argValue(); null || err != nil {
		return nil, err
	}
	return v.String(), nil
}

// MarshalJSON writes null or the canonical string.
func (v UUID) MarshalJSON() ([]byte, error) { return jsonValid(v.Valid, v.String()) }

// UnmarshalJSON reads null or a uuid string.
func (v *UUID) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == nil {
		v.setNull()
		return nil
	}
	return v.Scan(*s)
}

func (v *Date) scanDest() any { return (*Timestamp)(v) }
func (v *Date) setValid()     { v.Valid = true }
func (v *Date) setNull()      { *v = Date{} }
func (v Date) argValue() (any, bool, error) {
	null, err := checkValid(v.Valid, Timestamp(v).isZero(), v)
	return Timestamp(v), null, err
}

// Scan implements sql.Scanner.
func (v *Date) Scan(src any) error { return scanValid(DateOID, src, v) }

// Value implements driver.Valuer: a time.Time, or "infinity", "-infinity".
func (v Date) Value() (driver.Value, error) { return Timestamp(v).Value() }

// MarshalJSON writes null, an RFC 3339 time, "infinity" or "-infinity".
func (v Date) MarshalJSON() ([]byte, error) { return timestampJSON(Timestamp(v)) }

// UnmarshalJSON reads MarshalJSON's forms.
func (v *Date) UnmarshalJSON(b []byte) error { return timestampUnJSON(b, (*Timestamp)(v)) }

func (v *Timestamptz) scanDest() any { return (*Timestamp)(v) }
func (v *Timestamptz) setValid()     { v.Valid = true }
func (v *Timestamptz) setNull()      { *v = Timestamptz{} }
func (v Timestamptz) argValue() (any, bool, error) {
	null, err := checkValid(v.Valid, Timestamp(v).isZero(), v)
	return Timestamp(v), null, err
}

// Scan implements sql.Scanner.
func (v *Timestamptz) Scan(src any) error { return scanValid(TimestamptzOID, src, v) }

// Value implements driver.Valuer: a time.Time, or "infinity", "-infinity".
func (v Timestamptz) Value() (driver.Value, error) { return Timestamp(v).Value() }

// MarshalJSON writes null, an RFC 3339 time, "infinity" or "-infinity".
func (v Timestamptz) MarshalJSON() ([]byte, error) { return timestampJSON(Timestamp(v)) }

// UnmarshalJSON reads MarshalJSON's forms.
func (v *Timestamptz) UnmarshalJSON(b []byte) error {
	return timestampUnJSON(b, (*Timestamp)(v))
}

// Timestamp, Numeric, Interval and Time decode through their own plans.

func (v *Timestamp) scanDest() any { return v }
func (v *Timestamp) setValid()     { v.Valid = true }
func (v *Timestamp) setNull()      { *v = Timestamp{} }

// isZero reports whether v holds no value (Valid aside).
func (v Timestamp) isZero() bool { return v.Time.IsZero() && v.InfinityModifier == Finite }

// Scan implements sql.Scanner.
func (v *Timestamp) Scan(src any) error { return scanValid(TimestampOID, src, v) }

// Value implements driver.Valuer: a time.Time, or "infinity", "-infinity".
func (v Timestamp) Value() (driver.Value, error) {
	if null, err := checkValid(v.Valid, v.isZero(), v); null || err != nil {
		return nil, err
	}
	return timestampValue(v), nil
}

// MarshalJSON writes null, an RFC 3339 time, "infinity" or "-infinity".
func (v Timestamp) MarshalJSON() ([]byte, error) { return timestampJSON(v) }

// UnmarshalJSON reads MarshalJSON's forms.
func (v *Timestamp) UnmarshalJSON(b []byte) error { return timestampUnJSON(b, v) }

func (v *Numeric) scanDest() any { return v }
func (v *Numeric) setValid()     { v.Valid = true }
func (v *Numeric) setNull()      { *v = Numeric{} }

// isZero reports whether v holds no value (Valid aside).
func (v Numeric) isZero() bool {
	return v.Int == nil && v.Exp == 0 && !v.NaN && v.InfinityModifier == Finite
}

// Scan implements sql.Scanner: nil is NULL, a string or []byte a number's
// text ("12.50", "1.5e3", "NaN", "Infinity"), an int64 or float64 that
// number.
func (v *Numeric) Scan(src any) error {
	var text string
	switch x := src.(type) {
	case string:
		text = x
	case []byte:
		text = string(x)
	case float64:
		text = strconv.FormatFloat(x, 'g', -1, 64)
	default:
		return scanValid(NumericOID, src, v)
	}
	n, err := parseNumeric(text)
	if err != nil {
		return fmt.Errorf("pgtype: %w", err)
	}
	*v = n
	return nil
}

// Value implements driver.Valuer: the text form.
func (v Numeric) Value() (driver.Value, error) {
	if null, err := checkValid(v.Valid, v.isZero(), v); null || err != nil {
		return nil, err
	}
	return v.String(), nil
}

// ScanScientific sets n from a number's text, in decimal or scientific
// notation ("1.5e3"), as Scan does (pgx's method).
func (v *Numeric) ScanScientific(src string) error { return v.Scan(src) }

// Float64Value returns n as a Float8 (pgx's method); a NULL Numeric gives
// a Float8 that is not Valid.
func (v Numeric) Float64Value() (Float8, error) {
	if !v.Valid {
		return Float8{}, nil
	}
	return Float8{Float64: v.Float64(), Valid: true}, nil
}

// Int64Value returns n as an Int8 (pgx's method): an error when n is not
// an integer in int64's range; a NULL Numeric gives an Int8 that is not
// Valid.
func (v Numeric) Int64Value() (Int8, error) {
	if !v.Valid {
		return Int8{}, nil
	}
	r, err := v.Rat()
	if err != nil {
		return Int8{}, err
	}
	if !r.IsInt() || !r.Num().IsInt64() {
		return Int8{}, fmt.Errorf("pgtype: numeric %s is not an int64", v)
	}
	return Int8{Int64: r.Num().Int64(), Valid: true}, nil
}

// MarshalJSON writes null, the number ("NaN" and "Infinity" as strings).
func (v Numeric) MarshalJSON() ([]byte, error) {
	if !v.Valid {
		return []byte("null"), nil
	}
	if v.NaN || v.InfinityModifier != Finite {
		return json.Marshal(v.String())
	}
	return []byte(v.String()), nil
}

// UnmarshalJSON reads null, a number, or a string holding one.
func (v *Numeric) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		return v.Scan(s)
	}
	if bytes.Equal(b, []byte("null")) {
		v.setNull()
		return nil
	}
	return v.Scan(b)
}

func (v *Interval) scanDest() any { return v }
func (v *Interval) setValid()     { v.Valid = true }
func (v *Interval) setNull()      { *v = Interval{} }

// Scan implements sql.Scanner: nil is NULL, a string the text form.
func (v *Interval) Scan(src any) error { return scanValid(IntervalOID, src, v) }

// Value implements driver.Valuer: the text form.
func (v Interval) Value() (driver.Value, error) {
	if null, err := checkValid(v.Valid, v == Interval{Valid: v.Valid}, v); null || err != nil {
		return nil, err
	}
	return v.String(), nil
}

func (v *Time) scanDest() any { return v }
func (v *Time) setValid()     { v.Valid = true }
func (v *Time) setNull()      { *v = Time{} }

// Scan implements sql.Scanner: nil is NULL, a string the text form.
func (v *Time) Scan(src any) error { return scanValid(TimeOID, src, v) }

// Value implements driver.Valuer: the text form.
func (v Time) Value() (driver.Value, error) {
	if null, err := checkValid(v.Valid, v == Time{Valid: v.Valid}, v); null || err != nil {
		return nil, err
	}
	return v.String(), nil
}

// validValue is the Value method of the Valid types whose argValue is a
// driver value once widened: nil for NULL.
func validValue(v validArg) (driver.Value, error) {
	a, null, err := v.argValue()
	if null || err != nil {
		return nil, err
	}
	switch x := a.(type) {
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case float32:
		return float64(x), nil
	}
	return a, nil
}

// signbit32 and signbit64 tell -0 from 0: a Float with -0 set is not the
// zero value.
func signbit32(f float32) bool { return f == 0 && 1/f < 0 }
func signbit64(f float64) bool { return f == 0 && 1/f < 0 }
