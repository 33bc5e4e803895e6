package wire

import "fmt"

// Authentication is an Authentication ('R') request from the server.
//
//	int32 type
//	AuthMD5Password:   byte[4] salt
//	AuthSASL:          (cstring mechanism)*, byte 0
//	AuthGSSContinue, AuthSASLContinue, AuthSASLFinal: bytes data
type Authentication struct {
	Type       int32    // one of the Auth* constants
	Salt       [4]byte  // AuthMD5Password only
	Mechanisms []string // AuthSASL only, in the server's order of preference
	Data       []byte   // AuthGSSContinue, AuthSASLContinue, AuthSASLFinal and unknown types; aliases the body
}

// ParseAuthentication decodes the body of an Authentication message. A type
// this package does not know (such as the obsolete Kerberos V5 or SCM
// credential methods) is returned without error with the rest of the body in
// Data, so the caller can name the method it does not support.
func ParseAuthentication(body []byte) (Authentication, error) {
	c := cursor{b: body, msg: "Authentication"}
	a := Authentication{Type: int32(c.u32())}
	if c.err != nil {
		return Authentication{}, c.err
	}
	switch a.Type {
	case AuthOK, AuthCleartextPassword, AuthGSS, AuthSSPI:
	case AuthMD5Password:
		copy(a.Salt[:], c.bytes(4))
	case AuthSASL:
		for {
			m := c.cstring()
			if c.err != nil || len(m) == 0 {
				break
			}
			a.Mechanisms = append(a.Mechanisms, string(m))
		}
		if c.err == nil && len(a.Mechanisms) == 0 {
			c.fail("no SASL mechanisms")
		}
	default:
		a.Data = c.rest()
	}
	if err := c.done(); err != nil {
		return Authentication{}, err
	}
	return a, nil
}

// AppendAuthentication appends an Authentication message (sent by servers;
// here for test servers and golden tests). Fields not used by a.Type are
// ignored.
func AppendAuthentication(dst []byte, a Authentication) ([]byte, error) {
	orig := len(dst)
	dst, start := BeginMessage(dst, MsgAuthentication)
	dst = AppendInt32(dst, a.Type)
	var err error
	switch a.Type {
	case AuthOK, AuthCleartextPassword, AuthGSS, AuthSSPI:
	case AuthMD5Password:
		dst = append(dst, a.Salt[:]...)
	case AuthSASL:
		if len(a.Mechanisms) == 0 {
			return dst[:orig], fmt.Errorf("wire: AuthSASL without mechanisms")
		}
		for _, m := range a.Mechanisms {
			if m == "" {
				return dst[:orig], fmt.Errorf("wire: empty SASL mechanism name")
			}
			if dst, err = AppendCString(dst, m); err != nil {
				return dst[:orig], err
			}
		}
		dst = append(dst, 0)
	default:
		dst = append(dst, a.Data...)
	}
	return FinishMessage(dst, start)
}
