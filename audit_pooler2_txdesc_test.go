package pgline

import (
	"errors"
	"testing"
	"time"
)

// TestAuditPooler2TxDescribeErrorShared: Conn.prepare looks the text up
// in the cache before the gate. A description a transaction is preparing
// (its Parse queued inside the transaction) is found there by a goroutine
// outside the transaction, which waits for it and got its error: here
// the transaction is aborted, the Parse fails with 25P02, and a caller
// that never was in the transaction was told "current transaction is
// aborted". It now describes the statement again itself (describeAgain),
// once the transaction has ended.
func TestAuditPooler2TxDescribeErrorShared(t *testing.T) {
	c := auditConn(t)
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
