package auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// RFC 7677 section 3 test vector. The server-final-message printed in the
// RFC ("v=6rriTRBi23WpRR/wa8QHcdLozLM0ytbkXmVfgnhyNL8=") is wrong (RFC 7677
// erratum): every other value of the example, including the client proof,
// is right, and the ServerSignature they imply, computed independently with
// Python's hashlib/hmac, is the one below. TestSCRAMRFC7677 also checks that
// the misprinted value is refused.
const (
	rfcNonce       = "rOprNGfwEbeRWgbNEkqO"
	rfcServerFirst = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
	rfcClientFinal = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
	rfcServerFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
	rfcMisprinted  = "v=6rriTRBi23WpRR/wa8QHcdLozLM0ytbkXmVfgnhyNL8="
)

func TestSCRAMRFC7677(t *testing.T) {
	s, err := newSCRAM(MechSCRAMSHA256, "pencil", nil, false, "user", rfcNonce)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(s.ClientFirst()), "n,,n=user,r="+rfcNonce; got != want {
		t.Fatalf("ClientFirst = %q, want %q", got, want)
	}
	cf, err := s.ServerFirst([]byte(rfcServerFirst))
	if err != nil {
		t.Fatal(err)
	}
	if string(cf) != rfcClientFinal {
		t.Fatalf("client-final = %q\nwant %q", cf, rfcClientFinal)
	}
	if hmac.Equal(s.serverSignature, mustB64(t, rfcMisprinted[2:])) {
		t.Fatal("the misprinted RFC signature matched")
	}
	if err := s.ServerFinal([]byte(rfcServerFinal)); err != nil {
		t.Fatal(err)
	}
	if err := s.ServerFinal([]byte(rfcServerFinal)); !errors.Is(err, ErrOutOfOrder) {
		t.Fatalf("second ServerFinal: err = %v, want ErrOutOfOrder", err)
	}
}

func TestSCRAMWrongServerSignature(t *testing.T) {
	s, err := newSCRAM(MechSCRAMSHA256, "pencil", nil, false, "user", rfcNonce)
	if err != nil {
		t.Fatal(err)
	}
	s.ClientFirst()
	if _, err := s.ServerFirst([]byte(rfcServerFirst)); err != nil {
		t.Fatal(err)
	}
	sig, _ := base64.StdEncoding.DecodeString(rfcServerFinal[2:])
	sig[0] ^= 1
	err = s.ServerFinal([]byte("v=" + base64.StdEncoding.EncodeToString(sig)))
	if !errors.Is(err, ErrServerSignature) {
		t.Fatalf("err = %v, want ErrServerSignature", err)
	}
}

// fakeServer is an independent server side of SCRAM-SHA-256 (RFC 5802
// section 3): it holds only StoredKey and ServerKey, verifies the client
// proof and produces the server signature.
type fakeServer struct {
	salt       []byte
	iterations int
	storedKey  [32]byte
	serverKey  []byte
	nonce      string // server part of the nonce
}

func newFakeServer(t testing.TB, password string, iterations int) *fakeServer {
	t.Helper()
	salt := []byte("0123456789abcdef")
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, 32)
	if err != nil {
		t.Fatal(err)
	}
	mac := func(key []byte, s string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(s))
		return m.Sum(nil)
	}
	return &fakeServer{
		salt:       salt,
		iterations: iterations,
		storedKey:  sha256.Sum256(mac(salted, "Client Key")),
		serverKey:  mac(salted, "Server Key"),
		nonce:      "SERVERpart+/=",
	}
}

// exchange runs a full exchange between c and the fake server. It checks
// that the c= attribute carries wantCbind, and returns the error of the
// client's last step, or of the server's proof check.
func (f *fakeServer) exchange(t testing.TB, c *SCRAM, wantGS2 string, wantCbind []byte) error {
	t.Helper()
	first := c.ClientFirst()
	gs2, bare, ok := cutGS2(first)
	if !ok || gs2 != wantGS2 {
		t.Fatalf("client-first %q: gs2 header %q, want %q", first, gs2, wantGS2)
	}
	clientNonce, ok := strings.CutPrefix(bare, "n=,r=")
	if !ok {
		t.Fatalf("client-first-bare %q: want n=,r=<nonce>", bare)
	}
	serverFirst := "r=" + clientNonce + f.nonce + ",s=" + base64.StdEncoding.EncodeToString(f.salt) + ",i=" + strconv.Itoa(f.iterations)
	final, err := c.ServerFirst([]byte(serverFirst))
	if err != nil {
		return err
	}
	withoutProof, proofB64, ok := strings.Cut(string(final), ",p=")
	if !ok {
		t.Fatalf("client-final %q has no proof", final)
	}
	wantWithout := "c=" + base64.StdEncoding.EncodeToString(wantCbind) + ",r=" + clientNonce + f.nonce
	if withoutProof != wantWithout {
		t.Fatalf("client-final-without-proof = %q, want %q", withoutProof, wantWithout)
	}
	proof, err := base64.StdEncoding.DecodeString(proofB64)
	if err != nil || len(proof) != 32 {
		t.Fatalf("proof %q: %v", proofB64, err)
	}
	authMessage := bare + "," + serverFirst + "," + withoutProof
	m := hmac.New(sha256.New, f.storedKey[:])
	m.Write([]byte(authMessage))
	clientKey := m.Sum(nil)
	for i := range clientKey {
		clientKey[i] ^= proof[i]
	}
	if sha256.Sum256(clientKey) != f.storedKey {
		return errors.New("fake server: invalid proof")
	}
	m = hmac.New(sha256.New, f.serverKey)
	m.Write([]byte(authMessage))
	return c.ServerFinal([]byte("v=" + base64.StdEncoding.EncodeToString(m.Sum(nil))))
}

func mustB64(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func cutGS2(msg []byte) (gs2, rest string, ok bool) {
	s := string(msg)
	i := strings.Index(s, ",")
	if i < 0 {
		return "", "", false
	}
	j := strings.Index(s[i+1:], ",")
	if j < 0 {
		return "", "", false
	}
	return s[:i+1+j+1], s[i+1+j+1:], true
}

func TestSCRAMChannelBindingModes(t *testing.T) {
	cb := []byte{0xde, 0xad, 0xbe, 0xef, 0x00, 0x01}
	tests := []struct {
		name     string
		mech     string
		cbData   []byte
		supports bool
		gs2      string
		cbind    []byte
	}{
		{"no TLS", MechSCRAMSHA256, nil, false, "n,,", []byte("n,,")},
		{"TLS, data ignored without -PLUS", MechSCRAMSHA256, cb, false, "n,,", []byte("n,,")},
		{"client supports, server did not offer", MechSCRAMSHA256, nil, true, "y,,", []byte("y,,")},
		{"PLUS", MechSCRAMSHA256Plus, cb, false, "p=tls-server-end-point,,", append([]byte("p=tls-server-end-point,,"), cb...)},
		{"PLUS ignores clientSupportsCB", MechSCRAMSHA256Plus, cb, true, "p=tls-server-end-point,,", append([]byte("p=tls-server-end-point,,"), cb...)},
	}
	srv := newFakeServer(t, "secret", 64)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewSCRAM(tt.mech, "secret", tt.cbData, tt.supports)
			if err != nil {
				t.Fatal(err)
			}
			if c.Mechanism() != tt.mech {
				t.Fatalf("Mechanism() = %q", c.Mechanism())
			}
			if err := srv.exchange(t, c, tt.gs2, tt.cbind); err != nil {
				t.Fatal(err)
			}
		})
	}
	// Spot-check the well-known encodings.
	if got := base64.StdEncoding.EncodeToString([]byte("n,,")); got != "biws" {
		t.Fatalf("c= for n,, = %q", got)
	}
	if got := base64.StdEncoding.EncodeToString([]byte("y,,")); got != "eSws" {
		t.Fatalf("c= for y,, = %q", got)
	}
}

func TestSCRAMWrongPassword(t *testing.T) {
	srv := newFakeServer(t, "right", 16)
	c, err := NewSCRAM(MechSCRAMSHA256, "wrong", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.exchange(t, c, "n,,", []byte("n,,")); err == nil || !strings.Contains(err.Error(), "invalid proof") {
		t.Fatalf("err = %v, want the fake server to reject the proof", err)
	}
}

func TestSCRAMPreparedPasswords(t *testing.T) {
	tests := []struct {
		client, server string
	}{
		{"pencil", "pencil"},
		{"I\u00adX", "IX"},                 // soft hyphen mapped to nothing
		{"\u2168", "IX"},                   // NFKC
		{"a\u00a0b", "a b"},                // non-ASCII space
		{"\u0627\u0031", "\u0627\u0031"},   // bidi failure: raw password
		{"a\u0007\u00e9", "a\u0007\u00e9"}, // prohibited: raw password
		{"\U0001F468\u200d\U0001F469", "\U0001F468\u200d\U0001F469"}, // unassigned in Unicode 3.2: raw
	}
	for _, tt := range tests {
		srv := newFakeServer(t, tt.server, 8)
		c, err := NewSCRAM(MechSCRAMSHA256, tt.client, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.exchange(t, c, "n,,", []byte("n,,")); err != nil {
			t.Errorf("client password %+q, server password %+q: %v", tt.client, tt.server, err)
		}
	}
}

func TestNewSCRAMErrors(t *testing.T) {
	if _, err := NewSCRAM(MechSCRAMSHA256Plus, "pw", nil, false); err == nil {
		t.Error("-PLUS without channel-binding data: no error")
	}
	if _, err := NewSCRAM("SCRAM-SHA-1", "pw", nil, false); err == nil {
		t.Error("unknown mechanism: no error")
	}
}

func TestSCRAMNonce(t *testing.T) {
	seen := map[string]bool{}
	for range 20 {
		c, err := NewSCRAM(MechSCRAMSHA256, "pw", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		first := string(c.ClientFirst())
		nonce, ok := strings.CutPrefix(first, "n,,n=,r=")
		if !ok {
			t.Fatalf("client-first %q", first)
		}
		raw, err := base64.StdEncoding.DecodeString(nonce)
		if err != nil || len(raw) < 18 {
			t.Fatalf("nonce %q: %d bytes, %v", nonce, len(raw), err)
		}
		for _, r := range nonce {
			if r < 0x21 || r > 0x7e || r == ',' {
				t.Fatalf("nonce %q has character %q", nonce, r)
			}
		}
		if seen[nonce] {
			t.Fatalf("nonce %q repeated", nonce)
		}
		seen[nonce] = true
	}
}

func TestEscapeSASLName(t *testing.T) {
	c, err := newSCRAM(MechSCRAMSHA256, "pw", nil, false, "a=b,c", "N")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(c.ClientFirst()); got != "n,,n=a=3Db=2Cc,r=N" {
		t.Fatalf("ClientFirst = %q", got)
	}
}

func TestSCRAMOutOfOrder(t *testing.T) {
	fresh := func(t *testing.T) *SCRAM {
		c, err := newSCRAM(MechSCRAMSHA256, "pencil", nil, false, "user", rfcNonce)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	t.Run("ServerFirst before ClientFirst", func(t *testing.T) {
		c := fresh(t)
		if _, err := c.ServerFirst([]byte(rfcServerFirst)); !errors.Is(err, ErrOutOfOrder) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ServerFinal before ServerFirst", func(t *testing.T) {
		c := fresh(t)
		c.ClientFirst()
		if err := c.ServerFinal([]byte(rfcServerFinal)); !errors.Is(err, ErrOutOfOrder) {
			t.Fatalf("err = %v", err)
		}
		// The exchange is dead now.
		if _, err := c.ServerFirst([]byte(rfcServerFirst)); !errors.Is(err, ErrOutOfOrder) {
			t.Fatalf("ServerFirst after failure: err = %v", err)
		}
	})
	t.Run("ServerFirst twice", func(t *testing.T) {
		c := fresh(t)
		c.ClientFirst()
		if _, err := c.ServerFirst([]byte(rfcServerFirst)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ServerFirst([]byte(rfcServerFirst)); !errors.Is(err, ErrOutOfOrder) {
			t.Fatalf("err = %v", err)
		}
		if err := c.ServerFinal([]byte(rfcServerFinal)); !errors.Is(err, ErrOutOfOrder) {
			t.Fatalf("ServerFinal after failure: err = %v", err)
		}
	})
	t.Run("after a failed ServerFirst", func(t *testing.T) {
		c := fresh(t)
		c.ClientFirst()
		if _, err := c.ServerFirst([]byte("garbage")); !errors.Is(err, ErrMalformedMessage) {
			t.Fatalf("err = %v", err)
		}
		if _, err := c.ServerFirst([]byte(rfcServerFirst)); !errors.Is(err, ErrOutOfOrder) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ClientFirst twice is the same message", func(t *testing.T) {
		c := fresh(t)
		if a, b := c.ClientFirst(), c.ClientFirst(); !bytes.Equal(a, b) {
			t.Fatalf("%q != %q", a, b)
		}
	})
}
