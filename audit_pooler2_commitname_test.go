package pgline

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// TestAuditPooler2CommitNameCollision: the named BEGIN and COMMIT that
// replace a shared Sync (commitMessages) were named stmtName(prefix,
// "BEGIN", nil) and stmtName(prefix, "COMMIT", nil): the very names the
// statement cache gives the application's own texts "BEGIN" and "COMMIT"
// (newDesc) before any drop. Whichever was prepared second got 42P05, and
// both poolerSign and Conn.failed took it for a transaction pooler: a
// connection directly on PostgreSQL switched to describe mode. Their names
// are now no name of the cache.
func TestAuditPooler2CommitNameCollision(t *testing.T) {
	for _, order := range []string{"app first", "pgline first"} {
		t.Run(order, func(t *testing.T) {
			c := auditConn(t)
			ctx := testCtx(t)
			prepareApp := func() {
				for _, sql := range []string{"BEGIN", "COMMIT"} {
					if _, err := c.Prepare(ctx, sql); err != nil {
						t.Fatalf("Prepare(%s): %v", sql, err)
					}
				}
			}
			if order == "app first" {
				prepareApp()
			}
			// Shared Syncs: the named BEGIN and COMMIT are prepared.
			for round := 0; round < 50 && c.StatementCacheMode() == cachePrepare; round++ {
				var wg sync.WaitGroup
				for g := range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var v int
						if err := c.QueryRow(ctx, "SELECT $1::int", g).Scan(&v); err != nil || v != g {
							t.Errorf("%d %v", v, err)
						}
					}()
				}
				wg.Wait()
				c.wmu.Lock()
				st := c.commitState
				c.wmu.Unlock()
				if st == commitReady || st == commitDisabled {
					break
				}
			}
			if order == "pgline first" {
				prepareApp()
			}
			if m := c.StatementCacheMode(); m != cachePrepare {
				t.Errorf("a connection directly on PostgreSQL switched to %q mode (commit state %d, shared %d)", m, c.commitState, c.shared)
			}
		})
	}
}

// TestAuditPooler2CommitNameCollisionAbortsSession: the application's own
// "COMMIT" prepared (Conn.Prepare, or Query(ctx, "COMMIT")) before pgline
// prepares its named BEGIN and COMMIT. The run that carries them (after
// the statement whose Sync it replaced) executes the BEGIN, then its Parse
// of the COMMIT failed with 42P05: the session was left in an aborted
// explicit transaction block, outside any Tx.
func TestAuditPooler2CommitNameCollisionAbortsSession(t *testing.T) {
	c := auditConn(t)
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS a2_cc; CREATE TABLE a2_cc (id int)"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prepare(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	var ok, failed, calls atomic.Int64
	var mu sync.Mutex
	var errs []string
	var okIDs []int
	for round := 0; round < 20; round++ {
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := round*100 + g
				calls.Add(1)
				_, err := c.Exec(ctx, "INSERT INTO a2_cc VALUES ($1::int)", id)
				if err != nil {
					failed.Add(1)
					mu.Lock()
					if len(errs) < 6 {
						errs = append(errs, fmt.Sprintf("id %d: %v", id, err))
					}
					mu.Unlock()
				} else {
					ok.Add(1)
					mu.Lock()
					okIDs = append(okIDs, id)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	var n int
	err := c.QueryRow(ctx, "SELECT count(*)::int FROM a2_cc").Scan(&n)
	t.Logf("calls %d, ok %d, failed %d, rows %d (%v), tx status %c, mode %s", calls.Load(), ok.Load(), failed.Load(), n, err, c.TxStatus(), c.StatementCacheMode())
	for _, e := range errs {
		t.Logf("  %s", e)
	}
	admin := auditConn(t)
	var committed []int32
	if err := admin.QueryRow(ctx, "SELECT coalesce(array_agg(id), '{}') FROM a2_cc").Scan(&committed); err != nil {
		t.Fatal(err)
	}
	if len(committed) != len(okIDs) {
		t.Errorf("%d INSERTs reported success, %d committed: reported %v, committed %v", len(okIDs), len(committed), okIDs, committed)
	}
	if failed.Load() > 0 || err != nil || c.TxStatus() != 'I' || int64(n) != ok.Load() {
		t.Errorf("the application's prepared COMMIT broke the session: %d of %d INSERTs failed, status %c, count %d %v", failed.Load(), calls.Load(), c.TxStatus(), n, err)
	}
}
