// Package wire implements the PostgreSQL frontend/backend protocol,
// versions 3.0 and 3.2 (which differ only in the length of the cancel key:
// see BackendKeyData), at the level of bytes: framing and decoding of the messages a server
// sends, and append-style encoding of the messages a client sends. It does no
// I/O of its own beyond reading through a Reader, and knows nothing of
// connections, types or SQL.
//
// # Framing
//
// Every message after startup is
//
//	byte   type
//	int32  length, counting itself but not the type byte
//	bytes  body (length - 4 bytes)
//
// Startup-phase messages from the client (StartupMessage, SSLRequest,
// GSSENCRequest, CancelRequest) have no type byte. All integers are big
// endian; a cstring is bytes ended by a NUL.
//
// # Reading
//
// A Reader reads backend messages through one fixed-size buffer. It checks
// each length field against a per-type limit before it allocates anything,
// returns a message only once all its bytes are buffered (so nothing is ever
// parsed twice), and lets the caller stream a message larger than the buffer
// with NextHeader, ReadFull, Discard and Body. The Parse* functions decode
// bodies; []byte fields alias the body and are valid only as long as it is.
//
// # Writing
//
// Append* functions append one message to a caller-owned slice and allocate
// nothing when it has room, so a connection can queue many messages and send
// them in one write. On error the slice is returned as it was. BeginMessage
// and FinishMessage let a caller build a body in place.
//
// The encoders of backend messages and decoders of frontend messages exist so
// that tests can script a fake server.
//
// # Errors
//
// Bytes that break the protocol yield a *ProtocolError; after one the stream
// cannot be trusted and the connection must be closed.
package wire
