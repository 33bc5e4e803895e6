package pgline

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
)

// Helpers of the audit of one Pool over a primary and its standbys.

// auditHostsWhere runs one read through q and says where it ran.
func auditHostsWhere(ctx context.Context, q *Pool) (port int, standby bool, err error) {
	err = q.QueryRow(ctx, "SELECT inet_server_port(), pg_is_in_recovery()").Scan(&port, &standby)
	return port, standby, err
}

// auditHostsWriteOwned writes a file into a server's data directory with
// the owner of the directory (the tests run as root, the server as
// another account).
func auditHostsWriteOwned(t *testing.T, dataDir, name, content string, appendTo bool) {
	t.Helper()
	path := filepath.Join(dataDir, name)
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendTo {
		flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, err := os.Stat(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		os.Chown(path, int(st.Uid), int(st.Gid))
	}
}

// auditHostsDemote turns old, a primary shut down with "fast" (so that up,
// its standby, promoted since, has all its WAL), into a standby of up and
// starts it again on its port: what a failover manager does with the
// former primary after a switchover.
func auditHostsDemote(t *testing.T, old, up *pgtest.Server) {
	t.Helper()
	auditHostsWriteOwned(t, old.DataDir, "standby.signal", "", false)
	auditHostsWriteOwned(t, old.DataDir, "postgresql.auto.conf",
		"\nprimary_conninfo = 'host="+up.Host+" port="+strconv.Itoa(up.Port)+
			" user="+up.User+" application_name=demoted sslmode=disable'\n", true)
	if err := old.Restart(); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		out, err := old.Query("SELECT pg_is_in_recovery(), (SELECT status FROM pg_stat_wal_receiver)")
		if err == nil && out == "t|streaming" {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("the demoted primary does not stream from the new one: %q %v", out, err)
		}
	}
}
