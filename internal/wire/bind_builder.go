package wire

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Bind built in place. AppendBind takes values already encoded; a caller
// that encodes each value straight into the message (and so never copies
// it) builds the Bind in steps instead:
//
//	var b BindBuilder
//	dst, err := b.Begin(dst, portal, stmt, n)     // header, n formats (0 for now), n
//	for each parameter:
//		dst = b.BeginParam(dst)                     // int32 length placeholder
//		dst = append(dst, value...)                 // any append-style encoder
//		dst, err = b.FinishParam(dst, format, null) // length and format patched in
//	  or, for a value whose bytes are written later, straight after dst:
//		dst, err = b.DeferParam(dst, format, n)
//	dst, err = b.Finish(dst, resultFormats)       // result formats, message length
//
// The message is laid out as AppendBind lays it out, with one format per
// parameter. Nothing is allocated when dst has room, and the per-parameter
// steps are small enough to be inlined.
//
// The parameter count is checked once, by Finish: a format written for a
// parameter beyond it lands inside the message, which Finish then removes.

// BindBuilder is the state of a Bind message being built in dst. The zero
// value is ready for Begin. It is a small value kept by the caller,
// typically on its stack, and written in place (a BindBuilder returned by
// value would cost a copy per message); its methods take and return the
// same dst each time, which may be reallocated in between (appending to it
// is how values are written).
//
// On error, every method returns dst cut back to where the message began
// (the message removed), like FinishMessage. After an error, Abort or
// Finish, the BindBuilder may be used again from Begin.
type BindBuilder struct {
	start  int   // offset in dst of the message's length field; its type byte is at start-1
	fmtPos int   // offset in dst of parameter 0's format
	lenPos int   // offset in dst of the length of the parameter begun by BeginParam
	n      int   // parameters declared by Begin
	i      int   // parameters finished so far
	extra  int64 // bytes of deferred values: counted in the length, not in dst
}

// Begin appends the start of a Bind message to dst: the header, portal
// and statement names, nParams parameter formats (filled in by FinishParam
// and DeferParam) and the parameter count. Exactly nParams parameters must
// follow, each begun by BeginParam. It returns ErrNulInString if a name
// contains a NUL byte, or ErrMessageTooLong if nParams is more than 65535,
// with dst unchanged.
func (b *BindBuilder) Begin(dst []byte, portal, stmt string, nParams int) ([]byte, error) {
	if nParams < 0 || nParams > math.MaxUint16 {
		return dst, ErrMessageTooLong
	}
	if hasNul(portal) || hasNul(stmt) {
		return dst, ErrNulInString
	}
	dst, start := BeginMessage(dst, MsgBind)
	dst = append(append(dst, portal...), 0)
	dst = append(append(dst, stmt...), 0)
	dst = binary.BigEndian.AppendUint16(dst, uint16(nParams))
	fmtPos := len(dst)
	dst = append(dst, make([]byte, 2*nParams)...) // formats, 0 until set
	dst = binary.BigEndian.AppendUint16(dst, uint16(nParams))
	*b = BindBuilder{start: start, fmtPos: fmtPos, n: nParams}
	return dst, nil
}

// hasNul reports whether s, a portal or statement name, contains a NUL
// byte. Names are short: a plain loop beats strings.IndexByte's call.
func hasNul(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}

// BeginParam appends the placeholder length of the next parameter; its
// value is appended after it, then FinishParam or DeferParam is called.
func (b *BindBuilder) BeginParam(dst []byte) []byte {
	b.lenPos = len(dst)
	return append(dst, 0, 0, 0, 0)
}

// FinishParam ends the parameter begun by BeginParam: its length is
// whatever was appended since, and its format is format (0 text, 1
// binary). When null is set the parameter is NULL instead: anything
// appended since BeginParam is dropped, the length is -1 and the format
// 0, whatever format says. It returns ErrMessageTooLong for a value
// longer than math.MaxInt32 bytes.
func (b *BindBuilder) FinishParam(dst []byte, format int16, null bool) ([]byte, error) {
	n := len(dst) - b.lenPos - 4
	if null {
		dst, n, format = dst[:b.lenPos+4], -1, 0
	}
	if n > math.MaxInt32 {
		return b.Abort(dst), ErrMessageTooLong
	}
	binary.BigEndian.PutUint32(dst[b.lenPos:], uint32(n))
	binary.BigEndian.PutUint16(dst[b.fmtPos+2*b.i:], uint16(format))
	b.i++
	return dst, nil
}

// DeferParam ends the parameter begun by BeginParam as one whose n value
// bytes are not in dst: the caller writes them to the stream right after
// the bytes of dst returned here, at offset len(dst), and before the rest
// of the message. Nothing may be appended between BeginParam and
// DeferParam. The message length counts the n bytes. It returns an error
// for n outside [0, math.MaxInt32].
func (b *BindBuilder) DeferParam(dst []byte, format int16, n int64) ([]byte, error) {
	if n < 0 || n > math.MaxInt32 {
		return b.Abort(dst), fmt.Errorf("wire: Bind parameter %d: deferred length %d out of range", b.i, n)
	}
	binary.BigEndian.PutUint32(dst[b.lenPos:], uint32(n))
	binary.BigEndian.PutUint16(dst[b.fmtPos+2*b.i:], uint16(format))
	b.i++
	b.extra += n
	return dst, nil
}

// Finish appends the result column formats (0, 1 or one per column;
// see Bind) and fills in the message length, deferred values included. It
// returns ErrMessageTooLong when there are more than 65535 result formats
// or the message would be longer than math.MaxInt32 bytes, and an error
// when the parameters finished are not the number Begin declared.
func (b *BindBuilder) Finish(dst []byte, resultFormats []int16) ([]byte, error) {
	if b.i != b.n {
		return b.Abort(dst), fmt.Errorf("wire: Bind has %d of the %d parameters declared", b.i, b.n)
	}
	dst, err := appendInt16s(dst, resultFormats)
	if err != nil {
		return b.Abort(dst), err
	}
	return b.finish(dst, math.MaxInt32)
}

// finish is Finish's length fix-up with the limit as a parameter, so
// that tests reach the error path without 2 GiB of deferred values.
func (b *BindBuilder) finish(dst []byte, limit int64) ([]byte, error) {
	total := int64(len(dst)-b.start) + b.extra
	if total > limit {
		return b.Abort(dst), ErrMessageTooLong
	}
	binary.BigEndian.PutUint32(dst[b.start:], uint32(total))
	return dst, nil
}

// Abort removes the message being built: it returns dst cut back to where
// Begin began it.
func (b *BindBuilder) Abort(dst []byte) []byte { return dst[:b.start-1] }
