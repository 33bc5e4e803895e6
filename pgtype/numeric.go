package pgtype

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Binary numeric layout (numeric_send): int16 ndigits, int16 weight,
// uint16 sign, int16 dscale, then ndigits base-10000 digits, most
// significant first; the value is Σ digit[i] × 10000^(weight-i), shown with
// dscale digits after the decimal point.
const (
	numericPos    = 0x0000
	numericNeg    = 0x4000
	numericNaN    = 0xC000
	numericPInf   = 0xD000
	numericNInf   = 0xF000
	numericMaxDsc = 0x3FFF
)

// Numeric is a PostgreSQL numeric value: Int × 10^Exp, or NaN, or
// ±Infinity (PostgreSQL 14 and later). Values decoded from the server keep
// their scale: 1.50 is Int 150, Exp -2. Numeric is the default Go type of
// numeric (DecodeValue) and may be scanned into and encoded from.
type Numeric struct {
	Int              *big.Int // unscaled value; nil means 0
	Exp              int32
	NaN              bool
	InfinityModifier InfinityModifier // Infinity or NegativeInfinity for ±Infinity
	Valid            bool             // false for NULL (see Text)
}

// String returns the PostgreSQL text form: "-12.50", "NaN", "Infinity".
func (n Numeric) String() string {
	switch {
	case n.NaN:
		return "NaN"
	case n.InfinityModifier == Infinity:
		return "Infinity"
	case n.InfinityModifier == NegativeInfinity:
		return "-Infinity"
	}
	i := n.Int
	if i == nil {
		i = new(big.Int)
	}
	s := i.String()
	if n.Exp >= 0 {
		if i.Sign() == 0 {
			return "0"
		}
		return s + strings.Repeat("0", int(n.Exp))
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	scale := int(-n.Exp)
	if len(s) <= scale {
		s = strings.Repeat("0", scale-len(s)+1) + s
	}
	s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	if neg {
		s = "-" + s
	}
	return s
}

// Float64 returns the nearest float64 (NaN and ±Inf for the special values).
func (n Numeric) Float64() float64 {
	v, _ := strconv.ParseFloat(n.String(), 64)
	return v
}

// Rat returns n as an exact *big.Rat; NaN and infinities are an error.
func (n Numeric) Rat() (*big.Rat, error) {
	if n.NaN || n.InfinityModifier != Finite {
		return nil, fmt.Errorf("pgtype: numeric %s has no *big.Rat value", n)
	}
	r, ok := new(big.Rat).SetString(n.String())
	if !ok {
		return nil, fmt.Errorf("pgtype: invalid numeric %s", n)
	}
	return r, nil
}

// numericText returns the text form of a numeric value: the bytes of a
// text-format value after validation, or the conversion of a binary one.
func numericText(t *typeInfo, format int16, src []byte) ([]byte, error) {
	if format == 0 {
		if !validNumericText(src) {
			return nil, decodeErr(t, 0, "%q is not a number", clip(src))
		}
		return src, nil
	}
	return appendNumericText(nil, t, src)
}

// validNumericText reports whether s is [-]digits[.digits], NaN or
// [-]Infinity: what numeric_out produces.
func validNumericText(s []byte) bool {
	switch string(s) {
	case "NaN", "Infinity", "-Infinity":
		return true
	}
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	digits, dot := 0, false
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// appendNumericText appends the text form of a binary numeric value.
func appendNumericText(b []byte, t *typeInfo, src []byte) ([]byte, error) {
	if len(src) < 8 {
		return nil, decodeErr(t, 1, "%d bytes, want at least 8", len(src))
	}
	ndigits := int(int16(binary.BigEndian.Uint16(src)))
	weight := int(int16(binary.BigEndian.Uint16(src[2:])))
	sign := binary.BigEndian.Uint16(src[4:])
	dscale := int(int16(binary.BigEndian.Uint16(src[6:])))
	if ndigits < 0 || len(src) != 8+2*ndigits {
		return nil, decodeErr(t, 1, "%d bytes for %d digits", len(src), ndigits)
	}
	if dscale < 0 || dscale > numericMaxDsc {
		return nil, decodeErr(t, 1, "display scale %d out of range", dscale)
	}
	switch sign {
	case numericNaN:
		return append(b, "NaN"...), nil
	case numericPInf:
		return append(b, "Infinity"...), nil
	case numericNInf:
		return append(b, "-Infinity"...), nil
	case numericPos, numericNeg:
	default:
		return nil, decodeErr(t, 1, "sign 0x%04x is invalid", sign)
	}
	digit := func(i int) (int, error) { // the base-10000 digit of index i (0 = most significant)
		if i < 0 || i >= ndigits {
			return 0, nil
		}
		d := int(binary.BigEndian.Uint16(src[8+2*i:]))
		if d > 9999 {
			return 0, decodeErr(t, 1, "digit %d is out of range", d)
		}
		return d, nil
	}
	zero := true
	for i := 0; i < ndigits; i++ {
		d, err := digit(i)
		if err != nil {
			return nil, err
		}
		if d != 0 {
			zero = false
		}
	}
	// Every non-zero digit must lie within the display scale.
	for i := ndigits - 1; i >= 0 && i > weight; i-- {
		d, _ := digit(i)
		if d == 0 {
			continue
		}
		frac := (i - weight) * 4 // digits after the point through this group
		for d%10 == 0 {
			d /= 10
			frac--
		}
		if frac > dscale {
			return nil, decodeErr(t, 1, "digits beyond display scale %d", dscale)
		}
		break
	}
	if sign == numericNeg && !zero {
		b = append(b, '-')
	}
	leading := true // no non-zero integer group written yet
	for e := weight; e >= 0; e-- {
		d, _ := digit(weight - e)
		switch {
		case leading && d == 0:
		case leading:
			b = strconv.AppendInt(b, int64(d), 10)
			leading = false
		default:
			b = append(b, byte('0'+d/1000), byte('0'+d/100%10), byte('0'+d/10%10), byte('0'+d%10))
		}
	}
	if leading {
		b = append(b, '0')
	}
	if dscale > 0 {
		b = append(b, '.')
		for k := 1; dscale > 0; k++ {
			d, _ := digit(weight + k)
			g := [4]byte{byte('0' + d/1000), byte('0' + d/100%10), byte('0' + d/10%10), byte('0' + d%10)}
			n := min(dscale, 4)
			b = append(b, g[:n]...)
			dscale -= n
		}
	}
	return b, nil
}

// errNumericSpecial is the reason a NaN or infinite numeric cannot be
// scanned into a big.* destination or an integer.
var errNumericSpecial = errors.New("NaN and infinite numerics have no such value")

// numericIntPart returns the integer digits (with sign) of a decimal text,
// or an error when it has a non-zero fraction or is NaN/Infinity.
func numericIntPart(s []byte) ([]byte, error) {
	if !validNumericText(s) || s[len(s)-1] == 'N' || s[len(s)-1] == 'y' {
		return nil, errNumericSpecial
	}
	i := strings.IndexByte(string(s), '.')
	if i < 0 {
		return s, nil
	}
	for _, c := range s[i+1:] {
		if c != '0' {
			return nil, errors.New("value has a fractional part")
		}
	}
	if i == 0 || (i == 1 && (s[0] == '-' || s[0] == '+')) {
		return []byte("0"), nil
	}
	return s[:i], nil
}

// planNumeric plans numeric into *string, *float64, *float32, *big.Rat,
// *big.Int, *Numeric and Go integers (when the value is integral).
func planNumeric(t *typeInfo, format int16, dst any) ScanPlan {
	scan := func(set func(text []byte, dst any) error) ScanPlan {
		return planFunc(func(src []byte, dst any) error {
			if src == nil {
				return errNull(dst)
			}
			text, err := numericText(t, format, src)
			if err != nil {
				return err
			}
			if err := set(text, dst); err != nil {
				var se *ScanError
				var ne *nullError
				if errors.As(err, &se) || errors.As(err, &ne) {
					return err
				}
				return scanErr(t, string(text), dst, err)
			}
			return nil
		})
	}
	intDec := func(src []byte) (int64, error) {
		text, err := numericText(t, format, src)
		if err != nil {
			return 0, err
		}
		ip, err := numericIntPart(text)
		if err != nil {
			return 0, &valueError{string(text), err}
		}
		v, err := parseInt(t, ip)
		if err != nil {
			return 0, &valueError{string(text), ErrOutOfRange}
		}
		return v, nil
	}
	if p := intDestPlan(t, intDec, dst); p != nil {
		return p
	}
	switch dst.(type) {
	case *string:
		return scan(func(text []byte, dst any) error {
			d, err := target[string](dst)
			if err == nil {
				*d = string(text)
			}
			return err
		})
	case *float64, *float32:
		_, f32 := dst.(*float32)
		bits := 64
		if f32 {
			bits = 32 // rounded once, as numeric::float4: not through a float64
		}
		return scan(func(text []byte, dst any) error {
			// numeric_float8 and numeric_float4 read the numeric's text
			// with float8in and float4in: beyond the range is an error;
			// NaN and ±Infinity map to their floats.
			v, err := parseFloatBits(text, bits)
			if err != nil {
				return err
			}
			if f32 {
				d, err := target[float32](dst)
				if err == nil {
					*d = float32(v)
				}
				return err
			}
			d, err := target[float64](dst)
			if err == nil {
				*d = v
			}
			return err
		})
	case *big.Rat:
		return scan(func(text []byte, dst any) error {
			d, err := target[big.Rat](dst)
			if err != nil {
				return err
			}
			if _, err := numericIntPart(text); err == errNumericSpecial {
				return err
			}
			if _, ok := d.SetString(string(text)); !ok {
				return errSyntax
			}
			return nil
		})
	case *big.Int:
		return scan(func(text []byte, dst any) error {
			d, err := target[big.Int](dst)
			if err != nil {
				return err
			}
			ip, err := numericIntPart(text)
			if err != nil {
				return err
			}
			if _, ok := d.SetString(string(ip), 10); !ok {
				return errSyntax
			}
			return nil
		})
	case *Numeric:
		return scan(func(text []byte, dst any) error {
			d, err := target[Numeric](dst)
			if err != nil {
				return err
			}
			n, err := parseNumeric(string(text))
			if err == nil {
				*d = n
			}
			return err
		})
	}
	return nil
}

// parseNumeric parses a decimal text ([-]digits[.digits][e±n], NaN,
// [-]Infinity) into a Numeric.
func parseNumeric(s string) (Numeric, error) {
	switch s {
	case "NaN":
		return Numeric{NaN: true, Valid: true}, nil
	case "Infinity", "+Infinity":
		return Numeric{InfinityModifier: Infinity, Valid: true}, nil
	case "-Infinity":
		return Numeric{InfinityModifier: NegativeInfinity, Valid: true}, nil
	}
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > math.MaxInt32/2 || e < math.MinInt32/2 {
			return Numeric{}, fmt.Errorf("invalid numeric %q", s)
		}
		exp, s = e, s[:i]
	}
	if !validNumericText([]byte(s)) {
		return Numeric{}, fmt.Errorf("invalid numeric %q", s)
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		exp -= len(s) - i - 1
		s = s[:i] + s[i+1:]
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || exp < math.MinInt32 || exp > math.MaxInt32 {
		return Numeric{}, fmt.Errorf("invalid numeric %q", s)
	}
	return Numeric{Int: v, Exp: int32(exp), Valid: true}, nil
}
