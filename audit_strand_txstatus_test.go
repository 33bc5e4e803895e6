package pgline

// Audit of 995b187: what Conn.TxStatus reports after a transaction's
// BEGIN, COMMIT or ROLLBACK, hit by a cancel's signal, left the session
// in an aborted block that pgline rolls back with a detached ROLLBACK.
// The ROLLBACK's reply is drained by a goroutine after the call returns:
// until then TxStatus says 'E' though no caller holds a transaction, and
// whatever reads TxStatus to decide (hostPool.done and giveBack, which
// close the connection; stdlib's BeginTx, which refuses with "already in
// a transaction"; stdlib's IsValid) takes pgline's own strand for a
// caller's open block.

import (
	"errors"
	"testing"
	"time"
)

func TestDetachedRollbackTxStatusIdle(t *testing.T) {
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
		if err != nil && !isCode(err, "57014") && !errors.Is(err, ErrTxRolledBack) {
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
	t.Logf("transactions %d, blocks rolled back %d, TxStatus 'E' right after the call %d, 'T' %d", txs, c.strands.Load(), sawE, sawT)
	if sawE+sawT > 0 {
		t.Errorf("TxStatus reported an open transaction %d times after the transaction's call had returned (nobody holds one: pgline's own ROLLBACK was still in flight)", sawE+sawT)
	}
}
