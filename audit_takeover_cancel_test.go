package pgline

// Audit of the writer takeover (be9dffd) under cancels: pg_cancel_backend
// from another session and abandoned heads whose drain holds writes with a
// CancelRequest (c.cancelling), while echo goroutines take the yielding
// writer's role over. A caller may get 57014 or its ctx's error, never
// another caller's value; the connection must stay in sync.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestAuditTakeoverCancelStorm(t *testing.T) {
	for _, dsn := range []string{"", "pipeline_sync=each"} {
		for _, withCtx := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/ctx=%v", dsn, withCtx), func(t *testing.T) {
				c := connect(t, srv.DSN(dsn, "cancel_grace=1ms"))
				killer := connect(t, srv.DSN())
				ctx := testCtx(t)
				var seq, bad, oks, canceled, ctxErrs atomic.Int64
				end := time.Now().Add(time.Second)
				var wg sync.WaitGroup
				for i := 0; i < 60; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for time.Now().Before(end) && bad.Load() < 10 {
							v := seq.Add(1)
							qctx, cancel := ctx, context.CancelFunc(func() {})
							sql := "SELECT $1::int8"
							switch {
							case withCtx && i%10 == 0:
								qctx, cancel = context.WithTimeout(ctx, time.Duration(rand.IntN(2000))*time.Microsecond)
								sql = "SELECT $1::int8 FROM pg_sleep(0.001)"
							case i%4 == 0:
								sql = "SELECT $1::int8 FROM pg_sleep(0.0005)"
							}
							var got int64
							err := c.QueryRow(qctx, sql, v).Scan(&got)
							cancel()
							var pe *PgError
							switch {
							case err == nil && got == v:
								oks.Add(1)
							case errors.As(err, &pe) && pe.Code == "57014":
								canceled.Add(1)
							case err != nil && qctx.Err() != nil && errors.Is(err, qctx.Err()):
								ctxErrs.Add(1)
							default:
								bad.Add(1)
								t.Errorf("sent %d got %d %v", v, got, err)
							}
						}
					}()
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for time.Now().Before(end) {
						if _, err := killer.Exec(ctx, "SELECT pg_cancel_backend($1)", int32(c.PID())); err != nil {
							t.Error(err)
							return
						}
						time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
					}
				}()
				wg.Wait()
				t.Logf("ok %d, 57014 %d, ctx %d, takeovers %d", oks.Load(), canceled.Load(), ctxErrs.Load(), auditTakeovers(c))
				// In sync afterwards (a stray cancel may still hit: retry once).
				var v int64
				err := c.QueryRow(ctx, "SELECT 31337::int8").Scan(&v)
				if err != nil {
					err = c.QueryRow(ctx, "SELECT 31337::int8").Scan(&v)
				}
				if err != nil || v != 31337 {
					t.Fatalf("after: %d %v", v, err)
				}
				auditQuiescent(t, c)
				if auditTakeovers(c) == 0 {
					t.Errorf("no takeover happened")
				}
			})
		}
	}
}
