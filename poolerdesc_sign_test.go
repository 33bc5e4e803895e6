package pgline

// What a connection directly on PostgreSQL must not take for a transaction
// pooler's sign (and so switch to describe mode): pgline's own named BEGIN
// and COMMIT, the application's DEALLOCATE ALL or DISCARD ALL queued behind
// a transaction or sent while other goroutines run statements. And
// PgBouncer's own FATAL errors, reported as such.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// TestPoolerSignCommitNamesNotCacheNames: the named BEGIN and COMMIT that
// replace a shared Sync (commitMessages) were named stmtName(prefix,
// "BEGIN", nil) and stmtName(prefix, "COMMIT", nil): the very names the
// statement cache gives the application's own texts "BEGIN" and "COMMIT"
// (newDesc) before any drop. Whichever was prepared second got 42P05, and
// both poolerSign and Conn.failed took it for a transaction pooler: a
// connection directly on PostgreSQL switched to describe mode. Their names
// are now no name of the cache.
func TestPoolerSignCommitNamesNotCacheNames(t *testing.T) {
	for _, order := range []string{"app first", "pgline first"} {
		t.Run(order, func(t *testing.T) {
			c := connect(t, srv.DSN())
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
			for round := 0; round < 50 && c.s.StatementCacheMode() == session.CachePrepare; round++ {
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
				c.s.Wmu.Lock()
				st := c.s.CommitState
				c.s.Wmu.Unlock()
				if st == session.CommitReady || st == session.CommitDisabled {
					break
				}
			}
			if order == "pgline first" {
				prepareApp()
			}
			if m := c.s.StatementCacheMode(); m != session.CachePrepare {
				t.Errorf("a connection directly on PostgreSQL switched to %q mode (commit state %d, shared %d)", m, c.s.CommitState, c.s.Shared)
			}
		})
	}
}

// TestPoolerSignAppCommitKeepsSession: the application's own
// "COMMIT" prepared (Conn.Prepare, or Query(ctx, "COMMIT")) before pgline
// prepares its named BEGIN and COMMIT. The run that carries them (after
// the statement whose Sync it replaced) executes the BEGIN, then its Parse
// of the COMMIT failed with 42P05: the session was left in an aborted
// explicit transaction block, outside any Tx.
func TestPoolerSignAppCommitKeepsSession(t *testing.T) {
	c := connect(t, srv.DSN())
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
	t.Logf("calls %d, ok %d, failed %d, rows %d (%v), tx status %c, mode %s", calls.Load(), ok.Load(), failed.Load(), n, err, c.TxStatus(), c.s.StatementCacheMode())
	for _, e := range errs {
		t.Logf("  %s", e)
	}
	admin := connect(t, srv.DSN())
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

// TestPoolerSignDeallocateQueuedBehindTx: Conn.noteDeallocate counted
// the application's DEALLOCATE ALL when its caller called Exec, before it
// passed the gate (it now counts as the statement is queued). While a
// transaction holds the connection, the DEALLOCATE waits at the gate; a
// statement the transaction prepared meanwhile recorded the new count
// (newDesc: deallocs), yet it was prepared BEFORE the DEALLOCATE ran,
// which then deallocated it. Its next Bind got 26000 and poolerSign took
// that for a transaction pooler on a connection directly on PostgreSQL:
// the connection switched to describe mode for good.
func TestPoolerSignDeallocateQueuedBehindTx(t *testing.T) {
	for _, stmt := range []string{"DEALLOCATE ALL", "DISCARD ALL"} {
		t.Run(stmt, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode=auto"))
			ctx := testCtx(t)
			if m := c.s.StatementCacheMode(); m != session.CachePrepare {
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
			if m := c.s.StatementCacheMode(); m != session.CachePrepare {
				t.Errorf("a connection directly on PostgreSQL switched to %q mode after the application's %s (false pooler sign)", m, stmt)
			}
		})
	}
}

// poolerTracer records the reasons of TracePooler events only.
type poolerTracer struct {
	mu      sync.Mutex
	reasons []string
}

func (r *poolerTracer) TraceStart(ctx context.Context, ev *TraceEvent) context.Context { return ctx }

func (r *poolerTracer) TraceEnd(ctx context.Context, ev *TraceEvent) {
	if ev.Kind == TracePooler {
		r.mu.Lock()
		r.reasons = append(r.reasons, ev.Reason)
		r.mu.Unlock()
	}
}

// TestPoolerSignDeallocateConcurrent: the application's DEALLOCATE ALL
// from one goroutine while others run statements, no transaction, directly
// on PostgreSQL: the connection must stay in prepare mode.
func TestPoolerSignDeallocateConcurrent(t *testing.T) {
	storm(t)
	for _, capacity := range []int{3, 512} {
		t.Run(fmt.Sprint(capacity), func(t *testing.T) {
			tr := &poolerTracer{}
			// Settled: prepare mode, as the loops below expect.
			c := connectConfig(t, srv.DSN(fmt.Sprintf("statement_cache_capacity=%d", capacity)), func(cfg *Config) { cfg.Tracer = tr })
			ctx := testCtx(t)
			deadline := time.Now().Add(2 * time.Second)
			var wg sync.WaitGroup
			for g := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; time.Now().Before(deadline) && c.s.StatementCacheMode() == session.CachePrepare; i++ {
						var v int
						k := (g + i) % 5
						if err := c.QueryRow(ctx, fmt.Sprintf("SELECT $1::int + %d", k), i).Scan(&v); err == nil && v != i+k {
							t.Errorf("wrong %d", v)
						}
					}
				}()
			}
			for time.Now().Before(deadline) && c.s.StatementCacheMode() == session.CachePrepare {
				if _, err := c.Exec(ctx, "DEALLOCATE ALL"); err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * time.Millisecond)
			}
			wg.Wait()
			if m := c.s.StatementCacheMode(); m != session.CachePrepare {
				tr.mu.Lock()
				t.Errorf("a connection directly on PostgreSQL switched to %q mode: %q", m, tr.reasons)
				tr.mu.Unlock()
			}
		})
	}
}

// TestPgBouncerFatalReported: PgBouncer's own errors carry no
// non-localized severity; its FATAL is still the error reported, not the
// end of the socket after it.
func TestPgBouncerFatalReported(t *testing.T) {
	b := startTestPgBouncer(t, "statement")
	ctx := testCtx(t)
	for _, via := range []string{"Exec", "Begin"} {
		c := connect(t, b.DSN())
		var err error
		if via == "Exec" {
			_, err = c.Exec(ctx, "BEGIN")
		} else {
			_, err = c.Begin(ctx)
		}
		var pgErr *PgError
		if !errors.As(err, &pgErr) || !pgErr.fatal() || !strings.Contains(pgErr.Message, "statement pooling") {
			t.Errorf("%s of BEGIN in statement pooling mode: %v, want PgBouncer's FATAL", via, err)
		}
		if !c.IsClosed() {
			t.Errorf("%s: the connection is still open after the server's FATAL", via)
		}
	}
}
