package pgline

// Tests against a scripted fake server. It is used only to send bytes a
// real PostgreSQL never sends: malformed lengths, truncated messages,
// injected bytes after the SSLRequest answer, silence.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"io"
	"math/big"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// fakeServer listens on loopback and runs script on every accepted
// connection (fakeListen). It returns a DSN for it (fakeDSN).
func fakeServer(t *testing.T, script func(t *testing.T, c net.Conn)) string {
	t.Helper()
	port, _ := fakeListen(t, script)
	return fakeDSN(port)
}

// fakeDSN is a DSN for a fake server on port, without TLS and with
// statement_cache_mode=prepare: a script answers no pooler check (see
// internal/session/startup_pid.go).
func fakeDSN(port int) string {
	return "host=127.0.0.1 port=" + strconv.Itoa(port) + " user=u dbname=d password=fakepw sslmode=disable connect_timeout=10 statement_cache_mode=prepare"
}

// fakeListen listens on loopback and runs script, in a goroutine of its
// own, on every connection it accepts, after setting a deadline 20 s
// away on it (a script may set another). It stops listening when the
// test ends. It returns the port, and wait, which stops listening and
// waits for the scripts still running: a caller whose scripts use t
// registers it with t.Cleanup.
func fakeListen(t *testing.T, script func(t *testing.T, c net.Conn)) (port int, wait func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var wg sync.WaitGroup
	var mu sync.Mutex // protects closed and wg.Add against wait
	closed := false
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if closed {
				mu.Unlock()
				c.Close()
				return
			}
			wg.Add(1)
			mu.Unlock()
			go func() {
				defer wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(20 * time.Second))
				script(t, c)
			}()
		}
	}()
	wait = func() {
		mu.Lock()
		closed = true
		mu.Unlock()
		ln.Close()
		wg.Wait()
	}
	return ln.Addr().(*net.TCPAddr).Port, wait
}

// fakeStartup reads what opens a connection to a fake server: SSLRequests,
// answered 'N', or, with a cert, 'S' and a TLS handshake; then a
// StartupMessage, or a CancelRequest (cancel is then true). It answers
// neither, and returns the connection to go on with: the TLS one after
// 'S', else c.
func fakeStartup(c net.Conn, cert *tls.Certificate) (conn net.Conn, cancel bool, err error) {
	conn = c
	for {
		_, body, err := wire.ReadFrontendMessage(conn, true)
		if err != nil {
			return conn, false, err
		}
		code, err := wire.StartupCode(body)
		if err != nil {
			return conn, false, err
		}
		switch code {
		case wire.SSLRequestCode:
			if cert == nil {
				if _, err := conn.Write([]byte{'N'}); err != nil {
					return conn, false, err
				}
				continue
			}
			if _, err := conn.Write([]byte{'S'}); err != nil {
				return conn, false, err
			}
			ts := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{*cert}})
			if err := ts.Handshake(); err != nil {
				return conn, false, err
			}
			conn = ts
		case wire.CancelRequestCode:
			return conn, true, nil
		default:
			return conn, false, nil
		}
	}
}

// readStartup reads the client's StartupMessage (answering SSLRequest with
// 'N' if one comes first), or a CancelRequest, and answers neither.
func readStartup(c net.Conn) error {
	_, _, err := fakeStartup(c, nil)
	return err
}

// fakeAccept reads what opens a connection to the fake server
// (fakeStartup, without TLS): a StartupMessage is answered with a
// successful startup (authOKReady); after a CancelRequest, cancel is true
// and nothing is answered.
func fakeAccept(c net.Conn) (cancel bool, err error) {
	_, cancel, err = fakeStartup(c, nil)
	if err != nil || cancel {
		return cancel, err
	}
	_, err = c.Write(authOKReady())
	return false, err
}

// rawMsg builds a backend message with a declared length that may lie.
func rawMsg(typ byte, declared uint32, body []byte) []byte {
	b := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], declared)
	return append(b, body...)
}

// authOKReady is AuthenticationOk, BackendKeyData and ReadyForQuery.
func authOKReady() []byte {
	b, _ := wire.AppendAuthentication(nil, wire.Authentication{Type: wire.AuthOK})
	b = wire.AppendBackendKeyData(b, wire.BackendKeyData{ProcessID: 42, SecretKey: []byte{0, 0, 0, 7}})
	return wire.AppendReadyForQuery(b, 'I')
}

// waitClosed reports whether the client closed the connection within 5 s.
func waitClosed(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.Copy(io.Discard, c)
	return err == nil // io.Copy returns nil at EOF
}

func TestFakeServerMalformedStartup(t *testing.T) {
	cases := []struct {
		name  string
		bytes []byte
	}{
		{"length-3", rawMsg('R', 3, nil)},
		{"length-2^31", rawMsg('R', 1<<31, make([]byte, 16))},
		{"length-0xFFFFFFFF", rawMsg('R', 0xFFFFFFFF, make([]byte, 16))},
		{"auth-over-cap", rawMsg('R', 0x7FFFFFFF, make([]byte, 16))},
		{"truncated-by-eof", rawMsg('R', 100, []byte{0, 0, 0, 0, 1, 2, 3})},
		{"unknown-type", rawMsg('!', 4, nil)},
		{"ready-wrong-length", append(rawMsg('R', 8, []byte{0, 0, 0, 0}), rawMsg('Z', 6, []byte{'I', 'I'})...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			closed := make(chan bool, 1)
			dsn := fakeServer(t, func(t *testing.T, c net.Conn) {
				if readStartup(c) != nil {
					return
				}
				c.Write(tc.bytes)
				if tc.name == "truncated-by-eof" {
					c.(*net.TCPConn).CloseWrite()
				}
				closed <- waitClosed(c)
			})
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Connect(testCtx(t), dsn)
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatal("connected to a server sending malformed bytes")
			}
			if tc.name != "truncated-by-eof" {
				var pe *ProtocolError
				if !errors.As(err, &pe) {
					t.Fatalf("got %v, want a *ProtocolError", err)
				}
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
				t.Fatalf("allocated %d bytes for a malformed message", grew)
			}
			if !<-closed {
				t.Fatal("client did not close the connection")
			}
		})
	}
}

// TestFakeServerHugeDataRow: after a good startup, a DataRow declaring
// 2 GiB (over the 1 GiB cap) is refused without allocating it, and the
// connection is closed.
func TestFakeServerHugeDataRow(t *testing.T) {
	dsn := fakeServer(t, func(t *testing.T, c net.Conn) {
		if cancel, err := fakeAccept(c); cancel || err != nil {
			return
		}
		if _, _, err := wire.ReadFrontendMessage(c, false); err != nil {
			return
		}
		c.Write(rawMsg('D', 0x7FFFFFFF, []byte{0, 1, 0x7F, 0xFF, 0xFF, 0xF0}))
		waitClosed(c)
	})
	c := connect(t, dsn)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.Exec(testCtx(t), "SELECT 1")
	runtime.ReadMemStats(&after)
	var pe *ProtocolError
	if !errors.As(err, &pe) {
		t.Fatalf("got %v, want a *ProtocolError", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Fatalf("allocated %d bytes for a malformed message", grew)
	}
	if !c.IsClosed() {
		t.Fatal("connection still open after a protocol error")
	}
	if _, err := c.Exec(testCtx(t), "SELECT 1"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Exec after protocol error: got %v, want ErrClosed", err)
	}
}

// TestSSLResponseInjection: the server answers SSLRequest with 'S' and
// then plaintext bytes that look like a successful startup
// (CVE-2021-23222). Those bytes must never be read as protocol data: the
// TLS handshake sees them and fails.
func TestSSLResponseInjection(t *testing.T) {
	injected := authOKReady()
	dsn := fakeServer(t, func(t *testing.T, c net.Conn) {
		_, body, err := wire.ReadFrontendMessage(c, true)
		if err != nil || len(body) < 4 || binary.BigEndian.Uint32(body) != wire.SSLRequestCode {
			return // the plaintext retry of sslmode=prefer: hang up
		}
		c.Write(append([]byte{'S'}, injected...))
		// Go on as a real TLS server would.
		cert := testServerCert(t)
		ts := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}})
		ts.Handshake()
	})
	for _, mode := range []string{"require", "prefer"} {
		t.Run(mode, func(t *testing.T) {
			c, err := Connect(testCtx(t), strings.Replace(dsn, "sslmode=disable", "sslmode="+mode, 1))
			if err == nil {
				c.Close()
				t.Fatal("connected: injected bytes were taken as protocol data")
			}
			if !strings.Contains(err.Error(), "TLS") {
				t.Fatalf("got %v, want a TLS handshake error", err)
			}
		})
	}
}

// TestConnectTimeout: a listener that accepts and never answers makes the
// attempt fail once connect_timeout passes.
func TestConnectTimeout(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	dsn := fakeServer(t, func(t *testing.T, c net.Conn) {
		io.Copy(io.Discard, c) // read, never answer
	})
	dsn = strings.Replace(dsn, "connect_timeout=10", "connect_timeout=2", 1)
	start := time.Now()
	_, err := Connect(context.Background(), dsn)
	took := time.Since(start)
	if err == nil {
		t.Fatal("connected to a silent server")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
	if took < 2*time.Second || took > 6*time.Second {
		t.Fatalf("gave up after %v, want about 2s", took)
	}
}

// testServerCert makes a self-signed certificate for the fake server.
func testServerCert(t *testing.T) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Error(err)
		return tls.Certificate{}
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "fake"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Error(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// fakeQueryAnswer is a fake server that answers every Query with reply
// (the messages of one statement's result before its CommandComplete),
// then "SELECT 1" and ReadyForQuery 'I'. It returns fakeServer's DSN.
func fakeQueryAnswer(t *testing.T, reply []byte) string {
	t.Helper()
	return fakeServer(t, func(t *testing.T, c net.Conn) {
		if cancel, err := fakeAccept(c); cancel || err != nil {
			return
		}
		for {
			typ, _, err := wire.ReadFrontendMessage(c, false)
			if err != nil {
				return
			}
			if typ != wire.MsgQuery {
				continue
			}
			b, _ := wire.AppendCommandComplete(append([]byte(nil), reply...), "SELECT 1")
			c.Write(wire.AppendReadyForQuery(b, 'I'))
		}
	})
}
