package pgline

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"
)

// sslInUse asks the server whether this session is encrypted.
func sslInUse(t *testing.T, c *Conn) bool {
	t.Helper()
	v, err := c.queryScalar(testCtx(t), "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
	if err != nil {
		t.Fatal(err)
	}
	return v == "t"
}

func TestTLSModes(t *testing.T) {
	ok := []struct {
		name string
		dsn  []string
		tls  bool
	}{
		{"verify-full", []string{"host=localhost", "sslmode=verify-full", "sslrootcert=" + srv.CACertFile}, true},
		{"verify-full-ip", []string{"sslmode=verify-full", "sslrootcert=" + srv.CACertFile}, true},
		// hostaddr is dialled; host is what the certificate must name.
		{"verify-full-hostaddr", []string{"host=localhost", "hostaddr=127.0.0.1", "sslmode=verify-full", "sslrootcert=" + srv.CACertFile}, true},
		{"verify-ca-name-mismatch", []string{"host=db.invalid", "hostaddr=127.0.0.1", "sslmode=verify-ca", "sslrootcert=" + srv.CACertFile}, true},
		{"require", []string{"sslmode=require"}, true},
		{"prefer", []string{"sslmode=prefer"}, true},
		{"allow", []string{"sslmode=allow"}, false},
		{"disable", []string{"sslmode=disable"}, false},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, srv.DSN(append([]string{"user=scramuser", "password=" + pwSCRAM}, tc.dsn...)...))
			if got := sslInUse(t, c); got != tc.tls {
				t.Fatalf("ssl in use = %v, want %v", got, tc.tls)
			}
		})
	}

	bad := []struct {
		name, want string
		dsn        []string
	}{
		{"hostname-mismatch", "db.invalid", []string{"host=db.invalid", "hostaddr=127.0.0.1", "sslmode=verify-full", "sslrootcert=" + srv.CACertFile}},
		{"wrong-ca", "certificate", []string{"host=localhost", "sslmode=verify-full", "sslrootcert=" + srv.WrongCACertFile}},
		{"wrong-ca-require", "certificate", []string{"sslmode=require", "sslrootcert=" + srv.WrongCACertFile}},
		{"system-roots", "certificate", []string{"host=localhost", "sslmode=verify-full", "sslrootcert=system"}},
		// No host name to check: verify-full must not become verify-ca.
		{"verify-full-hostaddr-only", "host name", []string{"host=''", "hostaddr=127.0.0.1", "sslmode=verify-full", "sslrootcert=" + srv.CACertFile}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Connect(testCtx(t), srv.DSN(append([]string{"user=scramuser", "password=" + pwSCRAM}, tc.dsn...)...))
			if err == nil {
				c.Close()
				t.Fatal("connected; want a certificate error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

// TestTLSAgainstPlainServer uses a cluster with ssl off: require fails,
// prefer falls back to plaintext.
func TestTLSAgainstPlainServer(t *testing.T) {
	plain := plainServer(t)
	_, err := Connect(testCtx(t), plain.DSN("sslmode=require"))
	if err == nil || !strings.Contains(err.Error(), "does not support TLS") {
		t.Fatalf("require against a server without TLS: got %v", err)
	}
	c := connect(t, plain.DSN("sslmode=prefer"))
	if sslInUse(t, c) {
		t.Fatal("prefer against a server without TLS: session is encrypted")
	}
}

func TestChannelBinding(t *testing.T) {
	t.Run("require-scram-tls", func(t *testing.T) {
		c := connect(t, srv.DSN("user=scramssl", "password="+pwSCRAMSSL, "sslmode=require", "channel_binding=require"))
		if !sslInUse(t, c) {
			t.Fatal("session not encrypted")
		}
	})
	t.Run("prefer-scram-tls", func(t *testing.T) {
		connect(t, srv.DSN("user=scramssl", "password="+pwSCRAMSSL, "sslmode=require", "channel_binding=prefer"))
	})
	t.Run("disable-scram-tls", func(t *testing.T) {
		connect(t, srv.DSN("user=scramssl", "password="+pwSCRAMSSL, "sslmode=require", "channel_binding=disable"))
	})
	fails := []struct {
		name string
		dsn  []string
	}{
		{"require-without-tls", []string{"user=scramuser", "password=" + pwSCRAM, "sslmode=disable", "channel_binding=require"}},
		{"require-md5", []string{"user=md5user", "password=" + pwMD5, "sslmode=require", "channel_binding=require"}},
		{"require-password", []string{"user=pwuser", "password=" + pwPassword, "sslmode=require", "channel_binding=require"}},
		{"require-trust", []string{"user=trustuser", "sslmode=require", "channel_binding=require"}},
	}
	for _, tc := range fails {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Connect(testCtx(t), srv.DSN(tc.dsn...))
			if err == nil {
				c.Close()
				t.Fatal("connected; want channel binding to be required")
			}
			if !strings.Contains(err.Error(), "channel binding") {
				t.Fatalf("error does not mention channel binding: %v", err)
			}
			var pgErr *PgError
			if errors.As(err, &pgErr) {
				t.Fatalf("the client should refuse before the server does: %v", err)
			}
		})
	}
}

// TestVerifyCommonName: as in libpq, a server certificate without subject
// alternative names is matched by its Common Name (a leading "*." stands
// for one label); with them, the Common Name is not looked at.
func TestVerifyCommonName(t *testing.T) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	leaf := func(cn string, dns []string, ips []net.IP) tls.ConnectionState {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, DNSNames: dns, IPAddresses: ips}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := x509.ParseCertificate(der)
		return tls.ConnectionState{PeerCertificates: []*x509.Certificate{c}}
	}
	for _, tc := range []struct {
		cn   string
		dns  []string
		host string
		ok   bool
	}{
		{"db.example.com", nil, "db.example.com", true},
		{"DB.Example.com", nil, "db.example.com", true},
		{"db.example.com", nil, "other.example.com", false},
		{"*.example.com", nil, "db.example.com", true},
		{"*.example.com", nil, "a.db.example.com", false},
		{"*.example.com", nil, "example.com", false},
		{"127.0.0.1", nil, "127.0.0.1", true},
		{"db.example.com", []string{"other.example.com"}, "db.example.com", false}, // SANs win
		{"x", []string{"db.example.com"}, "db.example.com", true},
		{"db.example.com", nil, "", false},
	} {
		err := verifyServerCert(leaf(tc.cn, tc.dns, nil), roots, tc.host, true)
		if (err == nil) != tc.ok {
			t.Errorf("CN %q, SANs %v, host %q: %v, want ok=%v", tc.cn, tc.dns, tc.host, err, tc.ok)
		}
	}
	// verify-ca checks the chain only.
	if err := verifyServerCert(leaf("db.example.com", nil, nil), roots, "other", false); err != nil {
		t.Errorf("verify-ca: %v", err)
	}
	if err := verifyServerCert(leaf("db.example.com", nil, nil), x509.NewCertPool(), "db.example.com", true); err == nil {
		t.Error("a certificate from an unknown CA was accepted")
	}
}

// TestTLSProtocolVersion: ssl_max_protocol_version and
// ssl_min_protocol_version bound the version negotiated.
func TestTLSProtocolVersion(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"ssl_max_protocol_version=TLSv1.2", "TLSv1.2"},
		{"ssl_min_protocol_version=TLSv1.3", "TLSv1.3"},
	} {
		c := connect(t, srv.DSN("user=scramuser", "password="+pwSCRAM, "sslmode=require", tc.dsn))
		v, err := c.queryScalar(testCtx(t), "SELECT version FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
		if err != nil || v != tc.want {
			t.Errorf("%s: TLS version %q, %v; want %s", tc.dsn, v, err, tc.want)
		}
	}
}
