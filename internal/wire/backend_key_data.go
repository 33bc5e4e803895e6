package wire

import "fmt"

// Cancel key lengths (the protocol's "Message Formats", PostgreSQL 18):
// under protocol 3.0 the secret key of BackendKeyData and CancelRequest is
// 4 bytes; from 3.2 on it fills the rest of the message, 4 to 256 bytes
// (PostgreSQL 18 sends 32). libpq 18 refuses any other length
// (getBackendKeyData, fe-protocol3.c), and so does ParseBackendKeyData.
const (
	MinCancelKeyLen = 4
	MaxCancelKeyLen = 256
)

// BackendKeyData ('K') carries the key a client needs to cancel queries on its
// connection.
//
//	int32 process ID, byte[n] secret key (n = 4 under protocol 3.0; 4 to 256 from 3.2)
type BackendKeyData struct {
	ProcessID uint32
	SecretKey []byte
}

// ParseBackendKeyData decodes the body of a BackendKeyData message received
// on a connection that speaks protocol version (ProtocolVersion30 or
// ProtocolVersion32): the key must be 4 bytes under 3.0, 4 to 256 bytes
// after. The key is a copy: it outlives body.
func ParseBackendKeyData(body []byte, version uint32) (BackendKeyData, error) {
	c := cursor{b: body, msg: "BackendKeyData"}
	pid := c.u32()
	key := c.rest()
	switch n := len(key); {
	case c.err != nil:
	case version <= ProtocolVersion30 && n != MinCancelKeyLen:
		c.fail(fmt.Sprintf("secret key of %d bytes under protocol 3.0 (must be %d)", n, MinCancelKeyLen))
	case n < MinCancelKeyLen:
		c.fail(fmt.Sprintf("secret key of %d bytes is too short (at least %d)", n, MinCancelKeyLen))
	case n > MaxCancelKeyLen:
		c.fail(fmt.Sprintf("secret key of %d bytes is too long (at most %d)", n, MaxCancelKeyLen))
	}
	if err := c.done(); err != nil {
		return BackendKeyData{}, err
	}
	return BackendKeyData{ProcessID: pid, SecretKey: append([]byte(nil), key...)}, nil
}

// AppendBackendKeyData appends a BackendKeyData message (sent by servers).
// The key's length is not checked: a test server may send a bad one.
func AppendBackendKeyData(dst []byte, k BackendKeyData) []byte {
	dst, start := BeginMessage(dst, MsgBackendKeyData)
	dst = AppendUint32(dst, k.ProcessID)
	dst = append(dst, k.SecretKey...)
	dst, _ = FinishMessage(dst, start) // at most a test's key: far below the length limit
	return dst
}
