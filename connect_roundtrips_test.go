package pgline

// How many round trips a connect costs: the pooler check of
// statement_cache_mode=auto goes with the client's last startup message
// (internal/session/startup_pid.go), so a connect costs the startup's
// round trips and no more.

import (
	"context"
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

// flightProxy forwards one server and counts the client's flights: the
// times the client sends after the server last did (the first send is
// one). A connect that waits for n answers makes n flights.
type flightProxy struct {
	ln net.Listener

	mu      sync.Mutex
	flights int
	last    byte // 'c' or 's': who sent last
}

func newFlightProxy(t *testing.T, target string) *flightProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fp := &flightProxy{ln: ln}
	var conns []net.Conn
	var mu sync.Mutex
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
			go fp.pump(s, c, 'c')
			go fp.pump(c, s, 's')
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

func (fp *flightProxy) hostPort() (string, string) {
	h, p, _ := net.SplitHostPort(fp.ln.Addr().String())
	return h, p
}

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
		{"trust with a password", "trustuser", "unused", 2},
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
			if n := fp.count(); n != tc.flights {
				t.Errorf("the connect made %d flights, want %d", n, tc.flights)
			}
			if m := c.StatementCacheMode(); m != session.CachePrepare {
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
			if m := c.StatementCacheMode(); m != session.CacheDescribe {
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
