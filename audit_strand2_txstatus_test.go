package pgline

// Audit of 02a1846 (TxStatus is 'I' while a ROLLBACK pgline queued
// detached is in flight). The Pool, stdlib and BeginTx's error path trust
// TxStatus; these tests put a detached ROLLBACK in flight on purpose (a
// text "BEGIN; SELECT 1/0; COMMIT" strands its block: see 357f8e0; or a
// Tx ended with its ctx over) and then do what may follow at once: a raw
// BEGIN, a Begin, an Acquire and Release. Each checks with the server
// that no caller's statement runs in someone else's block, that a Tx is
// a real transaction, and that no connection is handed out in one.

import (
	"context"

	"sync"
	"testing"
	"time"
)

// strands its block: pgline queues a detached ROLLBACK

// TestDetachedRollbackThenBegin: a Tx ended with its ctx over (the
// ROLLBACK unsent: queued detached), then at once Begin on the same Conn,
// whose statements must run in a real transaction that Rollback undoes;
// TxStatus is 'T' inside it and 'I' after it.
func TestDetachedRollbackThenBegin(t *testing.T) {
	ctx := testCtx(t)
	tbl := auditIntTable(t, "audit_s2_txend")
	c := connect(t, srv.DSN())
	for i := range 20 {
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", 1000+i); err != nil {
			t.Fatal(err)
		}
		ended, cancel := context.WithCancel(ctx)
		cancel()
		switch i % 3 {
		case 0:
			err = tx.Rollback(ended)
		case 1:
			err = tx.Commit(ended)
		case 2: // a statement of it given up, then Commit
			short, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
			_, e := tx.Exec(short, "SELECT pg_sleep(0.2)")
			cancel()
			t.Logf("given-up statement: %v", e)
			err = tx.Commit(ctx)
		}
		if i < 3 {
			t.Logf("end %d: %v; TxStatus %c, rollbacks %d", i%3, err, c.TxStatus(), c.rollbacks.Load())
		}
		tx2, err := c.Begin(ctx)
		if err != nil {
			t.Fatalf("Begin after: %v", err)
		}
		if s := c.TxStatus(); s != 'T' {
			t.Errorf("%d: TxStatus in the new Tx: %c", i, s)
		}
		if own := auditOwnTx(t, ctx, tx2); own {
			// A statement of a transaction begun by BEGIN starts later than it.
			t.Errorf("%d: the new Tx's statement runs in a transaction of its own", i)
		}
		if _, err := tx2.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", 2000+i); err != nil {
			t.Fatal(err)
		}
		if err := tx2.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		if s := c.TxStatus(); s != 'I' {
			t.Errorf("%d: TxStatus after Rollback: %c", i, s)
		}
	}
	if n := auditTableCount(t, c, tbl); n != 0 {
		t.Errorf("%d rows committed, want 0", n)
	}
	wantUsable(t, ctx, c)
}

// TestDetachedRollbackBeginBehindStrand: Begin queued behind a stranding text
// on the same Conn (the detached ROLLBACK lands after the BEGIN): the
// BEGIN is refused and sent again; the Tx must be a real transaction.
func TestDetachedRollbackBeginBehindStrand(t *testing.T) {
	ctx := testCtx(t)
	tbl := auditIntTable(t, "audit_s2_bbs")
	c := connect(t, srv.DSN())
	for i := range 10 {
		auditHoldWrites(c)
		var wg sync.WaitGroup
		var tx *Tx
		var errS, errB error
		wg.Add(2)
		go func() { defer wg.Done(); _, errS = c.Exec(ctx, auditStrander) }()
		auditWaitQueued(t, c, 1)
		go func() { defer wg.Done(); tx, errB = c.Begin(ctx) }()
		auditWaitQueued(t, c, 2)
		auditResumeWrites(c)
		wg.Wait()
		if errS == nil || errB != nil {
			t.Fatalf("strander %v, Begin %v", errS, errB)
		}
		if s := c.TxStatus(); s != 'T' {
			t.Errorf("%d: TxStatus in the Tx: %c (rollbacks %d)", i, s, c.rollbacks.Load())
		}
		if auditOwnTx(t, ctx, tx) {
			t.Errorf("%d: the Tx's statement runs in a transaction of its own", i)
		}
		tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", i)
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := auditTableCount(t, c, tbl); n != 0 {
		t.Errorf("%d rows committed, want 0", n)
	}
}

// TestDetachedNestedRollbackKeepsOuter: a nested Tx rolled back with its ctx
// over (ROLLBACK TO SAVEPOINT queued detached, not counted) keeps the
// outer transaction: TxStatus 'T', its rows kept, a Pool must not see it
// idle.
func TestDetachedNestedRollbackKeepsOuter(t *testing.T) {
	ctx := testCtx(t)
	tbl := auditIntTable(t, "audit_s2_nested")
	c := connect(t, srv.DSN())
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES (1)")
	n, err := tx.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n.Exec(ctx, "INSERT INTO "+tbl+" VALUES (2)")
	ended, cancel := context.WithCancel(ctx)
	cancel()
	t.Logf("nested rollback with ended ctx: %v; TxStatus %c", n.Rollback(ended), c.TxStatus())
	if s := c.TxStatus(); s != 'T' {
		t.Errorf("TxStatus in the outer Tx after the nested rollback: %c", s)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES (3)"); err != nil {
		t.Fatal(err)
	}
	if s := c.TxStatus(); s != 'T' {
		t.Errorf("TxStatus: %c", s)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var got []int64
	rows, _ := c.Query(ctx, "SELECT a FROM "+tbl+" ORDER BY a")
	for rows.Next() {
		var v int64
		rows.Scan(&v)
		got = append(got, v)
	}
	if len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Errorf("rows %v, want [1 3]", got)
	}
}
