package pgline

// Audit of 995b187 with transactions under a storm of signals on a Conn
// other goroutines share: transactions whose Commit has a short ctx (the
// COMMIT given up, its reply drained after the connection is let go, and
// maybe canceled by pgline), and nested transactions (savepoints). What a
// Commit reports must match what exists: committed rows for nil, none for
// an error other than the ctx's (whose outcome is unknown). Echo callers
// must never get a 25P02, and the Conn must end outside any transaction.

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestStrandSignalsCommitCtx(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN("cancel_grace=1ms"))
	tbl, admin := auditStrandTable(t, "txctx")
	stop := make(chan struct{})
	storm := cancelStorm(t, ctx, c.PID(), 300*time.Microsecond, stop)
	o := newAuditStrandOutcomes()
	l := newAuditLoad(t, time.Second, 10)
	var seq atomic.Int64
	l.spawn(15, func() {
		v := seq.Add(1)
		var got int64
		err := c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
		if err == nil && got != v || err != nil && !isCode(err, "57014") {
			l.fail("echo: sent %d, got %d, %v", v, got, err)
		}
	})
	l.spawn(3, func() {
		tx, err := c.Begin(ctx)
		if err != nil {
			if !isCode(err, "57014") {
				l.fail("begin: %v", err)
			}
			return
		}
		v := seq.Add(1)
		if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", v); err != nil {
			if !isCode(err, "57014") {
				l.fail("insert: %v", err)
			}
			tx.Rollback(ctx)
			o.note(v, ctx, err)
			return
		}
		cctx, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(1500))*time.Microsecond)
		defer cancel()
		start := time.Now()
		err = tx.Commit(cctx)
		if el := time.Since(start); el > 100*time.Millisecond {
			l.fail("Commit answered after %v (deadline ~1.5ms): %v", el, err)
		}
		if err != nil && !isCode(err, "57014") && !errors.Is(err, ErrTxRolledBack) && !errors.Is(err, context.DeadlineExceeded) {
			l.fail("commit: %v", err)
		}
		o.note(v, cctx, err)
	})
	l.wait()
	close(stop)
	storm.Wait()
	t.Logf("blocks rolled back %d", c.strands.Load())
	wantUsable(t, ctx, c)
	o.check(t, ctx, admin, tbl)
}

// TestStrandSignalsNestedTx: a transaction with a savepoint under the storm,
// the nested transaction committed or rolled back, the outer committed;
// another goroutine shares the Conn. A row of the outer transaction
// exists iff its Commit returned nil; the nested one's iff, besides, the
// nested Commit returned nil.
func TestStrandSignalsNestedTx(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	tbl, admin := auditStrandTable(t, "nested")
	stop := make(chan struct{})
	storm := cancelStorm(t, ctx, c.PID(), 300*time.Microsecond, stop)
	var mu sync.Mutex
	want := map[int64]bool{} // key -> must exist
	l := newAuditLoad(t, time.Second, 10)
	var seq atomic.Int64
	l.spawn(10, func() {
		v := seq.Add(1)
		var got int64
		err := c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
		if err == nil && got != v || err != nil && !isCode(err, "57014") {
			l.fail("echo: sent %d, got %d, %v", v, got, err)
		}
	})
	l.spawn(2, func() {
		tx, err := c.Begin(ctx)
		if err != nil {
			if !isCode(err, "57014") {
				l.fail("begin: %v", err)
			}
			return
		}
		a, b := seq.Add(1), seq.Add(1)
		var errs []error
		_, err = tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", a)
		errs = append(errs, err)
		nestedOK := false
		if sp, err := tx.Begin(ctx); err == nil {
			_, err = sp.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", b)
			errs = append(errs, err)
			if rand.N(2) == 0 {
				err = sp.Commit(ctx)
				nestedOK = err == nil
			} else {
				err = sp.Rollback(ctx)
			}
			errs = append(errs, err)
		} else {
			errs = append(errs, err)
		}
		err = tx.Commit(ctx)
		for _, e := range errs {
			if e != nil && !isCode(e, "57014") && !isCode(e, "25P02") {
				l.fail("in the transaction: %v", e)
			}
		}
		if err != nil && !isCode(err, "57014") && !errors.Is(err, ErrTxRolledBack) {
			l.fail("commit: %v", err)
		}
		mu.Lock()
		want[a] = err == nil && errs[0] == nil
		want[b] = err == nil && nestedOK && errs[1] == nil
		mu.Unlock()
	})
	l.wait()
	close(stop)
	storm.Wait()
	wantUsable(t, ctx, c)
	have := map[int64]bool{}
	for _, k := range auditRows(t, admin, tbl) {
		if have[k] {
			t.Errorf("row %d twice", k)
		}
		have[k] = true
	}
	bad := 0
	for k, w := range want {
		if have[k] != w && bad < 10 {
			bad++
			t.Errorf("row %d exists %v, want %v", k, have[k], w)
		}
	}
	t.Logf("transactions %d, blocks rolled back %d", len(want)/2, c.strands.Load())
}
