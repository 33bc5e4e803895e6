package pgline

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The connection a Pool sets aside (drains) for a waiting Acquire or Begin
// is one that will drain: not one whose Rows are held open by user code.

// slowRowsAndLoad fills a Pool of two connections: one holds Rows read one
// row per 100 ms (held by user code for seconds), the other serves a light
// load: four goroutines each running statements of 2 ms back to back, so
// that it always has one in flight (about 500 statements a second). The returned stop ends both and reports how many
// statements the load ran.
func slowRowsAndLoad(t *testing.T, ctx context.Context, p *Pool) (stop func() int64) {
	t.Helper()
	rows, err := p.Query(ctx, "SELECT generate_series(1, 100)")
	if err != nil {
		t.Fatal(err)
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the slow reader
		defer wg.Done()
		defer rows.Close()
		for rows.Next() {
			select {
			case <-quit:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	var ran atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-quit:
					return
				default:
				}
				if _, err := p.Exec(ctx, "SELECT pg_sleep(0.002)"); err != nil {
					t.Errorf("load: %v", err)
					return
				}
				ran.Add(1)
			}
		}()
	}
	// Let the load settle on the free connection.
	for start := ran.Load(); ran.Load() < start+50; time.Sleep(5 * time.Millisecond) {
		if ctx.Err() != nil {
			t.Fatal("the load never ran")
		}
	}
	return func() int64 {
		close(quit)
		wg.Wait()
		return ran.Load()
	}
}

// twoConnPool returns a Pool of two connections, both open and idle.
func twoConnPool(t *testing.T, ctx context.Context) *Pool {
	t.Helper()
	p := newTestPool(t, "pool_max_conns=2", "pool_min_conns=2")
	for st := p.Stat(); st.IdleConns != 2; st = p.Stat() {
		if ctx.Err() != nil {
			t.Fatalf("the pool never opened its connections: %+v", st)
		}
		time.Sleep(time.Millisecond)
	}
	return p
}

// TestPoolBeginSkipsConnectionWithOpenRows: Pool of 2, one connection's
// Rows read slowly, the other under a light load: Begin gets the loaded
// connection, which drains at once. Before, the draining choice took the
// connection with the fewest statements in flight (the Rows' one), and
// Begin waited for its whole ctx (2 s) while the other connection served
// the load. pgxpool: 17 ms.
func TestPoolBeginSkipsConnectionWithOpenRows(t *testing.T) {
	ctx := testCtx(t)
	p := twoConnPool(t, ctx)
	stop := slowRowsAndLoad(t, ctx, p)
	bctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	start := time.Now()
	tx, err := p.Begin(bctx)
	took := time.Since(start)
	if err == nil {
		var v int
		err = tx.QueryRow(bctx, "SELECT 1").Scan(&v)
		tx.Rollback(ctx)
	}
	ran := stop()
	if err != nil || took > time.Second {
		t.Fatalf("Begin took %v (err %v); the load ran %d statements meanwhile", took, err, ran)
	}
	t.Logf("Begin took %v", took)
}

// TestPoolAcquireSkipsConnectionWithOpenRows: as
// TestPoolBeginSkipsConnectionWithOpenRows, for Acquire.
func TestPoolAcquireSkipsConnectionWithOpenRows(t *testing.T) {
	ctx := testCtx(t)
	p := twoConnPool(t, ctx)
	stop := slowRowsAndLoad(t, ctx, p)
	actx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	start := time.Now()
	c, err := p.Acquire(actx)
	took := time.Since(start)
	if err == nil {
		var v int
		err = c.QueryRow(actx, "SELECT 1").Scan(&v)
		c.Release()
	}
	ran := stop()
	if err != nil || took > time.Second {
		t.Fatalf("Acquire took %v (err %v); the load ran %d statements meanwhile", took, err, ran)
	}
	t.Logf("Acquire took %v", took)
}
