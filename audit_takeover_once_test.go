package pgline

// Audit of the writer takeover (be9dffd) with Sync sharing and failures:
// a failing statement makes the server skip the rest of its Sync group,
// whose runs are sent again. With takeovers splitting and joining writes,
// every INSERT must run exactly once (a unique key shows a second run,
// the final count a lost one) and answer its own caller.

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestAuditTakeoverExactlyOnce(t *testing.T) {
	for _, dsn := range []string{"", "pipeline_sync=each", "statement_cache_mode=describe", "statement_cache_mode=prepare"} {
		t.Run(dsn, func(t *testing.T) {
			c := connect(t, srv.DSN(dsn))
			other := connect(t, srv.DSN())
			ctx := testCtx(t)
			tbl := fmt.Sprintf("audit_takeover_once_%d", time.Now().UnixNano())
			if _, err := other.Exec(ctx, "CREATE TABLE "+tbl+" (k int8 PRIMARY KEY)"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { other.Exec(ctx, "DROP TABLE "+tbl) })
			var seq, bad, inserted, failed atomic.Int64
			fail := func(f string, a ...any) {
				if bad.Add(1) <= 10 {
					t.Errorf(f, a...)
				}
			}
			end := time.Now().Add(1500 * time.Millisecond)
			var wg sync.WaitGroup
			for i := 0; i < 80; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for time.Now().Before(end) && bad.Load() < 10 {
						v := seq.Add(1)
						if i%8 == 0 {
							var x int64
							err := c.QueryRow(ctx, "SELECT 1/($1::int8 - $1::int8)", v).Scan(&x)
							var pe *PgError
							if !errors.As(err, &pe) || pe.Code != "22012" {
								fail("division: %d %v", x, err)
							}
							failed.Add(1)
							continue
						}
						var got int64
						if err := c.QueryRow(ctx, "INSERT INTO "+tbl+" VALUES ($1) RETURNING k", v).Scan(&got); err != nil || got != v {
							fail("insert %d: got %d %v", v, got, err)
							continue
						}
						inserted.Add(1)
					}
				}()
			}
			wg.Wait()
			var n int64
			if err := other.QueryRow(ctx, "SELECT count(*) FROM "+tbl).Scan(&n); err != nil || n != inserted.Load() {
				t.Errorf("table has %d rows, %d inserts succeeded (%v)", n, inserted.Load(), err)
			}
			auditQuiescent(t, c)
			t.Logf("inserted %d, failed %d, shared syncs %d, takeovers %d", inserted.Load(), failed.Load(), c.shared, auditTakeovers(c))
			if auditTakeovers(c) == 0 {
				t.Errorf("no takeover happened")
			}
		})
	}
}
