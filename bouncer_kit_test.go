package pgline

// Helpers of the tests through a real PgBouncer (bouncer_*_test.go and
// others): a PgBouncer started with settings of the test's choosing (pool
// size, query_timeout, ...), its admin console, connections through it,
// and checks made straight on the server.

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
)

// startSmallBouncer starts PgBouncer in front of srv with pool_mode mode
// and the extra pgbouncer.ini lines, which override the defaults here:
// default_pool_size = 1, max_client_conn = 200. It is stopped when the
// test ends; with PGLINE_BOUNCER_LOG set, its log is written there first.
func startSmallBouncer(t *testing.T, mode string, extra ...string) *pgtest.PgBouncer {
	t.Helper()
	b := startTestPgBouncer(t, mode, append([]string{"default_pool_size = 1", "max_client_conn = 200"}, extra...)...)
	if f := os.Getenv("PGLINE_BOUNCER_LOG"); f != "" {
		t.Cleanup(func() { os.WriteFile(f, []byte(b.Log()), 0o644) }) // runs before Stop
	}
	return b
}

// bouncerAdmin runs sql on b's admin console and returns its output.
func bouncerAdmin(t *testing.T, b *pgtest.PgBouncer, sql string) string {
	t.Helper()
	out, err := b.Admin(sql)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// bouncerConn connects through b, closed when the test ends.
func bouncerConn(t *testing.T, b *pgtest.PgBouncer, extra ...string) *Conn {
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

// freshIDTable creates table afresh, straight on the server.
func freshIDTable(t *testing.T, admin *Conn, table string) {
	t.Helper()
	if _, err := admin.Exec(testCtx(t), "DROP TABLE IF EXISTS "+table+"; CREATE TABLE "+table+"(id int)"); err != nil {
		t.Fatal(err)
	}
}
