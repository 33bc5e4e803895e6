package pgtype

import (
	"database/sql/driver"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net"
	"net/netip"
	"reflect"
	"strconv"
	"time"
)

// EncodeError reports an argument that cannot be encoded for its parameter.
type EncodeError struct {
	GoType string // "time.Time"
	Type   string // PostgreSQL type name, "int4"
	OID    uint32
	Err    error
}

// Error returns "cannot encode time.Time as int4 (OID 23): unsupported
// argument type".
func (e *EncodeError) Error() string {
	return fmt.Sprintf("cannot encode %s as %s (OID %d): %v", e.GoType, e.Type, e.OID, e.Err)
}

// Unwrap returns e.Err.
func (e *EncodeError) Unwrap() error { return e.Err }

// errUnsupported is the reason of an EncodeError for an argument type that
// has no encoding for the parameter type.
var errUnsupported = errors.New("unsupported argument type")

func encErr(t *typeInfo, arg any, err error) error {
	return &EncodeError{GoType: fmt.Sprintf("%T", arg), Type: t.name, OID: t.oid, Err: err}
}

// maxValuerDepth bounds chains of driver.Valuer results.
const maxValuerDepth = 8

// valuerType is the type of driver.Valuer.
var valuerType = reflect.TypeFor[driver.Valuer]()

// callValuer returns v.Value(). As in database/sql, a nil pointer reaches
// it only when its Value method has a pointer receiver (a nil pointer to
// a type whose Value has a value receiver is NULL without a call); such a
// method may dereference the nil pointer, and its panic is then returned as
// an error rather than crashing the caller.
func callValuer(v driver.Valuer, nilPtr bool) (dv driver.Value, err error) {
	if nilPtr {
		defer func() {
			if r := recover(); r != nil {
				dv, err = nil, fmt.Errorf("Value method panicked on a nil %T: %v", v, r)
			}
		}()
	}
	return v.Value()
}

// Encode appends the encoding of arg for a parameter of type oid (the type
// the server described) to buf and returns it with the format used: 1
// (binary) when there is a binary encoding for oid and arg's type, 0 (text)
// otherwise; a Go string for a non-text parameter is sent as text for the
// server to parse. null reports SQL NULL (nil, a nil pointer, a
// driver.Valuer returning nil); buf is then returned unchanged. As in
// database/sql, a nil pointer whose type has a Value method with a pointer
// receiver is asked for its value; a nil pointer to a type implementing
// driver.Valuer with a value receiver is NULL without a call. See the
// package documentation for the Go types each type encodes from.
func (m *Map) Encode(oid uint32, arg any, buf []byte) (out []byte, format int16, null bool, err error) {
	return m.encode(m.typeOf(oid), arg, buf, 0)
}

func (m *Map) encode(t *typeInfo, arg any, buf []byte, depth int) ([]byte, int16, bool, error) {
	if arg == nil {
		return buf, 1, true, nil
	}
	if t.kind == kindCodec {
		return m.encodeCodec(t, arg, buf, depth)
	}
	// Common argument types first, without reflection.
	switch v := arg.(type) {
	case string:
		return encodeString(t, v, buf)
	case int64:
		return encodeInt(t, arg, v, buf)
	case int:
		return encodeInt(t, arg, int64(v), buf)
	case int32:
		return encodeInt(t, arg, int64(v), buf)
	case int16:
		return encodeInt(t, arg, int64(v), buf)
	case int8:
		return encodeInt(t, arg, int64(v), buf)
	case uint8:
		return encodeInt(t, arg, int64(v), buf)
	case uint16:
		return encodeInt(t, arg, int64(v), buf)
	case uint32:
		return encodeInt(t, arg, int64(v), buf)
	case uint64:
		return encodeUint(t, arg, v, buf)
	case uint:
		return encodeUint(t, arg, uint64(v), buf)
	case float64:
		return encodeFloat(t, arg, v, buf)
	case float32:
		return encodeFloat(t, arg, float64(v), buf)
	case bool:
		return encodeBool(t, v, buf)
	case []byte:
		if v == nil {
			return buf, 1, true, nil
		}
		return encodeBytes(t, arg, v, buf)
	case json.RawMessage:
		if v == nil {
			return buf, 1, true, nil
		}
		return encodeBytes(t, arg, v, buf)
	case time.Time:
		return encodeTime(t, arg, Timestamp{Time: v}, buf)
	case Timestamp:
		if null, err := checkValid(v.Valid, v.isZero(), v); null || err != nil {
			return nullOrErr(t, arg, buf, err)
		}
		return encodeTime(t, arg, v, buf)
	case time.Duration:
		return encodeDuration(t, arg, v, buf)
	case Interval:
		if null, err := checkValid(v.Valid, v == Interval{Valid: v.Valid}, v); null || err != nil {
			return nullOrErr(t, arg, buf, err)
		}
		return encodeInterval(t, arg, v, buf)
	case Time:
		if null, err := checkValid(v.Valid, v == Time{Valid: v.Valid}, v); null || err != nil {
			return nullOrErr(t, arg, buf, err)
		}
		return encodeTimeOfDay(t, arg, v.Microseconds, buf)
	case [16]byte:
		return encodeUUID(t, arg, v, buf)
	case *big.Int:
		if v == nil {
			return buf, 1, true, nil
		}
		return encodeDecimal(t, arg, []byte(v.String()), buf)
	case *big.Rat:
		if v == nil {
			return buf, 1, true, nil
		}
		s, err := ratDecimal(v)
		if err != nil {
			return buf, 0, false, encErr(t, arg, err)
		}
		return encodeDecimal(t, arg, []byte(s), buf)
	case Numeric:
		if null, err := checkValid(v.Valid, v.isZero(), v); null || err != nil {
			return nullOrErr(t, arg, buf, err)
		}
		s, err := numericDecimal(v)
		if err != nil {
			return buf, 0, false, encErr(t, arg, err)
		}
		return encodeDecimal(t, arg, []byte(s), buf)
	case netip.Addr, netip.Prefix, net.IP, *net.IPNet:
		p, null, _, err := inetArg(arg)
		switch {
		case err != nil:
			return buf, 0, false, encErr(t, arg, err)
		case null:
			return buf, 1, true, nil
		}
		return encodeInet(t, arg, p, buf)
	case net.HardwareAddr:
		if v == nil {
			return buf, 1, true, nil
		}
		return encodeMacaddr(t, v, buf)
	case rangeArg:
		return m.encodeRange(t, arg, v, buf, depth)
	case multirangeArg:
		return m.encodeMultirangeArg(t, arg, v, buf, depth)
	case Point, Lseg, Box, Path, Polygon, Line, Circle:
		return encodeGeo(t, arg, buf)
	case Bits:
		return encodeBits(t, arg, v, buf)
	case Timetz:
		return encodeTimetz(t, arg, v, buf)
	case validDest: // a pointer to one of this package's Valid types
		rv := reflect.ValueOf(arg)
		if rv.IsNil() {
			return buf, 1, true, nil
		}
		return m.encode(t, rv.Elem().Interface(), buf, depth+1)
	case validArg:
		a, null, err := v.argValue()
		if null || err != nil {
			return nullOrErr(t, arg, buf, err)
		}
		return m.encode(t, a, buf, depth+1)
	case driver.Valuer:
		rv := reflect.ValueOf(arg)
		nilPtr := rv.Kind() == reflect.Pointer && rv.IsNil()
		if nilPtr && rv.Type().Elem().Implements(valuerType) {
			return buf, 1, true, nil
		}
		if depth >= maxValuerDepth {
			return buf, 0, false, encErr(t, arg, errors.New("driver.Valuer chain too deep"))
		}
		dv, err := callValuer(v, nilPtr)
		if err != nil {
			return buf, 0, false, encErr(t, arg, err)
		}
		return m.encode(t, dv, buf, depth+1)
	}
	return m.encodeReflect(t, arg, buf, depth)
}

// nullOrErr returns NULL, or err (checkValid's) as arg's encoding error.
func nullOrErr(t *typeInfo, arg any, buf []byte, err error) ([]byte, int16, bool, error) {
	if err != nil {
		return buf, 0, false, encErr(t, arg, err)
	}
	return buf, 1, true, nil
}

// encodeReflect handles pointers, named types of basic kinds, slices
// (arrays) and, for json/jsonb parameters, anything encoding/json marshals.
func (m *Map) encodeReflect(t *typeInfo, arg any, buf []byte, depth int) ([]byte, int16, bool, error) {
	rv := reflect.ValueOf(arg)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return buf, 1, true, nil
		}
		if depth >= maxValuerDepth {
			return buf, 0, false, encErr(t, arg, errors.New("pointer chain too deep"))
		}
		return m.encode(t, rv.Elem().Interface(), buf, depth+1)
	}
	if out, format, null, ok, err := m.encodeRangeSlice(t, arg, rv, buf, depth); ok {
		return out, format, null, err
	}
	if t.kind == kindComposite {
		if fields, ok := compositeArg(rv); ok {
			return m.encodeComposite(t, arg, fields, buf, depth)
		}
	}
	if t.kind == kindHstore && rv.Kind() == reflect.Map {
		if rv.IsNil() {
			return buf, 1, true, nil
		}
		if keys, values, ok := hstoreArg(rv); ok {
			return encodeHstore(t, arg, keys, values, buf)
		}
	}
	if t.kind == kindJSON || t.kind == kindJSONB {
		if (rv.Kind() == reflect.Map || rv.Kind() == reflect.Slice) && rv.IsNil() {
			return buf, 1, true, nil
		}
		j, err := json.Marshal(arg)
		if err != nil {
			return buf, 0, false, encErr(t, arg, err)
		}
		return encodeBytes(t, arg, j, buf)
	}
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return encodeInt(t, arg, rv.Int(), buf)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return encodeUint(t, arg, rv.Uint(), buf)
	case reflect.Float32, reflect.Float64:
		return encodeFloat(t, arg, rv.Float(), buf)
	case reflect.String:
		return encodeString(t, rv.String(), buf)
	case reflect.Bool:
		return encodeBool(t, rv.Bool(), buf)
	case reflect.Array:
		if rv.Len() == 16 && rv.Type().Elem().Kind() == reflect.Uint8 {
			var u [16]byte
			reflect.Copy(reflect.ValueOf(u[:]), rv)
			return encodeUUID(t, arg, u, buf)
		}
	case reflect.Slice:
		if rv.IsNil() {
			return buf, 1, true, nil
		}
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return encodeBytes(t, arg, rv.Bytes(), buf)
		}
		return m.encodeArray(t, arg, rv, buf, depth)
	}
	return buf, 0, false, encErr(t, arg, errUnsupported)
}

// encodeString sends s as the bytes of a text, bytea or json value, or as
// text (format 0) for the server to parse for any other type.
func encodeString(t *typeInfo, s string, buf []byte) ([]byte, int16, bool, error) {
	switch {
	case t.kind == kindJSONB:
		return append(append(buf, 1), s...), 1, false, nil
	case t.known && (t.kind == kindText || t.kind == kindBytea || t.kind == kindJSON):
		return append(buf, s...), 1, false, nil
	}
	return append(buf, s...), 0, false, nil
}

// encodeBytes sends b as bytea, as the text of a text type, or as the JSON
// document of a json/jsonb parameter, in binary.
//
// For a type this package does not know, b goes in binary too, as the
// value's binary form, which the type's receive function reads as is:
// the bytes themselves for a domain over bytea, the text for enums,
// citext and domains over text. In text format the type's input function
// would parse b instead, and a domain over bytea would decode the
// backslash escapes in it. The exception is a built-in type this package
// has no codec for (money, pg_lsn, xid, xml, ...: builtinTypeNames, and
// their arrays): none of them is bytes, so b can only be its text, and
// it goes in text format for the server to parse, as a string does.
func encodeBytes(t *typeInfo, arg any, b []byte, buf []byte) ([]byte, int16, bool, error) {
	switch t.kind {
	case kindBytea, kindJSON:
		return append(buf, b...), 1, false, nil
	case kindJSONB:
		return append(append(buf, 1), b...), 1, false, nil
	case kindText:
		if _, builtin := builtinDatabaseTypeNames[t.oid]; builtin && !t.known {
			return append(buf, b...), 0, false, nil
		}
		return append(buf, b...), 1, false, nil
	}
	return buf, 0, false, encErr(t, arg, errUnsupported)
}

// encodeInt encodes an integer for integer, float, numeric and text
// parameters, with range checks.
func encodeInt(t *typeInfo, arg any, v int64, buf []byte) ([]byte, int16, bool, error) {
	switch t.kind {
	case kindInt:
		switch {
		case t.base == OIDOID:
			if v < 0 || v > math.MaxUint32 {
				return buf, 0, false, intRangeErr(t, arg, v)
			}
			return binary.BigEndian.AppendUint32(buf, uint32(v)), 1, false, nil
		case t.size == 2:
			if int64(int16(v)) != v {
				return buf, 0, false, intRangeErr(t, arg, v)
			}
			return binary.BigEndian.AppendUint16(buf, uint16(v)), 1, false, nil
		case t.size == 4:
			if int64(int32(v)) != v {
				return buf, 0, false, intRangeErr(t, arg, v)
			}
			return binary.BigEndian.AppendUint32(buf, uint32(v)), 1, false, nil
		}
		return binary.BigEndian.AppendUint64(buf, uint64(v)), 1, false, nil
	case kindFloat:
		f := float64(v)
		if f >= math.MaxInt64 || int64(f) != v || (t.size == 4 && int64(float32(f)) != v) {
			return buf, 0, false, intInexactErr(t, arg, v)
		}
		return appendFloatBinary(buf, t, f), 1, false, nil
	case kindNumeric:
		var tmp [24]byte
		out, err := appendNumericBinary(buf, strconv.AppendInt(tmp[:0], v, 10))
		return out, 1, false, err
	case kindText:
		return strconv.AppendInt(buf, v, 10), textFormat(t), false, nil
	}
	return buf, 0, false, encErr(t, arg, errUnsupported)
}

// intRangeErr and intInexactErr are encodeInt's errors, kept out of its
// frame, which is on the stack of every statement with an integer
// argument.
//
//go:noinline
func intRangeErr(t *typeInfo, arg any, v int64) error {
	return encErr(t, arg, fmt.Errorf("%d: %w", v, ErrOutOfRange))
}

//go:noinline
func intInexactErr(t *typeInfo, arg any, v int64) error {
	return encErr(t, arg, fmt.Errorf("%d is not exact as %s", v, t.name))
}

// textFormat is the format for text bytes sent for t: binary for the
// known text types (whose binary form is the text), text otherwise.
func textFormat(t *typeInfo) int16 {
	if t.known {
		return 1
	}
	return 0
}

// encodeUint encodes an unsigned integer that may exceed int64.
func encodeUint(t *typeInfo, arg any, v uint64, buf []byte) ([]byte, int16, bool, error) {
	if v <= math.MaxInt64 {
		return encodeInt(t, arg, int64(v), buf)
	}
	switch t.kind {
	case kindNumeric:
		var tmp [24]byte
		out, err := appendNumericBinary(buf, strconv.AppendUint(tmp[:0], v, 10))
		return out, 1, false, err
	case kindText:
		return strconv.AppendUint(buf, v, 10), textFormat(t), false, nil
	}
	return buf, 0, false, encErr(t, arg, fmt.Errorf("%d: %w", v, ErrOutOfRange))
}

// appendFloatBinary appends f as float4 or float8, with NaN in the
// server's canonical bit pattern.
func appendFloatBinary(buf []byte, t *typeInfo, f float64) []byte {
	if f != f {
		if t.size == 4 {
			return binary.BigEndian.AppendUint32(buf, 0x7fc00000)
		}
		return binary.BigEndian.AppendUint64(buf, 0x7ff8000000000000)
	}
	if t.size == 4 {
		return binary.BigEndian.AppendUint32(buf, math.Float32bits(float32(f)))
	}
	return binary.BigEndian.AppendUint64(buf, math.Float64bits(f))
}

// encodeFloat encodes a float for float, numeric, integer (when integral
// and in range) and text parameters.
func encodeFloat(t *typeInfo, arg any, f float64, buf []byte) ([]byte, int16, bool, error) {
	switch t.kind {
	case kindFloat:
		if t.size == 4 {
			if _, ok := fitFloat32(f); !ok {
				return buf, 0, false, encErr(t, arg, fmt.Errorf("%g: %w", f, ErrOutOfRange))
			}
		}
		return appendFloatBinary(buf, t, f), 1, false, nil
	case kindNumeric:
		var tmp [32]byte
		out, err := appendNumericBinary(buf, floatDecimal(tmp[:0], f))
		return out, 1, false, err
	case kindInt:
		if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
			return buf, 0, false, encErr(t, arg, fmt.Errorf("%g is not an integer in range", f))
		}
		return encodeInt(t, arg, int64(f), buf)
	case kindText:
		return appendFloat(buf, f, 64), textFormat(t), false, nil
	}
	return buf, 0, false, encErr(t, arg, errUnsupported)
}

// encodeBool encodes a bool for bool and text parameters.
func encodeBool(t *typeInfo, v bool, buf []byte) ([]byte, int16, bool, error) {
	switch t.kind {
	case kindBool:
		if v {
			return append(buf, 1), 1, false, nil
		}
		return append(buf, 0), 1, false, nil
	case kindText:
		return strconv.AppendBool(buf, v), textFormat(t), false, nil
	}
	return buf, 0, false, encErr(t, v, errUnsupported)
}

// encodeDecimal encodes decimal text for numeric, integer, float and text
// parameters.
func encodeDecimal(t *typeInfo, arg any, dec []byte, buf []byte) ([]byte, int16, bool, error) {
	switch t.kind {
	case kindNumeric:
		out, err := appendNumericBinary(buf, dec)
		if err != nil {
			return buf, 0, false, encErr(t, arg, err)
		}
		return out, 1, false, nil
	case kindInt, kindFloat, kindText:
		return append(buf, dec...), 0, false, nil // the server parses and range-checks it
	}
	return buf, 0, false, encErr(t, arg, errUnsupported)
}

// encodeUUID encodes a [16]byte for uuid and text parameters.
func encodeUUID(t *typeInfo, arg any, u [16]byte, buf []byte) ([]byte, int16, bool, error) {
	switch t.kind {
	case kindUUID:
		return append(buf, u[:]...), 1, false, nil
	case kindText:
		return appendUUID(buf, u), textFormat(t), false, nil
	}
	return buf, 0, false, encErr(t, arg, errUnsupported)
}
