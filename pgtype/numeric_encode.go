package pgtype

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// appendNumericBinary appends the binary numeric form of a decimal text
// [-]digits[.digits] (also NaN, Infinity, -Infinity), as numeric_send
// would produce it: leading and trailing zero base-10000 digits removed,
// dscale the number of digits after the point.
func appendNumericBinary(b []byte, dec []byte) ([]byte, error) {
	switch string(dec) {
	case "NaN":
		return appendNumericHeader(b, 0, 0, numericNaN, 0), nil
	case "Infinity", "+Infinity":
		return appendNumericHeader(b, 0, 0, numericPInf, numericInfDscale), nil
	case "-Infinity":
		return appendNumericHeader(b, 0, 0, numericNInf, numericInfDscale), nil
	}
	if !validNumericText(dec) {
		return nil, fmt.Errorf("invalid numeric %q", clip(dec))
	}
	sign := uint16(numericPos)
	if dec[0] == '-' || dec[0] == '+' {
		if dec[0] == '-' {
			sign = numericNeg
		}
		dec = dec[1:]
	}
	intPart, frac := dec, []byte(nil)
	if i := indexByte(dec, '.'); i >= 0 {
		intPart, frac = dec[:i], dec[i+1:]
	}
	for len(intPart) > 0 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	dscale := len(frac)
	if dscale > numericMaxDsc {
		return nil, fmt.Errorf("numeric has %d digits after the point, more than %d", dscale, numericMaxDsc)
	}
	intGroups := (len(intPart) + 3) / 4
	if intGroups-1 > math.MaxInt16 { // the weight is an int16
		return nil, fmt.Errorf("numeric has %d digits before the point, too many", len(intPart))
	}
	fracGroups := (len(frac) + 3) / 4
	// digitAt returns base-10000 digit g, counting from the most
	// significant integer group (g < intGroups) into the fraction.
	digitAt := func(g int) uint16 {
		var d uint16
		for k := 0; k < 4; k++ {
			var c byte = '0'
			if g < intGroups {
				pos := len(intPart) - (intGroups-g)*4 + k // may be negative: left padding
				if pos >= 0 {
					c = intPart[pos]
				}
			} else {
				pos := (g-intGroups)*4 + k
				if pos < len(frac) {
					c = frac[pos]
				}
			}
			d = d*10 + uint16(c-'0')
		}
		return d
	}
	first, last := 0, intGroups+fracGroups-1
	for first <= last && digitAt(first) == 0 {
		first++
	}
	for last >= first && digitAt(last) == 0 {
		last--
	}
	if first > last { // zero
		return appendNumericHeader(b, 0, 0, numericPos, dscale), nil
	}
	weight := intGroups - 1 - first
	b = appendNumericHeader(b, last-first+1, weight, sign, dscale)
	for g := first; g <= last; g++ {
		b = binary.BigEndian.AppendUint16(b, digitAt(g))
	}
	return b, nil
}

// numericInfDscale is the display scale numeric_send reports for the
// infinities (bits of the special header read as a short-form scale);
// receivers ignore it, it is sent only to match the server byte for byte.
const numericInfDscale = 32

func appendNumericHeader(b []byte, ndigits, weight int, sign uint16, dscale int) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(ndigits))
	b = binary.BigEndian.AppendUint16(b, uint16(int16(weight)))
	b = binary.BigEndian.AppendUint16(b, sign)
	return binary.BigEndian.AppendUint16(b, uint16(dscale))
}

var errNotDecimal = errors.New("not a finite decimal fraction")

// ratDecimal returns the exact decimal text of r, or an error when r has
// no finite decimal expansion (1/3).
func ratDecimal(r *big.Rat) (string, error) {
	if r.IsInt() {
		return r.Num().String(), nil
	}
	den := new(big.Int).Set(r.Denom())
	twos := int(den.TrailingZeroBits())
	den.Rsh(den, uint(twos))
	fives := 0
	five, ten := big.NewInt(5), big.NewInt(10)
	q, m := new(big.Int), new(big.Int)
	for den.Cmp(big.NewInt(1)) != 0 {
		q.QuoRem(den, five, m)
		if m.Sign() != 0 {
			return "", errNotDecimal
		}
		den.Set(q)
		fives++
		if fives > numericMaxDsc {
			return "", errNotDecimal
		}
	}
	scale := max(twos, fives)
	if scale > numericMaxDsc {
		return "", errNotDecimal
	}
	n := new(big.Int).Exp(ten, big.NewInt(int64(scale)), nil)
	n.Mul(n, r.Num())
	n.Quo(n, r.Denom()) // exact
	return Numeric{Int: n, Exp: int32(-scale)}.String(), nil
}

// numericDecimal returns the decimal text of a Numeric for encoding,
// expanding a positive exponent.
func numericDecimal(n Numeric) (string, error) {
	if n.Exp > 0 && n.Exp > 4*math.MaxInt16 {
		return "", errors.New("numeric exponent too large")
	}
	if n.Exp < -numericMaxDsc {
		return "", errors.New("numeric scale too large")
	}
	return n.String(), nil
}

// floatDecimal returns the decimal text of f for numeric: NaN, Infinity,
// -Infinity or the shortest exact-round-trip digits.
func floatDecimal(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}
