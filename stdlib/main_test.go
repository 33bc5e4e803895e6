package stdlib_test

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
)

// srv is the cluster shared by this package's tests and examples.
var srv *pgtest.Server

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m, pgtest.Options{}, &srv)) }

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// openDB opens a DB on the test server with driver "pgline" and at most
// maxConns connections, closed when the test ends.
func openDB(t testing.TB, maxConns int, extra ...string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgline", srv.DSN(extra...))
	if err != nil {
		t.Fatalf("sql.Open: %v", err)
	}
	db.SetMaxOpenConns(maxConns)
	t.Cleanup(func() { db.Close() })
	return db
}

// pinConn returns one connection of db, closed when the test ends.
func pinConn(t testing.TB, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(testCtx(t))
	if err != nil {
		t.Fatalf("db.Conn: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// storm skips t unless PGLINE_STORMS is set: a long storm that hammers
// the driver for seconds to find a rare interleaving. .ci/run sets it;
// go test ./... skips them, so that the everyday run stays short.
func storm(t *testing.T) {
	t.Helper()
	if os.Getenv("PGLINE_STORMS") == "" {
		t.Skip("a storm: set PGLINE_STORMS=1 to run it (.ci/run does)")
	}
}
