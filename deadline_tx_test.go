package pgline

// Deadlines inside a transaction: a statement whose ctx ended is never
// committed, and the rollback of BeginFunc returns by its ctx's deadline
// even when the server stops answering.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// TestBeginFuncRollbackKeepsDeadline: BeginFunc's rollback, after fn
// returns an error or panics, is made with context.WithoutCancel(ctx).
// When the server stops answering, it must not wait for the ROLLBACK's
// reply for ever: BeginFunc (and a panic inside fn) returns by its ctx's
// deadline, as the package promises whatever the server does, and as
// Tx.Rollback(ctx) itself does.
func TestBeginFuncRollbackKeepsDeadline(t *testing.T) {
	for _, how := range []string{"error", "panic", "Tx.Rollback"} {
		t.Run(how, func(t *testing.T) {
			px := newTestProxy(t, srv.Addr, nil)
			c, err := Connect(testCtx(t), srv.DSN("host=127.0.0.1", "port="+px.port(), "sslmode=disable"))
			if err != nil {
				if strings.Contains(err.Error(), "pg_hba") || strings.Contains(err.Error(), "SSL") {
					t.Skipf("connect through the proxy: %v", err)
				}
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			done := make(chan any, 1)
			start := time.Now()
			go func() {
				defer func() { done <- recover() }()
				fn := func(tx *Tx) error {
					if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
						return err
					}
					px.frozen.Store(true) // the server stops answering
					if how == "panic" {
						panic("boom")
					}
					return errors.New("boom")
				}
				if how == "Tx.Rollback" {
					tx, err := c.Begin(ctx)
					if err != nil {
						done <- err
						return
					}
					fn(tx)
					done <- tx.Rollback(ctx)
					return
				}
				done <- BeginFunc(ctx, c, fn)
			}()
			select {
			case r := <-done:
				t.Logf("%s: returned after %v: %v", how, time.Since(start).Round(time.Millisecond), r)
			case <-time.After(4 * time.Second):
				t.Errorf("%s: BeginFunc (ctx deadline 300ms) has not returned after %v: its Rollback waits with context.WithoutCancel(ctx) for a server that does not answer",
					how, time.Since(start).Round(time.Millisecond))
				px.frozen.Store(false) // let it go
				c.Close()
				<-done
			}
		})
	}
}

// TestTxDoomedStatementNotCommitted: a Tx statement's ctx ends (while
// queued, while running); Commit must not commit it; the Conn must stay
// usable to others.
func TestTxDoomedStatementNotCommitted(t *testing.T) {
	for _, when := range []string{"queued", "running", "rowsmid"} {
		t.Run(when, func(t *testing.T) {
			c := connect(t, srv.DSN())
			ctx := testCtx(t)
			effectsTable(t, c, "deadline_tx")
			tx, err := c.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO deadline_tx(id) VALUES (1)"); err != nil {
				t.Fatal(err)
			}
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			defer cancel()
			switch when {
			case "queued":
				go tx.Exec(ctx, "SELECT pg_sleep(0.1)")
				time.Sleep(5 * time.Millisecond)
				_, err = tx.Exec(sctx, "INSERT INTO deadline_tx(id) VALUES (2)")
			case "running":
				_, err = tx.Exec(sctx, "INSERT INTO deadline_tx(id) SELECT 2 FROM pg_sleep(0.1)")
			case "rowsmid":
				var rows *Rows
				rows, err = tx.Query(sctx, "INSERT INTO deadline_tx(id) SELECT 2 RETURNING id, pg_sleep(0.1)")
				if err == nil {
					<-sctx.Done()
					rows.Close()
					err = rows.Err()
				}
			}
			t.Logf("statement: %v", err)
			// another goroutine on the Conn, outside the Tx, waits for the Tx
			other := make(chan error, 1)
			go func() {
				octx, ocancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer ocancel()
				_, err := c.Exec(octx, "SELECT 1")
				other <- err
			}()
			time.Sleep(200 * time.Millisecond)
			cerr := tx.Commit(ctx)
			t.Logf("Commit: %v", cerr)
			t.Logf("other: %v", <-other)
			var n int
			c.QueryRow(ctx, "SELECT count(*)::int FROM deadline_tx").Scan(&n)
			t.Logf("rows: %d", n)
			if err != nil && cerr == nil && n > 0 {
				t.Errorf("Commit committed although a statement's caller got %v", err)
			}
		})
	}
}

// TestTxShortCtxCommitOutcome: transactions whose statements' ctx ends
// after a few microseconds (doomed transactions, detached ROLLBACKs sent by
// sendDetachedUnlock) while echo goroutines take the writer's role over: a
// Commit that returns nil must have committed its row, one that fails must
// have committed nothing.
func TestTxShortCtxCommitOutcome(t *testing.T) {
	storm(t)
	for _, dsn := range []string{"", "pipeline_sync=each"} {
		t.Run(dsn, func(t *testing.T) {
			c := connect(t, srv.DSN(dsn, "cancel_grace=1ms"))
			other := connect(t, srv.DSN())
			ctx := testCtx(t)
			tbl := fmt.Sprintf("takeover_tx_%d", time.Now().UnixNano())
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
						if cerr == nil && ierr != nil && !session.SafeToRetry(ierr) {
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
