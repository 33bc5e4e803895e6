package pgline

import (
	"context"
	"testing"
	"time"
)

// A statement of a Tx is in flight when another goroutine calls Commit;
// then the statement's ctx ends. Its caller is told it failed (ctx's
// error); Commit must not then report success with the statement's effect
// committed (the transaction is doomed, see Tx.doom).
func TestCommitAfterGivenUpStatement(t *testing.T) {
	ctx := testCtx(t)
	c, err := Connect(ctx, srv.DSN()) // default cancel_grace (100ms)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := auditTestTable(t, ctx, c, "(id int)")
	var bad int
	for round := 0; round < 5; round++ {
		c.Exec(ctx, "DELETE FROM "+tbl)
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sctx, cancel := context.WithTimeout(ctx, 40*time.Millisecond)
		done := make(chan error, 1)
		go func() {
			_, err := tx.Exec(sctx, "INSERT INTO "+tbl+" SELECT 1 FROM pg_sleep(0.09)")
			done <- err
		}()
		time.Sleep(20 * time.Millisecond)
		cerr := tx.Commit(ctx)
		serr := <-done
		cancel()
		var n int
		c.QueryRow(ctx, "SELECT count(*)::int FROM "+tbl).Scan(&n)
		t.Logf("round %d: stmt err %v, Commit %v, rows %d", round, serr, cerr, n)
		if serr != nil && cerr == nil && n == 1 {
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d/5: the statement's caller got an error, Commit returned nil, and the statement's effect committed", bad)
	}
}
