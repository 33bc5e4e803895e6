package pgline

// Found while auditing be9dffd, not caused by it: SendBatch sets
// req.syncs (batch.go, after send released wmu) while a
// WaitForNotification on the same Conn reads the queue's syncs under wmu
// (othersQueued via request.listens, listen.go). A data race under -race.

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestAuditTakeoverBatchSyncsRace(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	if err := c.Listen(ctx, "audit_takeover_race"); err != nil {
		t.Fatal(err)
	}
	end := time.Now().Add(time.Second)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for time.Now().Before(end) {
			wctx, cancel := context.WithTimeout(ctx, time.Millisecond)
			c.WaitForNotification(wctx)
			cancel()
		}
	}()
	go func() {
		defer wg.Done()
		for time.Now().Before(end) {
			b := &Batch{}
			b.Queue("SELECT 1")
			b.Queue("SELECT 2")
			if err := c.SendBatch(ctx, b).Close(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
}
