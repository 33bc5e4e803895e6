package pgline

// Audit of 995b187 through a real PgBouncer in transaction mode
// (statement_cache_mode=describe, as auto picks behind a pooler): one
// Conn shared by many goroutines, a storm of pg_cancel_backend at the
// server backend PgBouncer links it to, INSERTs checked for exactly-once
// and echo values for their own caller; no caller may get a 25P02 from a
// block it did not open, and no server session may be left in a
// transaction.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
)

func TestStrandSignalsBouncerStorm(t *testing.T) {
	for _, extra := range [][]string{{"statement_cache_mode=describe"}, {"statement_cache_mode=describe", "cancel_grace=1ms"}} {
		t.Run(fmt.Sprint(extra), func(t *testing.T) {
			b := startAuditBouncer(t, "transaction", "default_pool_size = 2")
			ctx := testCtx(t)
			c := auditBouncerConn(t, b, extra...)
			tbl, admin := auditStrandTable(t, "bouncer")
			app := "audit_strand_killer"
			killer := connect(t, srv.DSN("application_name="+app))
			stop := make(chan struct{})
			var signals atomic.Int64
			stormDone := make(chan struct{})
			go func() {
				defer close(stormDone)
				for {
					select {
					case <-stop:
						return
					default:
					}
					var k int64
					// Every client backend of the test database but the
					// killer's and the admin's: PgBouncer's server sessions.
					err := killer.QueryRow(ctx, `SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity
						WHERE backend_type = 'client backend' AND datname = current_database()
						AND pid <> pg_backend_pid() AND pid <> $1`, int32(admin.PID())).Scan(&k)
					if err != nil {
						t.Error(err)
						return
					}
					signals.Add(k)
					time.Sleep(rand.N(400 * time.Microsecond))
				}
			}()
			o := newAuditStrandOutcomes()
			l := newAuditLoad(t, time.Second, 10)
			var seq atomic.Int64
			l.spawn(30, func() {
				v := seq.Add(1)
				var err error
				if v%3 == 0 {
					qctx, cancel := ctx, context.CancelFunc(func() {})
					if v%9 == 0 {
						qctx, cancel = context.WithTimeout(ctx, time.Duration(rand.IntN(3000))*time.Microsecond)
					}
					_, err = c.Exec(qctx, "INSERT INTO "+tbl+" VALUES ($1)", v)
					cancel()
					o.note(v, qctx, err)
				} else {
					var got int64
					err = c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
					if err == nil && got != v {
						l.fail("sent %d, got %d", v, got)
					}
					if err != nil && !isCode(err, "57014") && !errors.Is(err, ErrCanceledByOther) {
						l.fail("echo %d: %v", v, err)
					}
				}
				if isCode(err, "25P02") && !errors.Is(err, errRefused) {
					l.fail("%d: 25P02 from a block it did not open: %v", v, err)
				}
			})
			l.spawn(1, func() { auditStrandTx(ctx, l, c.Begin, tbl, &seq, o) })
			l.wait()
			close(stop)
			<-stormDone
			t.Logf("signals %d, blocks rolled back %d", signals.Load(), c.strands.Load())
			wantUsable(t, ctx, c)
			time.Sleep(50 * time.Millisecond)
			var stuck int64
			if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'
				AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()`).Scan(&stuck); err != nil {
				t.Fatal(err)
			}
			if stuck != 0 {
				t.Errorf("%d server sessions left in a transaction", stuck)
			}
			o.check(t, ctx, admin, tbl)
		})
	}
}
