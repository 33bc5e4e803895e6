package pgline

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestAuditPooler2EvictedBeforeBind: a plain QueryRow, directly on
// PostgreSQL, with no DEALLOCATE, no schema change and no transaction,
// under cache pressure (statement_cache_capacity=1, more distinct texts
// than that from several goroutines). A description evicted between its
// describe and its caller's Bind had its Close queued before the Bind:
// 26000, retried once, lost the same race again (1 run in 5 failed). The
// description prepare returns is now pinned until its Bind is queued.
func TestAuditPooler2EvictedBeforeBind(t *testing.T) {
	c := auditConn(t, "statement_cache_capacity=1")
	ctx := testCtx(t)
	deadline := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	var runs, fails atomic.Int64
	var mu sync.Mutex
	var first error
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				k := (g + i) % 6
				var v int
				runs.Add(1)
				err := c.QueryRow(ctx, fmt.Sprintf("SELECT $1::int + %d", k), i).Scan(&v)
				if err == nil && v != i+k {
					t.Errorf("wrong: %d + %d = %d", i, k, v)
				}
				if err != nil {
					fails.Add(1)
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	var pg *PgError
	if first != nil {
		t.Errorf("%d of %d runs failed; first: %v (26000: %v)", fails.Load(), runs.Load(), first, errors.As(first, &pg) && pg.Code == "26000")
	}
	if m := c.StatementCacheMode(); m != cachePrepare {
		t.Errorf("mode %q", m)
	}
}
