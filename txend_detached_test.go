package pgline

// A transaction whose end is queued detached (its Rollback or Commit
// given an ended ctx, a statement given up, or a stranded block's
// ROLLBACK that pgline sends itself) and what may follow at once: a
// Begin on the same Conn is a real transaction (TxStatus 'T' inside it,
// 'I' after it, its statements in its block, its Rollback undoing them),
// TxStatus reads 'I' once the call has returned while pgline's ROLLBACK
// is still in flight, and a nested Tx rolled back that way keeps the
// outer transaction and its rows.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestDetachedRollbackThenBegin: a Tx ended with its ctx over (the
// ROLLBACK unsent: queued detached), then at once Begin on the same Conn,
// whose statements must run in a real transaction that Rollback undoes;
// TxStatus is 'T' inside it and 'I' after it.
func TestDetachedRollbackThenBegin(t *testing.T) {
	ctx := testCtx(t)
	tbl := intTable(t, "txblk_txend")
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
			t.Logf("end %d: %v; TxStatus %c, rollbacks %d", i%3, err, c.TxStatus(), c.s.Block.Rollbacks.Load())
		}
		tx2, err := c.Begin(ctx)
		if err != nil {
			t.Fatalf("Begin after: %v", err)
		}
		if s := c.TxStatus(); s != 'T' {
			t.Errorf("%d: TxStatus in the new Tx: %c", i, s)
		}
		if own := runsOutsideBlock(t, ctx, tx2); own {
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
	if n := rowCount(t, c, tbl); n != 0 {
		t.Errorf("%d rows committed, want 0", n)
	}
	wantUsable(t, ctx, c)
}

// TestDetachedRollbackBeginBehindStrand: Begin queued behind a stranding text
// on the same Conn (the detached ROLLBACK lands after the BEGIN): the
// BEGIN is refused and sent again; the Tx must be a real transaction.
func TestDetachedRollbackBeginBehindStrand(t *testing.T) {
	ctx := testCtx(t)
	tbl := intTable(t, "txblk_bbs")
	c := connect(t, srv.DSN())
	for i := range 10 {
		holdWrites(c)
		var wg sync.WaitGroup
		var tx *Tx
		var errS, errB error
		wg.Add(2)
		go func() { defer wg.Done(); _, errS = c.Exec(ctx, stranderSQL) }()
		waitQueued(t, c, 1)
		go func() { defer wg.Done(); tx, errB = c.Begin(ctx) }()
		waitQueued(t, c, 2)
		releaseWrites(c)
		wg.Wait()
		if errS == nil || errB != nil {
			t.Fatalf("strander %v, Begin %v", errS, errB)
		}
		if s := c.TxStatus(); s != 'T' {
			t.Errorf("%d: TxStatus in the Tx: %c (rollbacks %d)", i, s, c.s.Block.Rollbacks.Load())
		}
		if runsOutsideBlock(t, ctx, tx) {
			t.Errorf("%d: the Tx's statement runs in a transaction of its own", i)
		}
		tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", i)
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := rowCount(t, c, tbl); n != 0 {
		t.Errorf("%d rows committed, want 0", n)
	}
}

// TestDetachedRollbackTxStatusIdle: a transaction's BEGIN, COMMIT or
// ROLLBACK hit by a cancel's signal leaves the session in an aborted
// block that pgline rolls back with a detached ROLLBACK, whose reply is
// drained after the call returns. TxStatus must not say 'E' (or 'T')
// meanwhile: no caller holds a transaction, and whatever reads TxStatus
// to decide (pool.Host.done and giveBack, which close the connection;
// stdlib's BeginTx, which refuses with "already in a transaction";
// stdlib's IsValid) would take pgline's own strand for a caller's block.
func TestDetachedRollbackTxStatusIdle(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	stop := make(chan struct{})
	storm := cancelStorm(t, ctx, c.PID(), 200*time.Microsecond, stop)
	defer func() { close(stop); storm.Wait() }()
	var txs, sawE, sawT int
	end := time.Now().Add(2 * time.Second)
	for time.Now().Before(end) {
		tx, err := c.Begin(ctx)
		if err == nil {
			if _, err = tx.Exec(ctx, "SELECT 1"); err != nil {
				tx.Rollback(ctx)
			} else {
				err = tx.Commit(ctx)
			}
		}
		if err != nil && pgCode(err) != "57014" && !errors.Is(err, ErrTxRolledBack) {
			t.Fatalf("transaction: %v", err)
		}
		txs++
		// The call has returned: no transaction is held by anyone.
		switch c.TxStatus() {
		case 'E':
			sawE++
		case 'T':
			sawT++
		}
	}
	t.Logf("transactions %d, blocks rolled back %d, TxStatus 'E' right after the call %d, 'T' %d", txs, c.s.Block.Strands.Load(), sawE, sawT)
	if sawE+sawT > 0 {
		t.Errorf("TxStatus reported an open transaction %d times after the transaction's call had returned (nobody holds one: pgline's own ROLLBACK was still in flight)", sawE+sawT)
	}
}

// TestDetachedNestedRollbackKeepsOuter: a nested Tx rolled back with its ctx
// over (ROLLBACK TO SAVEPOINT queued detached, not counted) keeps the
// outer transaction: TxStatus 'T', its rows kept, a Pool must not see it
// idle.
func TestDetachedNestedRollbackKeepsOuter(t *testing.T) {
	ctx := testCtx(t)
	tbl := intTable(t, "txblk_nested")
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

// TestDetachedNestedRollbackThenSavepointFailure: a nested Tx rolled back
// with an ended ctx, then a second nested Tx whose statement fails,
// rolled back properly: the outer Commit succeeds and keeps only the
// outer rows.
func TestDetachedNestedRollbackThenSavepointFailure(t *testing.T) {
	ctx := testCtx(t)
	c, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := testTable(t, ctx, c, "(id int)")
	dead, cancel := context.WithCancel(ctx)
	cancel()
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES (1)")
	sp, err := tx.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sp.Exec(ctx, "INSERT INTO "+tbl+" VALUES (2)")
	if err := sp.Rollback(dead); err == nil {
		t.Log("nested Rollback with a dead ctx returned nil")
	}
	if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES (3)"); err != nil {
		t.Fatal(err)
	}
	// a second nested tx with a failure, rolled back properly
	sp2, err := tx.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sp2.Exec(ctx, "INSERT INTO "+tbl+" VALUES (4)")
	sp2.Exec(ctx, "SELECT 1/0")
	if err := sp2.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	var ids []int
	r, _ := c.Query(ctx, "SELECT id FROM "+tbl+" ORDER BY id")
	for r.Next() {
		var x int
		r.Scan(&x)
		ids = append(ids, x)
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if len(ids) != 2 || ids[0] != 1 || ids[1] != 3 {
		t.Errorf("rows %v, want [1 3]", ids)
	}
}
