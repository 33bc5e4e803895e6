package pgline

// Audit of the writer takeover (be9dffd) with transactions whose
// statements' ctx ends after a few microseconds (doomed transactions,
// detached ROLLBACKs sent by sendDetachedLocked) while echo goroutines
// take the writer's role over: a Commit that returns nil must have
// committed its row, one that fails must have committed nothing.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTxShortCtxCommitOutcome: transactions whose statements' ctx ends
// after a few microseconds (doomed transactions, detached ROLLBACKs sent by
// sendDetachedLocked) while echo goroutines take the writer's role over: a
// Commit that returns nil must have committed its row, one that fails must
// have committed nothing.
func TestTxShortCtxCommitOutcome(t *testing.T) {
	storm(t)
	for _, dsn := range []string{"", "pipeline_sync=each"} {
		t.Run(dsn, func(t *testing.T) {
			c := connect(t, srv.DSN(dsn, "cancel_grace=1ms"))
			other := connect(t, srv.DSN())
			ctx := testCtx(t)
			tbl := fmt.Sprintf("audit_takeover_tx_%d", time.Now().UnixNano())
			if _, err := other.Exec(ctx, "CREATE TABLE "+tbl+" (k int8 PRIMARY KEY)"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { other.Exec(context.Background(), "DROP TABLE "+tbl) })
			var seq, bad atomic.Int64
			var mu sync.Mutex
			committed := map[int64]bool{}
			fail := func(f string, a ...any) {
				if bad.Add(1) <= 10 {
					t.Errorf(f, a...)
				}
			}
			end := time.Now().Add(2 * time.Second)
			var wg sync.WaitGroup
			for i := 0; i < 64; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for time.Now().Before(end) && bad.Load() < 10 {
						v := seq.Add(1)
						if i%16 != 0 {
							var got int64
							if err := c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got); err != nil || got != v {
								fail("echo %d: %d %v", v, got, err)
							}
							continue
						}
						tx, err := c.Begin(ctx)
						if err != nil {
							fail("begin: %v", err)
							continue
						}
						sctx, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(800))*time.Microsecond)
						_, ierr := tx.Exec(sctx, "INSERT INTO "+tbl+" VALUES ($1)", v)
						cancel()
						cerr := tx.Commit(ctx)
						if cerr == nil && ierr != nil && !SafeToRetry(ierr) {
							fail("commit succeeded after the insert was sent and given up: %v", ierr)
						}
						mu.Lock()
						// The row is there only if the insert succeeded and
						// the commit too; an insert never sent (SafeToRetry)
						// leaves the transaction committable, without the row.
						committed[v] = cerr == nil && ierr == nil
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			rows, err := other.Query(ctx, "SELECT k FROM "+tbl)
			if err != nil {
				t.Fatal(err)
			}
			have := map[int64]bool{}
			for rows.Next() {
				var k int64
				rows.Scan(&k)
				have[k] = true
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			var ok, rolled int
			for k, com := range committed {
				if com != have[k] {
					t.Errorf("row %d: insert and Commit said committed=%v, table has it=%v", k, com, have[k])
				}
				if com {
					ok++
				} else {
					rolled++
				}
			}
			if len(have) != ok {
				t.Errorf("table has %d rows, %d inserts committed", len(have), ok)
			}
			var v int64
			if err := c.QueryRow(ctx, "SELECT 9::int8").Scan(&v); err != nil || v != 9 || c.TxStatus() != 'I' {
				t.Fatalf("after: %d %v status %c", v, err, c.TxStatus())
			}
			waitWriterIdle(t, c)
			t.Logf("committed %d, failed %d, takeovers %d", ok, rolled, writerTakeovers(c))
		})
	}
}
