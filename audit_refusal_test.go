package pgline

// Audit of 7ab901f (a Batch refused by a transaction block another
// request stranded is sent again whole, from its first sent statement,
// unless one of its statements is transaction control: mayResendRefused,
// resendRefused) and of the refusal machinery around it (refused,
// rollBackStranded, mayResend). The block is stranded on purpose: a text
// that begins and ends its own block and fails before its COMMIT
// (auditStrander) is queued with writes held, the batch behind it, so
// that the batch sits between the failed text and the ROLLBACK pgline
// queues once it reads the text's reply, and the server refuses it
// (25P02).
//
// TestRefusedBatchWithTxControl, TestStrandedByFailedAtomicBatch and
// TestCallerBlockNotTakenForStranded failed when written (see each); the others are
// regression tests of paths no other test takes.

import (
	"context"

	"fmt"

	"testing"
	"time"
)

// TestPoolRefusedBatchSentAgain: a Pool's batch (one connection) refused by the
// block a Pool's Exec stranded: sent again whole, each statement runs
// once, and the batch gives its slot back on Close (the next statement
// runs; Pool.Close returns).
func TestPoolRefusedBatchSentAgain(t *testing.T) {
	p, closesWithin := auditPoolOfOne(t)
	c := auditPoolConn1(t, p)
	tbl, admin := auditRefusalTable(t, "pool")
	build := func(b *Batch) {
		for k := range int64(3) {
			b.Queue("INSERT INTO "+tbl+" VALUES ($1)", k)
		}
	}
	ctx := testCtx(t)
	b := &Batch{}
	build(b)
	if err := p.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exec(ctx, "DELETE FROM "+tbl); err != nil {
		t.Fatal(err)
	}
	var resends int
	step := auditStrandStep{name: "pool batch", requests: 1, start: func(ctx context.Context) error {
		b := &Batch{}
		build(b)
		br := p.SendBatch(ctx, b)
		for i := range b.Len() {
			if _, err := br.Exec(); err != nil {
				br.Close()
				return fmt.Errorf("statement %d: %w", i, err)
			}
		}
		resends = br.refusedResends
		return br.Close()
	}}
	errs := auditRefuse(t, c, func(ctx context.Context) error { _, err := p.Exec(ctx, auditStrander); return err }, step)
	if errs[0] != nil {
		t.Fatalf("batch: %v", errs[0])
	}
	if resends != 1 {
		t.Fatalf("sent again %d times, want 1", resends)
	}
	if got := fmt.Sprint(auditRows(t, admin, tbl)); got != "[0 1 2]" {
		t.Errorf("rows %s, want [0 1 2]", got)
	}
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var n int
	if err := p.QueryRow(qctx, "SELECT 7").Scan(&n); err != nil || n != 7 {
		t.Errorf("the next statement: %d, %v", n, err)
	}
	if !closesWithin(5 * time.Second) {
		t.Error("Pool.Close hangs: the batch kept its slot")
	}
}
