package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
	_ "github.com/pgline/pgline/stdlib" // registers the database/sql driver "pgline"
)

// srv is the server shared by the tests of this package; nil when the
// tests skip for want of PostgreSQL.
var srv *pgtest.Server

// noServer says why srv is nil.
var noServer string

func TestMain(m *testing.M) {
	if os.Getenv("PGLINE_TEST_DSN") == "" && os.Getenv("CI") == "" && !havePostgres() {
		// pgtest.Run fails when it finds no server; outside CI these
		// tests skip instead, and say so.
		noServer = "no PostgreSQL server binaries (initdb) on PATH or under /usr/lib/postgresql/*/bin " +
			"(apt-get install -y postgresql); with CI set this is an error"
		os.Exit(m.Run())
	}
	os.Exit(pgtest.Run(m, pgtest.Options{}, &srv))
}

// havePostgres reports whether pgtest can find initdb, where it looks.
func havePostgres() bool {
	if _, err := exec.LookPath("initdb"); err == nil {
		return true
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	return len(m) > 0
}

// dbSeq numbers the databases the tests create.
var dbSeq atomic.Int64

var nonIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// newDatabase creates a database of the test's own on the server and
// returns a DSN for it; the database is dropped when the test ends. It
// skips the test when there is no server.
func newDatabase(t testing.TB) string {
	t.Helper()
	if srv == nil {
		t.Skip(noServer)
	}
	name := nonIdent.ReplaceAllString(strings.ToLower(t.Name()), "_")
	if len(name) > 40 {
		name = name[:40]
	}
	name = fmt.Sprintf("it_%s_%d", name, dbSeq.Add(1))
	if err := srv.Exec(fmt.Sprintf("DROP DATABASE IF EXISTS %s; CREATE DATABASE %s", name, name)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Exec(fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name)); err != nil {
			t.Errorf("drop database: %v", err)
		}
	})
	return srv.DSN("dbname=" + name)
}

// openDB opens a *sql.DB with driver "pgline" on a new database of the
// test's own, at most maxConns connections, closed when the test ends.
func openDB(t testing.TB, maxConns int) (*sql.DB, string) {
	t.Helper()
	dsn := newDatabase(t)
	db, err := sql.Open("pgline", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(maxConns)
	t.Cleanup(func() { db.Close() })
	return db, dsn
}

// testCtx returns a context that ends with the test or after a minute.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// checkDeadline runs sleep, a pg_sleep(5) through some library, with a
// 100 ms deadline. It checks that the error is the deadline's, that it
// came promptly, that the server no longer runs the sleep (pgline
// cancelled it), and that db, the pool underneath, still answers
// concurrent queries.
func checkDeadline(t *testing.T, db *sql.DB, sleep func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := sleep(ctx)
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("pg_sleep(5) with a 100 ms deadline: err = %v, want context.DeadlineExceeded", err)
	}
	if took > 2*time.Second {
		t.Errorf("the deadline's error came after %v", took)
	}
	// The cancel request reaches the server: the sleep ends there too.
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int
		err := db.QueryRowContext(testCtx(t), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND query LIKE '%pg_sleep(5)%' AND state = 'active'
			AND pid <> pg_backend_pid()`).Scan(&n)
		if err != nil {
			t.Fatalf("after the deadline (%v after start): %v", time.Since(start), err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pg_sleep(5) still runs on the server %v after its deadline", time.Since(start))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The pool keeps working, with every connection it has.
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			var got int
			err := db.QueryRowContext(testCtx(t), "SELECT $1::int + 1", i).Scan(&got)
			if err == nil && got != i+1 {
				err = fmt.Errorf("SELECT %d + 1 = %d", i, got)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Errorf("after the deadline: %v", err)
		}
	}
}
