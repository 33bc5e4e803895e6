package pgline

import (
	"errors"
	"testing"
	"time"
)

// TestBatchInTxNotResent: an independent batch [BEGIN, INSERT a, Y,
// COMMIT], queued while the driver cancels the statement ahead of it,
// where Y fails once with a 57014 that the cancel may have caused
// (SQLSTATE 57014 raised by a function, standing in for a CancelRequest
// landing late). Y failed inside the batch's transaction, which the
// failure aborted (COMMIT rolls back: a is not kept). Y must not be sent
// again on its own: it would commit outside the transaction, and the
// batch report success while a is lost. Whether Y ran in a transaction is
// its own ReadyForQuery's status, not the connection's.
func TestBatchInTxNotResent(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	effectsTable(t, c, "replay_tx")
	y := "SELECT cancel_once('replay_tx_y')"
	ins := "INSERT INTO replay_tx(k) VALUES ('a')"
	var errs [4]error
	var tags [4]CommandTag
	var closeErr error
	var calls int64
	for attempt := 1; ; attempt++ {
		createCancelOnce(t, c, "replay_tx_y")
		if _, err := c.Exec(ctx, "DELETE FROM replay_tx"); err != nil {
			t.Fatal(err)
		}
		// Prepared beforehand, the batch is queued at once (behind A), not
		// after a describe of its statements.
		for _, sql := range []string{y, ins, "BEGIN", "COMMIT"} {
			if _, err := c.Prepare(ctx, sql); err != nil {
				t.Fatal(err)
			}
		}
		aDone := startAbandonedBehind(t, c, 1) // the driver cancels A once the batch is queued
		b := &Batch{}
		b.Queue("BEGIN")
		b.Queue(ins)
		b.Queue(y)
		b.Queue("COMMIT")
		br := c.SendBatch(ctx, b)
		for i := range errs {
			tags[i], errs[i] = br.Exec()
		}
		closeErr = br.Close()
		t.Logf("attempt %d, A: %v", attempt, <-aDone)
		for i := range errs {
			t.Logf("statement %d: %q, %v", i, tags[i], errs[i])
		}
		calls = cancelOnceCalls(t, c, "replay_tx_y")
		// The cancel's second signal (see cancelReachedFirst) may land on
		// the INSERT, or on Y before cancel_once ran (Y ran 0 times): each
		// an outcome of its own, not sent again, and the scenario is run
		// again.
		if attempt == 5 || !(errors.Is(errs[1], ErrCanceledByOther) || errors.Is(errs[2], ErrCanceledByOther) && calls == 0) {
			break
		}
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*)::int FROM replay_tx").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("the transaction's INSERT persisted %d times: COMMIT said %q", n, tags[3])
	}
	if errs[2] == nil || closeErr == nil {
		t.Fatalf("Y failed in the batch's transaction, which rolled back, but the batch reports success (Y: %v, Close: %v)", errs[2], closeErr)
	}
	if !errors.Is(errs[2], ErrCanceledByOther) {
		t.Errorf("Y: %v; want ErrCanceledByOther (not sent again: in a transaction)", errs[2])
	}
	if calls != 1 {
		t.Errorf("Y ran %d times; want once", calls)
	}
}

// TestBatchNotLastNotResent: in an independent batch [X, INSERT k, UPDATE
// k], X fails once with a 57014 that a cancel meant for the statement
// ahead may have caused. The INSERT and UPDATE run after X's failure
// whatever pgline does: X, sent again, would run after them. It is not:
// its error says a cancel meant for another statement hit it
// (ErrCanceledByOther, nothing of it ran), X ran once, and the batch's
// other statements ran in order (the UPDATE found the row).
func TestBatchNotLastNotResent(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	effectsTable(t, c, "notlast")
	x := "SELECT cancel_once('notlast_x')"
	ins, upd := "INSERT INTO notlast(k) VALUES ('b')", "UPDATE notlast SET k = 'c' WHERE k = 'b'"
	var errX, errIns, errUpd error
	var tagUpd CommandTag
	for attempt := 1; ; attempt++ {
		createCancelOnce(t, c, "notlast_x")
		if _, err := c.Exec(ctx, "DELETE FROM notlast"); err != nil {
			t.Fatal(err)
		}
		for _, sql := range []string{x, ins, upd} {
			if _, err := c.Prepare(ctx, sql); err != nil {
				t.Fatal(err)
			}
		}
		aDone := startAbandonedBehind(t, c, 1)
		time.Sleep(5 * time.Millisecond)
		b := &Batch{}
		b.Queue(x)
		b.Queue(ins)
		b.Queue(upd)
		br := c.SendBatch(ctx, b)
		_, errX = br.Exec()
		_, errIns = br.Exec()
		tagUpd, errUpd = br.Exec()
		br.Close()
		t.Logf("A: %v", <-aDone)
		// The cancel's second signal (see cancelReachedFirst) may land on
		// the INSERT instead, or on X before cancel_once ran (X ran 0
		// times): each an outcome of its own (ErrCanceledByOther, not sent
		// again), and the scenario is run again.
		reachedX := errors.Is(errX, ErrCanceledByOther) && cancelOnceCalls(t, c, "notlast_x") == 0
		if attempt == 5 || !errors.Is(errIns, ErrCanceledByOther) && !reachedX {
			break
		}
	}
	if !errors.Is(errX, ErrCanceledByOther) {
		t.Errorf("X: %v; want ErrCanceledByOther", errX)
	}
	if calls := cancelOnceCalls(t, c, "notlast_x"); calls != 1 {
		t.Errorf("X ran %d times; want once (not sent again after the statements behind it)", calls)
	}
	if errIns != nil || errUpd != nil || tagUpd.RowsAffected() != 1 {
		t.Errorf("INSERT %v, UPDATE %q %v; want both to succeed, the UPDATE finding the row", errIns, tagUpd, errUpd)
	}
}
