package pgtype

import (
	"database/sql/driver"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// DriverDecoder decodes one column's values into database/sql driver
// values; src nil means NULL and gives nil. It is made once per column by
// Map.DriverDecoder and may be called for every row.
type DriverDecoder func(src []byte) (driver.Value, error)

// DriverValue decodes src (nil means NULL, returned as nil) into the value
// a database/sql driver hands to database/sql, the same value a
// sql.Scanner destination receives:
//
//	bool                          bool
//	int2, int4, int8, oid         int64
//	float4, float8                float64
//	bytea                         []byte (a copy)
//	date, timestamp, timestamptz  time.Time (UTC); "infinity" or "-infinity" as a string
//	json, jsonb                   []byte: the document (a copy)
//	every other type              string: the PostgreSQL text form
//	                              (text, numeric, uuid, time, interval, arrays, unknown OIDs)
//
// These are pgx's database/sql values, but for timestamptz (pgx: in
// time.Local; here UTC, as the native API gives it) and xml (pgx:
// []byte).
//
// An unknown OID in binary format gives its bytes ([]byte, a copy).
func (m *Map) DriverValue(oid uint32, format int16, src []byte) (driver.Value, error) {
	if format != 0 && format != 1 {
		return nil, fmt.Errorf("pgtype: unknown format code %d", format)
	}
	return m.driverValue(m.typeOf(oid), format, src)
}

// DriverDecoder returns the decoder of DriverValue for values of oid in
// format, specialised once so that decoding a row does no lookup. The
// values it returns never alias src.
func (m *Map) DriverDecoder(oid uint32, format int16) (DriverDecoder, error) {
	if format != 0 && format != 1 {
		return nil, fmt.Errorf("pgtype: unknown format code %d", format)
	}
	t := m.typeOf(oid)
	switch {
	case format == 1 && !t.known:
		return func(src []byte) (driver.Value, error) {
			if src == nil {
				return nil, nil
			}
			return copyBytes(src), nil
		}, nil
	case t.kind == kindText:
		// Text in either format is the string itself: one allocation.
		return func(src []byte) (driver.Value, error) {
			if src == nil {
				return nil, nil
			}
			return string(src), nil
		}, nil
	case t.kind == kindInt:
		return func(src []byte) (driver.Value, error) {
			if src == nil {
				return nil, nil
			}
			return decodeInt(t, format, src)
		}, nil
	case t.kind == kindFloat:
		return func(src []byte) (driver.Value, error) {
			if src == nil {
				return nil, nil
			}
			return decodeFloat(t, format, src)
		}, nil
	case t.kind == kindBool:
		return func(src []byte) (driver.Value, error) {
			if src == nil {
				return nil, nil
			}
			return decodeBool(t, format, src)
		}, nil
	}
	return func(src []byte) (driver.Value, error) { return m.driverValue(t, format, src) }, nil
}

// Reflect types of the database/sql driver values.
var (
	driverTimeType  = reflect.TypeFor[time.Time]()
	driverBytesType = reflect.TypeFor[[]byte]()
)

// DriverCopiesText reports whether DriverDecoder's values for oid are the
// value's bytes unchanged, as a string, in either format (the text types:
// text, varchar, bpchar, name, citext...). A driver may then make that
// copy itself, as the stdlib package does into blocks shared by many short
// strings.
func (m *Map) DriverCopiesText(oid uint32) bool {
	return m.typeOf(oid).kind == kindText
}

// DriverScanType returns the Go type of the non-NULL values DriverValue
// gives for oid (int64, float64, bool, []byte, string or time.Time), the
// type a database/sql driver reports as a column's scan type, for values
// in the format ResultFormat picks (an unknown OID read in binary gives
// []byte, not string). Dates and timestamps report time.Time, though
// ±infinity comes as a string.
func (m *Map) DriverScanType(oid uint32) reflect.Type {
	t := m.typeOf(oid)
	switch t.kind {
	case kindBool:
		return boolType
	case kindInt:
		return int64Type
	case kindFloat:
		return float64Type
	case kindBytea, kindJSON, kindJSONB:
		return driverBytesType
	case kindDate, kindTimestamp, kindTimestamptz:
		return driverTimeType
	}
	return stringType
}

// DatabaseTypeName returns the name a database/sql driver reports for a
// column of type oid: the PostgreSQL type name in upper case ("INT4",
// "TEXT", "TIMESTAMPTZ"), arrays with a leading underscore as in pg_type
// ("_INT4"). A built-in type this package has no codec for is named too
// ("XML", "MONEY", "CHAR" for "char" while character(n) is "BPCHAR",
// "_PG_LSN"); a type neither built in nor registered on this Map (enums,
// domains, extension types) gives its decimal OID.
func (m *Map) DatabaseTypeName(oid uint32) string {
	t, ok := m.lookup(oid)
	if !ok {
		if name, ok := builtinDatabaseTypeNames[oid]; ok {
			return name
		}
		return strconv.FormatUint(uint64(oid), 10)
	}
	if t.kind == kindArray {
		return "_" + strings.ToUpper(t.elem.name)
	}
	return strings.ToUpper(t.name)
}
