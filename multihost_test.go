package pgline

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// closedPort returns a loopback port with nothing listening on it.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

func TestMultiHostFallsThrough(t *testing.T) {
	dead := closedPort(t)
	dsn := "host=127.0.0.1,127.0.0.1 port=" + strconv.Itoa(dead) + "," + strconv.Itoa(srv.Port) +
		" user=scramuser password=" + pwSCRAM + " dbname=postgres sslmode=disable"
	c := connect(t, dsn)
	if got := c.Host().Port; int(got) != srv.Port {
		t.Fatalf("connected to port %d, want %d", got, srv.Port)
	}
}

func TestMultiHostAllDown(t *testing.T) {
	p1, p2 := closedPort(t), closedPort(t)
	dsn := "host=127.0.0.1,localhost port=" + strconv.Itoa(p1) + "," + strconv.Itoa(p2) +
		" user=scramuser password=" + pwSCRAM + " sslmode=disable"
	_, err := Connect(testCtx(t), dsn)
	var ce *ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want *ConnectError", err)
	}
	if len(ce.Attempts) != 2 {
		t.Fatalf("%d attempts, want 2: %v", len(ce.Attempts), err)
	}
	msg := err.Error()
	for _, want := range []string{"127.0.0.1:" + strconv.Itoa(p1), "localhost:" + strconv.Itoa(p2), "refused"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("error %q does not mention %q", msg, want)
		}
	}
	if strings.Contains(msg, pwSCRAM) {
		t.Fatal("error contains the password")
	}
}

// TestTargetSessionAttrs uses rouser, whose sessions are read-only by
// default (ALTER ROLE ... SET default_transaction_read_only), on a primary.
func TestTargetSessionAttrs(t *testing.T) {
	if err := srv.Exec("ALTER ROLE rouser SET default_transaction_read_only = on"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		user, attrs string
		ok          bool
	}{
		{"scramuser", "any", true},
		{"scramuser", "read-write", true},
		{"scramuser", "read-only", false},
		{"rouser", "read-write", false},
		{"rouser", "read-only", true},
		{"scramuser", "primary", true},
		{"scramuser", "standby", false},
		{"scramuser", "prefer-standby", true},
	}
	for _, tc := range cases {
		t.Run(tc.user+"/"+tc.attrs, func(t *testing.T) {
			// Two entries for the same server: both are tried.
			dsn := "host=127.0.0.1,localhost port=" + strconv.Itoa(srv.Port) + " user=" + tc.user +
				" password=" + pwSCRAM + " dbname=postgres sslmode=disable target_session_attrs=" + tc.attrs
			c, err := Connect(testCtx(t), dsn)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				c.Close()
				return
			}
			if err == nil {
				c.Close()
				t.Fatal("connected; want the session to be refused")
			}
			var ce *ConnectError
			if !errors.As(err, &ce) || len(ce.Attempts) != 2 {
				t.Fatalf("got %v, want a ConnectError with 2 attempts", err)
			}
			if !strings.Contains(err.Error(), "target_session_attrs="+tc.attrs) {
				t.Fatalf("error does not name target_session_attrs: %v", err)
			}
		})
	}
}

func TestDSNForms(t *testing.T) {
	port := strconv.Itoa(srv.Port)
	cases := map[string]string{
		"url":           "postgres://scramuser:" + url.QueryEscape(pwSCRAM) + "@127.0.0.1:" + port + "/postgres?sslmode=disable",
		"postgresql":    "postgresql://scramuser@127.0.0.1:" + port + "/postgres?password=" + pwSCRAM + "&sslmode=require",
		"url-socket":    "postgres://scramuser:" + pwSCRAM + "@" + strings.ReplaceAll(srv.SocketDir, "/", "%2F") + ":" + port + "/postgres",
		"url-socket-qs": "postgres:///postgres?host=" + url.QueryEscape(srv.SocketDir) + "&port=" + port + "&user=scramuser&password=" + pwSCRAM,
		"kv":            "host=127.0.0.1 port=" + port + " user=scramuser password='" + pwSCRAM + "' dbname=postgres",
		"kv-socket":     "host=" + srv.SocketDir + " port=" + port + " user=scramuser dbname=postgres password=" + pwSCRAM,
		"url-ipv4-list": "postgres://scramuser:" + pwSCRAM + "@127.0.0.1:" + strconv.Itoa(closedPort(t)) + ",127.0.0.1:" + port + "/postgres?sslmode=disable",
		"app-options":   srv.DSN("user=scramuser", "password="+pwSCRAM, "application_name=pgline-test", "options='-c search_path=pg_catalog'", "statement_timeout=1234"),
	}
	for name, dsn := range cases {
		t.Run(name, func(t *testing.T) {
			c := connect(t, dsn)
			if err := c.Ping(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			if name == "app-options" {
				for q, want := range map[string]string{
					"SHOW application_name":  "pgline-test",
					"SHOW search_path":       "pg_catalog",
					"SHOW statement_timeout": "1234ms",
				} {
					got, err := c.queryScalar(testCtx(t), q)
					if err != nil || got != want {
						t.Fatalf("%s = %q, %v; want %q", q, got, err, want)
					}
				}
			}
		})
	}
}

func TestEnvironment(t *testing.T) {
	t.Setenv("PGHOST", "127.0.0.1")
	t.Setenv("PGPORT", strconv.Itoa(srv.Port))
	t.Setenv("PGUSER", "scramuser")
	t.Setenv("PGPASSWORD", pwSCRAM)
	t.Setenv("PGDATABASE", "postgres")
	t.Setenv("PGSSLMODE", "require")
	t.Setenv("PGAPPNAME", "from-env")
	c := connect(t, "")
	got, err := c.queryScalar(testCtx(t), "SELECT current_user || ' ' || current_setting('application_name')")
	if err != nil || got != "scramuser from-env" {
		t.Fatalf("got %q, %v", got, err)
	}
	if !sslInUse(t, c) {
		t.Fatal("PGSSLMODE=require ignored")
	}
}

// TestMultiHostStopsWhenRefused: as in libpq, a server that refuses the
// session (here an unknown role, 28000) ends the attempt: the next host,
// where the login would work, is not tried.
func TestMultiHostStopsWhenRefused(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	plain := plainServer(t)
	dsn := "host=127.0.0.1,127.0.0.1 port=" + strconv.Itoa(plain.Port) + "," + strconv.Itoa(srv.Port) +
		" user=scramuser password=" + pwSCRAM + " dbname=postgres sslmode=disable"
	c, err := Connect(testCtx(t), dsn)
	if err == nil {
		c.Close()
		t.Fatalf("connected to port %d after the first host refused the role", c.Host().Port)
	}
	var pgErr *PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "28000" {
		t.Fatalf("got %v, want the first host's 28000", err)
	}
}

// TestPreferNoPlaintextRetry: with sslmode=prefer, a server without TLS
// that refuses the login is not asked a second time in plaintext (the
// first attempt already was).
func TestPreferNoPlaintextRetry(t *testing.T) {
	plain := plainServer(t)
	_, err := Connect(testCtx(t), plain.DSN("user=no_such_role", "sslmode=prefer"))
	if err == nil || strings.Contains(err.Error(), "then without TLS") {
		t.Fatalf("got %v; want one failed login", err)
	}
}
