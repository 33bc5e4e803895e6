package pgtype

import (
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strconv"
	"unsafe"
)

// DecodeValue decodes src (nil means NULL, returned as nil) into the
// default Go type of oid:
//
//	bool                       bool
//	int2, int4, int8           int16, int32, int64
//	oid                        uint32
//	float4, float8             float32, float64
//	numeric                    Numeric
//	text, varchar, bpchar,
//	name, unknown OIDs (text)  string
//	bytea, unknown (binary)    []byte (a copy)
//	uuid                       [16]byte
//	date, timestamp,
//	timestamptz                time.Time in UTC; Timestamp for ±infinity
//	time                       Time
//	interval                   Interval
//	json, jsonb                map[string]any, []any, string, float64, bool or nil, as
//	                           json.Unmarshal into an any (pgx's choice); *json.RawMessage
//	                           or *[]byte destinations get the bytes
//	arrays                     []any of the element defaults, nil for NULL elements; nested []any
//	                           for multi-dimensional arrays
//	inet, cidr                 netip.Prefix
//	macaddr, macaddr8          net.HardwareAddr
//	range types                Range[any] with the subtype's defaults as bounds
//	record, composite types    []any of the field defaults (a field of an anonymous record that is
//	                           itself an anonymous record is a nested []any; see ErrRecordField)
//	hstore                     map[string]*string
//	point, lseg, box, path,
//	polygon, line, circle      Point, Lseg, Box, Path, Polygon, Line, Circle
//	bit, varbit                Bits
//	timetz                     Timetz
//	multirange types           Multirange[any] of Range[any] with the subtype's defaults as bounds
//	RegisterType types         the Codec's DecodeValue
func (m *Map) DecodeValue(oid uint32, format int16, src []byte) (any, error) {
	if format != 0 && format != 1 {
		return nil, fmt.Errorf("pgtype: unknown format code %d", format)
	}
	return m.decodeValue(m.typeOf(oid), format, src)
}

func (m *Map) decodeValue(t *typeInfo, format int16, src []byte) (any, error) {
	if src == nil {
		return nil, nil
	}
	if format == 1 && !t.known {
		return copyBytes(src), nil
	}
	switch t.kind {
	case kindBool:
		return decodeBool(t, format, src)
	case kindInt:
		v, err := decodeInt(t, format, src)
		if err != nil {
			return nil, err
		}
		switch t.base {
		case Int2OID:
			if int64(int16(v)) != v {
				return nil, decodeErr(t, format, "%d out of range", v)
			}
			return int16(v), nil
		case Int4OID:
			if int64(int32(v)) != v {
				return nil, decodeErr(t, format, "%d out of range", v)
			}
			return int32(v), nil
		case OIDOID:
			if int64(uint32(v)) != v {
				return nil, decodeErr(t, format, "%d out of range", v)
			}
			return uint32(v), nil
		}
		return v, nil
	case kindFloat:
		v, err := decodeFloat(t, format, src)
		if err != nil {
			return nil, err
		}
		if t.size == 4 {
			return float32(v), nil
		}
		return v, nil
	case kindNumeric:
		text, err := numericText(t, format, src)
		if err != nil {
			return nil, err
		}
		return parseNumeric(string(text))
	case kindText:
		return string(src), nil
	case kindBytea:
		b, err := decodeBytea(t, format, src)
		if format == 1 {
			b = copyBytes(b)
		}
		return b, err
	case kindUUID:
		return decodeUUID(t, format, src)
	case kindDate, kindTimestamp, kindTimestamptz:
		ts, err := decodeTimestamp(t, format, src)
		if err != nil {
			return nil, err
		}
		if ts.InfinityModifier != Finite {
			return ts, nil
		}
		return ts.Time, nil
	case kindTime:
		us, err := decodeTime(t, format, src)
		return Time{Microseconds: us, Valid: true}, err
	case kindInterval:
		return decodeInterval(t, format, src)
	case kindJSON, kindJSONB:
		j, err := decodeJSON(t, format, src)
		if err != nil {
			return nil, err
		}
		// As encoding/json decodes into an interface value, and as pgx
		// does: objects, arrays and scalars, numbers as float64.
		var v any
		if err := json.Unmarshal(j, &v); err != nil {
			return nil, decodeErr(t, format, "%v", err)
		}
		return v, nil
	case kindArray:
		return m.decodeArrayValue(t, format, src)
	case kindInet:
		return decodeInet(t, format, src)
	case kindMacaddr:
		return decodeMacaddr(t, format, src)
	case kindRange:
		return m.decodeRangeValue(t, format, src)
	case kindHstore:
		return decodeHstore(t, format, src)
	case kindComposite:
		return m.decodeCompositeValue(t, format, src)
	case kindPoint, kindLseg, kindBox, kindPath, kindPolygon, kindLine, kindCircle:
		return decodeGeo(t, format, src)
	case kindBits:
		return decodeBits(t, format, src)
	case kindTimetz:
		return decodeTimetz(t, format, src)
	case kindMultirange:
		return m.decodeMultirangeValue(t, format, src)
	case kindCodec:
		return t.codec.DecodeValue(format, src)
	}
	return nil, fmt.Errorf("pgtype: no decoder for %s", t.name)
}

// driverValue decodes src into the database/sql driver value handed to a
// sql.Scanner: int64, float64, bool, []byte (bytea; json and jsonb in
// their text form), string (text, numeric, uuid, time, interval, arrays,
// ±infinity) or time.Time.
func (m *Map) driverValue(t *typeInfo, format int16, src []byte) (driver.Value, error) {
	if src == nil {
		return nil, nil
	}
	if format == 1 && !t.known {
		return copyBytes(src), nil
	}
	switch t.kind {
	case kindBool:
		return decodeBool(t, format, src)
	case kindInt:
		return decodeInt(t, format, src)
	case kindFloat:
		return decodeFloat(t, format, src)
	case kindBytea:
		b, err := decodeBytea(t, format, src)
		if format == 1 {
			b = copyBytes(b)
		}
		return b, err
	case kindDate, kindTimestamp, kindTimestamptz:
		ts, err := decodeTimestamp(t, format, src)
		if err != nil {
			return nil, err
		}
		if ts.InfinityModifier != Finite {
			return ts.InfinityModifier.String(), nil
		}
		return ts.Time, nil
	case kindJSON, kindJSONB:
		return m.appendText(nil, t, format, src)
	case kindCodec:
		return codecDriverValue(t, format, src)
	}
	b, err := m.appendText(nil, t, format, src)
	return ownedString(b), err
}

// ownedString returns b as a string without copying it: b is a new slice
// nobody else holds, and is not used again.
func ownedString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// appendText appends the PostgreSQL text form of a value of type t.
func (m *Map) appendText(b []byte, t *typeInfo, format int16, src []byte) ([]byte, error) {
	if format == 0 || !t.known {
		return append(b, src...), nil
	}
	switch t.kind {
	case kindBool:
		v, err := decodeBool(t, format, src)
		if err != nil {
			return nil, err
		}
		if v {
			return append(b, 't'), nil
		}
		return append(b, 'f'), nil
	case kindInt:
		v, err := decodeInt(t, format, src)
		return strconv.AppendInt(b, v, 10), err
	case kindFloat:
		v, err := decodeFloat(t, format, src)
		return appendFloat(b, v, t.size*8), err
	case kindNumeric:
		return appendNumericText(b, t, src)
	case kindText:
		return append(b, src...), nil
	case kindBytea:
		b = append(b, `\x`...)
		return appendHex(b, src), nil
	case kindUUID:
		u, err := decodeUUID(t, format, src)
		return appendUUID(b, u), err
	case kindDate, kindTimestamp, kindTimestamptz:
		ts, err := decodeTimestamp(t, format, src)
		if err != nil {
			return nil, err
		}
		return appendTimestampText(b, t, ts), nil
	case kindTime:
		us, err := decodeTime(t, format, src)
		return appendClock(b, us), err
	case kindInterval:
		iv, err := decodeInterval(t, format, src)
		return appendIntervalText(b, iv), err
	case kindJSON, kindJSONB:
		j, err := decodeJSON(t, format, src)
		return append(b, j...), err
	case kindInet:
		p, err := decodeInet(t, format, src)
		if err != nil {
			return nil, err
		}
		return appendInetText(b, t, p), nil
	case kindMacaddr:
		a, err := decodeMacaddr(t, format, src)
		return append(b, a.String()...), err
	case kindRange:
		return m.appendRangeText(b, t, format, src)
	case kindHstore:
		return appendHstoreText(b, t, format, src)
	case kindComposite:
		return m.appendCompositeText(b, t, format, src)
	case kindPoint, kindLseg, kindBox, kindPath, kindPolygon, kindLine, kindCircle:
		return appendGeoText(b, t, format, src)
	case kindBits:
		return appendBitsValueText(b, t, format, src)
	case kindTimetz:
		return appendTimetzValueText(b, t, format, src)
	case kindMultirange:
		return m.appendMultirangeText(b, t, format, src)
	case kindCodec:
		return append(b, src...), nil // the bytes as received
	case kindArray:
		return appendArrayText(b, t, format, src, func(b, elem []byte) ([]byte, error) {
			return m.appendText(b, t.elem, format, elem)
		})
	}
	return nil, fmt.Errorf("pgtype: no text form for %s", t.name)
}

// quoteArrayElem quotes the element text b[start:] in place when the array
// text syntax, with delim separating elements, requires it.
func quoteArrayElem(b []byte, start int, delim byte) []byte {
	e := b[start:]
	need := len(e) == 0 || (len(e) == 4 && (e[0]|0x20) == 'n' && (e[1]|0x20) == 'u' && (e[2]|0x20) == 'l' && (e[3]|0x20) == 'l')
	for _, c := range e {
		switch c {
		case '{', '}', delim, '"', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
			need = true
		}
	}
	if !need {
		return b
	}
	q := make([]byte, 0, len(e)+2)
	q = append(q, '"')
	for _, c := range e {
		if c == '"' || c == '\\' {
			q = append(q, '\\')
		}
		q = append(q, c)
	}
	q = append(q, '"')
	return append(b[:start], q...)
}

func appendHex(b, src []byte) []byte {
	const digits = "0123456789abcdef"
	for _, c := range src {
		b = append(b, digits[c>>4], digits[c&15])
	}
	return b
}

// scannerPlan hands the driver value to a sql.Scanner destination.
func (m *Map) scannerPlan(t *typeInfo, format int16) ScanPlan {
	return planFunc(func(src []byte, dst any) error {
		s, ok := dst.(sql.Scanner)
		if !ok {
			return fmt.Errorf("pgtype: scan destination %T is not a sql.Scanner", dst)
		}
		v, err := m.driverValue(t, format, src)
		if err != nil {
			return err
		}
		if err := s.Scan(v); err != nil {
			return scanErr(t, "", dst, err)
		}
		return nil
	})
}
