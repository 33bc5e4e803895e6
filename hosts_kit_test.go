package pgline

// Helpers of the tests of one Pool over a primary and its standbys
// (hosts_*_test.go): where a read ran, turning a former primary into a
// standby, and stopping or resuming a server's processes.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
)

// hostsWriteOwned writes a file into a server's data directory with
// the owner of the directory (the tests run as root, the server as
// another account).
func hostsWriteOwned(t *testing.T, dataDir, name, content string, appendTo bool) {
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

// hostsDemote turns old, a primary shut down with "fast" (so that up,
// its standby, promoted since, has all its WAL), into a standby of up and
// starts it again on its port: what a failover manager does with the
// former primary after a switchover.
func hostsDemote(t *testing.T, old, up *pgtest.Server) {
	t.Helper()
	hostsWriteOwned(t, old.DataDir, "standby.signal", "", false)
	hostsWriteOwned(t, old.DataDir, "postgresql.auto.conf",
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

// hostsServerPIDs returns the postmaster of s and its children.
func hostsServerPIDs(t *testing.T, s *pgtest.Server) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.DataDir, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pm, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		t.Fatal(err)
	}
	pids := []int{pm}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pm) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// hostsSignal sends sig to every process of s.
func hostsSignal(pids []int, sig syscall.Signal) {
	for _, pid := range pids {
		syscall.Kill(pid, sig)
	}
}

// hostsDSN lists host:port pairs (all 127.0.0.1) and extra pairs.
func hostsDSN(ports []int, user, db string, extra ...string) string {
	hosts := make([]string, len(ports))
	ps := make([]string, len(ports))
	for i, p := range ports {
		hosts[i], ps[i] = "127.0.0.1", strconv.Itoa(p)
	}
	return strings.Join(append([]string{
		"host=" + strings.Join(hosts, ","), "port=" + strings.Join(ps, ","),
		"user=" + user, "dbname=" + db, "sslmode=disable",
	}, extra...), " ")
}
