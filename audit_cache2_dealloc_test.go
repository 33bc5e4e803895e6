package pgline

// Audit of the statement cache: the application's own DEALLOCATE ALL.

import (
	"fmt"
	"testing"
)

// TestAuditCache2TxAfterDeallocateAll: the application sends DEALLOCATE
// ALL (pgline notes it: Conn.noteDeallocateLocked), then a transaction
// runs three statements the connection had cached. Each cached statement
// fails at its Bind with 26000, which aborts the transaction and drops
// only that statement: the transaction's first retry meets the next one.
// A retried transaction must succeed (here: within 2 attempts).
func TestAuditCache2TxAfterDeallocateAll(t *testing.T) {
	c := auditConn(t, "statement_cache_mode=prepare")
	ctx := testCtx(t)
	qs := []string{"SELECT $1::int4 + 1", "SELECT $1::int4 + 2", "SELECT $1::int4 + 3"}
	for _, q := range qs {
		var v int32
		if err := c.QueryRow(ctx, q, int32(10)).Scan(&v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Exec(ctx, "DEALLOCATE ALL"); err != nil {
		t.Fatal(err)
	}
	attempt := func() error {
		tx, err := c.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		for i, q := range qs {
			var v int32
			if err := tx.QueryRow(ctx, q, int32(10)).Scan(&v); err != nil {
				return err
			}
			if v != int32(11+i) {
				return fmt.Errorf("%s: %d", q, v)
			}
		}
		return tx.Commit(ctx)
	}
	var err error
	for i := 0; i < 2; i++ {
		if err = attempt(); err == nil {
			return
		}
		t.Logf("attempt %d: %v", i, err)
	}
	n := 2
	for ; n < 6 && attempt() != nil; n++ {
	}
	t.Fatalf("the transaction failed twice after DEALLOCATE ALL (succeeded at attempt %d): %v", n, err)
}

// TestAuditCache2BatchOnlyDeallocateAll: a batch of the single statement
// DEALLOCATE ALL. SendBatch prepares it as a named statement and caches
// it; running it deallocates that statement too. The next identical
// batch binds the cached, deallocated name: 26000. Every second run of
// the same batch fails.
func TestAuditCache2BatchOnlyDeallocateAll(t *testing.T) {
	c := auditConn(t, "statement_cache_mode=prepare")
	ctx := testCtx(t)
	for i := 0; i < 4; i++ {
		b := &Batch{}
		b.Queue("DEALLOCATE ALL")
		br := c.SendBatch(ctx, b)
		_, err := br.Exec()
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatalf("run %d of a batch [DEALLOCATE ALL]: %v", i, err)
		}
	}
}
