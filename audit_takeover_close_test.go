package pgline

// Audit of the writer takeover (be9dffd) when the connection ends under
// load: Close from a goroutine, or pg_terminate_backend from another
// session, while callers take the yielding writer's role over. Every
// caller must return (no hang), with its own value or an error.

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestConnEndUnderLoad: the connection ends under load (Close from a
// goroutine, or pg_terminate_backend from another session) while callers
// take the yielding writer's role over. Every caller must return (no
// hang), with its own value or an error.
func TestConnEndUnderLoad(t *testing.T) {
	for _, how := range []string{"close", "terminate"} {
		for round := 0; round < 4; round++ {
			t.Run(fmt.Sprintf("%s/%d", how, round), func(t *testing.T) {
				c := connect(t, srv.DSN())
				killer := connect(t, srv.DSN())
				ctx := testCtx(t)
				var seq, bad, oks, errs atomic.Int64
				var stop atomic.Bool
				var wg sync.WaitGroup
				for i := 0; i < 100; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for !stop.Load() {
							v := seq.Add(1)
							var got int64
							err := c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
							switch {
							case err == nil && got == v:
								oks.Add(1)
							case err != nil:
								errs.Add(1)
								if c.IsClosed() {
									return
								}
							default:
								bad.Add(1)
								t.Errorf("sent %d got %d", v, got)
								return
							}
						}
					}()
				}
				time.Sleep(time.Duration(50+rand.IntN(200)) * time.Millisecond)
				if how == "close" {
					c.Close()
				} else if _, err := killer.Exec(ctx, "SELECT pg_terminate_backend($1)", int32(c.PID())); err != nil {
					t.Fatal(err)
				}
				done := make(chan struct{})
				go func() { wg.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					stop.Store(true)
					t.Fatalf("callers still waiting 10 s after the connection ended (ok %d, errors %d, takeovers %d)", oks.Load(), errs.Load(), writerTakeovers(c))
				}
				t.Logf("ok %d, errors %d, takeovers %d", oks.Load(), errs.Load(), writerTakeovers(c))
			})
		}
	}
}
