package auth

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"sync"
	"testing"
	"time"
)

var (
	rsaKeyOnce sync.Once
	rsaKey     *rsa.PrivateKey
)

func testRSAKey(t *testing.T) *rsa.PrivateKey {
	rsaKeyOnce.Do(func() {
		var err error
		rsaKey, err = rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
	})
	return rsaKey
}

// selfSigned creates a self-signed certificate signed with alg.
func selfSigned(t *testing.T, key crypto.Signer, alg x509.SignatureAlgorithm) *x509.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber:       big.NewInt(42),
		Subject:            pkix.Name{CommonName: "pgline test"},
		NotBefore:          time.Now().Add(-time.Hour),
		NotAfter:           time.Now().Add(time.Hour),
		SignatureAlgorithm: alg,
		DNSNames:           []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	if cert.SignatureAlgorithm != alg {
		t.Fatalf("certificate signed with %v, want %v", cert.SignatureAlgorithm, alg)
	}
	return cert
}

func TestTLSServerEndPoint(t *testing.T) {
	p256, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sum256 := func(b []byte) []byte { s := sha256.Sum256(b); return s[:] }
	sum384 := func(b []byte) []byte { s := sha512.Sum384(b); return s[:] }
	sum512 := func(b []byte) []byte { s := sha512.Sum512(b); return s[:] }
	tests := []struct {
		name string
		key  crypto.Signer
		alg  x509.SignatureAlgorithm
		hash func([]byte) []byte
	}{
		{"RSA SHA-256", testRSAKey(t), x509.SHA256WithRSA, sum256},
		{"RSA SHA-384", testRSAKey(t), x509.SHA384WithRSA, sum384},
		{"RSA SHA-512", testRSAKey(t), x509.SHA512WithRSA, sum512},
		{"RSA-PSS SHA-256", testRSAKey(t), x509.SHA256WithRSAPSS, sum256},
		{"ECDSA SHA-256", p256, x509.ECDSAWithSHA256, sum256},
		{"ECDSA SHA-384", p384, x509.ECDSAWithSHA384, sum384},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cert := selfSigned(t, tt.key, tt.alg)
			got, err := TLSServerEndPoint(cert)
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.hash(cert.Raw); !bytes.Equal(got, want) {
				t.Fatalf("got %x, want %x", got, want)
			}
		})
	}
}

func TestTLSServerEndPointWeakHashesUseSHA256(t *testing.T) {
	// Go refuses to sign with MD5 or SHA-1, and TLSServerEndPoint reads only
	// Raw and SignatureAlgorithm, so a certificate value is enough.
	raw := []byte("not really DER, but hashed all the same")
	want := sha256.Sum256(raw)
	for _, alg := range []x509.SignatureAlgorithm{x509.MD5WithRSA, x509.SHA1WithRSA, x509.ECDSAWithSHA1, x509.DSAWithSHA1} {
		got, err := TLSServerEndPoint(&x509.Certificate{Raw: raw, SignatureAlgorithm: alg})
		if err != nil {
			t.Fatalf("%v: %v", alg, err)
		}
		if !bytes.Equal(got, want[:]) {
			t.Errorf("%v: got %x, want SHA-256 %x", alg, got, want)
		}
	}
}

func TestTLSServerEndPointUndefined(t *testing.T) {
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert := selfSigned(t, edKey, x509.PureEd25519)
	if got, err := TLSServerEndPoint(cert); err == nil {
		t.Errorf("Ed25519: got %x, want an error", got)
	}
	for _, c := range []*x509.Certificate{
		nil,
		{SignatureAlgorithm: x509.SHA256WithRSA},
		{Raw: []byte{1}, SignatureAlgorithm: x509.MD2WithRSA},
		{Raw: []byte{1}, SignatureAlgorithm: x509.UnknownSignatureAlgorithm},
	} {
		if got, err := TLSServerEndPoint(c); err == nil {
			t.Errorf("%v: got %x, want an error", c, got)
		}
	}
}
