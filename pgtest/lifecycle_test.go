package pgtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// children returns the pids whose parent is ppid.
func children(t *testing.T, ppid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // exited meanwhile
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid ...
		if len(f) > 1 && f[1] == strconv.Itoa(ppid) && f[0] != "Z" {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// postmasterCmdlines returns the command lines of processes naming dataDir.
func processesNaming(t *testing.T, dataDir string) []string {
	t.Helper()
	files, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(b), dataDir) {
			found = append(found, f+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// TestConcurrentStartAndStop starts clusters in parallel (as go test ./...
// does with several packages), checks each is separate, and that Stop
// leaves no process behind, even with a busy backend.
func TestConcurrentStartAndStop(t *testing.T) {
	const n = 2
	servers := make([]*Server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { servers[i], errs[i] = Start(Options{}) })
	}
	wg.Wait()
	ports := map[int]bool{}
	for i, s := range servers {
		if errs[i] != nil {
			t.Fatalf("Start %d: %v", i, errs[i])
		}
		defer s.Stop()
		if ports[s.Port] || s.Port == srv.Port {
			t.Fatalf("port %d used twice", s.Port)
		}
		ports[s.Port] = true
		if err := s.Exec("CREATE TABLE only_in_" + strconv.Itoa(i) + " ()"); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range servers {
		got, err := s.Query("SELECT string_agg(relname, ',') FROM pg_class WHERE relname LIKE 'only_in_%'")
		if want := "only_in_" + strconv.Itoa(i); err != nil || got != want {
			t.Errorf("server %d: tables %q, %v; want %q", i, got, err, want)
		}
	}

	s := servers[0]
	pid := postmasterPID(s.DataDir)
	if !postmasterRunning(pid, s.DataDir) {
		t.Fatalf("postmaster %d not seen running on %s", pid, s.DataDir)
	}
	if postmasterRunning(pid, srv.DataDir) || postmasterRunning(os.Getpid(), s.DataDir) {
		t.Fatal("postmasterRunning does not check the data dir")
	}
	if len(processesNaming(t, s.DataDir)) == 0 {
		t.Fatal("no process names the data dir: the /proc check below would prove nothing")
	}
	// A session stuck in a query must not keep the cluster alive.
	busy := exec.Command(s.bins.psql, "-X", "-d", s.SocketDSN(), "-c", "SELECT pg_sleep(60)")
	busy.Env = cleanEnv()
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	busyDone := make(chan error, 1)
	go func() { busyDone <- busy.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := s.Query("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'")
		if err == nil && got == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("busy session never showed up: %q, %v", got, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	kids := children(t, pid)
	if len(kids) == 0 {
		t.Fatal("postmaster has no child processes")
	}

	start := time.Now()
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Stop took %v", d)
	}
	if processAlive(pid) {
		t.Errorf("postmaster %d still alive", pid)
	}
	for _, k := range kids {
		if processAlive(k) {
			t.Errorf("backend %d still alive", k)
		}
	}
	if left := processesNaming(t, s.DataDir); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
	if _, err := os.Stat(s.baseDir); !os.IsNotExist(err) {
		t.Errorf("temp dir %s still exists (%v)", s.baseDir, err)
	}
	select {
	case err := <-busyDone:
		if err == nil {
			t.Error("busy psql succeeded after Stop")
		}
	case <-time.After(10 * time.Second):
		t.Error("busy psql still running after Stop")
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := s.Exec("SELECT 1"); err == nil {
		t.Error("Exec after Stop succeeded")
	}
}

// TestRemoveStale simulates a test process that died without Stop: its
// lock is free and old, so the next Start's sweep stops and removes it.
func TestRemoveStale(t *testing.T) {
	tmp := privateTempDir(t)
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	pid := postmasterPID(s.DataDir)

	// A live owner's dir is left alone.
	removeStale(tmp, s.bins)
	if _, err := os.Stat(s.DataDir); err != nil || !processAlive(pid) {
		t.Fatalf("live cluster was touched: %v, alive=%v", err, processAlive(pid))
	}
	// An unlocked but young dir is left alone too.
	s.lock.Close()
	s.lock = nil
	removeStale(tmp, s.bins)
	if _, err := os.Stat(s.DataDir); err != nil {
		t.Fatalf("young dir was removed: %v", err)
	}
	old := time.Now().Add(-2 * staleAge)
	if err := os.Chtimes(filepath.Join(s.baseDir, lockName), old, old); err != nil {
		t.Fatal(err)
	}
	removeStale(tmp, s.bins)
	if _, err := os.Stat(s.baseDir); !os.IsNotExist(err) {
		t.Errorf("stale dir %s still exists (%v)", s.baseDir, err)
	}
	if processAlive(pid) {
		t.Errorf("stale postmaster %d still alive", pid)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("Stop after removal: %v", err)
	}
	// The shared cluster survived every sweep.
	if err := srv.Exec("SELECT 1"); err != nil {
		t.Errorf("shared cluster hurt by removeStale: %v", err)
	}
}

func TestExternal(t *testing.T) {
	t.Setenv(DSNEnv, srv.DSN("application_name='pgtest external'"))
	s, err := Start(Options{Users: []User{{Name: "ignored", Method: "bogus"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !s.External || s.Host != "127.0.0.1" || s.Port != srv.Port || s.User != "postgres" ||
		s.Database != "postgres" || s.Version() != srv.Version() {
		t.Errorf("external server fields: %+v", s)
	}
	got, err := s.Query("SELECT current_setting('application_name')")
	if err != nil || got != "pgtest external" {
		t.Errorf("Query over external DSN = %q, %v", got, err)
	}
	if got := s.DSN("sslmode=require"); !strings.HasSuffix(got, "application_name='pgtest external' sslmode=require") {
		t.Errorf("DSN = %q", got)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Exec("SELECT 1"); err != nil {
		t.Errorf("Stop of the external server stopped it: %v", err)
	}

	t.Setenv(DSNEnv, "host=127.0.0.1 port=1 connect_timeout=2")
	if _, err := Start(Options{}); err == nil || !strings.Contains(err.Error(), DSNEnv) {
		t.Errorf("unreachable external server: err = %v", err)
	}
	t.Setenv(DSNEnv, "host='unterminated")
	if _, err := Start(Options{}); err == nil || !strings.Contains(err.Error(), "unterminated") {
		t.Errorf("bad DSN: err = %v", err)
	}
	t.Setenv(DSNEnv, "postgres://u:secret@127.0.0.1:99999/db")
	if _, err := Start(Options{}); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad port: err = %v (must not show the password)", err)
	}
}

// TestStartFailureShowsLog: a server that refuses its configuration makes
// Start fail with the server log's reason, and leaves nothing behind.
func TestStartFailureShowsLog(t *testing.T) {
	tmp := privateTempDir(t)
	s, err := Start(Options{Settings: map[string]string{"work_mem": "banana"}})
	if err == nil {
		s.Stop()
		t.Fatal("Start with work_mem = banana succeeded")
	}
	for _, want := range []string{"pg_ctl start", "server log", `invalid value for parameter "work_mem"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if left := tempDirsIn(t, tmp); len(left) > 0 {
		t.Errorf("failed Start left a temp dir: %v", left)
	}
}
