package pgline

import (
	"errors"
	"testing"
	"time"
)

// TestCloseFailsInFlightWithErrClosed: statements in flight when Close is
// called fail with an error that is ErrClosed (not the socket's "use of
// closed network connection"), whether their reply was being read or
// their turn had not come.
func TestCloseFailsInFlightWithErrClosed(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	errs := make(chan error, 3)
	go func() {
		_, err := c.Exec(ctx, "SELECT pg_sleep(5)")
		errs <- err
	}()
	time.Sleep(100 * time.Millisecond) // the head reads its reply
	for range 2 {
		go func() {
			var v int
			errs <- c.QueryRow(ctx, "SELECT $1::int", 1).Scan(&v)
		}()
	}
	time.Sleep(100 * time.Millisecond) // queued behind it
	c.Close()
	for range 3 {
		select {
		case err := <-errs:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("in flight at Close: %v; want ErrClosed", err)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("a statement in flight did not return after Close")
		}
	}
}
