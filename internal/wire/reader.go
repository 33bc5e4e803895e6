package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// DefaultBufferSize is the read buffer size NewReader uses when given 0.
const DefaultBufferSize = 64 << 10

// DefaultMaxMessageSize is the largest body of an ErrorResponse,
// NoticeResponse, RowDescription or FunctionCallResponse that NewReader
// accepts, and the largest body it allocates whole, when given 0.
const DefaultMaxMessageSize = 1 << 30

// minBufferSize is the smallest read buffer NewReader will use.
const minBufferSize = 16

// maxEmptyReads is how many successive (0, nil) reads are tolerated before
// giving up with io.ErrNoProgress.
const maxEmptyReads = 100

// Reader reads backend messages from a byte stream through one fixed-size
// buffer. A message that fits in the buffer is returned as a slice of it once
// all its bytes have arrived; a larger one is read into an allocation of
// exactly its size, or consumed piece by piece with NextHeader and
// ReadFull, Discard or Body. The buffer never grows.
//
// Every length is checked against the per-type limits before anything is
// allocated. After a *ProtocolError, or an I/O error in the middle of a
// message, the Reader is unusable and every call returns that error. An I/O
// error while waiting for the bytes of a message that fits in the buffer
// (a read deadline, say) consumes nothing, and the call may be retried;
// so may a read deadline that expires while Discard (or NextDiscarding)
// skips a large message, or ReadFull or CopyN reads one, leaving the
// rest of the message to be skipped.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	rd        io.Reader
	buf       []byte // fixed size; buf[r:w] is buffered and unread
	r, w      int
	max       int   // body size cap for large message types
	remaining int   // body bytes of the current NextHeader message not yet consumed
	err       error // sticky error
	input     int64 // bytes read from rd so far
}

// NewReader returns a Reader reading from rd with a buffer of bufSize bytes
// and a cap of maxMessageSize bytes on the body of large message types. A
// size of 0 (or less) selects DefaultBufferSize or DefaultMaxMessageSize; a
// buffer smaller than 16 bytes is raised to 16, and maxMessageSize is capped
// at math.MaxInt32-4, the most a length field can describe.
func NewReader(rd io.Reader, bufSize, maxMessageSize int) *Reader {
	if bufSize <= 0 {
		bufSize = DefaultBufferSize
	}
	bufSize = max(bufSize, minBufferSize)
	return &Reader{
		rd:  rd,
		buf: make([]byte, bufSize),
		max: clampMaxMessageSize(maxMessageSize),
	}
}

// Buffered returns the number of bytes already read from the stream and not
// yet consumed.
func (r *Reader) Buffered() int { return r.w - r.r }

// Size returns the size of the read buffer. After NextHeader, a body of at
// most Size bytes can be taken with Body without allocating.
func (r *Reader) Size() int { return len(r.buf) }

// Remaining returns the number of body bytes of the message begun by
// NextHeader that have not been consumed yet.
func (r *Reader) Remaining() int { return r.remaining }

// Next reads one whole backend message and returns its type byte and body.
// body aliases the Reader's buffer, or an allocation of exactly its size when
// it does not fit, and is valid until the next call of any Reader method.
// Any unconsumed body of a message begun by NextHeader is discarded first.
// io.EOF is returned only when the stream ends between messages.
func (r *Reader) Next() (typ byte, body []byte, err error) {
	typ, n, err := r.header()
	if err != nil {
		return 0, nil, err
	}
	if n > r.max {
		return 0, nil, r.stick(protoErr(fmt.Sprintf("message %s body length %d exceeds limit %d", typeName(typ), n, r.max)))
	}
	if 5+n <= len(r.buf) {
		if err := r.fill(5 + n); err != nil {
			return 0, nil, r.eofInMessage(err)
		}
		body = r.buf[r.r+5 : r.r+5+n : r.r+5+n]
		r.r += 5 + n
		return typ, body, nil
	}
	r.r += 5
	r.remaining = n
	body, err = r.Body()
	if err != nil {
		return 0, nil, err
	}
	return typ, body, nil
}

// BufferedDataRow returns the body of the next message and consumes it
// when that message is a DataRow already whole in the buffer, as Next
// would; otherwise it reports false and consumes nothing, and the caller
// reads the next message with Next or NextHeader. It spares a reply's
// rows, most of which arrive whole, the general path's steps.
func (r *Reader) BufferedDataRow() (body []byte, ok bool) {
	if r.err != nil || r.remaining != 0 || r.w-r.r < 5 || r.buf[r.r] != MsgDataRow {
		return nil, false
	}
	n := int(int32(binary.BigEndian.Uint32(r.buf[r.r+1:]))) - 4
	if n < 0 || n > r.w-r.r-5 || n > r.max {
		return nil, false // invalid (Next says why) or not whole
	}
	body = r.buf[r.r+5 : r.r+5+n : r.r+5+n]
	r.r += 5 + n
	return body, true
}

// NextDiscarding is Next for a caller that throws DataRow and CopyData
// messages away: one larger than the buffer is skipped a buffer at a time,
// whatever its size (MaxMessageSize does not apply), and returned with a
// nil body. Other messages are read as Next reads them.
func (r *Reader) NextDiscarding() (typ byte, body []byte, err error) {
	typ, n, err := r.header()
	if err != nil {
		return 0, nil, err
	}
	if (typ == MsgDataRow || typ == MsgCopyData) && 5+n > len(r.buf) {
		r.r += 5
		r.remaining = n
		if err := r.Discard(n); err != nil {
			return 0, nil, err
		}
		return typ, nil, nil
	}
	return r.Next()
}

// NextHeader reads the 5-byte header of the next backend message, validates
// its length and returns its type and body length n. The caller then consumes
// the n body bytes with ReadFull, Discard and Body; Next or NextHeader
// discards whatever is left unconsumed. A message that fits in the buffer
// is buffered whole before NextHeader returns, so that an I/O error (a read
// deadline) consumes nothing and the call may be retried.
func (r *Reader) NextHeader() (typ byte, n int, err error) {
	typ, n, err = r.header()
	if err != nil {
		return 0, 0, err
	}
	if 5+n <= len(r.buf) {
		// Buffered whole first: an I/O error (a read deadline) then
		// consumes nothing and may be retried, and Body cannot fail.
		if err := r.fill(5 + n); err != nil {
			return 0, 0, r.eofInMessage(err)
		}
	}
	r.r += 5
	r.remaining = n
	return typ, n, nil
}

// header discards the rest of any current message, then buffers and
// validates the next header without consuming it.
func (r *Reader) header() (byte, int, error) {
	if err := r.bufferHeader(); err != nil {
		return 0, 0, err
	}
	typ := r.buf[r.r]
	length := int32(binary.BigEndian.Uint32(r.buf[r.r+1:]))
	n, err := checkLength(typ, length, r.max)
	if err != nil {
		r.err = err
		return 0, 0, err
	}
	return typ, n, nil
}

// bufferHeader discards the rest of any current message and buffers the
// next message's 5-byte header, consuming nothing of it. io.EOF is
// returned only when the stream ends between messages.
func (r *Reader) bufferHeader() error {
	if r.err != nil {
		return r.err
	}
	if r.remaining > 0 {
		if err := r.Discard(r.remaining); err != nil {
			return err
		}
	}
	if err := r.fill(5); err != nil {
		if err == io.EOF && r.w == r.r {
			return io.EOF
		}
		return r.eofInMessage(err)
	}
	return nil
}

// ReadFull reads the next len(p) body bytes of the current message into p:
// first from the buffer, then straight from the stream when the rest is at
// least a buffer's size. A read deadline that expires meanwhile returns its
// error without making the Reader unusable: p is then partly filled, the
// bytes read are consumed, and the rest of the message can still be
// skipped (Discard, Next).
func (r *Reader) ReadFull(p []byte) error {
	if r.err != nil {
		return r.err
	}
	if len(p) > r.remaining {
		return fmt.Errorf("wire: cannot consume %d bytes with %d left in the message", len(p), r.remaining)
	}
	k := copy(p, r.buf[r.r:r.w])
	r.r += k
	r.remaining -= k
	for k < len(p) {
		var m int
		var err error
		if len(p)-k >= len(r.buf) {
			m, err = io.ReadFull(r.rd, p[k:])
			r.input += int64(m)
		} else if err = r.fill(min(len(p)-k, len(r.buf))); err == nil {
			m = copy(p[k:], r.buf[r.r:r.w])
			r.r += m
		}
		k += m
		r.remaining -= m
		if err != nil {
			return r.midMessage(err)
		}
	}
	return nil
}

// midMessage returns err, an I/O error in the middle of a message: a read
// deadline leaves the Reader usable (the bytes consumed are accounted
// for), anything else makes it unusable.
func (r *Reader) midMessage(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	return r.stick(r.eofInMessage(err))
}

// Discard skips the next n body bytes of the current message. A read
// deadline that expires meanwhile returns its error without making the
// Reader unusable: the bytes skipped so far are accounted for, and the
// next call (Discard of the rest, or Next, which skips it) goes on.
func (r *Reader) Discard(n int) error {
	if r.err != nil {
		return r.err
	}
	if n < 0 || n > r.remaining {
		return fmt.Errorf("wire: cannot consume %d bytes with %d left in the message", n, r.remaining)
	}
	for n > 0 {
		if r.w == r.r {
			if err := r.fill(1); err != nil {
				return r.midMessage(err)
			}
		}
		m := min(n, r.w-r.r)
		r.r += m
		r.remaining -= m
		n -= m
	}
	return nil
}

// Body returns the unconsumed rest of the current message's body. It aliases
// the buffer when it fits there and is otherwise read into an allocation of
// exactly its size; either way it is valid until the next call of any Reader
// method.
func (r *Reader) Body() ([]byte, error) {
	n := r.remaining
	if r.err != nil {
		return nil, r.err
	}
	if n > r.max {
		return nil, r.stick(protoErr(fmt.Sprintf("message body of %d bytes exceeds the maximum message size %d", n, r.max)))
	}
	if n <= len(r.buf) {
		if err := r.fill(n); err != nil {
			return nil, r.stick(r.eofInMessage(err))
		}
		body := r.buf[r.r : r.r+n : r.r+n]
		r.r += n
		r.remaining = 0
		return body, nil
	}
	body := make([]byte, n)
	if err := r.ReadFull(body); err != nil {
		// Part of the message is gone: unlike ReadFull's, this error
		// is final even for a read deadline, or the message would be
		// lost to a retry.
		return nil, r.stick(err)
	}
	return body, nil
}

// PeekType waits until the next message's header is buffered and returns
// its type byte, consuming nothing. An I/O error (a read deadline, say)
// consumes nothing either and may be retried.
func (r *Reader) PeekType() (byte, error) {
	if err := r.bufferHeader(); err != nil {
		return 0, err
	}
	return r.buf[r.r], nil
}

// BufferedTypes calls fn with the type byte of each message whose header
// is already in the buffer after the current message, in order, until fn
// returns false. Nothing is consumed.
func (r *Reader) BufferedTypes(fn func(typ byte) bool) {
	for i := r.r + r.remaining; i+5 <= r.w; {
		length := int(binary.BigEndian.Uint32(r.buf[i+1:]))
		if length < 4 || !fn(r.buf[i]) {
			return
		}
		i += 1 + length
	}
}

// InputBytes returns how many bytes have been read from the stream so far.
func (r *Reader) InputBytes() int64 { return r.input }

// Err returns the error that made the Reader unusable, if any.
func (r *Reader) Err() error { return r.err }

// MaxMessageSize returns the largest body the Reader allocates whole.
func (r *Reader) MaxMessageSize() int { return r.max }

// SetMaxMessageSize changes the largest body the Reader allocates whole
// (see NewReader) and returns the one it replaces: a client lowers it
// while the peer is not yet authenticated.
func (r *Reader) SetMaxMessageSize(n int) (old int) {
	old, r.max = r.max, clampMaxMessageSize(n)
	return old
}

// CopyN writes the next n body bytes of the current message to w, a
// buffer at a time, through the Reader's own buffer: nothing is allocated
// whatever n is. When w fails, the bytes not written are still consumed
// (the message stays in step) and w's error is returned.
func (r *Reader) CopyN(w io.Writer, n int) error {
	if r.err != nil {
		return r.err
	}
	if n < 0 || n > r.remaining {
		return fmt.Errorf("wire: cannot consume %d bytes with %d left in the message", n, r.remaining)
	}
	var werr error
	for n > 0 {
		if r.w == r.r {
			if err := r.fill(1); err != nil {
				return r.midMessage(err)
			}
		}
		m := min(n, r.w-r.r)
		if werr == nil {
			if _, err := w.Write(r.buf[r.r : r.r+m]); err != nil {
				werr = err
			}
		}
		r.r += m
		r.remaining -= m
		n -= m
	}
	return werr
}

// take checks that n more body bytes may be consumed and accounts for them.
func (r *Reader) take(n int) error {
	if r.err != nil {
		return r.err
	}
	if n < 0 || n > r.remaining {
		return fmt.Errorf("wire: cannot consume %d bytes with %d left in the message", n, r.remaining)
	}
	r.remaining -= n
	return nil
}

// fill makes at least need (at most len(buf)) bytes buffered, moving the
// unread tail to the front of the buffer only when it would not fit after it.
// Each read asks for all the free space, so one syscall may buffer many
// messages.
func (r *Reader) fill(need int) error {
	if r.w-r.r >= need {
		return nil
	}
	if r.r == r.w {
		r.r, r.w = 0, 0
	} else if len(r.buf)-r.r < need {
		r.w = copy(r.buf, r.buf[r.r:r.w])
		r.r = 0
	}
	empty := 0
	for r.w-r.r < need {
		m, err := r.rd.Read(r.buf[r.w:])
		if m < 0 || m > len(r.buf)-r.w {
			return errors.New("wire: reader returned an invalid count")
		}
		r.w += m
		r.input += int64(m)
		if r.w-r.r >= need {
			return nil
		}
		if err != nil {
			return err
		}
		if m == 0 {
			if empty++; empty >= maxEmptyReads {
				return io.ErrNoProgress
			}
		}
	}
	return nil
}

// eofInMessage turns io.EOF in the middle of a message into an error that
// wraps io.ErrUnexpectedEOF.
func (r *Reader) eofInMessage(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return r.stick(&ProtocolError{Msg: "stream ended inside a message", Err: io.ErrUnexpectedEOF})
	}
	return err
}

// stick records err as the Reader's permanent error and returns it.
func (r *Reader) stick(err error) error {
	if r.err == nil {
		r.err = err
	}
	return err
}
