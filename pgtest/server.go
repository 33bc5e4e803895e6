package pgtest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pgline/pgline/internal/dsn"
)

// DSNEnv names the environment variable that points pgtest at an existing
// server instead of starting one.
const DSNEnv = "PGLINE_TEST_DSN"

// BinDirEnv names the environment variable that gives the directory of
// the server binaries to run when Options.BinDir is empty: the version a
// test run is against.
const BinDirEnv = "PGLINE_PG_BINDIR"

// VersionsEnv names the environment variable that gives a directory of
// server binaries by major version: <dir>/<major> holds initdb, pg_ctl and
// postgres of that version (.ci/run installs 13, 16, 17 and 18 so). Tests
// of a feature of a newer server than the one they run against start one
// from there (BinDirOf).
const VersionsEnv = "PGLINE_PG_VERSIONS"

// Server is a running throwaway cluster, a standby of one (StartStandby),
// or an external server named by PGLINE_TEST_DSN. Its methods are safe for
// concurrent use by multiple goroutines; the fields must not be changed.
type Server struct {
	Host      string // "127.0.0.1"
	Port      int
	SocketDir string // directory holding .s.PGSQL.<Port>
	User      string // superuser name ("postgres"), trusted on local and host
	Database  string // "postgres"
	DataDir   string
	LogFile   string // server log (inside DataDir)

	// IPv6 reports whether the server also listens on ::1.
	IPv6 bool

	// TLS files (when Options.TLS): PEM paths readable by the test process.
	CACertFile, ServerCertFile, ServerKeyFile, ClientCertFile, ClientKeyFile string
	// WrongCACertFile is a second, unrelated CA, for "wrong CA" tests.
	WrongCACertFile string
	// ClientCertUser is the role matching the client certificate's CN.
	ClientCertUser string

	// External is true when PGLINE_TEST_DSN named the server.
	External bool

	bins     binaries
	owner    *account   // runs the server; nil means the current user
	baseDir  string     // temp dir holding everything; removed by Stop
	lock     *os.File   // flock held while the cluster is ours
	extDSN   []dsn.Pair // External only
	version  int
	upstream *Server // the server a standby was made from; nil otherwise
	appName  string  // a standby's application_name, reserved in upstream

	// mu protects the fields below. Stop, Shutdown, Restart and Promote
	// hold it while they act, so that Stop never removes the files under a
	// restarting server. A standby may lock its upstream's mu while holding
	// its own, never the reverse.
	mu          sync.Mutex
	stopped     bool
	nextStandby int             // the last N given to a default name "standbyN"
	standbys    map[string]bool // application_names (lower case) of live standbys
	syncNames   []string        // synchronous standbys, as written to syncConfName
}

// Addr returns the TCP address, "127.0.0.1:port".
func (s *Server) Addr() string {
	return net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
}

// DSN returns a key=value DSN for the superuser over TCP,
// "host=127.0.0.1 port=N user=postgres dbname=postgres sslmode=disable",
// followed by the extra key=value pairs; a later key overrides an earlier one
// as in libpq, so DSN("sslmode=require") asks for TLS. For an external
// server it is PGLINE_TEST_DSN (in key=value form) followed by extra.
func (s *Server) DSN(extra ...string) string {
	if s.External {
		return dsn.Join(dsn.Render(s.extDSN), extra...)
	}
	return plainDSN(s.Host, s.Port, s.User, s.Database, extra)
}

// SocketDSN is DSN over the Unix socket: host is SocketDir. For an external
// server it is the same as DSN unless PGLINE_TEST_DSN itself names a socket
// directory.
func (s *Server) SocketDSN(extra ...string) string {
	if s.External {
		return s.DSN(extra...)
	}
	return plainDSN(s.SocketDir, s.Port, s.User, s.Database, extra)
}

// plainDSN returns "host=... port=... user=... dbname=... sslmode=disable",
// values quoted as needed, followed by the extra key=value settings.
func plainDSN(host string, port int, user, database string, extra []string) string {
	return dsn.Join(dsn.Render([]dsn.Pair{
		{Key: "host", Value: host}, {Key: "port", Value: strconv.Itoa(port)}, {Key: "user", Value: user},
		{Key: "dbname", Value: database}, {Key: "sslmode", Value: "disable"},
	}), extra...)
}

// Version returns the server's server_version_num, e.g. 150004.
func (s *Server) Version() int { return s.version }

// Exec runs sql (one or more statements) as the superuser through
// psql -X -v ON_ERROR_STOP=1, stopping at the first error. The error holds
// psql's stderr.
func (s *Server) Exec(sql string) error {
	_, err := s.psql(sql)
	return err
}

// Query runs sql as the superuser through psql -At and returns its output
// with surrounding white space trimmed: one line per row, columns separated
// by "|".
func (s *Server) Query(sql string) (string, error) {
	out, err := s.psql(sql, "-A", "-t")
	return strings.TrimSpace(out), err
}

// psql runs sql through psql against the superuser connection.
func (s *Server) psql(sql string, args ...string) (string, error) {
	if s.bins.psql == "" {
		return "", fmt.Errorf("pgtest: psql not found beside %s or on PATH; "+
			"install the PostgreSQL client, e.g. apt-get install -y postgresql-client", s.bins.initdb)
	}
	conninfo := s.SocketDSN("connect_timeout=10")
	env := os.Environ()
	if !s.External {
		env = cleanEnv()
	}
	cmd := exec.Command(s.bins.psql, append([]string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", conninfo, "-f", "-"}, args...)...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(sql)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = "(no output)"
		}
		return stdout.String(), fmt.Errorf("pgtest: psql: %v: %s", err, msg)
	}
	return stdout.String(), nil
}

// cleanEnv is the environment without libpq's PG* variables, so that a
// developer's PGSSLMODE or PGOPTIONS cannot change pgtest's own sessions.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return env
}

// NeedVersion skips t when s is older than PostgreSQL major, with a
// message naming the version and what the test needs of it (feature):
//
//	srv.NeedVersion(t, 14, "multiranges")
//
// A test of a feature that a newer server brought calls it first, so that
// the suite runs on older servers (PGLINE_PG_BINDIR) with that test skipped.
func (s *Server) NeedVersion(t testing.TB, major int, feature string) {
	t.Helper()
	if s.version < major*10000 {
		t.Skipf("needs PostgreSQL %d or later (%s); the server is %s", major, feature, versionString(s.version))
	}
}

// versionString writes a server_version_num as a version: 130023 as
// "13.23", 90624 as "9.6.24".
func versionString(num int) string {
	if num < 100000 {
		return fmt.Sprintf("%d.%d.%d", num/10000, num/100%100, num%100)
	}
	return fmt.Sprintf("%d.%d", num/10000, num%10000)
}
