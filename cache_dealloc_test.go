package pgline

// The application's own DEALLOCATE ALL (and DISCARD ALL), alone, in a
// batch or from another goroutine: statements the cache held are prepared
// again, and a retried transaction or batch succeeds.

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/pgline/pgline/internal/session"
)

// TestCacheTxRetryAfterDeallocateAll: the application sends DEALLOCATE
// ALL (pgline notes it: Conn.noteDeallocateLocked), then a transaction
// runs three statements the connection had cached. Each cached statement
// fails at its Bind with 26000, which aborts the transaction and drops
// only that statement: the transaction's first retry meets the next one.
// A retried transaction must succeed (here: within 2 attempts).
func TestCacheTxRetryAfterDeallocateAll(t *testing.T) {
	c := connect(t, srv.DSN("statement_cache_mode=prepare"))
	ctx := testCtx(t)
	qs := []string{"SELECT $1::int4 + 1", "SELECT $1::int4 + 2", "SELECT $1::int4 + 3"}
	for _, q := range qs {
		var v int32
		if err := c.QueryRow(ctx, q, int32(10)).Scan(&v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Exec(ctx, "DEALLOCATE ALL"); err != nil {
		t.Fatal(err)
	}
	attempt := func() error {
		tx, err := c.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		for i, q := range qs {
			var v int32
			if err := tx.QueryRow(ctx, q, int32(10)).Scan(&v); err != nil {
				return err
			}
			if v != int32(11+i) {
				return fmt.Errorf("%s: %d", q, v)
			}
		}
		return tx.Commit(ctx)
	}
	var err error
	for i := 0; i < 2; i++ {
		if err = attempt(); err == nil {
			return
		}
		t.Logf("attempt %d: %v", i, err)
	}
	n := 2
	for ; n < 6 && attempt() != nil; n++ {
	}
	t.Fatalf("the transaction failed twice after DEALLOCATE ALL (succeeded at attempt %d): %v", n, err)
}

// TestCacheBatchOfDeallocateAllRepeats: a batch of the single statement
// DEALLOCATE ALL. SendBatch prepares it as a named statement and caches
// it; running it deallocates that statement too. The next identical
// batch binds the cached, deallocated name: 26000. Every second run of
// the same batch fails.
func TestCacheBatchOfDeallocateAllRepeats(t *testing.T) {
	c := connect(t, srv.DSN("statement_cache_mode=prepare"))
	ctx := testCtx(t)
	for i := 0; i < 4; i++ {
		b := &Batch{}
		b.Queue("DEALLOCATE ALL")
		br := c.SendBatch(ctx, b)
		_, err := br.Exec()
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatalf("run %d of a batch [DEALLOCATE ALL]: %v", i, err)
		}
	}
}

// TestBatchDeallocateThenStatement: a batch [DEALLOCATE ALL, SELECT $1]
// (a reset, then a query). SendBatch prepares the SELECT first (named,
// one round trip), then sends every Bind: the DEALLOCATE runs before
// the SELECT's Bind and removes its statement, so the SELECT failed with
// 26000 on every attempt (the retry prepared it again, before the
// DEALLOCATE ran once more). Statements queued after a deallocating one
// now go unnamed, parsed with their Bind: the batch succeeds the first
// time, in both kinds of batch and every cache mode, and the statement
// is prepared and cached again by its next use. DISCARD ALL also resets
// search_path (RESET ALL), under which the SELECT described before it may
// take other parameter types: such a batch fails before it is sent, as
// one with SET search_path before its statement does (see
// TestSearchPathDiscardAllInBatch), and the statement alone after it runs.
func TestBatchDeallocateThenStatement(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		for _, sql := range []string{"DEALLOCATE ALL", "DISCARD ALL"} {
			for _, all := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/all=%v", mode, sql, all), func(t *testing.T) {
					c := connect(t, srv.DSN("statement_cache_mode="+mode))
					ctx := testCtx(t)
					const q = "SELECT $1::int4 + 1, 'x'::text"
					for i := 0; i < 3; i++ {
						b := &Batch{AllOrNothing: all}
						if all && sql == "DISCARD ALL" {
							// DISCARD ALL cannot run inside a transaction block.
							b.Queue("DEALLOCATE ALL")
						} else {
							b.Queue(sql)
						}
						b.Queue(q, int32(41+i))
						b.Queue("SELECT $1::text || 'y'", "x")
						br := c.SendBatch(ctx, b)
						var v int32
						var s string
						if sql == "DISCARD ALL" && !all {
							if err := br.Close(); !errors.Is(err, session.ErrPathChanged) {
								t.Fatalf("attempt %d: %v; want errPathChanged", i, err)
							}
						} else {
							if _, err := br.Exec(); err != nil {
								t.Fatalf("attempt %d, statement 0: %v", i, err)
							}
							if err := br.QueryRow().Scan(&v, &s); err != nil || v != int32(42+i) || s != "x" {
								t.Fatalf("attempt %d, statement 1: %d %q, %v", i, v, s, err)
							}
							if err := br.QueryRow().Scan(&s); err != nil || s != "xy" {
								t.Fatalf("attempt %d, statement 2: %q, %v", i, s, err)
							}
							if err := br.Close(); err != nil {
								t.Fatalf("attempt %d: Close: %v", i, err)
							}
						}
						// Alone, the statement is prepared (and cached) anew.
						for j := 0; j < 2; j++ {
							if err := c.QueryRow(ctx, q, int32(1)).Scan(&v, &s); err != nil || v != 2 {
								t.Fatalf("attempt %d, alone %d: %d, %v", i, j, v, err)
							}
						}
					}
					if m := c.s.StatementCacheMode(); m != mode {
						t.Fatalf("the connection switched to %s mode", m)
					}
				})
			}
		}
	}
}

// TestBatchDeallocateConcurrent: on one Conn, goroutines run a statement
// alone while others send batches that deallocate every statement before
// running the same one. Each statement a goroutine runs alone may meet a
// DEALLOCATE queued between its lookup in the cache and its Bind (26000,
// sent again outside a transaction); each batch sends its statement
// unnamed. No caller sees an error or a value not its own.
func TestBatchDeallocateConcurrent(t *testing.T) {
	c := connect(t, srv.DSN("statement_cache_mode=prepare"))
	ctx := testCtx(t)
	const q = "SELECT $1::int4 + 1, $2::text"
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 150; i++ {
				n := int32(g*1000 + i)
				want := fmt.Sprint(g, "/", i)
				var v int32
				var s string
				if g%2 == 0 {
					if err := c.QueryRow(ctx, q, n, want).Scan(&v, &s); err != nil || v != n+1 || s != want {
						errs <- fmt.Errorf("alone %d/%d: %d %q, %v", g, i, v, s, err)
						return
					}
					continue
				}
				b := &Batch{}
				b.Queue("DEALLOCATE ALL")
				b.Queue(q, n, want)
				br := c.SendBatch(ctx, b)
				_, err := br.Exec()
				if err == nil {
					err = br.QueryRow().Scan(&v, &s)
				}
				if err = errors.Join(err, br.Close()); err != nil || v != n+1 || s != want {
					errs <- fmt.Errorf("batch %d/%d: %d %q, %v", g, i, v, s, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
