package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Startup-phase messages have no type byte:
//
//	StartupMessage: int32 length, int32 version (196608: 3.0, 196610: 3.2), (cstring key, cstring value)*, byte 0
//	SSLRequest:     int32 8, int32 80877103
//	GSSENCRequest:  int32 8, int32 80877104
//	CancelRequest:  int32 12+n, int32 80877102, int32 process ID, byte[n] secret key (n = 4 under 3.0, 4 to 256 from 3.2)
//
// Protocol flow: the client sends SSLRequest or GSSENCRequest (answered by a
// single byte 'S' or 'N', then a TLS or GSS handshake) and then the
// StartupMessage; the server replies with Authentication requests,
// ParameterStatus, BackendKeyData and finally ReadyForQuery. A server
// that speaks an older minor version than the one asked says so first,
// with NegotiateProtocolVersion. A CancelRequest goes over a new
// connection, which the server closes without a reply; it carries the key
// BackendKeyData gave, whatever its length.

// AppendStartup appends a StartupMessage asking protocol version
// (ProtocolVersion30 or ProtocolVersion32). params holds key, value pairs
// ("user", "alice", "database", "db", ...); keys must be non-empty.
func AppendStartup(dst []byte, version uint32, params []string) ([]byte, error) {
	if len(params)%2 != 0 {
		return dst, errors.New("wire: startup parameters must be key, value pairs")
	}
	orig := len(dst)
	dst, start := beginStartup(dst)
	dst = AppendUint32(dst, version)
	var err error
	for i, p := range params {
		if i%2 == 0 && p == "" {
			return dst[:orig], errors.New("wire: empty startup parameter name")
		}
		if dst, err = AppendCString(dst, p); err != nil {
			return dst[:orig], err
		}
	}
	dst = append(dst, 0)
	return finishStartup(dst, start)
}

// AppendSSLRequest appends an SSLRequest.
func AppendSSLRequest(dst []byte) []byte {
	return AppendUint32(append(dst, 0, 0, 0, 8), SSLRequestCode)
}

// AppendGSSENCRequest appends a GSSENCRequest.
func AppendGSSENCRequest(dst []byte) []byte {
	return AppendUint32(append(dst, 0, 0, 0, 8), GSSENCRequestCode)
}

// AppendCancelRequest appends a CancelRequest for the backend identified by
// pid and secret, the whole key BackendKeyData gave (4 to 256 bytes).
func AppendCancelRequest(dst []byte, pid uint32, secret []byte) []byte {
	dst = AppendUint32(dst, uint32(12+len(secret)))
	dst = AppendUint32(dst, CancelRequestCode)
	dst = AppendUint32(dst, pid)
	return append(dst, secret...)
}

// StartupCode returns the int32 code (protocol version or request code) that
// begins the body of a startup-phase message, as returned by
// ReadFrontendMessage with startup true.
func StartupCode(body []byte) (uint32, error) {
	if len(body) < 4 {
		return 0, protoErr("startup message: truncated")
	}
	return binary.BigEndian.Uint32(body), nil
}

// StartupMessage is a decoded StartupMessage.
type StartupMessage struct {
	ProtocolVersion uint32   // major << 16 | minor
	Params          []string // key, value, key, value, ...
}

// ParseStartupMessage decodes the body (everything after the length) of a
// StartupMessage.
func ParseStartupMessage(body []byte) (StartupMessage, error) {
	c := cursor{b: body, msg: "StartupMessage"}
	m := StartupMessage{ProtocolVersion: c.u32()}
	if c.err == nil && m.ProtocolVersion>>16 != 3 {
		c.fail(fmt.Sprintf("unsupported protocol version %d.%d", m.ProtocolVersion>>16, m.ProtocolVersion&0xffff))
	}
	for c.err == nil {
		k := c.cstring()
		if c.err != nil || len(k) == 0 {
			break
		}
		v := c.cstring()
		if c.err == nil {
			m.Params = append(m.Params, string(k), string(v))
		}
	}
	if err := c.done(); err != nil {
		return StartupMessage{}, err
	}
	return m, nil
}

// CancelRequest is a decoded CancelRequest.
type CancelRequest struct {
	ProcessID uint32
	SecretKey []byte // 4 to 256 bytes
}

// ParseCancelRequest decodes the body (everything after the length) of a
// CancelRequest: a key of 4 to 256 bytes (a 3.0 server takes 4 only). The
// key is a copy: it outlives body.
func ParseCancelRequest(body []byte) (CancelRequest, error) {
	c := cursor{b: body, msg: "CancelRequest"}
	code := c.u32()
	pid := c.u32()
	key := c.rest()
	switch {
	case c.err != nil:
	case code != CancelRequestCode:
		c.fail(fmt.Sprintf("code %d is not a cancel request", code))
	case len(key) < MinCancelKeyLen || len(key) > MaxCancelKeyLen:
		c.fail(fmt.Sprintf("secret key of %d bytes (must be %d to %d)", len(key), MinCancelKeyLen, MaxCancelKeyLen))
	}
	if err := c.done(); err != nil {
		return CancelRequest{}, err
	}
	return CancelRequest{ProcessID: pid, SecretKey: append([]byte(nil), key...)}, nil
}
