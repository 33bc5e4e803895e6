package pgline

// Audit of 357f8e0: PREPARE TRANSACTION and COMMIT/ROLLBACK PREPARED are
// not block ends to sqllex (PREPARED); a failed PREPARE TRANSACTION in a
// raw block (max_prepared_transactions = 0 here) leaves the caller's
// block as libpq does.

import "testing"

func TestAuditStrand2PrepareTransaction(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	var max string
	if err := c.QueryRow(ctx, "SELECT current_setting('max_prepared_transactions')").Scan(&max); err != nil {
		t.Fatal(err)
	}
	t.Logf("max_prepared_transactions = %s", max)
	strands := c.strands.Load()
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	_, err := c.Exec(ctx, "PREPARE TRANSACTION 'audit_s2_gid'")
	t.Logf("PREPARE TRANSACTION: %v, TxStatus %c", err, c.TxStatus())
	if max == "0" {
		// A failed PREPARE TRANSACTION ends the block itself (status I).
		if c.strands.Load() != strands {
			t.Errorf("pgline rolled back a block after PREPARE TRANSACTION")
		}
	} else {
		c.Exec(ctx, "ROLLBACK PREPARED 'audit_s2_gid'")
	}
	_, err = c.Exec(ctx, "COMMIT PREPARED 'audit_s2_none'")
	t.Logf("COMMIT PREPARED of nothing: %v, TxStatus %c", err, c.TxStatus())
	if c.strands.Load() != strands {
		t.Errorf("pgline rolled back %d blocks", c.strands.Load()-strands)
	}
	wantUsable(t, ctx, c)
}
