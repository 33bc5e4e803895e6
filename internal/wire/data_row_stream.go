package wire

import (
	"encoding/binary"
	"fmt"
)

// A DataRow streamed. A DataRow larger than the Reader's buffer is not
// taken whole: after NextHeader, the caller reads its fields one by one,
// each value with ReadFull, Discard or CopyN:
//
//	typ, n, err := r.NextHeader()     // typ == MsgDataRow
//	cols, err := r.ReadColumnCount()  // int16 n
//	for i := range cols {
//		l, err := r.ReadColumnLength(i) // int32 length, -1 for NULL
//		... consume the l value bytes
//	}
//
// Both reads check what they read: a count or a length that breaks the
// protocol is a *ProtocolError, after which the Reader is unusable.

// ReadColumnCount reads the int16 column count that opens the body of a
// DataRow begun by NextHeader. A negative count, or a body too short to
// hold one, is a *ProtocolError.
func (r *Reader) ReadColumnCount() (int, error) {
	if r.err == nil && r.remaining < 2 {
		return 0, r.stick(protoErr("DataRow: truncated"))
	}
	b, err := r.consume(2)
	if err != nil {
		return 0, err
	}
	n := int(int16(binary.BigEndian.Uint16(b)))
	if n < 0 {
		return 0, r.stick(protoErr(fmt.Sprintf("DataRow: negative column count %d", n)))
	}
	return n, nil
}

// ReadColumnLength reads the int32 length that opens column col (0-based,
// used in errors only) of a DataRow begun by NextHeader: -1 for NULL, else
// the number of value bytes that follow, which the caller then consumes.
// A length below -1 or beyond the rest of the message, or a message that
// ends before the length, is a *ProtocolError.
func (r *Reader) ReadColumnLength(col int) (int, error) {
	if r.err == nil && r.remaining < 4 {
		return 0, r.stick(protoErr(fmt.Sprintf("DataRow column %d is cut short with %d bytes left in the message", col, r.remaining)))
	}
	b, err := r.consume(4)
	if err != nil {
		return 0, err
	}
	l := int(int32(binary.BigEndian.Uint32(b)))
	if l < -1 || l > r.remaining {
		return 0, r.stick(protoErr(fmt.Sprintf("DataRow column %d has length %d with %d bytes left in the message", col, l, r.remaining)))
	}
	return l, nil
}

// consume takes the next n body bytes of the current message, n at most
// minBufferSize, and returns them; they alias the buffer and are valid
// until the next call of any Reader method.
func (r *Reader) consume(n int) ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	// Buffered before anything is consumed: a read deadline may be
	// retried, or the rest of the message skipped.
	if err := r.fill(n); err != nil {
		return nil, r.midMessage(err)
	}
	if err := r.take(n); err != nil {
		return nil, err
	}
	b := r.buf[r.r : r.r+n : r.r+n]
	r.r += n
	return b, nil
}
