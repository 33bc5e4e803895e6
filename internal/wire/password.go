package wire

// PasswordMessage, SASLInitialResponse, SASLResponse and GSSResponse all have
// type 'p'; which one it is follows from the authentication request it
// answers.
//
//	PasswordMessage:     cstring password (clear text or "md5" + hex digest)
//	SASLInitialResponse: cstring mechanism, int32 length or -1, length bytes
//	SASLResponse:        bytes (the rest of the message)

// AppendPassword appends a PasswordMessage.
func AppendPassword(dst []byte, password string) ([]byte, error) {
	orig := len(dst)
	dst, start := BeginMessage(dst, MsgPassword)
	dst, err := AppendCString(dst, password)
	if err != nil {
		return dst[:orig], err
	}
	return FinishMessage(dst, start)
}

// AppendSASLInitialResponse appends a SASLInitialResponse choosing mechanism;
// data nil is sent as length -1 (no initial response).
func AppendSASLInitialResponse(dst []byte, mechanism string, data []byte) ([]byte, error) {
	orig := len(dst)
	dst, start := BeginMessage(dst, MsgPassword)
	dst, err := AppendCString(dst, mechanism)
	if err == nil {
		dst, err = appendBytes(dst, data)
	}
	if err != nil {
		return dst[:orig], err
	}
	return FinishMessage(dst, start)
}

// AppendSASLResponse appends a SASLResponse (also the shape of a
// GSSResponse) carrying data.
func AppendSASLResponse(dst []byte, data []byte) ([]byte, error) {
	dst, start := BeginMessage(dst, MsgPassword)
	dst = append(dst, data...)
	return FinishMessage(dst, start)
}

// ParsePassword decodes the body of a PasswordMessage.
func ParsePassword(body []byte) (string, error) {
	c := cursor{b: body, msg: "PasswordMessage"}
	p := c.cstring()
	if err := c.done(); err != nil {
		return "", err
	}
	return string(p), nil
}

// SASLInitialResponse is a decoded SASLInitialResponse.
type SASLInitialResponse struct {
	Mechanism string
	Data      []byte // nil when no initial response was sent; aliases the body
}

// ParseSASLInitialResponse decodes the body of a SASLInitialResponse. (The
// body of a SASLResponse is its data, with nothing to decode.)
func ParseSASLInitialResponse(body []byte) (SASLInitialResponse, error) {
	c := cursor{b: body, msg: "SASLInitialResponse"}
	m := c.cstring()
	l := int32(c.u32())
	var data []byte
	if c.err == nil && l != -1 {
		data = c.bytes(int(l))
	}
	if err := c.done(); err != nil {
		return SASLInitialResponse{}, err
	}
	return SASLInitialResponse{Mechanism: string(m), Data: data}, nil
}
