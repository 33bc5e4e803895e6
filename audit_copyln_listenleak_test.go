package pgline

import (
	"context"
	"testing"
	"time"
)

// TestAuditCopylnPoolTxListenLeak: a LISTEN run in a Pool transaction
// stays with the connection (documented); a later Acquire of it that
// never LISTENs gets notifications of that channel from its
// WaitForNotification.
func TestAuditCopylnPoolTxListenLeak(t *testing.T) {
	ctx := testCtx(t)
	p, err := NewPool(ctx, srv.DSN("pool_max_conns=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	other := connect(t, srv.DSN())
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LISTEN cl_leak"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	pc, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Release()
	if _, err := other.Exec(ctx, "NOTIFY cl_leak, 'not yours'"); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	n, err := pc.WaitForNotification(wctx)
	if err == nil {
		t.Errorf("Acquire holder that never LISTENed got %+v", n)
	}
}
