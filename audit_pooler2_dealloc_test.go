package pgline

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestAuditPooler2DeallocateQueuedBehindTx: Conn.noteDeallocate counted
// the application's DEALLOCATE ALL when its caller called Exec, before it
// passed the gate (it now counts as the statement is queued). While a
// transaction holds the connection, the DEALLOCATE waits at the gate; a
// statement the transaction prepared meanwhile recorded the new count
// (newDesc: deallocs), yet it was prepared BEFORE the DEALLOCATE ran,
// which then deallocated it. Its next Bind got 26000 and poolerSign took
// that for a transaction pooler on a connection directly on PostgreSQL:
// the connection switched to describe mode for good.
func TestAuditPooler2DeallocateQueuedBehindTx(t *testing.T) {
	for _, stmt := range []string{"DEALLOCATE ALL", "DISCARD ALL"} {
		t.Run(stmt, func(t *testing.T) {
			c := auditConn(t, "statement_cache_mode=auto")
			ctx := testCtx(t)
			if m := c.StatementCacheMode(); m != cachePrepare {
				t.Fatalf("direct: %q", m)
			}
			tx, err := c.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := c.Exec(ctx, stmt) // counted now, waits at the gate
				done <- err
			}()
			time.Sleep(50 * time.Millisecond)
			const q = "SELECT $1::int + 7"
			var v int
			if err := tx.QueryRow(ctx, q, 1).Scan(&v); err != nil || v != 8 {
				t.Fatalf("in tx: %d %v", v, err)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if err := c.QueryRow(ctx, q, 35).Scan(&v); err != nil || v != 42 {
				t.Fatalf("after %s: %d %v", stmt, v, err)
			}
			if m := c.StatementCacheMode(); m != cachePrepare {
				t.Errorf("a connection directly on PostgreSQL switched to %q mode after the application's %s (false pooler sign)", m, stmt)
			}
		})
	}
}

// a2PoolerTracer records the reasons of TracePooler events only.
type a2PoolerTracer struct {
	mu      sync.Mutex
	reasons []string
}

func (r *a2PoolerTracer) TraceStart(ctx context.Context, ev *TraceEvent) context.Context { return ctx }
func (r *a2PoolerTracer) TraceEnd(ctx context.Context, ev *TraceEvent) {
	if ev.Kind == TracePooler {
		r.mu.Lock()
		r.reasons = append(r.reasons, ev.Reason)
		r.mu.Unlock()
	}
}

// TestAuditPooler2DeallocateConcurrent: the application's DEALLOCATE ALL
// from one goroutine while others run statements, no transaction, directly
// on PostgreSQL: the connection must stay in prepare mode.
func TestAuditPooler2DeallocateConcurrent(t *testing.T) {
	for _, capacity := range []int{3, 512} {
		t.Run(fmt.Sprint(capacity), func(t *testing.T) {
			tr := &a2PoolerTracer{}
			cfg, err := ParseConfig(srv.DSN(fmt.Sprintf("statement_cache_capacity=%d", capacity)))
			if err != nil {
				t.Fatal(err)
			}
			cfg.Tracer = tr
			ctx := testCtx(t)
			c, err := ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			deadline := time.Now().Add(2 * time.Second)
			var wg sync.WaitGroup
			for g := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; time.Now().Before(deadline) && c.StatementCacheMode() == cachePrepare; i++ {
						var v int
						k := (g + i) % 5
						if err := c.QueryRow(ctx, fmt.Sprintf("SELECT $1::int + %d", k), i).Scan(&v); err == nil && v != i+k {
							t.Errorf("wrong %d", v)
						}
					}
				}()
			}
			for time.Now().Before(deadline) && c.StatementCacheMode() == cachePrepare {
				if _, err := c.Exec(ctx, "DEALLOCATE ALL"); err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * time.Millisecond)
			}
			wg.Wait()
			if m := c.StatementCacheMode(); m != cachePrepare {
				tr.mu.Lock()
				t.Errorf("a connection directly on PostgreSQL switched to %q mode: %q", m, tr.reasons)
				tr.mu.Unlock()
			}
		})
	}
}
