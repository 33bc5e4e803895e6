package pgtype

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Binary bit and varbit layout (bit_send, varbit_send): int32 length in
// bits, then the bits, most significant first, in (length+7)/8 bytes
// whose unused low bits are zero. Text: the bits as 0 and 1, "1011".

// Bits is a PostgreSQL bit or varbit value, a string of Len bits held
// most significant first in Bytes, which has (Len+7)/8 bytes. It is the
// default Go type of bit and varbit (DecodeValue). Decoding clears the
// unused low bits of the last byte, and encoding sends them cleared.
type Bits struct {
	Bytes []byte
	Len   int32
}

// maxBits is the longest bit string the server takes (VARBITMAXLEN).
const maxBits = math.MaxInt32 - 7

// bitsBytes is the number of bytes holding n bits.
func bitsBytes(n int32) int { return int((int64(n) + 7) / 8) }

// padMask is the mask of the used bits of the last byte of n bits.
func padMask(n int32) byte {
	if r := n % 8; r != 0 {
		return 0xff << (8 - r)
	}
	return 0xff
}

// decodeBits decodes a bit or varbit value into a new Bits.
func decodeBits(t *typeInfo, format int16, src []byte) (Bits, error) {
	if format == 0 {
		if len(src) > maxBits {
			return Bits{}, decodeErr(t, 0, "%d bits", len(src))
		}
		b := Bits{Bytes: make([]byte, bitsBytes(int32(len(src)))), Len: int32(len(src))}
		for i, c := range src {
			switch c {
			case '1':
				b.Bytes[i/8] |= 0x80 >> (i % 8)
			case '0':
			default:
				return Bits{}, decodeErr(t, 0, "%q is not a bit string", clip(src))
			}
		}
		return b, nil
	}
	if len(src) < 4 {
		return Bits{}, decodeErr(t, 1, "%d bytes, want at least 4", len(src))
	}
	n := int32(binary.BigEndian.Uint32(src))
	if n < 0 || n > maxBits || bitsBytes(n) != len(src)-4 {
		return Bits{}, decodeErr(t, 1, "%d bits in %d bytes", n, len(src)-4)
	}
	b := Bits{Bytes: copyBytes(src[4:]), Len: n}
	if n > 0 {
		b.Bytes[len(b.Bytes)-1] &= padMask(n)
	}
	return b, nil
}

// appendBitsText appends the bits of v as 0 and 1; v must be valid.
func appendBitsText(b []byte, v Bits) []byte {
	for i := 0; i < int(v.Len); i++ {
		b = append(b, '0'+(v.Bytes[i/8]>>(7-i%8))&1)
	}
	return b
}

// checkBits reports a Bits whose Bytes do not hold Len bits.
func checkBits(v Bits) error {
	if v.Len < 0 || v.Len > maxBits || len(v.Bytes) != bitsBytes(v.Len) {
		return fmt.Errorf("%d bytes for %d bits, want %d", len(v.Bytes), v.Len, bitsBytes(max(v.Len, 0)))
	}
	return nil
}

// planBits plans bit and varbit into *Bits (bits in a new slice).
func planBits(t *typeInfo, format int16, dst any) ScanPlan {
	if _, ok := dst.(*Bits); ok {
		return valuePlan(func(src []byte) (Bits, error) { return decodeBits(t, format, src) })
	}
	return nil
}

// appendBitsValueText appends the text form of a binary or text value.
func appendBitsValueText(b []byte, t *typeInfo, format int16, src []byte) ([]byte, error) {
	v, err := decodeBits(t, format, src)
	if err != nil {
		return nil, err
	}
	return appendBitsText(b, v), nil
}

// encodeBits encodes v for bit and varbit parameters, and as its text
// for text parameters.
func encodeBits(t *typeInfo, arg any, v Bits, buf []byte) ([]byte, int16, bool, error) {
	if t.kind != kindBits && t.kind != kindText {
		return buf, 0, false, encErr(t, arg, errUnsupported)
	}
	if err := checkBits(v); err != nil {
		return buf, 0, false, encErr(t, arg, err)
	}
	if t.kind == kindText {
		return appendBitsText(buf, v), textFormat(t), false, nil
	}
	buf = binary.BigEndian.AppendUint32(buf, uint32(v.Len))
	buf = append(buf, v.Bytes...)
	if v.Len > 0 {
		buf[len(buf)-1] &= padMask(v.Len)
	}
	return buf, 1, false, nil
}
