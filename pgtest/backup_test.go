package pgtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStandbyByCopyWithoutBasebackup: when the server's directory has no
// pg_basebackup, StartStandby copies the data directory between
// pg_backup_start and pg_backup_stop (pg_start_backup and pg_stop_backup
// on 13): the standby streams and has the rows committed before and after
// it was made, its backup_label is the one the server gave (labelled
// with its name), and a copy that fails closes its session, which ends
// the backup. On the run's own version, with full_page_writes on, a
// standby of that standby (a copy of a server in recovery) streams too.
// It runs on the run's server version, with pg_basebackup hidden, and on
// each version of PGLINE_PG_VERSIONS.
func TestStandbyByCopyWithoutBasebackup(t *testing.T) {
	own := srv.Version() / 10000
	dirs := map[string]string{fmt.Sprint("pg", own): ""}
	for _, major := range []int{13, 16, 17, 18} {
		if dir := BinDirOf(major); dir != "" && major != own {
			dirs[fmt.Sprint("pg", major)] = dir
		}
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			standbyByCopy(t, dir, dir == "")
		})
	}
}

// standbyByCopy is TestStandbyByCopyWithoutBasebackup on the server
// binaries of dir (pgtest's choice when empty), with a standby of the
// standby when cascade.
func standbyByCopy(t *testing.T, dir string, cascade bool) {
	opts := Options{BinDir: dir}
	if cascade {
		// A backup of a standby needs it (pgtest turns it off).
		opts.Settings = map[string]string{"full_page_writes": "on"}
	}
	p, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	p.bins.basebackup = ""
	execWithin(t, p, "CREATE TABLE copy_t (n int); INSERT INTO copy_t VALUES (1)", 10*time.Second)

	// The copy fails (its directory exists): the session ends, and the
	// backup with it.
	err = p.copyBackup(t.TempDir(), "pgtest failed", p.owner)
	if err == nil || !strings.Contains(err.Error(), "copy") {
		t.Fatalf("copyBackup into an existing directory: %v, want an error of the copy", err)
	}
	waitFor(t, p, "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()", "0")

	start := time.Now()
	st, err := p.StartStandby(StandbyOptions{Name: "bycopy"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Stop()
	t.Logf("PostgreSQL %d: standby by copy started in %v", p.Version(), time.Since(start))
	execWithin(t, p, "INSERT INTO copy_t VALUES (2)", 10*time.Second)
	waitFor(t, st, "SELECT string_agg(n::text, ',' ORDER BY n) FROM copy_t", "1,2")
	wantLabel(t, st, "LABEL: pgtest bycopy\n")
	if !cascade {
		return
	}

	st2, err := st.StartStandby(StandbyOptions{Name: "bycopy2"})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Stop()
	execWithin(t, p, "INSERT INTO copy_t VALUES (3)", 10*time.Second)
	waitFor(t, st2, "SELECT string_agg(n::text, ',' ORDER BY n) FROM copy_t", "1,2,3")
	wantLabel(t, st2, "BACKUP FROM: standby\n")
}

// wantLabel fails the test unless the backup_label a standby started from
// (backup_label.old once recovery has read it) holds want.
func wantLabel(t *testing.T, st *Server, want string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(st.DataDir, "backup_label.old"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "START WAL LOCATION: ") || !strings.Contains(string(b), want) {
		t.Errorf("backup_label of %s:\n%s\nwant %q in it", st.appName, b, want)
	}
}
