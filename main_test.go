package pgline

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
)

// srv is the cluster shared by this package's tests: TLS on, one user per
// authentication method.
var srv *pgtest.Server

// Users of the shared cluster, one per authentication method.
const (
	pwPassword = "clear-Secret-1"
	pwMD5      = "md5-Secret-2"
	pwSCRAM    = "scram-Secret-3"
	pwSCRAMSSL = "scramssl-Secret-4"
)

var testOptions = pgtest.Options{
	TLS:            true,
	ClientCertUser: "certuser",
	Users: []pgtest.User{
		{Name: "trustuser", Method: "trust"},
		{Name: "pwuser", Password: pwPassword, Method: "password"},
		{Name: "md5user", Password: pwMD5, Method: "md5"},
		{Name: "scramuser", Password: pwSCRAM, Method: "scram-sha-256"},
		{Name: "scramssl", Password: pwSCRAMSSL, Method: "scram-sha-256", HostSSLOnly: true},
		{Name: "rouser", Password: pwSCRAM, Method: "scram-sha-256"},
	},
}

func TestMain(m *testing.M) {
	ownClusters()
	if err := netnsSetUp(); err != nil {
		fmt.Fprintln(os.Stderr, "pgline tests:", err)
		os.Exit(1)
	}
	opts := testOptions
	if os.Getenv(netnsEnv) != "" {
		// A dead network's tests use the superuser without TLS only.
		opts = pgtest.Options{}
	}
	s, err := pgtest.Start(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgline tests: cannot start PostgreSQL:", err)
		os.Exit(1)
	}
	srv = s
	// The examples read their DSN from DATABASE_URL, as a program would.
	os.Setenv("DATABASE_URL", srv.DSN())
	code := m.Run()
	stopPlainServer()
	stopVersionServers()
	srv.Stop()
	os.Exit(code)
}

// plainSrv is a second cluster without TLS, started by the tests that need
// a server answering 'N' to SSLRequest.
var (
	plainOnce sync.Once
	plainSrv  *pgtest.Server
	plainErr  error
)

func plainServer(t *testing.T) *pgtest.Server {
	t.Helper()
	plainOnce.Do(func() { plainSrv, plainErr = pgtest.Start(pgtest.Options{}) })
	if plainErr != nil {
		t.Fatalf("start a cluster without TLS: %v", plainErr)
	}
	return plainSrv
}

func stopPlainServer() {
	if plainSrv != nil {
		plainSrv.Stop()
	}
}

// versionServers are the clusters of other major versions than the
// shared one's that serverOf started, by major version, each once per
// test binary; stopVersionServers (TestMain) stops them.
var versionServers struct {
	mu sync.Mutex
	m  map[int]*versionServer
}

type versionServer struct {
	once sync.Once
	s    *pgtest.Server
	err  error
}

// serverOf returns a cluster of PostgreSQL major version major with the
// shared cluster's options (TLS: its CA and client certificate in the
// Server's fields; a user per authentication method): srv when it is of
// that version, else one started once per test binary from
// PGLINE_PG_VERSIONS (pgtest.BinDirOf). Without that version the test is
// skipped, with a message naming PGLINE_PG_VERSIONS and .ci/pg-versions,
// which installs them; in CI (CI set) it fails.
func serverOf(t *testing.T, major int) *pgtest.Server {
	t.Helper()
	if !srv.External && srv.Version()/10000 == major {
		return srv
	}
	dir := pgtest.BinDirOf(major)
	if dir == "" {
		msg := fmt.Sprintf("needs PostgreSQL %d: set %s to a directory of server binaries by major version (.ci/pg-versions installs them)", major, pgtest.VersionsEnv)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	versionServers.mu.Lock()
	if versionServers.m == nil {
		versionServers.m = make(map[int]*versionServer)
	}
	vs := versionServers.m[major]
	if vs == nil {
		vs = new(versionServer)
		versionServers.m[major] = vs
	}
	versionServers.mu.Unlock()
	vs.once.Do(func() {
		opts := testOptions
		opts.BinDir = dir
		vs.s, vs.err = pgtest.Start(opts)
	})
	if vs.err != nil {
		t.Fatalf("start PostgreSQL %d from %s: %v", major, dir, vs.err)
	}
	return vs.s
}

// serverAtLeast returns srv when it is of PostgreSQL major version major
// or later, else serverOf the lowest such version PGLINE_PG_VERSIONS
// holds (skipped without one, failed in CI).
func serverAtLeast(t *testing.T, major int) *pgtest.Server {
	t.Helper()
	if srv.Version()/10000 >= major {
		return srv
	}
	for m := major; m < major+20; m++ {
		if pgtest.BinDirOf(m) != "" {
			return serverOf(t, m)
		}
	}
	return serverOf(t, major) // skips or fails, naming what is missing
}

// stopVersionServers stops the clusters serverOf started.
func stopVersionServers() {
	versionServers.mu.Lock()
	defer versionServers.mu.Unlock()
	for _, vs := range versionServers.m {
		if vs.s != nil {
			vs.s.Stop()
		}
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connectCancelTimeout opens a connection to the test server whose
// CancelTimeout is d, closed when the test ends.
func connectCancelTimeout(t *testing.T, d time.Duration) *Conn {
	t.Helper()
	return connectConfig(t, srv.DSN(), func(cfg *Config) { cfg.CancelTimeout = d })
}

// connectConfig opens a connection to dsn with its Config changed by set
// (a Tracer, a TypeMap...), settled, and closes it when the test ends.
func connectConfig(t *testing.T, dsn string, set func(*Config)) *Conn {
	t.Helper()
	cfg, err := ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	set(cfg)
	c, err := ConnectConfig(testCtx(t), cfg)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return settled(c)
}

// connect opens a connection to dsn and closes it when the test ends.
func connect(t *testing.T, dsn string) *Conn {
	t.Helper()
	c, err := Connect(testCtx(t), dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return settled(c)
}

// settled returns c once its connect's pooler check has answered (see
// internal/session/startup_pid.go): the statement cache's mode is final,
// and no request of the connect's is in flight, as the tests that count
// requests, prepared statements or the messages of a reply expect.
// TestConnectWaitsNotForPoolerCheck runs statements before the answer.
func settled(c *Conn) *Conn {
	<-c.s.PIDChecked()
	return c
}

// stormsEnv names the environment variable that turns on the long
// storms: tests that hammer a connection or a Pool for seconds to find a
// rare interleaving. .ci/run sets it; `go test ./...` skips them, so that
// the everyday run stays short.
const stormsEnv = "PGLINE_STORMS"

// storm skips t unless PGLINE_STORMS is set (see stormsEnv).
func storm(t *testing.T) {
	t.Helper()
	if os.Getenv(stormsEnv) == "" {
		t.Skipf("a storm: set %s=1 to run it (.ci/run does)", stormsEnv)
	}
}

// ownClusters raises go test's -parallel, unless it was given, to 6. The
// tests that call t.Parallel are those that start clusters of their own
// (a primary and its standbys) and never touch the shared one, and long
// tests on the shared cluster that mostly wait (for a deadline, a
// server's timeout, a PgBouncer of their own) and touch nothing other
// tests read (no server-wide setting, no backend but their own): running
// six at once, after the other tests, shortens go test ./... without
// loading the machine's cores much more. A test that counts the
// process's goroutines (a leak check) or its allocations, sets the
// environment, or asserts a bound tighter than the machine's noise stays
// serial.
func ownClusters() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "6")
	}
}
