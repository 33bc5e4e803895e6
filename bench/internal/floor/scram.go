package floor

import (
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

const scramMechanism = "SCRAM-SHA-256"

// maxSCRAMIterations refuses absurd iteration counts that would stall the
// client.
const maxSCRAMIterations = 1 << 22

// scramClient runs SCRAM-SHA-256 (RFC 5802, RFC 7677) without channel
// binding.
type scramClient struct {
	password    string
	nonce       string
	firstBare   string
	serverSig   []byte
	saltedProof bool
}

func newSCRAM(password string, mechanisms []byte) (*scramClient, error) {
	found := false
	for _, m := range bytes.Split(mechanisms, []byte{0}) {
		if string(m) == scramMechanism {
			found = true
		}
	}
	if !found {
		return nil, fmt.Errorf("floor: server offers no SASL mechanism floor supports (want %s)", scramMechanism)
	}
	raw := make([]byte, 18)
	rand.Read(raw)
	nonce := base64.StdEncoding.EncodeToString(raw)
	return &scramClient{password: password, nonce: nonce, firstBare: "n=,r=" + nonce}, nil
}

// clientFirst is "n,," (no channel binding) + client-first-bare.
func (s *scramClient) clientFirst() []byte {
	return []byte("n,," + s.firstBare)
}

// clientFinal answers server-first "r=nonce,s=salt,i=iterations".
func (s *scramClient) clientFinal(serverFirst []byte) ([]byte, error) {
	var nonce, salt64, iters string
	for _, attr := range strings.Split(string(serverFirst), ",") {
		switch {
		case strings.HasPrefix(attr, "r="):
			nonce = attr[2:]
		case strings.HasPrefix(attr, "s="):
			salt64 = attr[2:]
		case strings.HasPrefix(attr, "i="):
			iters = attr[2:]
		}
	}
	if !strings.HasPrefix(nonce, s.nonce) || len(nonce) == len(s.nonce) {
		return nil, errors.New("floor: SCRAM: server nonce does not extend the client nonce")
	}
	salt, err := base64.StdEncoding.DecodeString(salt64)
	if err != nil || len(salt) == 0 {
		return nil, errors.New("floor: SCRAM: invalid salt")
	}
	n, err := strconv.Atoi(iters)
	if err != nil || n < 1 || n > maxSCRAMIterations {
		return nil, fmt.Errorf("floor: SCRAM: invalid iteration count %q", iters)
	}
	salted, err := pbkdf2.Key(sha256.New, s.password, salt, n, sha256.Size)
	if err != nil {
		return nil, fmt.Errorf("floor: SCRAM: %w", err)
	}
	clientKey := mac(salted, "Client Key")
	storedKey := sha256.Sum256(clientKey)
	finalNoProof := "c=biws,r=" + nonce
	authMsg := s.firstBare + "," + string(serverFirst) + "," + finalNoProof
	sig := mac(storedKey[:], authMsg)
	proof := make([]byte, len(clientKey))
	for i := range clientKey {
		proof[i] = clientKey[i] ^ sig[i]
	}
	s.serverSig = mac(mac(salted, "Server Key"), authMsg)
	s.saltedProof = true
	return []byte(finalNoProof + ",p=" + base64.StdEncoding.EncodeToString(proof)), nil
}

// verifyServer checks server-final "v=signature".
func (s *scramClient) verifyServer(serverFinal []byte) error {
	if !s.saltedProof {
		return errors.New("floor: SCRAM: server final before client final")
	}
	v, ok := strings.CutPrefix(string(serverFinal), "v=")
	if !ok {
		return errors.New("floor: SCRAM: server final without signature")
	}
	sig, err := base64.StdEncoding.DecodeString(v)
	if err != nil || !hmac.Equal(sig, s.serverSig) {
		return errors.New("floor: SCRAM: server signature does not match")
	}
	return nil
}

func mac(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}
