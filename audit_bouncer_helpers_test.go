package pgline

// Helpers of the audit of cancellation and ctx deadlines through a real
// PgBouncer: a PgBouncer started with settings of the test's choosing
// (pool size, query_timeout, ...), which pgtest.StartPgBouncer does not
// offer, and its admin console through psql.

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// auditBouncer is a PgBouncer in front of srv.
type auditBouncer struct {
	Port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// startAuditBouncer starts PgBouncer in front of srv with pool_mode mode
// and the extra pgbouncer.ini lines (which override the defaults here:
// default_pool_size = 1). The admin console (dbname=pgbouncer) accepts
// srv.User. It is stopped when the test ends.
func startAuditBouncer(t *testing.T, mode string, extra ...string) *auditBouncer {
	t.Helper()
	if !pgbouncerInstalled() {
		t.Skip("pgbouncer not installed")
	}
	bin := "/usr/sbin/pgbouncer"
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		bin = p
	}
	dir, err := os.MkdirTemp("", "audit-bouncer-")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	settings := map[string]string{
		"listen_addr":               "127.0.0.1",
		"listen_port":               strconv.Itoa(port),
		"unix_socket_dir":           "",
		"auth_type":                 "trust",
		"auth_file":                 filepath.Join(dir, "userlist.txt"),
		"pool_mode":                 mode,
		"default_pool_size":         "1",
		"max_client_conn":           "200",
		"admin_users":               srv.User,
		"ignore_startup_parameters": "extra_float_digits,options",
		"logfile":                   filepath.Join(dir, "pgbouncer.log"),
		"pidfile":                   filepath.Join(dir, "pgbouncer.pid"),
	}
	order := []string{"listen_addr", "listen_port", "unix_socket_dir", "auth_type", "auth_file", "pool_mode",
		"default_pool_size", "max_client_conn", "admin_users", "ignore_startup_parameters", "logfile", "pidfile"}
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if _, ok := settings[k]; !ok {
			order = append(order, k)
		}
		settings[k] = v
	}
	var ini strings.Builder
	fmt.Fprintf(&ini, "[databases]\n* = host=%s port=%d\n[pgbouncer]\n", srv.Host, srv.Port)
	for _, k := range order {
		fmt.Fprintf(&ini, "%s = %s\n", k, settings[k])
	}
	iniPath := filepath.Join(dir, "pgbouncer.ini")
	files := map[string]string{
		settings["auth_file"]: fmt.Sprintf("%q \"\"\n", srv.User),
		iniPath:               ini.String(),
	}
	for p, content := range files {
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, iniPath)
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			u, err = user.Lookup("nobody")
		}
		if err != nil {
			t.Fatal(err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		for _, p := range []string{dir, settings["auth_file"], iniPath} {
			if err := os.Chown(p, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &auditBouncer{Port: port, dir: dir, cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(b.done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-b.done
		if f := os.Getenv("AUDIT_BOUNCER_LOG"); f != "" {
			os.WriteFile(f, []byte(b.log()), 0o644)
		}
		os.RemoveAll(dir)
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
			return b
		}
		select {
		case <-b.done:
			t.Fatalf("pgbouncer exited: %s", b.log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgbouncer did not listen: %v", err)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// DSN returns a DSN through the bouncer, with extra key=value pairs.
func (b *auditBouncer) DSN(extra ...string) string {
	return strings.Join(append([]string{fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable",
		b.Port, srv.User, srv.Database)}, extra...), " ")
}

func (b *auditBouncer) log() string {
	data, _ := os.ReadFile(filepath.Join(b.dir, "pgbouncer.log"))
	return string(data)
}

// admin runs sql on the admin console through psql and returns its output.
func (b *auditBouncer) admin(t *testing.T, sql string) string {
	t.Helper()
	out, err := exec.Command("/usr/lib/postgresql/15/bin/psql", "-X", "-At", "-h", "127.0.0.1",
		"-p", strconv.Itoa(b.Port), "-U", srv.User, "-d", "pgbouncer", "-c", sql).CombinedOutput()
	if err != nil {
		t.Fatalf("admin %q: %v: %s", sql, err, out)
	}
	return strings.TrimSpace(string(out))
}

// auditBouncerConn connects through b, closed when the test ends.
func auditBouncerConn(t *testing.T, b *auditBouncer, extra ...string) *Conn {
	t.Helper()
	cfg, err := ParseConfig(b.DSN(extra...))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect through pgbouncer: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// auditDirectCount counts the rows of table straight on the server.
func auditDirectCount(t *testing.T, admin *Conn, table string) int {
	t.Helper()
	var n int
	if err := admin.QueryRow(testCtx(t), "SELECT count(*)::int FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// auditWaitActive waits (up to 5 s) until a backend runs a statement
// containing frag, and returns its pid.
func auditWaitActive(t *testing.T, admin *Conn, frag string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var pid int
		err := admin.QueryRow(testCtx(t), "SELECT pid FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%'||$1||'%' AND pid <> pg_backend_pid() LIMIT 1", frag).Scan(&pid)
		if err == nil {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no backend runs %q", frag)
	return 0
}
