package pgline

import (
	"context"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// TestWriteAfterServerEndedIsSafeToRetry: the server ends an idle session
// (pg_terminate_backend: a FATAL, then the socket's end) while the
// connection's reader is held by open rows. A statement is written into
// the ended socket (the kernel takes it; the server's side answers with a
// reset), and the next one's write fails (EPIPE). Neither ran: the
// server's FATAL, still unread, came before them. Both must be
// SafeToRetry. Before, the failed write closed the connection at once, the
// FATAL was never read, and the first statement's error said it may have
// run (a Pool did not send it again: TestPoolRestartNoSafeToRetryErrors
// failed 1 run in 15).
func TestWriteAfterServerEndedIsSafeToRetry(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	admin := connect(t, srv.DSN())
	rows, err := c.Query(ctx, "SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend($1)", int(c.PID())); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the FATAL and the socket's end arrive
	errs := make(chan error, 2)
	run := func() {
		var n int
		errs <- c.QueryRow(context.Background(), "SELECT 1").Scan(&n)
	}
	go run()
	time.Sleep(50 * time.Millisecond) // written; the reset comes back
	go run()
	time.Sleep(50 * time.Millisecond) // its write fails
	rows.Close()
	for range 2 {
		select {
		case err := <-errs:
			if err == nil || !session.SafeToRetry(err) {
				t.Errorf("a statement sent after the server ended the session: %v, SafeToRetry %v; want SafeToRetry", err, session.SafeToRetry(err))
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a statement did not return")
		}
	}
	if !c.IsClosed() {
		t.Error("the connection is not closed")
	}
}
