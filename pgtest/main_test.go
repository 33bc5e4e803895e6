package pgtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// srv is the cluster shared by the tests, started by TestMain through Run.
var srv *Server

// testOptions exercise every hba method, TLS, HBA lines and Settings.
var testOptions = Options{
	TLS: true,
	Users: []User{
		{Name: "md5user", Password: "md5 pass'word", Method: "md5"},
		{Name: "scramuser", Password: "scram-secret", Method: "scram-sha-256"},
		{Name: "pwuser", Password: "plain", Method: "password"},
		{Name: "trustuser", Method: "trust"},
		{Name: "ssluser", Password: "sslpw", Method: "scram-sha-256", HostSSLOnly: true},
		{Name: "blocked", Method: "trust"},
		{Name: "Mixed Case", Password: "mixed", Method: "scram-sha-256"},
	},
	HBA:      []string{`host all "blocked" 127.0.0.1/32 reject`, `host all "blocked" ::1/128 reject`},
	Settings: map[string]string{"work_mem": "8MB", "application_name": "it's pgtest"},
}

// runFailEnv makes TestMain call Run with options that cannot start, for
// TestRunFailure.
const runFailEnv = "PGTEST_TEST_RUN_FAIL"

func TestMain(m *testing.M) {
	if os.Getenv(runFailEnv) == "1" {
		os.Exit(Run(m, Options{Users: []User{{Method: "trust"}}}, &srv))
	}
	// These tests are about starting clusters: an external server would
	// lack their users and TLS files.
	os.Unsetenv(DSNEnv)
	os.Exit(Run(m, testOptions, &srv))
}

// psqlAs runs sql with psql over conninfo, with password in PGPASSWORD,
// and returns the trimmed -At output.
func psqlAs(conninfo, password, sql string) (string, error) {
	cmd := exec.Command(srv.bins.psql, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", conninfo+" connect_timeout=10", "-c", sql)
	cmd.Env = append(cleanEnv(), "PGPASSWORD="+password)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", &psqlError{err: err, stderr: stderr.String()}
	}
	return strings.TrimSpace(stdout.String()), nil
}

type psqlError struct {
	err    error
	stderr string
}

func (e *psqlError) Error() string { return e.err.Error() + ": " + e.stderr }

// mustPsql is psqlAs that fails the test on error.
func mustPsql(t *testing.T, conninfo, password, sql string) string {
	t.Helper()
	out, err := psqlAs(conninfo, password, sql)
	if err != nil {
		t.Fatalf("psql %q: %v", conninfo, err)
	}
	return out
}

// wantPsqlError runs sql and fails the test unless it fails with a message
// containing want.
func wantPsqlError(t *testing.T, conninfo, password, want string) {
	t.Helper()
	out, err := psqlAs(conninfo, password, "SELECT 1")
	if err == nil {
		t.Fatalf("psql %q succeeded (%q), want error containing %q", conninfo, out, want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("psql %q: error %q does not contain %q", conninfo, err, want)
	}
}

// privateTempDir points TMPDIR at a fresh directory the server user can
// enter, so that a test can count the temp dirs pgtest leaves there without
// seeing other test processes' clusters.
func privateTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgtestcheck")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", dir)
	return dir
}

// tempDirsIn returns pgtest's temp dirs in dir.
func tempDirsIn(t *testing.T, dir string) []string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(dir, stalePrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return found
}
