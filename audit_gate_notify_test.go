package pgline

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestAuditGateNotificationInOthersReply: a notification that the server
// sends in front of another goroutine's reply is kept by the Conn
// (pushNotification) while WaitForNotification waits behind that
// goroutine's request: once it has the turn it waits for a new message
// (waitOnce never looks at the notifications kept meanwhile) and returns
// ctx's error at its deadline, the notification still kept.
//
//	S: SELECT pg_sleep(0.2)       the backend is busy; a NOTIFY from another session arrives
//	T: SELECT 1                   queued behind S: the backend sends the notification as it reads T
//	W: WaitForNotification(1s)    queued behind T
func TestAuditGateNotificationInOthersReply(t *testing.T) {
	c := auditConn(t)
	other := auditConn(t)
	ctx := testCtx(t)
	if err := c.Listen(ctx, "audit_gate_ch"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.Exec(ctx, "SELECT pg_sleep(0.2) /* S */") }()
	time.Sleep(20 * time.Millisecond)
	go func() { defer wg.Done(); c.Exec(ctx, "SELECT 1 /* T */") }()
	time.Sleep(20 * time.Millisecond)
	type res struct {
		n   *Notification
		err error
		d   time.Duration
	}
	wDone := make(chan res, 1)
	go func() {
		wctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		n, err := c.WaitForNotification(wctx)
		wDone <- res{n, err, time.Since(start)}
	}()
	time.Sleep(20 * time.Millisecond)
	if _, err := other.Exec(ctx, "NOTIFY audit_gate_ch, 'hello'"); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	wg.Wait()
	r := <-wDone
	t.Logf("W: %v, %v after it started (NOTIFY committed %v before W returned)", r.n, r.err, time.Since(sent).Round(time.Millisecond))
	if r.err != nil {
		// Was the notification there all along?
		qctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		n, err := c.WaitForNotification(qctx)
		cancel()
		t.Errorf("WaitForNotification returned %v at its deadline although the notification had arrived ~%v before; a call right after returns it at once: %v %v",
			r.err, (r.d - 60*time.Millisecond).Round(10*time.Millisecond), n, err)
	}
}
