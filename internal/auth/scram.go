package auth

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Iteration-count limits for the PBKDF2 step. A count below MinIterations
// is malformed; a count above MaxIterations is refused because a hostile or
// misconfigured server could otherwise make the client burn CPU for as long
// as it likes (PostgreSQL's default is 4096; one million iterations take a
// few hundred milliseconds).
const (
	MinIterations = 1
	MaxIterations = 1_000_000
)

// nonceBytes is the number of random bytes in the client nonce; base64 makes
// it 32 printable characters without ',' or padding.
const nonceBytes = 24

// SCRAM state machine; every failure moves to scramFailed, which is final.
type scramState uint8

const (
	scramStart           scramState = iota // NewSCRAM done
	scramClientFirstSent                   // ClientFirst done
	scramClientFinalSent                   // ServerFirst done
	scramDone                              // ServerFinal verified the server
	scramFailed                            // a step failed; the exchange is dead
)

// SCRAM is the client side of one SCRAM-SHA-256 or SCRAM-SHA-256-PLUS
// exchange. Call ClientFirst, ServerFirst and ServerFinal once each, in that
// order. After a step fails, every later step fails with ErrOutOfOrder.
//
// A SCRAM is not safe for concurrent use.
type SCRAM struct {
	mechanism       string
	password        string // prepared password; cleared once ServerFirst has used it
	gs2Header       string // "n,,", "y,," or "p=tls-server-end-point,,"
	cbData          []byte // tls-server-end-point data, only with -PLUS
	clientNonce     string
	clientFirstBare string // "n=<user>,r=<client nonce>"
	maxIterations   int    // MaxIterations, lowered by tests and fuzzing
	serverSignature []byte // expected ServerSignature, set by ServerFirst
	state           scramState
}

// NewSCRAM starts a SCRAM exchange. mechanism is MechSCRAMSHA256 or
// MechSCRAMSHA256Plus (see ChooseMechanism). password is prepared with
// SASLprep as PostgreSQL does, falling back to the raw password when
// SASLprep rejects it.
//
// cbData is the tls-server-end-point channel-binding data (see
// TLSServerEndPoint), required with -PLUS and ignored otherwise.
// clientSupportsCB selects the gs2 flag for SCRAM-SHA-256: "y" (the client
// could bind but the server did not offer -PLUS) when true, "n" when false;
// see ClientSupportsCB. With -PLUS the flag is always
// "p=tls-server-end-point".
//
// The user name in the client-first-message is empty: PostgreSQL takes it
// from the startup message.
func NewSCRAM(mechanism, password string, cbData []byte, clientSupportsCB bool) (*SCRAM, error) {
	var raw [nonceBytes]byte
	rand.Read(raw[:]) // never fails (crypto/rand since Go 1.24)
	return newSCRAM(mechanism, password, cbData, clientSupportsCB, "", base64.StdEncoding.EncodeToString(raw[:]))
}

// newSCRAM is NewSCRAM with the user name and the client nonce injected, for
// the RFC test vectors.
func newSCRAM(mechanism, password string, cbData []byte, clientSupportsCB bool, user, nonce string) (*SCRAM, error) {
	s := &SCRAM{
		mechanism:     mechanism,
		password:      preparePassword(password),
		clientNonce:   nonce,
		maxIterations: MaxIterations,
	}
	switch mechanism {
	case MechSCRAMSHA256Plus:
		if len(cbData) == 0 {
			return nil, errors.New("auth: " + MechSCRAMSHA256Plus + " needs channel-binding data")
		}
		s.gs2Header = "p=" + cbTypeServerEndPoint + ",,"
		s.cbData = append([]byte(nil), cbData...)
	case MechSCRAMSHA256:
		if clientSupportsCB {
			s.gs2Header = "y,,"
		} else {
			s.gs2Header = "n,,"
		}
	default:
		return nil, fmt.Errorf("auth: unsupported SASL mechanism %q", mechanism)
	}
	s.clientFirstBare = "n=" + escapeSASLName(user) + ",r=" + nonce
	return s, nil
}

// Mechanism returns the SASL mechanism name to send in SASLInitialResponse.
func (s *SCRAM) Mechanism() string { return s.mechanism }

// ClientFirst returns the client-first-message, the data of
// SASLInitialResponse: the gs2 header followed by "n=,r=<client nonce>".
// Calling it again returns the same message.
func (s *SCRAM) ClientFirst() []byte {
	if s.state == scramStart {
		s.state = scramClientFirstSent
	}
	return []byte(s.gs2Header + s.clientFirstBare)
}

// ServerFirst checks the server-first-message (the data of
// AuthenticationSASLContinue) and returns the client-final-message to send
// in SASLResponse. It runs PBKDF2 with the server's iteration count, at most
// MaxIterations. A malformed or hostile message gives an error wrapping
// ErrMalformedMessage.
func (s *SCRAM) ServerFirst(msg []byte) (clientFinal []byte, err error) {
	if s.state != scramClientFirstSent {
		return nil, s.outOfOrder("ServerFirst")
	}
	s.state = scramFailed // until proven otherwise
	sf, err := parseServerFirst(msg)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(sf.nonce, s.clientNonce) {
		return nil, malformed("server-first-message: the server nonce does not start with the client nonce")
	}
	if len(sf.nonce) == len(s.clientNonce) {
		return nil, malformed("server-first-message: the server nonce adds nothing to the client nonce")
	}
	if sf.iterations > s.maxIterations {
		return nil, malformed(fmt.Sprintf("server-first-message: iteration count %d exceeds the limit %d", sf.iterations, s.maxIterations))
	}

	salted, err := pbkdf2.Key(sha256.New, s.password, sf.salt, sf.iterations, sha256.Size)
	if err != nil {
		return nil, fmt.Errorf("auth: SCRAM salted password: %w", err)
	}
	s.password = ""
	defer clear(salted)

	cbind := base64.StdEncoding.EncodeToString(append([]byte(s.gs2Header), s.cbData...))
	withoutProof := "c=" + cbind + ",r=" + sf.nonce
	authMessage := []byte(s.clientFirstBare + "," + string(msg) + "," + withoutProof)

	clientKey := hmacSHA256(salted, []byte("Client Key"))
	defer clear(clientKey)
	storedKey := sha256.Sum256(clientKey)
	proof := hmacSHA256(storedKey[:], authMessage)
	for i := range proof {
		proof[i] ^= clientKey[i]
	}
	serverKey := hmacSHA256(salted, []byte("Server Key"))
	s.serverSignature = hmacSHA256(serverKey, authMessage)
	clear(serverKey)

	out := make([]byte, 0, len(withoutProof)+3+base64.StdEncoding.EncodedLen(len(proof)))
	out = append(out, withoutProof...)
	out = append(out, ",p="...)
	out = base64.StdEncoding.AppendEncode(out, proof)
	s.state = scramClientFinalSent
	return out, nil
}

// ServerFinal checks the server-final-message (the data of
// AuthenticationSASLFinal). It returns nil only when the server's signature
// proves that the server knows the password (compared in constant time).
// "e=<message>" gives a *ServerError; a wrong signature gives
// ErrServerSignature; anything malformed an error wrapping
// ErrMalformedMessage.
func (s *SCRAM) ServerFinal(msg []byte) error {
	if s.state != scramClientFinalSent {
		return s.outOfOrder("ServerFinal")
	}
	s.state = scramFailed
	sig, err := parseServerFinal(msg)
	if err != nil {
		return err
	}
	if !hmac.Equal(sig, s.serverSignature) {
		return ErrServerSignature
	}
	s.state = scramDone
	return nil
}

// outOfOrder reports a step called in the wrong state and kills the
// exchange.
func (s *SCRAM) outOfOrder(step string) error {
	var why string
	switch s.state {
	case scramStart:
		why = "ClientFirst has not been called"
	case scramClientFirstSent:
		why = "ServerFirst has not succeeded"
	case scramClientFinalSent:
		why = "ServerFirst was already called"
	case scramDone:
		why = "the exchange is complete"
	default:
		why = "an earlier step failed"
	}
	s.state = scramFailed
	return fmt.Errorf("%w: %s: %s", ErrOutOfOrder, step, why)
}

func hmacSHA256(key, data []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(data)
	return m.Sum(nil)
}

// escapeSASLName encodes a user name as an RFC 5802 saslname: ',' becomes
// "=2C" and '=' becomes "=3D".
func escapeSASLName(name string) string {
	if !strings.ContainsAny(name, ",=") {
		return name
	}
	return strings.NewReplacer("=", "=3D", ",", "=2C").Replace(name)
}
