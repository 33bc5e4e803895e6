package pgline

// sslmode semantics against fake servers that refuse TLS, hang up, or
// present certificates that must not be accepted.

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// TestSecurityTLS_NoPlaintextFallback: require, verify-ca and verify-full
// never send a StartupMessage outside TLS, whether the server answers 'N',
// 'E' or hangs up after the SSLRequest, with one host or several.
func TestSecurityTLS_NoPlaintextFallback(t *testing.T) {
	ca := newSecCA(t, "test CA")
	for _, ans := range []struct {
		name string
		a    sslAnswer
	}{{"N", sslNo}, {"close", sslClose}, {"E", sslError}} {
		for _, mode := range []string{"require", "verify-ca", "verify-full"} {
			t.Run(ans.name+"/"+mode, func(t *testing.T) {
				s1 := newSecServer(t, ans.a, tls.Certificate{}, okScript)
				s2 := newSecServer(t, ans.a, tls.Certificate{}, okScript)
				dsn := "host=127.0.0.1,127.0.0.1 port=" + itoa(s1.port) + "," + itoa(s2.port) +
					" user=u dbname=d password=" + secPW + " connect_timeout=5 statement_cache_mode=prepare" +
					" sslmode=" + mode + " sslrootcert=" + ca.pemFile
				c, err := Connect(testCtx(t), dsn)
				if err == nil {
					c.Close()
					t.Fatal("connected in plaintext")
				}
				for i, s := range []*secServer{s1, s2} {
					r := s.rec.snapshot()
					if r.plainStart != 0 {
						t.Errorf("host %d got %d plaintext StartupMessages", i+1, r.plainStart)
					}
					if r.sslReqs == 0 {
						t.Errorf("host %d never got an SSLRequest", i+1)
					}
				}
				if strings.Contains(err.Error(), secPW) {
					t.Fatalf("error holds the password: %v", err)
				}
			})
		}
	}
}

// TestSecurityTLS_PreferAllow: prefer goes plaintext after 'N' (once, not
// twice), allow starts plaintext. Both work as libpq documents.
func TestSecurityTLS_PreferAllow(t *testing.T) {
	s := newSecServer(t, sslNo, tls.Certificate{}, okScript)
	c, err := Connect(testCtx(t), s.dsn("sslmode=prefer"))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if r := s.rec.snapshot(); r.plainStart != 1 || r.sslReqs != 1 {
		t.Fatalf("prefer vs 'N': %d SSLRequests, %d plaintext startups; want 1 and 1", r.sslReqs, r.plainStart)
	}
	s2 := newSecServer(t, sslNo, tls.Certificate{}, okScript)
	c, err = Connect(testCtx(t), s2.dsn("sslmode=allow"))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if r := s2.rec.snapshot(); r.sslReqs != 0 {
		t.Fatalf("allow sent an SSLRequest first")
	}
}

// TestSecurityTLS_Certificates: verify-full and verify-ca refuse
// certificates libpq refuses (wrong name, other CA, expired, self-signed,
// signed by a non-CA leaf) and accept those libpq accepts.
func TestSecurityTLS_Certificates(t *testing.T) {
	ca := newSecCA(t, "test CA")
	other := newSecCA(t, "other CA")
	good := leafOpts{cn: "localhost", dns: []string{"localhost"}, ips: []net.IP{net.IPv4(127, 0, 0, 1)}}

	// A leaf that is not a CA used to sign another leaf.
	notCA := ca.issue(t, leafOpts{cn: "intermediate", dns: []string{"intermediate"}})
	notCACert, _ := x509.ParseCertificate(notCA.Certificate[0])
	fakeIssuer := &secCA{cert: notCACert, key: notCA.PrivateKey.(*ecdsa.PrivateKey)}
	chained := fakeIssuer.issue(t, good)
	chained.Certificate = append(chained.Certificate, notCA.Certificate[0])

	cases := []struct {
		name string
		cert tls.Certificate
		dsn  string // extra settings; the host is 127.0.0.1 unless host= is given
		ok   bool
	}{
		{"full-good-ip", ca.issue(t, good), "sslmode=verify-full", true},
		{"full-good-name", ca.issue(t, good), "host=localhost hostaddr=127.0.0.1 sslmode=verify-full", true},
		{"full-wrong-name", ca.issue(t, leafOpts{cn: "db.example.com", dns: []string{"db.example.com"}}), "host=localhost hostaddr=127.0.0.1 sslmode=verify-full", false},
		{"full-wrong-ip", ca.issue(t, leafOpts{cn: "x", ips: []net.IP{net.IPv4(10, 0, 0, 1)}}), "sslmode=verify-full", false},
		{"full-cn-only", ca.issue(t, leafOpts{cn: "localhost"}), "host=localhost hostaddr=127.0.0.1 sslmode=verify-full", true},
		{"full-cn-wrong", ca.issue(t, leafOpts{cn: "evil.example"}), "host=localhost hostaddr=127.0.0.1 sslmode=verify-full", false},
		{"full-cn-suffix", ca.issue(t, leafOpts{cn: "localhost.evil"}), "host=localhost hostaddr=127.0.0.1 sslmode=verify-full", false},
		{"full-other-ca", other.issue(t, good), "sslmode=verify-full", false},
		{"ca-other-ca", other.issue(t, good), "sslmode=verify-ca", false},
		{"ca-wrong-name-ok", ca.issue(t, leafOpts{cn: "db.example.com", dns: []string{"db.example.com"}}), "sslmode=verify-ca", true},
		{"full-expired", ca.issue(t, leafOpts{cn: "localhost", dns: []string{"localhost"}, ips: []net.IP{net.IPv4(127, 0, 0, 1)}, expired: true}), "sslmode=verify-full", false},
		{"ca-expired", ca.issue(t, leafOpts{cn: "localhost", expired: true}), "sslmode=verify-ca", false},
		{"ca-self-signed", ca.issue(t, leafOpts{cn: "localhost", dns: []string{"localhost"}, selfSign: true}), "sslmode=verify-ca", false},
		{"require-rootcert-other-ca", other.issue(t, good), "sslmode=require", false},
		{"ca-leaf-signed-by-leaf", chained, "sslmode=verify-ca", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSecServer(t, sslYes, tc.cert, okScript)
			dsn := s.dsn(tc.dsn + " sslrootcert=" + ca.pemFile)
			if strings.Contains(tc.dsn, "host=localhost") {
				dsn = strings.Replace(dsn, "host=127.0.0.1 ", "", 1)
			}
			c, err := Connect(testCtx(t), dsn)
			if tc.ok {
				if err != nil {
					t.Fatalf("refused a good certificate: %v", err)
				}
				c.Close()
				return
			}
			if err == nil {
				c.Close()
				t.Fatal("accepted a certificate libpq refuses")
			}
			if r := s.rec.snapshot(); r.plainStart+r.tlsStart != 0 {
				t.Fatalf("sent a StartupMessage (plain %d, tls %d) after a bad certificate", r.plainStart, r.tlsStart)
			}
		})
	}
}

// TestSecurityTLS_VerifyFullPerHost: with two hosts, each certificate is
// checked against its own host name: the second host's certificate, valid
// only for the first host's name, is refused.
func TestSecurityTLS_VerifyFullPerHost(t *testing.T) {
	ca := newSecCA(t, "test CA")
	s1 := newSecServer(t, sslClose, tls.Certificate{}, okScript) // first host: down
	s2 := newSecServer(t, sslYes, ca.issue(t, leafOpts{cn: "db1.example", dns: []string{"db1.example"}}), okScript)
	dsn := "host=db1.example,db2.example hostaddr=127.0.0.1,127.0.0.1 port=" + itoa(s1.port) + "," + itoa(s2.port) +
		" user=u dbname=d password=" + secPW + " connect_timeout=5 statement_cache_mode=prepare sslmode=verify-full sslrootcert=" + ca.pemFile
	c, err := Connect(testCtx(t), dsn)
	if err == nil {
		c.Close()
		t.Fatal("db2.example accepted a certificate for db1.example")
	}
}

// TestSecurityTLS_SSLRootCertSystem: sslrootcert=system makes verify-full
// the default and refuses weaker modes, as libpq documents; and a
// certificate from a private CA is refused with it.
func TestSecurityTLS_SSLRootCertSystem(t *testing.T) {
	for _, mode := range []string{"disable", "allow", "prefer", "require", "verify-ca"} {
		if _, err := ParseConfig("host=h user=u sslrootcert=system sslmode=" + mode); err == nil {
			t.Errorf("sslrootcert=system accepted sslmode=%s", mode)
		}
	}
	cfg, err := ParseConfig("host=h user=u sslrootcert=system")
	if err != nil || cfg.SSLMode != "verify-full" {
		t.Fatalf("sslrootcert=system: sslmode %q, %v; want verify-full", cfg.SSLMode, err)
	}
	ca := newSecCA(t, "test CA")
	s := newSecServer(t, sslYes, ca.issue(t, leafOpts{cn: "localhost", dns: []string{"localhost"}, ips: []net.IP{net.IPv4(127, 0, 0, 1)}}), okScript)
	c, err := Connect(testCtx(t), s.dsn("sslrootcert=system"))
	if err == nil {
		c.Close()
		t.Fatal("sslrootcert=system accepted a private CA")
	}
}

// TestSecurityTLS_RequireVsInjectedOK: bytes a man in the middle appends
// to an 'N' answer are plaintext protocol under prefer (no security claim)
// but must never let require connect.
func TestSecurityTLS_RequireVsInjectedOK(t *testing.T) {
	dsn := fakeServer(t, func(t *testing.T, c net.Conn) {
		wire.ReadFrontendMessage(c, true)
		c.Write(append([]byte{'N'}, authOKReady()...))
		waitClosed(c)
	})
	c, err := Connect(testCtx(t), strings.Replace(dsn, "sslmode=disable", "sslmode=require", 1))
	if err == nil {
		c.Close()
		t.Fatal("require connected after 'N'")
	}
}

// TestSecurityTLS_CancelNoPlaintext: a connection made over TLS sends its
// CancelRequest (which carries the session's secret key) over TLS too; a
// man in the middle answering 'N' to the cancel's SSLRequest gets no
// plaintext CancelRequest.
func TestSecurityTLS_CancelNoPlaintext(t *testing.T) {
	ca := newSecCA(t, "test CA")
	cert := ca.issue(t, leafOpts{cn: "localhost", dns: []string{"localhost"}, ips: []net.IP{net.IPv4(127, 0, 0, 1)}})
	plainCancel := make(chan bool, 4)
	var accepted atomic.Int32
	port, _ := fakeListen(t, func(_ *testing.T, c net.Conn) {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		n := accepted.Add(1) - 1
		if _, _, err := wire.ReadFrontendMessage(c, true); err != nil {
			return
		}
		if n > 0 { // the cancel connection
			c.Write([]byte{'N'})
			_, body, err := wire.ReadFrontendMessage(c, true)
			plainCancel <- err == nil && len(body) >= 4 && binary.BigEndian.Uint32(body) == wire.CancelRequestCode
			return
		}
		c.Write([]byte{'S'})
		ts := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}})
		if ts.Handshake() != nil {
			return
		}
		if _, _, err := wire.ReadFrontendMessage(ts, true); err != nil {
			return
		}
		ts.Write(authOKReady())
		io.Copy(io.Discard, ts) // never answer the query
	})
	cfg, err := ParseConfig("host=127.0.0.1 port=" + itoa(port) + " user=u dbname=d password=x sslmode=verify-full sslrootcert=" + ca.pemFile + " statement_cache_mode=prepare")
	if err != nil {
		t.Fatal(err)
	}
	cfg.CancelTimeout = time.Second
	c, err := ConnectConfig(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	c.Exec(ctx, "SELECT 1")
	select {
	case p := <-plainCancel:
		if p {
			t.Fatal("CancelRequest (with the secret key) sent in plaintext after 'N'")
		}
	case <-time.After(3 * time.Second):
	}
}

// TestSecurityTLS_PreferErrorNoFallback: under sslmode=prefer, a server
// (or a man in the middle) answering the SSLRequest with an ErrorResponse
// ('E') must end the attempt: since the CVE-2024-10977 fix libpq reports
// the failure "immediately, without a retry on any other methods allowed,
// like a fallback to a plaintext connection". pgline once retried in
// plaintext and connected.
func TestSecurityTLS_PreferErrorNoFallback(t *testing.T) {
	s := newSecServer(t, sslError, tls.Certificate{}, okScript)
	c, err := Connect(testCtx(t), s.dsn("sslmode=prefer"))
	if err == nil {
		c.Close()
	}
	if r := s.rec.snapshot(); r.plainStart != 0 {
		t.Fatalf("after an 'E' answer to SSLRequest, sslmode=prefer retried in plaintext (%d plaintext StartupMessages; connect error %v)", r.plainStart, err)
	}
}
