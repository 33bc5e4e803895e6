package pgline

// Audit of 995b187: transaction control given as text, in one call, on a
// Conn (shared or not). The call opens and ends its block itself; when
// it fails between its BEGIN and its COMMIT (its own statement's error,
// or a cancel's signal landing there), the session is left in an aborted
// block that nobody holds once the call has returned: the case the change
// fixes for pgline's own BEGIN and COMMIT.

import (
	"testing"
	"time"
)

// TestStrandSignalsRawTxText: the same with no error of the caller's
// own: Exec("BEGIN; INSERT ...; COMMIT") under a storm of signals. A
// signal landing in the INSERT (or before the COMMIT ran) leaves the
// session in the aborted block after the call has returned its 57014;
// every later statement, whoever sends it, fails with 25P02.
func TestStrandSignalsRawTxText(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	tbl, _ := auditStrandTable(t, "rawsig")
	stop := make(chan struct{})
	storm := cancelStorm(t, ctx, c.PID(), 300*time.Microsecond, stop)
	defer func() { close(stop); storm.Wait() }()
	calls, failed, stuck := 0, 0, 0
	end := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(end) {
		calls++
		_, callErr := c.Exec(ctx, "BEGIN; INSERT INTO "+tbl+" SELECT generate_series(1, 50); COMMIT")
		if callErr == nil {
			continue
		}
		failed++
		if c.TxStatus() != 'I' {
			stuck++
			// What another caller of the Conn would get now.
			var v int64
			err := c.QueryRow(ctx, "SELECT 1::int8").Scan(&v)
			if stuck == 1 {
				t.Logf("after the call's %v: TxStatus %c, next statement: %v", callErr, c.TxStatus(), err)
			}
			if _, err := c.Exec(ctx, "ROLLBACK"); err != nil { // to go on
				t.Fatal(err)
			}
		}
	}
	t.Logf("calls %d, failed %d, left the session in an aborted block %d", calls, failed, stuck)
	if stuck > 0 {
		t.Errorf("%d of %d calls left the session in an aborted transaction block that nobody holds", stuck, calls)
	}
}
