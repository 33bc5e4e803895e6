package pgline

// Audit of the writer takeover (flushLocked/overdueLocked, be9dffd): many
// goroutines sharing one Conn, each checking the echo of its own unique
// value, so that a reply delivered to the wrong caller, a statement lost,
// doubled or reordered, or bytes of two writers interleaved shows.

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestAuditTakeoverShortCtx: echo goroutines mixed with goroutines whose
// ctx ends after a random few microseconds (abandoned requests drained by
// others, cancels held with c.cancelling). Every answer that arrives must
// be the caller's own; a ctx error must come within a bound of its
// deadline; the connection must stay usable.
func TestAuditTakeoverShortCtx(t *testing.T) {
	for _, dsn := range []string{"", "pipeline_sync=each"} {
		t.Run(dsn, func(t *testing.T) {
			c := connect(t, srv.DSN(dsn, "cancel_grace=1ms"))
			ctx := testCtx(t)
			var seq atomic.Int64
			var wg sync.WaitGroup
			var bad, late, ctxErrs, oks, maxEcho atomic.Int64
			end := time.Now().Add(time.Second)
			for i := 0; i < 200; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					short := i%8 == 0
					for time.Now().Before(end) && bad.Load() < 10 {
						v := seq.Add(1)
						qctx, cancel := ctx, context.CancelFunc(func() {})
						var deadline time.Time
						sql := "SELECT $1::int8"
						if short {
							d := time.Duration(rand.IntN(300)) * time.Microsecond
							deadline = time.Now().Add(d)
							qctx, cancel = context.WithDeadline(ctx, deadline)
							if rand.IntN(20) == 0 {
								sql = "SELECT $1::int8 FROM pg_sleep(0.002)"
							}
						}
						var got int64
						t0 := time.Now()
						err := c.QueryRow(qctx, sql, v).Scan(&got)
						if el := int64(time.Since(t0)); !short && el > maxEcho.Load() {
							maxEcho.Store(el)
						}
						cancel()
						switch {
						case err == nil && got == v:
							oks.Add(1)
						case err != nil && short && errors.Is(err, context.DeadlineExceeded):
							ctxErrs.Add(1)
							if over := time.Since(deadline); over > 500*time.Millisecond {
								late.Add(1)
								t.Errorf("ctx error %v after the deadline", over)
							}
						default:
							bad.Add(1)
							t.Errorf("short=%v sent %d, got %d, %v", short, v, got, err)
						}
					}
				}()
			}
			wg.Wait()
			t.Logf("ok %d, ctx errors %d, takeovers %d, slowest echo %v", oks.Load(), ctxErrs.Load(), auditTakeovers(c), time.Duration(maxEcho.Load()))
			var v int64
			if err := c.QueryRow(ctx, "SELECT 77::int8").Scan(&v); err != nil || v != 77 {
				t.Fatalf("after: %d %v", v, err)
			}
			auditQuiescent(t, c)
		})
	}
}
