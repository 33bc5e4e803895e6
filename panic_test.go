package pgline

import (
	"context"
	"testing"
	"time"
)

// panicScanner panics when scanned into.
type panicScanner struct{}

func (*panicScanner) Scan(any) error { panic("scanner exploded") }

// TestRowScanPanicHandsTurnOn: a Scanner that panics inside Row.Scan does
// not leave the reply holding the connection: after the panic is
// recovered, the statements queued behind it (and later ones) get their
// own replies.
func TestRowScanPanicHandsTurnOn(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	func() {
		defer func() {
			if p := recover(); p != "scanner exploded" {
				t.Errorf("recovered %v", p)
			}
		}()
		c.QueryRow(ctx, "SELECT 1 FROM generate_series(1, 3)").Scan(&panicScanner{})
	}()
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var n int
	if err := c.QueryRow(qctx, "SELECT 42").Scan(&n); err != nil || n != 42 {
		t.Fatalf("after the panic: %d, %v", n, err)
	}
}
