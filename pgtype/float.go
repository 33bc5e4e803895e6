package pgtype

import (
	"encoding/binary"
	"math"
	"strconv"
)

// decodeFloat decodes a float4 or float8 value. float4 values are widened
// exactly to float64.
func decodeFloat(t *typeInfo, format int16, src []byte) (float64, error) {
	if format == 0 {
		return parseFloat(t, src)
	}
	if len(src) != t.size {
		return 0, errLen(t, len(src))
	}
	if t.size == 4 {
		return float64(math.Float32frombits(binary.BigEndian.Uint32(src))), nil
	}
	return math.Float64frombits(binary.BigEndian.Uint64(src)), nil
}

// parseFloat parses PostgreSQL's text form of a float, including NaN,
// Infinity and -Infinity, as float4in or float8in (t.size 4 or 8; a text
// type is read as float8) reads it: rounded once to the type, and a
// finite value beyond its range is an error.
func parseFloat(t *typeInfo, src []byte) (float64, error) {
	bits := 64
	if t.size == 4 {
		bits = 32
	}
	return parseFloatAs(t, src, bits)
}

// parseFloatAs is parseFloat into the float type of bits 32 or 64.
func parseFloatAs(t *typeInfo, src []byte, bits int) (float64, error) {
	switch string(src) {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	if len(src) == 0 || len(src) > 1100 {
		return 0, decodeErr(t, 0, "%q is not a number", clip(src))
	}
	for _, c := range src { // refuse Go-only spellings such as 0x1p3 or 1_000
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return 0, decodeErr(t, 0, "%q is not a number", clip(src))
		}
	}
	v, err := parseFloatBits(src, bits)
	switch {
	case err == ErrOutOfRange:
		return 0, decodeErr(t, 0, "%q is out of range for float%d", clip(src), bits/8)
	case err != nil:
		return 0, decodeErr(t, 0, "%q is not a number", clip(src))
	}
	return v, nil
}

// parseFloatBits parses a decimal (or NaN, Infinity) into the float type
// of bits 32 or 64 as the server's float4in and float8in do: rounded once,
// correctly, to that type (a float32 is not rounded through a float64
// first), and ErrOutOfRange for a finite value that overflows to
// infinity or underflows to zero (the server's "is out of range for type
// double precision"; a subnormal result is fine). It is also the rule of
// numeric::float4 and numeric::float8, which go through those functions.
func parseFloatBits(text []byte, bits int) (float64, error) {
	v, err := strconv.ParseFloat(string(text), bits)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, ErrOutOfRange
		}
		return 0, err
	}
	if v == 0 && nonzeroDigit(text) {
		return 0, ErrOutOfRange
	}
	return v, nil
}

// appendFloat appends v as the server's float4out or float8out (bits 32
// or 64) prints it with the default extra_float_digits (1): the shortest
// decimal that reads back as v, positional for decimal exponents from -4
// up to 14 for float8 and 5 for float4 (0.0001, 1000000) and with an
// exponent of at least two digits otherwise (1e-05, 1e+15); NaN,
// Infinity, -Infinity, and -0 for negative zero.
func appendFloat(b []byte, v float64, bits int) []byte {
	switch {
	case v != v:
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "Infinity"...)
	case math.IsInf(v, -1):
		return append(b, "-Infinity"...)
	case v == 0:
		if math.Signbit(v) {
			return append(b, "-0"...)
		}
		return append(b, '0')
	}
	digits := 15 // DBL_DIG
	if bits == 32 {
		digits = 6 // FLT_DIG
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], v, 'e', -1, bits) // d.ddde±XX
	exp, i := 0, indexByte(e, 'e')
	for _, c := range e[i+2:] {
		exp = exp*10 + int(c-'0')
	}
	if e[i+1] == '-' {
		exp = -exp
	}
	if exp >= -4 && exp < digits {
		return strconv.AppendFloat(b, v, 'f', -1, bits)
	}
	return append(b, e...)
}

// appendFloat8Text is appendFloat for float8.
func appendFloat8Text(b []byte, v float64) []byte { return appendFloat(b, v, 64) }

// planFloat plans float4/float8 (and, from planText, the text of a text
// type) into *float64 and *float32. A float8 into *float32 is rounded to
// the nearest float32, as float8::float4; a finite value beyond float32's
// range, or a non-zero one that would become 0, is an error.
func planFloat(t *typeInfo, format int16, dst any) ScanPlan {
	switch dst.(type) {
	case *float64:
		return planFunc(func(src []byte, dst any) error {
			d, err := target[float64](dst)
			if err != nil {
				return err
			}
			if src == nil {
				return errNull(dst)
			}
			v, err := decodeFloat(t, format, src)
			if err != nil {
				return err
			}
			*d = v
			return nil
		})
	case *float32:
		return planFunc(func(src []byte, dst any) error {
			d, err := target[float32](dst)
			if err != nil {
				return err
			}
			if src == nil {
				return errNull(dst)
			}
			var v float64
			if t.kind == kindText {
				v, err = parseFloatAs(t, src, 32) // text read as float4, rounded once
			} else {
				v, err = decodeFloat(t, format, src)
			}
			if err != nil {
				return err
			}
			r, ok := fitFloat32(v)
			if !ok {
				return scanErr(t, strconv.FormatFloat(v, 'g', -1, 64), dst, ErrOutOfRange)
			}
			*d = r
			return nil
		})
	}
	return nil
}

// fitFloat32 rounds v to float32 as the server's float8::float4 does,
// reporting false when a finite v overflows to infinity or a non-zero v
// underflows to zero (subnormal float32 results are kept).
func fitFloat32(v float64) (float32, bool) {
	r := float32(v)
	if math.IsInf(float64(r), 0) && !math.IsInf(v, 0) || r == 0 && v != 0 {
		return 0, false
	}
	return r, true
}
