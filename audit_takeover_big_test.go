package pgline

// Audit of the writer takeover (be9dffd) with writes the socket does not
// take at once: a takeover whose write is partial leaves the rest to
// flushRest, which keeps the role. Large parameters, a head that keeps the
// server busy (so it stops reading), callers with deadlines behind it.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// auditQuiescent waits for the connection to go idle and checks the
// takeover's bookkeeping: nothing queued, nobody writing or yielding.
func auditQuiescent(t *testing.T, c *Conn) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.wmu.Lock()
		q, f, y, tail, w := c.queued, c.flushing, c.yielding, c.tail, len(c.wbuf)
		c.wmu.Unlock()
		if q == 0 && !f && !y && tail == nil && w == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("not idle: queued %d, flushing %v, yielding %v, tail %v, wbuf %d", q, f, y, tail != nil, w)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAuditTakeoverBigParams(t *testing.T) {
	for _, dsn := range []string{"", "pipeline_sync=each"} {
		t.Run(dsn, func(t *testing.T) {
			c := connect(t, srv.DSN(dsn))
			ctx := testCtx(t)
			var seq, bad, oks, ctxErrs, maxOver atomic.Int64
			end := time.Now().Add(2 * time.Second)
			var wg sync.WaitGroup
			for i := 0; i < 40; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for time.Now().Before(end) && bad.Load() < 10 {
						v := seq.Add(1)
						size := 10 + int(v%7)*40000
						s := strings.Repeat("x", size)
						qctx, cancel := ctx, context.CancelFunc(func() {})
						var deadline time.Time
						sql := "SELECT length($1::text), $2::int8"
						if i%8 == 0 && v%4 == 0 {
							sql = "SELECT length($1::text), $2::int8 FROM pg_sleep(0.005)"
						}
						if i%5 == 0 {
							deadline = time.Now().Add(5 * time.Millisecond)
							qctx, cancel = context.WithDeadline(ctx, deadline)
						}
						var n, got int64
						err := c.QueryRow(qctx, sql, s, v).Scan(&n, &got)
						cancel()
						switch {
						case err == nil && n == int64(size) && got == v:
							oks.Add(1)
						case err != nil && !deadline.IsZero() && errors.Is(err, context.DeadlineExceeded):
							ctxErrs.Add(1)
							over := time.Since(deadline)
							for m := maxOver.Load(); int64(over) > m && !maxOver.CompareAndSwap(m, int64(over)); m = maxOver.Load() {
							}
							if over > time.Second {
								bad.Add(1)
								t.Errorf("ctx error %v past the deadline", over)
							}
						default:
							bad.Add(1)
							t.Errorf("sent %d (%d bytes), got %d (%d) %v", v, size, got, n, err)
						}
					}
				}()
			}
			wg.Wait()
			t.Logf("ok %d, ctx %d, takeovers %d, latest ctx error %v past its deadline", oks.Load(), ctxErrs.Load(), auditTakeovers(c), time.Duration(maxOver.Load()))
			var v int64
			if err := c.QueryRow(ctx, "SELECT 5::int8").Scan(&v); err != nil || v != 5 {
				t.Fatalf("after: %d %v", v, err)
			}
			auditQuiescent(t, c)
			if auditTakeovers(c) == 0 {
				t.Logf("no takeover happened")
			}
		})
	}
}
