package auth

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
)

// ErrMalformedMessage is wrapped by every error that reports a server SCRAM
// message that does not follow RFC 5802 or that this client refuses (an
// unknown mandatory extension, a nonce not extending the client's, an
// iteration count out of range, ...).
var ErrMalformedMessage = errors.New("auth: malformed SCRAM server message")

// ErrServerSignature is returned by ServerFinal when the server's signature
// does not match: the server does not know the password, or someone is in
// the middle.
var ErrServerSignature = errors.New("auth: SCRAM server signature mismatch: the server did not prove that it knows the password")

// ErrOutOfOrder is returned when a SCRAM step is called out of order, twice,
// or after an earlier step failed.
var ErrOutOfOrder = errors.New("auth: SCRAM step called out of order")

// ErrChannelBinding is wrapped by the errors ChooseMechanism returns when
// channel_binding=require cannot be honoured.
var ErrChannelBinding = errors.New("auth: channel binding required")

// ErrNoMechanism is wrapped by the error ChooseMechanism returns when the
// server offers no SASL mechanism this client can use.
var ErrNoMechanism = errors.New("auth: no supported SASL mechanism offered by the server")

// ServerError is returned by ServerFinal when the server ends the exchange
// with a server-error attribute ("e=...").
type ServerError struct {
	// Message is the server's error value, for example "invalid-proof".
	Message string
}

// Error returns the server's message prefixed with the package context,
// quoted when it holds non-printable characters.
func (e *ServerError) Error() string {
	m := e.Message
	if strings.IndexFunc(m, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		m = strconv.Quote(m)
	}
	return "auth: SCRAM server error: " + m
}
