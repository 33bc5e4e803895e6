package pgline

// sslnegotiation=direct (PostgreSQL 17+): TLS from the first byte, with
// ALPN "postgresql", against real servers of each version that has it,
// and against older ones, which must fail naming it.

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// directMajors are the versions that accept direct TLS; preDirectMajors
// some that do not.
var (
	directMajors    = []int{17, 18}
	preDirectMajors = []int{15, 16}
)

// TestDirectTLS_EverySSLMode: with sslnegotiation=direct, each sslmode
// that requires TLS connects to PostgreSQL 17 and 18 and runs a
// query on an encrypted session; the certificate checks are those of the
// postgres negotiation (verify-ca, verify-full with the CA, by host name
// and with hostaddr; client certificates; SCRAM with channel binding;
// sslsni either way), and refuse what they refuse there.
func TestDirectTLS_EverySSLMode(t *testing.T) {
	for _, major := range directMajors {
		t.Run(fmt.Sprint("pg", major), func(t *testing.T) {
			s := serverOf(t, major)
			scram := []string{"user=scramuser", "password=" + pwSCRAM, "sslnegotiation=direct"}
			ok := []struct {
				name string
				dsn  []string
			}{
				{"require", []string{"sslmode=require"}},
				{"verify-ca", []string{"sslmode=verify-ca", "sslrootcert=" + s.CACertFile}},
				{"verify-full", []string{"host=localhost", "hostaddr=127.0.0.1", "sslmode=verify-full", "sslrootcert=" + s.CACertFile}},
				{"verify-full-ip", []string{"sslmode=verify-full", "sslrootcert=" + s.CACertFile}},
				{"verify-full-no-sni", []string{"host=localhost", "hostaddr=127.0.0.1", "sslmode=verify-full", "sslrootcert=" + s.CACertFile, "sslsni=0"}},
				{"require-with-root-cert", []string{"sslmode=require", "sslrootcert=" + s.CACertFile}},
				{"channel-binding", []string{"sslmode=require", "channel_binding=require"}},
				{"tls1.3", []string{"sslmode=require", "ssl_min_protocol_version=TLSv1.3"}},
			}
			for _, tc := range ok {
				t.Run(tc.name, func(t *testing.T) {
					c := connect(t, s.DSN(append(scram, tc.dsn...)...))
					if !sslInUse(t, c) {
						t.Fatal("session not encrypted")
					}
					if v := c.ParameterStatus("server_version"); !strings.HasPrefix(v, fmt.Sprint(major)) {
						t.Fatalf("server_version %q, want PostgreSQL %d", v, major)
					}
				})
			}
			t.Run("client-certificate", func(t *testing.T) {
				c := connect(t, s.DSN("user="+s.ClientCertUser, "sslnegotiation=direct", "sslmode=verify-full",
					"sslrootcert="+s.CACertFile, "sslcert="+s.ClientCertFile, "sslkey="+s.ClientKeyFile))
				var user string
				if err := c.QueryRow(testCtx(t), "SELECT current_user").Scan(&user); err != nil || user != s.ClientCertUser {
					t.Fatalf("current_user %q, %v; want %s", user, err, s.ClientCertUser)
				}
			})

			bad := []struct {
				name, want string
				dsn        []string
			}{
				{"wrong-ca", "certificate", []string{"host=localhost", "sslmode=verify-full", "sslrootcert=" + s.WrongCACertFile}},
				{"wrong-ca-require", "certificate", []string{"sslmode=require", "sslrootcert=" + s.WrongCACertFile}},
				{"hostname-mismatch", "db.invalid", []string{"host=db.invalid", "hostaddr=127.0.0.1", "sslmode=verify-full", "sslrootcert=" + s.CACertFile}},
				{"system-roots", "certificate", []string{"host=localhost", "hostaddr=127.0.0.1", "sslmode=verify-full", "sslrootcert=system"}},
			}
			for _, tc := range bad {
				t.Run(tc.name, func(t *testing.T) {
					c, err := Connect(testCtx(t), s.DSN(append(scram, tc.dsn...)...))
					if err == nil {
						c.Close()
						t.Fatal("connected; want a certificate error")
					}
					if !strings.Contains(err.Error(), tc.want) {
						t.Fatalf("error %q does not mention %q", err, tc.want)
					}
				})
			}
		})
	}
}

// sslRequestBytes is an SSLRequest as it goes on the wire.
var sslRequestBytes = wire.AppendSSLRequest(nil)

// TestDirectTLS_FirstByteIsHandshake: through a recording proxy, the first
// byte a direct connection sends is 0x16, a TLS handshake record (the
// ClientHello), not an SSLRequest; so is the first byte of the
// CancelRequest's connection that a ctx deadline sends (libpq 17's
// PQcancelCreate takes the connection's sslnegotiation), and the cancel
// stops the statement. The postgres negotiation, through the same proxy,
// starts with SSLRequest.
func TestDirectTLS_FirstByteIsHandshake(t *testing.T) {
	for _, major := range directMajors {
		t.Run(fmt.Sprint("pg", major), func(t *testing.T) {
			s := serverOf(t, major)
			px := newRecordingProxy(t, s.Addr)
			cfg, err := ParseConfig(s.DSN("port="+px.port(), "user=scramuser", "password="+pwSCRAM,
				"sslmode=verify-full", "sslrootcert="+s.CACertFile, "sslnegotiation=direct"))
			if err != nil {
				t.Fatal(err)
			}
			cfg.CancelTimeout = 5 * time.Second
			c, err := ConnectConfig(testCtx(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if !sslInUse(t, c) {
				t.Fatal("session not encrypted")
			}
			head, _ := firstSent(px, 0)
			if len(head) == 0 || head[0] != 0x16 || bytes.HasPrefix(head, sslRequestBytes) {
				t.Fatalf("the connection began with % x; want 16 (a TLS handshake record), not an SSLRequest", head)
			}

			// A ctx deadline's cancel.
			ctx, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err = c.Exec(ctx, "SELECT pg_sleep(20)")
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Exec past its deadline: %v; want context.DeadlineExceeded", err)
			}
			var one int
			if err := c.QueryRow(testCtx(t), "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("the next statement: %d, %v", one, err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("the next statement came %v after the deadline: pg_sleep(20) was not cancelled", d)
			}
			head, conns := firstSent(px, 1)
			if conns != 2 {
				t.Fatalf("the proxy saw %d connections send; want 2 (the session and its cancel)", conns)
			}
			if len(head) == 0 || head[0] != 0x16 || bytes.HasPrefix(head, sslRequestBytes) {
				t.Fatalf("the cancel's connection began with % x; want 16 (a TLS handshake record), not an SSLRequest", head)
			}

			// The postgres negotiation, for contrast.
			connect(t, s.DSN("port="+px.port(), "user=scramuser", "password="+pwSCRAM, "sslmode=require"))
			if head, _ := firstSent(px, 2); !bytes.HasPrefix(head, sslRequestBytes) {
				t.Fatalf("sslnegotiation=postgres began with % x; want an SSLRequest (% x)", head, sslRequestBytes)
			}
		})
	}
}

// TestDirectTLS_OldServerNamesIt: a server before PostgreSQL 17 takes the
// ClientHello for a bad startup packet and closes the connection: the
// connect fails at once (no wait for a timeout) with an error naming
// sslnegotiation=direct.
func TestDirectTLS_OldServerNamesIt(t *testing.T) {
	for _, major := range preDirectMajors {
		t.Run(fmt.Sprint("pg", major), func(t *testing.T) {
			s := serverOf(t, major)
			start := time.Now()
			c, err := Connect(testCtx(t), s.DSN("user=scramuser", "password="+pwSCRAM, "sslmode=require",
				"sslnegotiation=direct", "connect_timeout=20"))
			if err == nil {
				c.Close()
				t.Fatalf("connected to PostgreSQL %d with sslnegotiation=direct", major)
			}
			if !strings.Contains(err.Error(), "sslnegotiation=direct") {
				t.Fatalf("error %q does not name sslnegotiation=direct", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("the connect failed after %v; want at once", d)
			}
		})
	}
}

// TestDirectTLS_HostList: with several hosts, a server before 17 fails
// (naming sslnegotiation=direct) and the next, of 17, is used, also
// under target_session_attrs; when every host is too old, each one's
// error names it.
func TestDirectTLS_HostList(t *testing.T) {
	old, cur := serverOf(t, 15), serverOf(t, 17)
	direct := []string{"user=scramuser", "password=" + pwSCRAM, "sslmode=verify-full", "sslnegotiation=direct", "connect_timeout=20"}
	for _, attrs := range []string{"any", "read-write", "primary"} {
		t.Run(attrs, func(t *testing.T) {
			// Both servers' CAs: the clusters make one each.
			roots := bundleCAs(t, old.CACertFile, cur.CACertFile)
			c := connect(t, srv.DSN(append(direct, "host=127.0.0.1,localhost", fmt.Sprintf("port=%d,%d", old.Port, cur.Port),
				"hostaddr=127.0.0.1,127.0.0.1", "sslrootcert="+roots, "target_session_attrs="+attrs)...))
			port, _, err := whichServer(testCtx(t), c)
			if err != nil {
				t.Fatal(err)
			}
			if port != cur.Port {
				t.Fatalf("connected to port %d; want PostgreSQL 17's, %d", port, cur.Port)
			}
		})
	}
	t.Run("all-old", func(t *testing.T) {
		_, err := Connect(testCtx(t), srv.DSN(append(direct, "host=127.0.0.1,127.0.0.1", fmt.Sprintf("port=%d,%d", old.Port, old.Port),
			"sslrootcert="+old.CACertFile)...))
		var ce *ConnectError
		if !errors.As(err, &ce) || len(ce.Attempts) != 2 {
			t.Fatalf("error %v; want a ConnectError with two attempts", err)
		}
		for _, a := range ce.Attempts {
			if !strings.Contains(a.Err.Error(), "sslnegotiation=direct") {
				t.Errorf("host %s: %q does not name sslnegotiation=direct", a.Host, a.Err)
			}
		}
	})
}

// bundleCAs writes the certificates of files into one file, for an
// sslrootcert trusting them all.
func bundleCAs(t *testing.T, files ...string) string {
	t.Helper()
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	p := t.TempDir() + "/roots.crt"
	if err := os.WriteFile(p, all, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDirectTLS_SilentServerTimesOut: a direct connect to a host that
// accepts and never answers the ClientHello ends at connect_timeout,
// and at ctx's deadline.
func TestDirectTLS_SilentServerTimesOut(t *testing.T) {
	port, _ := fakeListen(t, func(_ *testing.T, c net.Conn) {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.Copy(io.Discard, c) // the ClientHello, never answered
	})
	dsn := fmt.Sprintf("host=127.0.0.1 port=%d user=u dbname=d sslmode=require sslnegotiation=direct", port)
	start := time.Now()
	_, err := Connect(testCtx(t), dsn+" connect_timeout=2")
	if err == nil || time.Since(start) > 6*time.Second {
		t.Fatalf("connect_timeout=2: %v after %v; want an error within about 2 s", err, time.Since(start))
	}
	ctx, cancel := context.WithTimeout(testCtx(t), time.Second)
	defer cancel()
	start = time.Now()
	_, err = Connect(ctx, dsn)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("ctx deadline of 1 s: %v after %v; want context.DeadlineExceeded within about 1 s", err, time.Since(start))
	}
}

// TestDirectTLS_RefusesWithoutALPN: a server (or a TLS terminator) that
// completes the handshake without selecting ALPN "postgresql" is refused
// before any startup byte is sent, as libpq refuses it; the fake server
// sees no StartupMessage.
func TestDirectTLS_RefusesWithoutALPN(t *testing.T) {
	ca := newSecCA(t, "test CA")
	cert := ca.issue(t, leafOpts{cn: "localhost", dns: []string{"localhost"}, ips: []net.IP{net.IPv4(127, 0, 0, 1)}})
	gotStartup := make(chan bool, 1)
	port, wait := fakeListen(t, func(_ *testing.T, c net.Conn) {
		ts := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}}) // no NextProtos: selects none
		if ts.Handshake() != nil {
			gotStartup <- false
			return
		}
		_, _, err := wire.ReadFrontendMessage(ts, true)
		gotStartup <- err == nil
	})
	t.Cleanup(wait)
	_, err := Connect(testCtx(t), fmt.Sprintf("host=127.0.0.1 port=%d user=u dbname=d password=x sslmode=verify-full sslrootcert=%s sslnegotiation=direct", port, ca.pemFile))
	if err == nil || !strings.Contains(err.Error(), "ALPN") || !strings.Contains(err.Error(), "sslnegotiation=direct") {
		t.Fatalf("error %v; want a refusal naming ALPN and sslnegotiation=direct", err)
	}
	if <-gotStartup {
		t.Fatal("the client sent its StartupMessage to a server that selected no ALPN protocol")
	}
}

// TestDirectTLS_ConfigNeedsTLSMode: a Config made without ParseConfig is
// held to the same rule as the DSN: direct only with an sslmode that
// requires TLS.
func TestDirectTLS_ConfigNeedsTLSMode(t *testing.T) {
	cfg, err := ParseConfig(srv.DSN("sslmode=prefer"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.SSLNegotiation = "direct"
	c, err := ConnectConfig(testCtx(t), cfg)
	if err == nil {
		c.Close()
		t.Fatal("connected with sslnegotiation=direct and sslmode=prefer")
	}
	if !strings.Contains(err.Error(), "sslnegotiation") || !strings.Contains(err.Error(), "sslmode") {
		t.Fatalf("error %q does not name sslnegotiation and sslmode", err)
	}
}

// firstSent returns the first bytes (up to 64) the client of connection i
// through the recording proxy px sent, and how many connections px has
// forwarded.
func firstSent(px *testProxy, i int) (head []byte, conns int) {
	recs := px.records()
	if i >= len(recs) {
		return nil, len(recs)
	}
	up, _ := recs[i].bytes()
	return up[:min(len(up), 64)], len(recs)
}
