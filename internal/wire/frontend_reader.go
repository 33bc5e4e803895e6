package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// maxStartupMessageSize bounds a startup-phase message, as the server does.
const maxStartupMessageSize = 10000

// frontendBodyLimit returns the maximum body size of a frontend message of
// type typ, or -1 for an unknown type.
func frontendBodyLimit(typ byte) int {
	switch typ {
	case MsgSync, MsgFlush, MsgTerminate, MsgCopyDone:
		return 0
	case MsgBind, MsgParse, MsgQuery, MsgCopyData, MsgFunctionCall, MsgPassword:
		return DefaultMaxMessageSize
	case MsgClose, MsgDescribe, MsgExecute, MsgCopyFail:
		return smallMessageCap
	}
	return -1
}

// ReadFrontendMessage reads one message a client sent, for test servers and
// proxies. With startup true it reads a startup-phase message, which has no
// type byte: typ is 0 and body starts with the int32 code (see StartupCode).
// Otherwise it reads a regular message. Lengths are checked against
// per-type caps before anything is allocated, and bodies above 64 KiB grow
// only as their bytes arrive. io.EOF is returned only between messages.
func ReadFrontendMessage(r io.Reader, startup bool) (typ byte, body []byte, err error) {
	var hdr [5]byte
	h := hdr[:5]
	if startup {
		h = hdr[1:5]
	}
	if _, err := io.ReadFull(r, h); err != nil {
		if err == io.ErrUnexpectedEOF {
			err = &ProtocolError{Msg: "stream ended inside a message header", Err: err}
		}
		return 0, nil, err
	}
	length := int32(binary.BigEndian.Uint32(hdr[1:]))
	var limit int
	if startup {
		if length < 8 || length > maxStartupMessageSize {
			return 0, nil, protoErr(fmt.Sprintf("startup message has invalid length %d", length))
		}
		limit = maxStartupMessageSize
	} else {
		typ = hdr[0]
		limit = frontendBodyLimit(typ)
		if limit < 0 {
			return 0, nil, protoErr(fmt.Sprintf("unknown frontend message type %s", typeName(typ)))
		}
		if length < 4 || int(length)-4 > limit {
			return 0, nil, protoErr(fmt.Sprintf("frontend message %s has invalid length %d", typeName(typ), length))
		}
	}
	n := int(length) - 4
	if limit == 0 && n != 0 {
		return 0, nil, protoErr(fmt.Sprintf("frontend message %s has body length %d, want 0", typeName(typ), n))
	}
	if n <= 64<<10 {
		body = make([]byte, n)
		_, err = io.ReadFull(r, body)
	} else {
		var b bytes.Buffer
		var m int64
		m, err = io.CopyN(&b, r, int64(n))
		if err == io.EOF && m < int64(n) {
			err = io.ErrUnexpectedEOF
		}
		body = b.Bytes()
	}
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = &ProtocolError{Msg: "stream ended inside a message", Err: io.ErrUnexpectedEOF}
		}
		return 0, nil, err
	}
	return typ, body, nil
}
