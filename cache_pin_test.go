package pgline

// A description handed out by the cache before its caller passes the gate:
// it stays pinned until its Bind is queued, a statement prepared again gets
// another name, an evicted statement's Close is not lost, and a
// transaction's failure to describe a statement is not another caller's.

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// TestCacheWaitingDescNotRebound: a goroutine takes a cached
// statement description (Conn.prepare returns it without passing the
// gate) and then waits at the gate while a transaction holds the
// connection. Meanwhile the table's column changes type and the statement
// was evicted and prepared again: the new server-side statement got the
// SAME name (stmtName hashes the SQL text only). When the waiting
// goroutine finally sent its Bind with the old description, it bound the
// new statement and decoded its rows with the old column types: a float4
// 42 read as int4. (Names now carry the cache's drop count, and the
// waiting goroutine's description is pinned, so q is not evicted.)
func TestCacheWaitingDescNotRebound(t *testing.T) {
	c := connect(t, srv.DSN("statement_cache_mode=prepare", "statement_cache_capacity=1"))
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS pin_rebind; CREATE TABLE pin_rebind (a int4); INSERT INTO pin_rebind VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	const q = "SELECT a FROM pin_rebind WHERE $1::int4 = 1"
	var v int32
	if err := c.QueryRow(ctx, q, 1).Scan(&v); err != nil || v != 42 {
		t.Fatalf("first run: %d, %v", v, err)
	}

	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type res struct {
		v   int32
		err error
	}
	got := make(chan res, 1)
	go func() {
		// Finds q cached (int4), then waits at the gate for tx.
		var v int32
		err := c.QueryRow(ctx, q, 1).Scan(&v)
		got <- res{v, err}
	}()
	time.Sleep(50 * time.Millisecond) // the goroutine waits at the gate
	if _, err := tx.Exec(ctx, "ALTER TABLE pin_rebind ALTER COLUMN a TYPE float4"); err != nil {
		t.Fatal(err)
	}
	// Evicts q (capacity 1: Close queued), then prepares q again: same
	// name, now float4.
	if _, err := tx.Exec(ctx, "SELECT $1::int4", 1); err != nil {
		t.Fatal(err)
	}
	// Since prepare pins the description it returns until its Bind is
	// queued, the waiting goroutine's pin keeps q cached: the
	// transaction's run of it meets the changed result type (0A000),
	// which aborts the transaction. Either way, the waiting goroutine must
	// get 42 or an error.
	var f float32
	err = tx.QueryRow(ctx, q, 1).Scan(&f)
	var pgErr *PgError
	switch {
	case err == nil && f == 42:
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	case errors.As(err, &pgErr) && pgErr.Code == "0A000":
		t.Logf("in tx: %v", err)
		tx.Rollback(ctx)
	default:
		t.Fatalf("in tx: %v, %v", f, err)
	}
	select {
	case r := <-got:
		if r.err == nil && r.v != 42 {
			t.Fatalf("the goroutine that waited at the gate got %d, %v; want 42 (or an error)", r.v, r.err)
		}
		t.Logf("got %d, %v", r.v, r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
}

// TestCacheWaitingDescAlterConcurrent: the same without a transaction
// or eviction. Goroutines run one statement while another goroutine
// switches its column between int4 and float4 (ALTER TABLE on the same
// Conn). A run that fails with "cached plan must not change result type"
// removes the description and prepares the statement again under the
// same name; a goroutine that took the old description before and queues
// its Bind after that Parse decodes the new statement's rows with the old
// types.
func TestCacheWaitingDescAlterConcurrent(t *testing.T) {
	storm(t)
	c := connect(t, srv.DSN("statement_cache_mode=prepare"))
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS pin_alt; CREATE TABLE pin_alt (a int4); INSERT INTO pin_alt VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	const q = "SELECT a FROM pin_alt"
	deadline := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad error
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				var a any
				err := c.QueryRow(ctx, q).Scan(&a)
				var pg *PgError
				if errors.As(err, &pg) && session.StaleStatement(pg.Code, pg.Message) {
					continue // stale twice: an error, not a wrong value
				}
				if err == nil && a != int32(42) && a != float32(42) {
					err = fmt.Errorf("got %T %v, want 42", a, a)
				}
				if err != nil {
					mu.Lock()
					bad = err
					mu.Unlock()
					return
				}
			}
		}()
	}
	for i := 0; time.Now().Before(deadline); i++ {
		typ := []string{"float4", "int4"}[i%2]
		if _, err := c.Exec(ctx, "ALTER TABLE pin_alt ALTER COLUMN a TYPE "+typ); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	wg.Wait()
	if bad != nil {
		t.Fatal(bad)
	}
}

// TestCacheEvictedBeforeBind: a plain QueryRow, directly on
// PostgreSQL, with no DEALLOCATE, no schema change and no transaction,
// under cache pressure (statement_cache_capacity=1, more distinct texts
// than that from several goroutines). A description evicted between its
// describe and its caller's Bind had its Close queued before the Bind:
// 26000, retried once, lost the same race again (1 run in 5 failed). The
// description prepare returns is now pinned until its Bind is queued.
func TestCacheEvictedBeforeBind(t *testing.T) {
	storm(t)
	c := connect(t, srv.DSN("statement_cache_capacity=1"))
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
	if m := c.s.StatementCacheMode(); m != session.CachePrepare {
		t.Errorf("mode %q", m)
	}
}

// TestFailedRequestKeepsCloses: a statement evicted from the cache is
// closed with the next request; when that request fails to build (an
// argument that cannot be encoded), the Close waits for the one after.
// Lost, it left the statement on the server, and preparing the same text
// again under the same name got 42P05, taken for a pooler's sign.
func TestFailedRequestKeepsCloses(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN("statement_cache_capacity=1"))
	var v int
	if err := c.QueryRow(ctx, "SELECT $1::int + 1", 1).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT $1::int + 2", make(chan int)).Scan(&v); err == nil || !session.SafeToRetry(err) {
		t.Fatalf("an argument that cannot be encoded: %v, want an error saying nothing was sent", err)
	}
	if err := c.QueryRow(ctx, "SELECT $1::int + 1", 41).Scan(&v); err != nil || v != 42 {
		t.Fatalf("the first text again: %d %v", v, err)
	}
	if m := c.s.StatementCacheMode(); m != session.CachePrepare {
		t.Errorf("a direct connection switched to %q mode (false pooler sign)", m)
	}
}

// TestCacheTxDescribeErrorNotShared: Conn.prepare looks the text up
// in the cache before the gate. A description a transaction is preparing
// (its Parse queued inside the transaction) is found there by a goroutine
// outside the transaction, which waits for it and got its error: here
// the transaction is aborted, the Parse fails with 25P02, and a caller
// that never was in the transaction was told "current transaction is
// aborted". It now describes the statement again itself (describeAgain),
// once the transaction has ended.
func TestCacheTxDescribeErrorNotShared(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	failed := make(chan error, 1)
	go func() {
		// Aborts the transaction after 300 ms.
		_, err := tx.Exec(ctx, "SELECT 1/(SELECT 0 FROM pg_sleep(0.3))")
		failed <- err
	}()
	time.Sleep(50 * time.Millisecond)
	const q = "SELECT $1::int + 100"
	inTx := make(chan error, 1)
	go func() {
		var v int
		inTx <- tx.QueryRow(ctx, q, 1).Scan(&v) // Parse queued behind the sleep
	}()
	time.Sleep(50 * time.Millisecond)
	go func() {
		<-failed
		<-inTx
		tx.Rollback(ctx)
	}()
	var v int
	err = c.QueryRow(ctx, q, 1).Scan(&v) // outside the transaction: waits at the gate
	var pg *PgError
	if err != nil || v != 101 {
		code := ""
		if errors.As(err, &pg) {
			code = pg.Code
		}
		t.Fatalf("a caller outside the transaction got %d, %v (SQLSTATE %s): the transaction's outcome", v, err, code)
	}
}
