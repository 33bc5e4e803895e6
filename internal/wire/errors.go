package wire

import "errors"

// ProtocolError reports bytes that break the PostgreSQL protocol: a length
// out of range, an unknown message type, a field that runs past the end of
// its message. The stream cannot be resynchronised after one; the connection
// must be closed.
type ProtocolError struct {
	Msg string // what was wrong, without the "protocol error: " prefix
	Err error  // underlying cause, if any: io.ErrUnexpectedEOF for a stream that ended inside a message
}

// Error returns "protocol error: " followed by Msg.
func (e *ProtocolError) Error() string { return "protocol error: " + e.Msg }

// Unwrap returns Err.
func (e *ProtocolError) Unwrap() error { return e.Err }

// ErrMessageTooLong is returned by encoders when the message length would not
// fit in the int32 length field, or a count would not fit in its int16 field.
var ErrMessageTooLong = errors.New("wire: message too long to encode")

// ErrNulInString is returned by encoders when a field sent as a NUL-terminated
// string contains a NUL byte, which would corrupt the message framing.
var ErrNulInString = errors.New("wire: string field contains a NUL byte")

// protoErr returns a *ProtocolError with the given text.
func protoErr(msg string) error { return &ProtocolError{Msg: msg} }
