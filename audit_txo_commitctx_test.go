package pgline

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Commit whose ctx ends while COMMIT runs (a slow deferred trigger), or
// before it is sent.
func TestCommitCtxEnds(t *testing.T) {
	ctx := testCtx(t)
	c, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := auditTestTable(t, ctx, c, "(id int)")
	fn := tbl + "_slow"
	if _, err := c.Exec(ctx, `CREATE OR REPLACE FUNCTION `+fn+`() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.3); RETURN NULL; END $$;
		CREATE CONSTRAINT TRIGGER slow AFTER INSERT ON `+tbl+` DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION `+fn+`()`); err != nil {
		t.Fatal(err)
	}
	defer c.Exec(context.Background(), "DROP FUNCTION IF EXISTS "+fn+" CASCADE")
	for round := 0; round < 4; round++ {
		c.Exec(ctx, "DELETE FROM "+tbl)
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", 1); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(ctx, time.Duration(round*60)*time.Millisecond)
		if round == 0 {
			cancel()
		}
		cerr := tx.Commit(cctx)
		cancel()
		// the next caller
		var inTx bool
		qerr := c.QueryRow(ctx, "SELECT txid_current_if_assigned() IS NOT NULL").Scan(&inTx)
		if qerr != nil || inTx {
			t.Errorf("round %d: next statement inside the transaction (%v, %v)", round, inTx, qerr)
		}
		time.Sleep(400 * time.Millisecond)
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*)::int FROM "+tbl).Scan(&n); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: Commit %v (SafeToRetry %v), rows %d", round, cerr, SafeToRetry(cerr), n)
		switch {
		case cerr == nil && n != 1:
			t.Errorf("round %d: Commit nil, %d rows", round, n)
		case cerr != nil && SafeToRetry(cerr) && n != 0:
			t.Errorf("round %d: Commit SafeToRetry but committed", round)
		case errors.Is(cerr, ErrTxRolledBack) && n != 0:
			t.Errorf("round %d: ErrTxRolledBack but committed", round)
		}
	}
}
