package pgline

import (
	"errors"
	"testing"
	"time"
)

// TestBatchReplayInTxNotResent: an independent batch [X, BEGIN, INSERT a,
// Y, COMMIT], queued while the driver cancels the statement ahead of it,
// where X and Y each fail once with a 57014 that the cancel may have
// caused (SQLSTATE 57014 raised by a function, standing in for a
// CancelRequest landing late). X is sent again, so the rest of the reply
// is read back from memory while the connection serves others; Y failed
// inside the batch's transaction, which the failure aborted (COMMIT
// rolls back: a is not kept). Y must not be sent again on its own: it
// would commit outside the transaction, and the batch report success
// while a is lost. Whether Y ran in a transaction is its own
// ReadyForQuery's status, not the connection's, which is another
// request's by then.
func TestBatchReplayInTxNotResent(t *testing.T) {
	c := auditConn(t)
	ctx := testCtx(t)
	auditTable(t, c, "replay_tx")
	apOnce(t, c, "replay_tx_x", "replay_tx_y")
	x, y := "SELECT pg_sleep(1), ap_once('replay_tx_x')", "SELECT ap_once('replay_tx_y')"
	ins := "INSERT INTO replay_tx(k) VALUES ('a')"
	// Prepared beforehand, the batch is queued at once (behind A), not
	// after a describe of its statements.
	for _, sql := range []string{x, y, ins, "BEGIN", "COMMIT"} {
		if _, err := c.Prepare(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	aDone := startAbandoned(t, c) // the driver cancels A once the batch is queued
	time.Sleep(5 * time.Millisecond)
	b := &Batch{}
	b.Queue(x)
	b.Queue("BEGIN")
	b.Queue(ins)
	b.Queue(y)
	b.Queue("COMMIT")
	br := c.SendBatch(ctx, b)
	var errs [5]error
	var tags [5]CommandTag
	for i := range errs {
		tags[i], errs[i] = br.Exec()
	}
	closeErr := br.Close()
	t.Logf("A: %v", <-aDone)
	for i := range errs {
		t.Logf("statement %d: %q, %v", i, tags[i], errs[i])
	}
	if !br.released {
		t.Fatalf("X was not sent again (its error: %v): the replay path was not taken", errs[0])
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*)::int FROM replay_tx").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("the transaction's INSERT persisted %d times: COMMIT said %q", n, tags[4])
	}
	if errs[3] == nil || closeErr == nil {
		t.Fatalf("Y failed in the batch's transaction, which rolled back, but the batch reports success (Y: %v, Close: %v)", errs[3], closeErr)
	}
	if !errors.Is(errs[3], ErrCanceledByOther) {
		t.Errorf("Y: %v; want ErrCanceledByOther (not sent again: in a transaction)", errs[3])
	}
	if errs[0] != nil {
		t.Errorf("X, sent again, failed: %v", errs[0])
	}
}
