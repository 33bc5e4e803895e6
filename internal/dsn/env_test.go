package dsn

import (
	"errors"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"testing"
)

// testSource is a Source with only env in the environment and no
// operating-system user.
func testSource(env map[string]string) *Source {
	return &Source{LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}}
}

func TestEnvVars(t *testing.T) {
	keys, names := map[string]bool{}, map[string]bool{}
	for key, name := range EnvVars() {
		if keys[key] || names[name] {
			t.Errorf("%s or %s listed twice", key, name)
		}
		keys[key], names[name] = true, true
		if EnvVar(key) != name {
			t.Errorf("EnvVar(%q) = %q, want %q", key, EnvVar(key), name)
		}
	}
	if len(keys) != 30 || EnvVar("host") != "PGHOST" || EnvVar("application_name") != "PGAPPNAME" ||
		EnvVar("connect_timeout") != "PGCONNECT_TIMEOUT" || EnvVar("fallback_application_name") != "" {
		t.Errorf("%d keys; EnvVar(host) = %q", len(keys), EnvVar("host"))
	}
	for range EnvVars() {
		break // stopping early must not panic
	}
}

func TestSourceGet(t *testing.T) {
	src := testSource(map[string]string{"PGHOST": "envhost", "PGPORT": "6000", "PGUSER": "envuser", "X": "x"})
	ps := pairs("host", "a", "host", "", "user", "u")
	for key, want := range map[string]string{
		"host":   "",     // an empty DSN value blocks the environment
		"user":   "u",    // the DSN wins
		"port":   "6000", // from PGPORT
		"dbname": "",     // set nowhere
		"X":      "",     // not a keyword
	} {
		if got := src.Get(ps, key); got != want {
			t.Errorf("Get(%q) = %q, want %q", key, got, want)
		}
	}
	var empty Source
	if empty.Env("HOME") != "" || empty.HomeDir() != "" || empty.UserName() != "" || empty.Get(nil, "host") != "" {
		t.Error("a zero Source is not empty")
	}
}

func TestSourceHome(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the per-user files live under APPDATA")
	}
	osUser := func() (*user.User, error) { return &user.User{Username: "osuser", HomeDir: "/osuser"}, nil }
	src := testSource(map[string]string{"HOME": "/home/h"})
	src.CurrentUser = osUser
	if src.HomeDir() != "/home/h" || src.DefaultPassFile() != "/home/h/.pgpass" || src.UserName() != "osuser" {
		t.Errorf("with HOME: %q %q %q", src.HomeDir(), src.DefaultPassFile(), src.UserName())
	}
	src = testSource(nil)
	src.CurrentUser = osUser
	if src.HomeDir() != "/osuser" || src.DefaultPassFile() != "/osuser/.pgpass" {
		t.Errorf("without HOME: %q %q", src.HomeDir(), src.DefaultPassFile())
	}
	src.CurrentUser = func() (*user.User, error) { return nil, errors.New("unknown") }
	if src.HomeDir() != "" || src.DefaultPassFile() != "" || src.UserFile("root.crt") != "" || src.UserName() != "" {
		t.Error("an unknown user has a home")
	}

	home := t.TempDir()
	dir := filepath.Join(home, ".postgresql")
	if err := os.MkdirAll(filepath.Join(dir, "postgresql.crt"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "root.crt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	src = testSource(map[string]string{"HOME": home})
	if got := src.UserFile("root.crt"); got != filepath.Join(dir, "root.crt") {
		t.Errorf("UserFile(root.crt) = %q", got)
	}
	for _, name := range []string{"postgresql.crt", "postgresql.key"} { // a directory, and none
		if got := src.UserFile(name); got != "" {
			t.Errorf("UserFile(%q) = %q, want none", name, got)
		}
	}
}

func TestDefaultHost(t *testing.T) {
	dir, err := os.MkdirTemp("", "pgl") // short: socket paths are limited to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", filepath.Join(dir, ".s.PGSQL.5432"))
	if err != nil {
		t.Skip("no Unix sockets:", err)
	}
	defer l.Close()
	// A regular file with a socket's name is not a socket.
	if err := os.WriteFile(filepath.Join(dir, ".s.PGSQL.5433"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	src := &Source{SocketDirs: []string{t.TempDir(), dir}}
	if got := src.DefaultHost(5432); got != dir {
		t.Errorf("DefaultHost(5432) = %q, want %q", got, dir)
	}
	if got := src.DefaultHost(5433); got != "localhost" {
		t.Errorf("DefaultHost(5433) = %q, want localhost", got)
	}
	if !src.IsDefaultSocketDir(dir) || src.IsDefaultSocketDir("/elsewhere") || src.IsDefaultSocketDir("") {
		t.Error("IsDefaultSocketDir")
	}
	if got := (&Source{}).DefaultHost(5432); got != "localhost" {
		t.Errorf("without socket directories: %q", got)
	}
}
