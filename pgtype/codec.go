package pgtype

import (
	"database/sql/driver"
	"errors"
	"reflect"
)

// Codec converts the values of a user type registered with
// Map.RegisterType (an extension type, or a type with a Go representation
// of its own). Its methods may be called concurrently. The Map handles
// SQL NULL, *any (through DecodeValue), sql.Scanner destinations, **T
// destinations and *sql.RawBytes itself; *string and *[]byte
// destinations the codec does not plan get the value's bytes as
// received (its text form when ResultFormat is 0).
type Codec interface {
	// ResultFormat is the format to request for result columns of the
	// type: 0 (text) or 1 (binary).
	ResultFormat() int16
	// PlanScan returns a plan that decodes values in format (0 or 1)
	// into destinations of dst's dynamic type, or nil when that type is
	// not supported. The plan is reused for every row and must be safe
	// for concurrent use.
	PlanScan(format int16, dst any) ScanPlan
	// DecodeValue returns the Go value of src, which is not NULL, in
	// format: the result for a *any destination. A sql.Scanner gets it
	// too when it is a driver.Value (int64, float64, bool, []byte,
	// string, time.Time), and otherwise the bytes as received.
	DecodeValue(format int16, src []byte) (any, error)
	// Encode appends arg, which is not nil, to buf and returns it with
	// the format used (0 or 1). For an argument type it does not handle
	// it returns an error matching errors.ErrUnsupported, and the Map
	// then tries a driver.Valuer's value, a pointer's target, and a Go
	// string as text for the server to parse.
	Encode(arg any, buf []byte) (out []byte, format int16, err error)
}

// encodeCodec encodes arg through t's Codec.
func (m *Map) encodeCodec(t *typeInfo, arg any, buf []byte, depth int) ([]byte, int16, bool, error) {
	out, f, err := t.codec.Encode(arg, buf)
	if err == nil {
		return out, f, false, nil
	}
	if !errors.Is(err, errors.ErrUnsupported) {
		return buf, 0, false, encErr(t, arg, err)
	}
	rv := reflect.ValueOf(arg)
	nilPtr := rv.Kind() == reflect.Pointer && rv.IsNil()
	// As in Map.Encode: a nil pointer is NULL unless its Value method has
	// a pointer receiver.
	v, valuer := arg.(driver.Valuer)
	if nilPtr && (!valuer || rv.Type().Elem().Implements(valuerType)) {
		return buf, 1, true, nil
	}
	if depth >= maxValuerDepth {
		return buf, 0, false, encErr(t, arg, errors.New("driver.Valuer or pointer chain too deep"))
	}
	if valuer {
		dv, err := callValuer(v, nilPtr)
		if err != nil {
			return buf, 0, false, encErr(t, arg, err)
		}
		return m.encode(t, dv, buf, depth+1)
	}
	if rv.Kind() == reflect.Pointer {
		return m.encode(t, rv.Elem().Interface(), buf, depth+1)
	}
	if s, ok := arg.(string); ok {
		return append(buf, s...), 0, false, nil
	}
	return buf, 0, false, encErr(t, arg, errUnsupported)
}

// codecDriverValue is the value a sql.Scanner gets for a Codec type.
func codecDriverValue(t *typeInfo, format int16, src []byte) (driver.Value, error) {
	v, err := t.codec.DecodeValue(format, src)
	if err != nil {
		return nil, err
	}
	if driver.IsValue(v) {
		return v, nil
	}
	if format == 0 {
		return string(src), nil
	}
	return copyBytes(src), nil
}
