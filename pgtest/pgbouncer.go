package pgtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// PgBouncer is a PgBouncer started in front of a Server, for tests of
// behaviour behind a connection pooler.
type PgBouncer struct {
	Host string // "127.0.0.1"
	Port int
	Mode string // pool_mode: session, transaction or statement

	srv  *Server
	cmd  *exec.Cmd
	dir  string
	done chan struct{} // closed when the process has exited

	mu      sync.Mutex
	stopped bool
}

// PgBouncerPath returns the pgbouncer binary: on PATH, or where Debian
// and other distributions install it. Its error says how to install it.
func PgBouncerPath() (string, error) {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/pgbouncer", "/usr/local/sbin/pgbouncer", "/usr/local/bin/pgbouncer"} {
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", errors.New("pgtest: pgbouncer not found (install it, e.g. apt-get install -y pgbouncer)")
}

// StartPgBouncer starts a PgBouncer in front of s with the given pool_mode
// (pool size 3), accepting the superuser without a password. Stop it when
// done; Server.Stop does not.
func (s *Server) StartPgBouncer(mode string) (*PgBouncer, error) {
	return s.StartPgBouncerWith(mode)
}

// StartPgBouncerWith is StartPgBouncer with pgbouncer.ini settings of the
// caller's choosing: each "key = value" replaces the default of that key
// (default_pool_size = 3, max_client_conn = 500) or adds one
// (query_timeout = 1, say). The superuser may use the admin console
// (see Admin).
func (s *Server) StartPgBouncerWith(mode string, settings ...string) (*PgBouncer, error) {
	switch mode {
	case "session", "transaction", "statement":
	default:
		return nil, fmt.Errorf("pgtest: invalid pool_mode %q", mode)
	}
	bin, err := PgBouncerPath()
	if err != nil {
		return nil, err
	}
	// PgBouncer refuses to run as root, like PostgreSQL.
	owner, err := serverAccount()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-pgbouncer-")
	if err != nil {
		return nil, err
	}
	b := &PgBouncer{Host: "127.0.0.1", Mode: mode, srv: s, dir: dir, done: make(chan struct{})}
	fail := func(err error) (*PgBouncer, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	if b.Port, err = freePort(false); err != nil {
		return fail(err)
	}
	userlist := filepath.Join(dir, "userlist.txt")
	ini := filepath.Join(dir, "pgbouncer.ini")
	conf := [][2]string{
		{"listen_addr", "127.0.0.1"},
		{"listen_port", strconv.Itoa(b.Port)},
		{"unix_socket_dir", ""},
		{"auth_type", "trust"},
		{"auth_file", userlist},
		{"admin_users", s.User},
		{"pool_mode", mode},
		{"default_pool_size", "3"},
		{"max_client_conn", "500"},
		{"ignore_startup_parameters", "extra_float_digits,options"},
		{"logfile", filepath.Join(dir, "pgbouncer.log")},
		{"pidfile", filepath.Join(dir, "pgbouncer.pid")},
	}
	for _, kv := range settings {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return fail(fmt.Errorf("pgtest: pgbouncer setting %q is not key = value", kv))
		}
		i := slices.IndexFunc(conf, func(e [2]string) bool { return e[0] == k })
		if i < 0 {
			conf = append(conf, [2]string{k, v})
		} else {
			conf[i][1] = v
		}
	}
	var text strings.Builder
	fmt.Fprintf(&text, "[databases]\n* = host=%s port=%d\n[pgbouncer]\n", s.Host, s.Port)
	for _, e := range conf {
		fmt.Fprintf(&text, "%s = %s\n", e[0], e[1])
	}
	files := map[string]string{
		userlist: fmt.Sprintf("%q \"\"\n", s.User),
		ini:      text.String(),
	}
	for path, content := range files {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return fail(err)
		}
	}
	for _, p := range []string{dir, userlist, ini} {
		if err := owner.chown(p); err != nil {
			return fail(err)
		}
	}
	cmd := exec.Command(bin, ini)
	cmd.Env = cleanEnv()
	owner.runAs(cmd)
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("pgtest: start pgbouncer: %w", err))
	}
	b.cmd = cmd
	go func() {
		cmd.Wait()
		close(b.done)
	}()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", b.Addr(), time.Second)
		if err == nil {
			c.Close()
			return b, nil
		}
		select {
		case <-b.done:
			return fail(fmt.Errorf("pgtest: pgbouncer exited: %s", tail(b.Log(), 2000)))
		default:
		}
		if time.Now().After(deadline) {
			b.Stop()
			return nil, fmt.Errorf("pgtest: pgbouncer did not listen on %s: %w", b.Addr(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Addr returns the TCP address, "127.0.0.1:port".
func (b *PgBouncer) Addr() string {
	return net.JoinHostPort(b.Host, strconv.Itoa(b.Port))
}

// DSN returns a key=value DSN for the server's superuser through
// PgBouncer, with extra key=value pairs appended.
func (b *PgBouncer) DSN(extra ...string) string {
	return plainDSN(b.Host, b.Port, b.srv.User, b.srv.Database, extra)
}

// Log returns what PgBouncer has logged so far.
func (b *PgBouncer) Log() string {
	data, _ := os.ReadFile(filepath.Join(b.dir, "pgbouncer.log"))
	return string(data)
}

// Admin runs a command of PgBouncer's admin console (SHOW CLIENTS, say)
// as the server's superuser through psql -At and returns its output with
// surrounding white space trimmed.
func (b *PgBouncer) Admin(command string) (string, error) {
	psql := b.srv.bins.psql
	if psql == "" {
		return "", errors.New("pgtest: psql not found")
	}
	cmd := exec.Command(psql, "-X", "-A", "-t", "-d", b.DSN("dbname=pgbouncer", "connect_timeout=10"), "-c", command)
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("pgtest: pgbouncer admin %q: %w: %s", command, err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// Stop stops PgBouncer and removes its files. It is safe to call more
// than once.
func (b *PgBouncer) Stop() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return nil
	}
	b.stopped = true
	if b.cmd != nil && b.cmd.Process != nil {
		b.cmd.Process.Kill() // it keeps nothing worth a clean shutdown
		<-b.done
	}
	return os.RemoveAll(b.dir)
}
