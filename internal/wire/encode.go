package wire

import (
	"encoding/binary"
	"math"
	"strings"
)

// BeginMessage appends the type byte typ and a placeholder int32 length to
// dst. start is the offset of the length field; append the body and then call
// FinishMessage(dst, start).
func BeginMessage(dst []byte, typ byte) (out []byte, start int) {
	dst = append(dst, typ)
	start = len(dst)
	return append(dst, 0, 0, 0, 0), start
}

// FinishMessage fills in the length field of the message begun at start. If
// the length would exceed math.MaxInt32 it returns dst[:start-1], the message
// removed, and ErrMessageTooLong.
func FinishMessage(dst []byte, start int) ([]byte, error) {
	return finishLimited(dst, start, math.MaxInt32)
}

// finishLimited is FinishMessage with the length limit as a parameter, so
// tests can reach the error path without 2 GiB messages.
func finishLimited(dst []byte, start, limit int) ([]byte, error) {
	n := len(dst) - start
	if n > limit {
		return dst[:start-1], ErrMessageTooLong
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(n))
	return dst, nil
}

// beginStartup appends a placeholder length for a startup-phase message, which
// has no type byte; finishStartup fills it in.
func beginStartup(dst []byte) ([]byte, int) {
	return append(dst, 0, 0, 0, 0), len(dst)
}

func finishStartup(dst []byte, start int) ([]byte, error) {
	n := len(dst) - start
	if n > math.MaxInt32 {
		return dst[:start], ErrMessageTooLong
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(n))
	return dst, nil
}

// AppendInt16 appends v in network byte order.
func AppendInt16(dst []byte, v int16) []byte {
	return binary.BigEndian.AppendUint16(dst, uint16(v))
}

// AppendInt32 appends v in network byte order.
func AppendInt32(dst []byte, v int32) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(v))
}

// AppendUint32 appends v in network byte order.
func AppendUint32(dst []byte, v uint32) []byte {
	return binary.BigEndian.AppendUint32(dst, v)
}

// AppendCString appends s followed by a NUL byte. It returns ErrNulInString,
// and dst unchanged, if s contains a NUL byte.
func AppendCString(dst []byte, s string) ([]byte, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return dst, ErrNulInString
	}
	dst = append(dst, s...)
	return append(dst, 0), nil
}

// appendCount appends n as an int16 count; the protocol reads these counts as
// unsigned 16-bit values, so n may be at most 65535.
func appendCount(dst []byte, n int) ([]byte, error) {
	if n < 0 || n > math.MaxUint16 {
		return dst, ErrMessageTooLong
	}
	return binary.BigEndian.AppendUint16(dst, uint16(n)), nil
}

// appendInt16s appends an int16 count followed by the values.
func appendInt16s(dst []byte, vs []int16) ([]byte, error) {
	dst, err := appendCount(dst, len(vs))
	if err != nil {
		return dst, err
	}
	for _, v := range vs {
		dst = AppendInt16(dst, v)
	}
	return dst, nil
}

// appendBytes appends an int32 length (-1 for nil) followed by b.
func appendBytes(dst []byte, b []byte) ([]byte, error) {
	if b == nil {
		return AppendInt32(dst, -1), nil
	}
	if len(b) > math.MaxInt32 {
		return dst, ErrMessageTooLong
	}
	dst = AppendInt32(dst, int32(len(b)))
	return append(dst, b...), nil
}
