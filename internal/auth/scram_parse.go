package auth

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
)

// RFC 5802 section 7, as PostgreSQL sends them:
//
//	server-first-message = [reserved-mext ","] nonce "," salt "," iteration-count ["," extensions]
//	                       r=<printable>,s=<base64>,i=<posit-number>
//	server-final-message = (server-error / verifier) ["," extensions]
//	                       v=<base64>  or  e=<value>
//
// Like libpq, this client accepts no extensions: a mandatory extension
// ("m=") or trailing attributes are errors.

// serverFirst is a parsed server-first-message.
type serverFirst struct {
	nonce      string
	salt       []byte
	iterations int
}

func malformed(detail string) error {
	return fmt.Errorf("%w: %s", ErrMalformedMessage, detail)
}

// checkPrintable requires every byte of msg to be printable ASCII other
// than space (%x21-7E): base64, digits, nonces and attribute syntax need
// nothing else, and it keeps control bytes out of the parsers below.
func checkPrintable(what string, msg []byte) error {
	for i, c := range msg {
		if c < 0x21 || c > 0x7E {
			return malformed(fmt.Sprintf("%s: byte 0x%02x at offset %d is not printable ASCII", what, c, i))
		}
	}
	return nil
}

// attrName returns a short, safe description of the attribute a part
// starts with, for error text (never the whole, possibly huge, value).
func attrName(part []byte) string {
	if i := bytes.IndexByte(part, '='); i >= 0 && i <= 8 {
		return strconv.Quote(string(part[:i+1]))
	}
	if len(part) > 8 {
		part = part[:8]
	}
	return strconv.Quote(string(part)) + "..."
}

// attr returns the value of part if it is the attribute name+"=".
func attr(what string, part []byte, name byte, desc string) ([]byte, error) {
	if len(part) < 2 || part[0] != name || part[1] != '=' {
		return nil, malformed(fmt.Sprintf("%s: expected %s attribute %q, found %s", what, desc, string(name)+"=", attrName(part)))
	}
	return part[2:], nil
}

func parseServerFirst(msg []byte) (serverFirst, error) {
	const what = "server-first-message"
	var sf serverFirst
	if len(msg) == 0 {
		return sf, malformed(what + ": empty")
	}
	if err := checkPrintable(what, msg); err != nil {
		return sf, err
	}
	if bytes.HasPrefix(msg, []byte("m=")) {
		return sf, malformed(what + ": unsupported mandatory extension \"m=\"")
	}
	parts := bytes.Split(msg, []byte(","))
	descs := [...]string{"nonce", "salt", "iteration count"}
	names := [...]byte{'r', 's', 'i'}
	var vals [3][]byte
	for k := range names {
		if k >= len(parts) {
			return sf, malformed(fmt.Sprintf("%s: missing %s attribute %q", what, descs[k], string(names[k])+"="))
		}
		v, err := attr(what, parts[k], names[k], descs[k])
		if err != nil {
			return sf, err
		}
		vals[k] = v
	}
	if len(parts) > 3 {
		return sf, malformed(fmt.Sprintf("%s: unexpected data after the iteration count, starting with %s", what, attrName(parts[3])))
	}

	if len(vals[0]) == 0 {
		return sf, malformed(what + ": empty nonce")
	}
	sf.nonce = string(vals[0])

	if len(vals[1]) == 0 {
		return sf, malformed(what + ": empty salt")
	}
	salt, err := base64.StdEncoding.DecodeString(string(vals[1]))
	if err != nil {
		return sf, malformed(fmt.Sprintf("%s: salt is not valid base64: %v", what, err))
	}
	if len(salt) == 0 {
		return sf, malformed(what + ": empty salt")
	}
	sf.salt = salt

	sf.iterations, err = parseIterations(vals[2])
	if err != nil {
		return sf, err
	}
	return sf, nil
}

// parseIterations parses an RFC 5802 posit-number (no sign, no leading
// zero) and checks it against MinIterations and MaxIterations.
func parseIterations(v []byte) (int, error) {
	const what = "server-first-message"
	if len(v) == 0 {
		return 0, malformed(what + ": empty iteration count")
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, malformed(fmt.Sprintf("%s: iteration count %s is not a positive decimal number", what, attrName(v)))
		}
	}
	if v[0] == '0' {
		return 0, malformed(fmt.Sprintf("%s: iteration count must be at least %d and have no leading zero", what, MinIterations))
	}
	if len(v) > len(strconv.Itoa(MaxIterations)) {
		return 0, malformed(fmt.Sprintf("%s: iteration count with %d digits exceeds the limit %d", what, len(v), MaxIterations))
	}
	n, err := strconv.Atoi(string(v))
	if err != nil { // unreachable after the checks above; kept for safety
		return 0, malformed(fmt.Sprintf("%s: bad iteration count: %v", what, err))
	}
	if n < MinIterations || n > MaxIterations {
		return 0, malformed(fmt.Sprintf("%s: iteration count %d outside [%d, %d]", what, n, MinIterations, MaxIterations))
	}
	return n, nil
}

// parseServerFinal returns the decoded server signature of a
// server-final-message, a *ServerError for "e=...", or an error wrapping
// ErrMalformedMessage.
func parseServerFinal(msg []byte) ([]byte, error) {
	const what = "server-final-message"
	if len(msg) == 0 {
		return nil, malformed(what + ": empty")
	}
	if bytes.HasPrefix(msg, []byte("e=")) {
		v := msg[2:]
		if i := bytes.IndexByte(v, ','); i >= 0 {
			v = v[:i]
		}
		return nil, &ServerError{Message: string(v)}
	}
	if err := checkPrintable(what, msg); err != nil {
		return nil, err
	}
	parts := bytes.Split(msg, []byte(","))
	v, err := attr(what, parts[0], 'v', "verifier")
	if err != nil {
		return nil, err
	}
	if len(parts) > 1 {
		return nil, malformed(fmt.Sprintf("%s: unexpected data after the verifier, starting with %s", what, attrName(parts[1])))
	}
	if len(v) == 0 {
		return nil, malformed(what + ": empty verifier")
	}
	sig, err := base64.StdEncoding.DecodeString(string(v))
	if err != nil {
		return nil, malformed(fmt.Sprintf("%s: verifier is not valid base64: %v", what, err))
	}
	if len(sig) != sha256.Size {
		return nil, malformed(fmt.Sprintf("%s: verifier is %d bytes, want %d", what, len(sig), sha256.Size))
	}
	return sig, nil
}
