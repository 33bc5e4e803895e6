package pgline

// Audit of the write path (flushLocked, writeLocked, flushRest,
// writeFailed): deadlines kept while the server does not read,
// SafeToRetry only for requests none of whose bytes reached the socket,
// every caller its own result, no goroutine left behind after Close.

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestDrainWaitsForUnsentHead: the head's statement is still in
// the write buffer (its writer has not run yet: a flusher goroutine not
// yet scheduled, played here by holding the writer's role) when its ctx
// ends. Its drain must not cancel and hold writes (cancelHeld) before the
// statement was sent: the reply could then never come, and cancel_timeout
// later the connection would close under the requests behind.
func TestDrainWaitsForUnsentHead(t *testing.T) {
	c := connect(t, srv.DSN("cancel_timeout=2s cancel_grace=0s"))
	bg := context.Background()
	c.wmu.Lock()
	c.flushing = true // a writer that has not run yet
	c.wmu.Unlock()
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	_, err := c.Exec(ctx, "SELECT 1")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Exec: %v; want its ctx's error", err)
	}
	time.Sleep(300 * time.Millisecond) // the drain probes meanwhile
	c.wmu.Lock()
	c.flushing = false
	start := c.takeWriterLocked()
	c.wmu.Unlock()
	if !start {
		t.Fatal("writes are held (a cancel for a statement never sent)")
	}
	go c.flushLoop()
	var v int
	if err := c.QueryRow(bg, "SELECT 42").Scan(&v); err != nil || v != 42 {
		t.Fatalf("after: %d, %v", v, err)
	}
}
