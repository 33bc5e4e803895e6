package pgline

// How many round trips a connect costs: the pooler check of
// statement_cache_mode=auto goes with the client's last startup message
// (internal/session/startup_pid.go), and its reply is read while the
// connection is in use, so a connect costs the startup's round trips and
// waits for nothing else.

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// relay listens on loopback and, for each connection accepted, dials
// target and runs serve with both ends on goroutines of their own; the
// listener and every connection are closed when the test ends. It
// returns the address to connect to.
func relay(t *testing.T, target string, serve func(client, server net.Conn)) (host, port string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			serve(c, s)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	host, port, _ = net.SplitHostPort(ln.Addr().String())
	return host, port
}

// flightProxy forwards one server and counts the client's flights: the
// times the client sends after the server last did (the first send is
// one). A connect that waits for n answers makes n flights.
type flightProxy struct {
	host, port string

	mu      sync.Mutex
	flights int
	last    byte // 'c' or 's': who sent last
}

func newFlightProxy(t *testing.T, target string) *flightProxy {
	t.Helper()
	fp := &flightProxy{}
	fp.host, fp.port = relay(t, target, func(c, s net.Conn) {
		go fp.pump(s, c, 'c')
		go fp.pump(c, s, 's')
	})
	return fp
}

func (fp *flightProxy) pump(dst, src net.Conn, who byte) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			fp.mu.Lock()
			if who == 'c' && fp.last != 'c' {
				fp.flights++
			}
			fp.last = who
			fp.mu.Unlock()
			if _, err := dst.Write(buf[:n]); err != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
}

// count returns the flights so far and starts counting afresh.
func (fp *flightProxy) count() int {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	n := fp.flights
	fp.flights, fp.last = 0, 0
	return n
}

func (fp *flightProxy) hostPort() (string, string) { return fp.host, fp.port }

// TestConnectNoRoundTripForPoolerCheck: a connect in
// statement_cache_mode=auto makes as many flights as the startup needs
// (trust 1, md5 and password 2, SCRAM 3), the pooler check riding on the
// last; the mode is prepare (a direct server). With a password given to a
// server that trusts, the check needs a flight of its own, as before.
func TestConnectNoRoundTripForPoolerCheck(t *testing.T) {
	fp := newFlightProxy(t, net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port)))
	host, port := fp.hostPort()
	for _, tc := range []struct {
		name, user, password string
		flights              int
	}{
		{"trust", "trustuser", "", 1},
		{"password", "pwuser", pwPassword, 2},
		{"md5", "md5user", pwMD5, 2},
		{"scram", "scramuser", pwSCRAM, 3},
		// The check goes after the ReadyForQuery: a flight the connect
		// does not wait for (TestConnectWaitsNotForPoolerCheck), not
		// counted (it may or may not have reached the proxy yet).
		{"trust with a password", "trustuser", "unused", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := "host=" + host + " port=" + port + " dbname=postgres sslmode=disable user=" + tc.user
			if tc.password != "" {
				dsn += " password=" + tc.password
			}
			fp.count()
			c, err := Connect(testCtx(t), dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if n := fp.count(); n != tc.flights && tc.flights >= 0 {
				t.Errorf("the connect made %d flights, want %d", n, tc.flights)
			}
			if m := settled(c).StatementCacheMode(); m != session.CachePrepare {
				t.Errorf("statement cache mode %s on a direct server, want prepare", m)
			}
			if n := rowCount(t, c, "generate_series(1, 3)"); n != 3 {
				t.Fatalf("%d rows", n)
			}
		})
	}
}

// TestPoolerFoundWithoutRoundTrip: through a real PgBouncer in
// transaction mode (trust, and SCRAM with the password in its auth file),
// the connect finds the pooler with the startup's last message, and the
// statements then run in describe mode.
func TestPoolerFoundWithoutRoundTrip(t *testing.T) {
	// PgBouncer runs as the server's account: the file must be readable.
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	authFile := filepath.Join(dir, "userlist.txt")
	if err := os.WriteFile(authFile, []byte(`"scramuser" "`+pwSCRAM+`"`+"\n"+`"`+srv.User+`" ""`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		settings []string
		user, pw string
		flights  int
	}{
		{"trust", nil, "", "", 1},
		{"scram", []string{"auth_type = scram-sha-256", "auth_file = " + authFile}, "scramuser", pwSCRAM, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := startTestPgBouncer(t, "transaction", tc.settings...)
			fp := newFlightProxy(t, b.Addr())
			host, port := fp.hostPort()
			dsn := "host=" + host + " port=" + port + " dbname=postgres sslmode=disable"
			if tc.user != "" {
				dsn += " user=" + tc.user + " password=" + tc.pw
			} else {
				dsn += " user=" + srv.User
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if n := fp.count(); n != tc.flights {
				t.Errorf("the connect made %d flights, want %d", n, tc.flights)
			}
			if m := settled(c).StatementCacheMode(); m != session.CacheDescribe {
				t.Fatalf("statement cache mode %s behind PgBouncer, want describe", m)
			}
			for i := range 5 {
				var v int
				if err := c.QueryRow(ctx, "SELECT $1::int + 1", i).Scan(&v); err != nil || v != i+1 {
					t.Fatalf("through PgBouncer: %d, %v", v, err)
				}
			}
		})
	}
}

// holdProxy forwards one server, but holds what the server sends after
// the first ReadyForQuery of each connection (the startup's) until
// release is closed: the reply to the pooler check, and everything after.
type holdProxy struct {
	host, port string
	release    chan struct{}
	once       sync.Once
}

// let lets the held bytes go.
func (hp *holdProxy) let() { hp.once.Do(func() { close(hp.release) }) }

func newHoldProxy(t *testing.T, target string) *holdProxy {
	t.Helper()
	hp := &holdProxy{release: make(chan struct{})}
	hp.host, hp.port = relay(t, target, func(c, s net.Conn) {
		go func() { io.Copy(s, c); s.Close() }()
		go func() {
			defer c.Close()
			var hdr [5]byte
			for held := false; ; {
				if _, err := io.ReadFull(s, hdr[:]); err != nil {
					return
				}
				body := make([]byte, binary.BigEndian.Uint32(hdr[1:])-4)
				if _, err := io.ReadFull(s, body); err != nil {
					return
				}
				if held {
					<-hp.release
				}
				if _, err := c.Write(append(hdr[:], body...)); err != nil {
					return
				}
				held = held || hdr[0] == 'Z'
			}
		}()
	})
	t.Cleanup(hp.let) // before relay's cleanup (last in, first run): no pump stays held
	return hp
}

func (hp *holdProxy) hostPort() (string, string) { return hp.host, hp.port }

// TestConnectWaitsNotForPoolerCheck: with the server's every byte after
// the startup's ReadyForQuery held back (the reply to the pooler check
// among them), the connect returns, and a statement sent then (pipelined
// behind the check, in describe mode until its answer) gets its own
// answer once the bytes come; the check then makes the mode final:
// prepare on a direct server (trust, a password the server did not ask
// for, SCRAM), describe behind a real PgBouncer in transaction mode, where
// a transaction then runs as it should.
func TestConnectWaitsNotForPoolerCheck(t *testing.T) {
	direct := net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port))
	for _, tc := range []struct {
		name, user, password string
		bouncer              bool
	}{
		{"trust", "trustuser", "", false},
		{"trust with a password", "trustuser", "unused", false},
		{"scram", "scramuser", pwSCRAM, false},
		{"pgbouncer", srv.User, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, want := direct, session.CachePrepare
			if tc.bouncer {
				target, want = startTestPgBouncer(t, "transaction").Addr(), session.CacheDescribe
			}
			hp := newHoldProxy(t, target)
			host, port := hp.hostPort()
			dsn := "host=" + host + " port=" + port + " dbname=postgres sslmode=disable user=" + tc.user
			if tc.password != "" {
				dsn += " password=" + tc.password
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := Connect(ctx, dsn)
			if err != nil {
				t.Fatalf("connect with the check's reply held back: %v", err)
			}
			defer c.Close()
			got := make(chan error, 1)
			go func() {
				var v int
				err := c.QueryRow(ctx, "SELECT $1::int + 1", 41).Scan(&v)
				if err == nil && v != 42 {
					err = fmt.Errorf("read %d, want 42", v)
				}
				got <- err
			}()
			select {
			case err := <-got:
				t.Fatalf("a statement behind the held check answered: %v", err)
			case <-time.After(50 * time.Millisecond):
			}
			if m := c.StatementCacheMode(); m != session.CacheDescribe {
				t.Errorf("statement cache mode %s before the check's answer, want describe", m)
			}
			hp.let()
			if err := <-got; err != nil {
				t.Fatal(err)
			}
			if m := settled(c).StatementCacheMode(); m != want {
				t.Fatalf("statement cache mode %s, want %s", m, want)
			}
			tx, err := c.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				var v int
				if err := tx.QueryRow(ctx, "SELECT $1::int * 2", i).Scan(&v); err != nil || v != 2*i {
					t.Fatalf("in a transaction: %d, %v", v, err)
				}
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestNoPasswordAskedErrorUnchanged: without a password, the check rides
// on the StartupMessage; a server that asks for a password fails the
// connect with pgline's own error, as before.
func TestNoPasswordAskedErrorUnchanged(t *testing.T) {
	dsn := srv.DSN("user=scramuser", "sslmode=disable", "passfile=/nonexistent")
	_, err := Connect(testCtx(t), dsn)
	if err == nil || !strings.Contains(err.Error(), "no password was supplied") {
		t.Fatalf("connect without a password to a SCRAM user: %v, want the no-password error", err)
	}
}

// TestPoolReleaseAwaitsPoolerCheck: a connection released while its
// connect's pooler check is still in flight is kept (Release waits for
// the check, within its bound), not closed as one left busy: the next
// Acquire gets the same server session.
func TestPoolReleaseAwaitsPoolerCheck(t *testing.T) {
	hp := newHoldProxy(t, net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port)))
	host, port := hp.hostPort()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := NewPool(ctx, "host="+host+" port="+port+" dbname=postgres sslmode=disable user=trustuser pool_max_conns=1")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pc, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid := pc.Conn.PID()
	released := make(chan struct{})
	go func() {
		pc.Release()
		close(released)
	}()
	select {
	case <-released:
		t.Fatal("Release returned with the check's reply held back")
	case <-time.After(50 * time.Millisecond):
	}
	hp.let()
	<-released
	pc, err = p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Release()
	if got := pc.Conn.PID(); got != pid {
		t.Fatalf("after Release, Acquire got server session %d, want %d (the connection was closed)", got, pid)
	}
}
