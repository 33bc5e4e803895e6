package pgtest

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// execWithin runs sql on s and fails the test if it errs or takes longer
// than d (a commit waiting for a missing synchronous standby would hang).
func execWithin(t *testing.T, s *Server, sql string, d time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.Exec(sql) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	case <-time.After(d):
		t.Fatalf("%s: no answer after %v", sql, d)
	}
}

// waitFor polls sql on s until it returns want.
func waitFor(t *testing.T, s *Server, sql, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := s.Query(sql)
		if err == nil && got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s on port %d: %q, %v; want %q", sql, s.Port, got, err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mustQuery is Query that fails the test on error.
func mustQuery(t *testing.T, s *Server, sql string) string {
	t.Helper()
	got, err := s.Query(sql)
	if err != nil {
		t.Fatalf("%s on port %d: %v", sql, s.Port, err)
	}
	return got
}

// TestStandbysOfSharedServer makes two asynchronous standbys of the shared
// cluster at once: both stream, serve its roles and TLS, refuse writes, and
// Stop of one leaves the other streaming.
func TestStandbysOfSharedServer(t *testing.T) {
	execWithin(t, srv, "DROP TABLE IF EXISTS standby_t; CREATE TABLE standby_t (n int); INSERT INTO standby_t VALUES (1)", 10*time.Second)
	var sts [2]*Server
	var errs [2]error
	var wg sync.WaitGroup
	start := time.Now()
	for i := range sts {
		wg.Go(func() { sts[i], errs[i] = srv.StartStandby(StandbyOptions{}) })
	}
	wg.Wait()
	t.Logf("two standbys started in %v", time.Since(start))
	for i, st := range sts {
		if errs[i] != nil {
			t.Fatalf("StartStandby %d: %v", i, errs[i])
		}
		defer st.Stop()
	}
	st1, st2 := sts[0], sts[1]
	defaultName := regexp.MustCompile(`^standby[0-9]+$`)
	if st1.appName == st2.appName || !defaultName.MatchString(st1.appName) || !defaultName.MatchString(st2.appName) {
		t.Errorf("default names %q and %q", st1.appName, st2.appName)
	}
	if st1.Port == srv.Port || st2.Port == srv.Port || st1.Port == st2.Port || st1.DataDir == srv.DataDir {
		t.Errorf("ports %d, %d, %d; data dirs %s, %s", srv.Port, st1.Port, st2.Port, srv.DataDir, st1.DataDir)
	}
	repl := "SELECT string_agg(application_name || ' ' || state || ' ' || sync_state, ',' ORDER BY application_name) " +
		"FROM pg_stat_replication WHERE application_name IN (" + quoteLiteral(st1.appName) + ", " + quoteLiteral(st2.appName) + ")"
	names := []string{st1.appName, st2.appName}
	if names[0] > names[1] {
		names[0], names[1] = names[1], names[0]
	}
	if got, want := mustQuery(t, srv, repl), names[0]+" streaming async,"+names[1]+" streaming async"; got != want {
		t.Errorf("pg_stat_replication: %q, want %q", got, want)
	}

	execWithin(t, srv, "INSERT INTO standby_t VALUES (2)", 10*time.Second)
	for _, st := range sts {
		waitFor(t, st, "SELECT string_agg(n::text, ',' ORDER BY n) FROM standby_t", "1,2")
		if got := mustQuery(t, st, "SELECT pg_is_in_recovery(), current_setting('hot_standby')"); got != "t|on" {
			t.Errorf("standby: in recovery, hot_standby = %q", got)
		}
		if err := st.Exec("INSERT INTO standby_t VALUES (3)"); err == nil || !strings.Contains(err.Error(), "read-only transaction") {
			t.Errorf("write on a standby: %v", err)
		}
	}

	// Roles, pg_hba.conf and TLS come along, with the standby's own copies
	// of the certificates.
	if !strings.HasPrefix(st1.CACertFile, st1.baseDir) || st1.ClientCertUser != srv.ClientCertUser {
		t.Errorf("standby TLS fields: %q, %q", st1.CACertFile, st1.ClientCertUser)
	}
	if got := mustPsql(t, st1.DSN("user=scramuser"), "scram-secret", "SELECT current_user"); got != "scramuser" {
		t.Errorf("password user on the standby: %q", got)
	}
	dsn := st1.DSN("user=certuser", "host=localhost", "sslmode=verify-full", "sslrootcert="+st1.CACertFile,
		"sslcert="+st1.ClientCertFile, "sslkey="+st1.ClientKeyFile)
	if got := mustPsql(t, dsn, "", "SELECT current_user || ' ' || ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"); got != "certuser true" {
		t.Errorf("client certificate on the standby: %q", got)
	}
	wantPsqlError(t, st1.DSN("user=blocked"), "", "rejects connection")

	// Refused before anything is made.
	for _, tt := range []struct {
		opts StandbyOptions
		on   *Server
		want string
	}{
		{StandbyOptions{Name: strings.ToUpper(st1.appName)}, srv, "already has a standby named"},
		{StandbyOptions{Name: "bad name"}, srv, "invalid Name"},
		{StandbyOptions{Synchronous: true}, st1, "cannot be synchronous"},
	} {
		if s, err := tt.on.StartStandby(tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			if s != nil {
				s.Stop()
			}
			t.Errorf("StartStandby(%+v): %v, want error containing %q", tt.opts, err, tt.want)
		}
	}

	if err := st2.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(st2.baseDir); !os.IsNotExist(err) {
		t.Errorf("stopped standby's dir %s still exists (%v)", st2.baseDir, err)
	}
	waitFor(t, srv, "SELECT count(*) FROM pg_stat_replication WHERE application_name = "+quoteLiteral(st2.appName), "0")
	execWithin(t, srv, "INSERT INTO standby_t VALUES (4)", 10*time.Second)
	waitFor(t, st1, "SELECT string_agg(n::text, ',' ORDER BY n) FROM standby_t", "1,2,4")
}

// TestSynchronousFailover: a synchronous standby has every commit before
// the primary answers it; after the primary crashes the standby is
// promoted and takes writes without losing any; Restart brings servers
// back on their ports.
func TestSynchronousFailover(t *testing.T) {
	p, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	start := time.Now()
	st, err := p.StartStandby(StandbyOptions{Name: "sync-1", Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Stop()
	t.Logf("synchronous standby started in %v", time.Since(start))

	if got := mustQuery(t, p, "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'sync-1'"); got != "quorum" {
		t.Errorf("sync_state = %q, want quorum", got)
	}
	if got := mustQuery(t, p, "SHOW synchronous_commit"); got != "remote_apply" {
		t.Errorf("primary synchronous_commit = %q", got)
	}
	// A promoted standby must not wait for standbys of its own.
	if got := mustQuery(t, st, "SHOW synchronous_standby_names"); got != "" {
		t.Errorf("standby synchronous_standby_names = %q", got)
	}

	execWithin(t, p, "CREATE TABLE sync_t (n int)", 10*time.Second)
	for i := 1; i <= 5; i++ {
		execWithin(t, p, "INSERT INTO sync_t VALUES ("+strconv.Itoa(i)+")", 10*time.Second)
		// No waiting: the commit returned, so the standby has applied it.
		if got := mustQuery(t, st, "SELECT count(*) FROM sync_t"); got != strconv.Itoa(i) {
			t.Fatalf("after commit %d the standby has %s rows", i, got)
		}
	}
	// With replay paused on the standby, a commit must wait for it.
	if err := st.Exec("SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Exec("INSERT INTO sync_t VALUES (6)") }()
	select {
	case err := <-done:
		t.Fatalf("commit returned (%v) while the synchronous standby could not apply it", err)
	case <-time.After(500 * time.Millisecond):
	}
	if err := st.Exec("SELECT pg_wal_replay_resume()"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("commit still waiting after replay resumed")
	}
	if got := mustQuery(t, st, "SELECT count(*) FROM sync_t"); got != "6" {
		t.Fatalf("standby has %s rows after the waiting commit, want 6", got)
	}

	// Failover: the primary crashes, the standby is promoted.
	if err := p.Shutdown("immediate"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Query("SELECT 1"); err == nil {
		t.Fatal("primary answers after Shutdown")
	}
	if err := p.Shutdown("immediate"); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
	if _, err := os.Stat(p.DataDir); err != nil {
		t.Fatalf("Shutdown removed the data dir: %v", err)
	}
	start = time.Now()
	if err := st.Promote(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Promote took %v", time.Since(start))
	if got := mustQuery(t, st, "SELECT pg_is_in_recovery()"); got != "f" {
		t.Fatalf("promoted standby in recovery: %q", got)
	}
	execWithin(t, st, "INSERT INTO sync_t VALUES (7)", 10*time.Second)
	if got := mustQuery(t, st, "SELECT count(*) FROM sync_t"); got != "7" {
		t.Errorf("promoted standby has %s rows, want 7", got)
	}
	if err := st.Promote(); err == nil || !strings.Contains(err.Error(), "not in standby mode") {
		t.Errorf("Promote of a primary: %v", err)
	}

	// Restart: the crashed primary comes back on its port with its rows;
	// the running promoted server is restarted in place and stays primary.
	port := p.Port
	if err := p.Restart(); err != nil {
		t.Fatal(err)
	}
	if got := mustQuery(t, p, "SELECT count(*) FROM sync_t"); p.Port != port || got != "6" {
		t.Errorf("restarted primary: port %d (was %d), %s rows", p.Port, port, got)
	}
	pid := postmasterPID(st.DataDir)
	if err := st.Restart(); err != nil {
		t.Fatal(err)
	}
	if postmasterPID(st.DataDir) == pid {
		t.Error("Restart of a running server did not restart it")
	}
	execWithin(t, st, "INSERT INTO sync_t VALUES (8)", 10*time.Second)

	// Stop of the synchronous standby takes it out of the old primary's
	// synchronous_standby_names, so commits there no longer wait for it.
	if err := st.Shutdown("fast"); err != nil {
		t.Fatal(err)
	}
	if err := st.Stop(); err != nil {
		t.Fatalf("Stop after Shutdown: %v", err)
	}
	if _, err := os.Stat(st.baseDir); !os.IsNotExist(err) {
		t.Errorf("Stop after Shutdown left %s (%v)", st.baseDir, err)
	}
	if err := st.Restart(); err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("Restart after Stop: %v", err)
	}
	waitFor(t, p, "SHOW synchronous_standby_names", "")
	execWithin(t, p, "INSERT INTO sync_t VALUES (9)", 10*time.Second)
}

func TestStandbyErrors(t *testing.T) {
	if err := srv.Shutdown("quick"); err == nil || !strings.Contains(err.Error(), "invalid mode") {
		t.Errorf("Shutdown(quick): %v", err)
	}
	if err := srv.Promote(); err == nil || !strings.Contains(err.Error(), "not in standby mode") {
		t.Errorf("Promote of a primary: %v", err)
	}
	if err := srv.Exec("SELECT 1"); err != nil {
		t.Fatalf("the shared cluster suffered: %v", err)
	}

	t.Setenv(DSNEnv, srv.DSN())
	ext, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Stop()
	if _, err := ext.StartStandby(StandbyOptions{}); err == nil || !strings.Contains(err.Error(), DSNEnv) {
		t.Errorf("StartStandby of an external server: %v", err)
	}
	for name, f := range map[string]func() error{
		"Shutdown": func() error { return ext.Shutdown("fast") },
		"Restart":  ext.Restart,
		"Promote":  ext.Promote,
	} {
		if err := f(); err == nil || !strings.Contains(err.Error(), DSNEnv) {
			t.Errorf("%s of an external server: %v", name, err)
		}
	}
}

func TestSyncConf(t *testing.T) {
	if got := syncConf(nil); got != "" {
		t.Errorf("syncConf(nil) = %q", got)
	}
	got := syncConf([]string{"a", "b-2"})
	for _, w := range []string{
		`synchronous_standby_names = 'ANY 1 ("a", "b-2")'` + "\n",
		"synchronous_commit = 'remote_apply'\n",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("syncConf lacks %q:\n%s", w, got)
		}
	}
	conf := standbyConf("/tmp/sock", nil)
	if !strings.Contains(conf, "unix_socket_directories = '/tmp/sock'\n") || strings.Contains(conf, "ssl") {
		t.Errorf("standbyConf:\n%s", conf)
	}
}
