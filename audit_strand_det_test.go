package pgline

// Audit of 995b187 with a stranded transaction block made on purpose, so
// that every path of the refusal machinery runs every time instead of a
// few times a second under a storm. A run chained to the next (its Sync
// replaced by the named BEGIN and COMMIT of statement_cache_mode=prepare)
// deallocates the named COMMIT from inside a PL/pgSQL function: the
// server runs the statement, BEGIN opens the block, and the Bind of the
// missing COMMIT fails (26000), which leaves the session in an aborted
// block nobody holds, exactly as a cancel's signal landing there does.
// (26000 there also reads as a pooler's sign, and the connection turns to
// describe mode: one strand per connection.) The requests are queued
// while writes are held back as during a CancelRequest (c.cancelling), so
// that their order, and which runs share a Sync, is fixed.

import (
	"context"
	"errors"

	"testing"
	"time"
)

// TestBatchSendAgainFailedFreesPoolSlot: a Pool's batch whose statements,
// refused by a stranded block, could not be sent again (resendRefused:
// the first batch's reply read and handed on, the second's send failed)
// still gives its pool connection back on Close: a pool of one slot then
// serves the next statement, and Pool.Close, which waits for the
// statements in flight, returns.
func TestBatchSendAgainFailedFreesPoolSlot(t *testing.T) {
	ctx := testCtx(t)
	p, err := NewPool(ctx, srv.DSN("pool_max_conns=1 pool_max_pipeline=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if !poolClosesWithin(p, 5*time.Second) {
			t.Error("Pool.Close hangs: a slot was never given back")
		}
	}()
	var b Batch
	b.Queue("SELECT 1")
	b.Queue("SELECT 2")
	br := p.SendBatch(ctx, &b)
	if br.pooled == nil || br.req == nil {
		t.Fatalf("the batch holds no pool connection (%v)", br.err)
	}
	// The state resendRefused leaves when the second send fails.
	if err := br.release(); err != nil {
		t.Fatal(err)
	}
	sendErr := errors.New("the batch sent again failed")
	br.err = sendErr
	if err := br.Close(); err != sendErr {
		t.Fatalf("Close: %v, want the send's error", err)
	}
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var n int
	if err := p.QueryRow(qctx, "SELECT 7").Scan(&n); err != nil || n != 7 {
		t.Errorf("the next statement on a pool of one slot: %d, %v (the batch kept its slot)", n, err)
	}
}
