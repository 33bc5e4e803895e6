package pgline

import (
	"context"
	"fmt"
	"testing"
)

// TestStatementCacheClosesWhatItForgets: 300 rounds of a text that
// mentions deallocation only in a literal, or of the application's own
// PREPARE and DEALLOCATE of its own statement, each followed by 20
// ordinary texts on one Conn: the server holds about as many prepared
// statements as there are distinct texts, not one more per round. Before,
// the literal 'discard all' or the DEALLOCATE made the cache forget its
// statements without closing them, and each round prepared the 20 texts
// again under new names: 6,001 statements on the server after the 300
// rounds, and 26 MB of backend memory (pgx: 22 statements and 1.4 MB).
func TestStatementCacheClosesWhatItForgets(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	for _, tc := range []struct {
		name  string
		round func(ctx context.Context, c *Conn) error
	}{
		{"literal", func(ctx context.Context, c *Conn) error {
			var s string
			return c.QueryRow(ctx, "SELECT 'please discard all drafts'").Scan(&s)
		}},
		{"literal-deallocate", func(ctx context.Context, c *Conn) error {
			var s string
			return c.QueryRow(ctx, "SELECT $1::text || ' deallocate'", "x").Scan(&s)
		}},
		{"app-deallocate", func(ctx context.Context, c *Conn) error {
			if _, err := c.Exec(ctx, "PREPARE app_s AS SELECT 1"); err != nil {
				return err
			}
			_, err := c.Exec(ctx, "DEALLOCATE app_s")
			return err
		}},
		{"app-deallocate-prepare", func(ctx context.Context, c *Conn) error {
			if _, err := c.Exec(ctx, "PREPARE app_s AS SELECT 1"); err != nil {
				return err
			}
			_, err := c.Exec(ctx, `DEALLOCATE PREPARE "app_s"`)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode=prepare"))
			ctx := testCtx(t)
			for round := range 300 {
				if err := tc.round(ctx, c); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				for k := range 20 {
					var v int32
					if err := c.QueryRow(ctx, fmt.Sprintf("SELECT $1::int4 + %d", k), round).Scan(&v); err != nil || v != int32(round+k) {
						t.Fatalf("round %d, text %d: %d, %v", round, k, v, err)
					}
				}
			}
			// 20 texts, the round's own and the count's: 23 at most.
			if n := rowCount(t, c, "pg_prepared_statements"); n > 25 {
				t.Errorf("%d prepared statements on the server after 300 rounds of 21 texts", n)
			}
		})
	}
}

// TestStatementCacheDeallocateAllStillPrepares: after the application's
// DEALLOCATE ALL or DISCARD ALL, which really deallocate pgline's
// statements, the texts are prepared again and run, outside and inside
// a transaction, and the server holds no more statements than texts.
func TestStatementCacheDeallocateAllStillPrepares(t *testing.T) {
	for _, stmt := range []string{"DEALLOCATE ALL", "DISCARD ALL"} {
		t.Run(stmt, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode=prepare"))
			ctx := testCtx(t)
			run := func(q interface {
				QueryRow(context.Context, string, ...any) *Row
			}, round int) {
				t.Helper()
				for k := range 5 {
					var v int32
					if err := q.QueryRow(ctx, fmt.Sprintf("SELECT $1::int4 + %d", k), round).Scan(&v); err != nil || v != int32(round+k) {
						t.Fatalf("round %d, text %d: %d, %v", round, k, v, err)
					}
				}
			}
			for round := range 50 {
				run(c, round)
				if round%2 == 0 {
					if _, err := c.Exec(ctx, stmt); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if stmt == "DISCARD ALL" {
					continue // cannot run inside a transaction block
				}
				tx, err := c.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Exec(ctx, stmt); err != nil {
					t.Fatal(err)
				}
				run(tx, round)
				if err := tx.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if n := rowCount(t, c, "pg_prepared_statements"); n > 8 {
				t.Errorf("%d prepared statements on the server for 6 texts", n)
			}
			if m := c.s.StatementCacheMode(); m != "prepare" {
				t.Errorf("statement cache mode %s after the application's %s", m, stmt)
			}
		})
	}
}

// TestStatementCacheCloseInAbortedBlock: a Close of a statement the
// server no longer has is harmless, also inside a transaction block and
// in an aborted one: after DEALLOCATE ALL inside a block, the cached
// statements (gone from the server) are closed with the next requests,
// which the block's failure then aborts; the ROLLBACK ends the block and
// the statements run again after it.
func TestStatementCacheCloseInAbortedBlock(t *testing.T) {
	c := connect(t, srv.DSN("statement_cache_mode=prepare"))
	ctx := testCtx(t)
	var v int32
	for k := range 3 {
		if err := c.QueryRow(ctx, fmt.Sprintf("SELECT $1::int4 + %d", k), 1).Scan(&v); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1/0"); err == nil {
		t.Fatal("SELECT 1/0 did not fail")
	}
	// The block is aborted: the DEALLOCATE fails (25P02), and the Close
	// messages it queues go out with the ROLLBACK.
	if _, err := tx.Exec(ctx, "DEALLOCATE ALL"); err == nil {
		t.Fatal("DEALLOCATE ALL ran in an aborted block")
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	for k := range 3 {
		if err := c.QueryRow(ctx, fmt.Sprintf("SELECT $1::int4 + %d", k), 2).Scan(&v); err != nil || v != int32(2+k) {
			t.Fatalf("after the block, text %d: %d, %v", k, v, err)
		}
	}
	if n := rowCount(t, c, "pg_prepared_statements"); n > 5 {
		t.Errorf("%d prepared statements on the server for 4 texts", n)
	}
}
