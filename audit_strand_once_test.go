package pgline

// Audit of 995b187 (stranded transaction blocks rolled back, refused
// requests sent again): INSERTs on one shared Conn under a storm of
// pg_cancel_backend signals, mixed with callers whose short ctx makes
// pgline send its own CancelRequests. Every INSERT reported successful
// must exist exactly once, every one reported failed (other than by its
// own ctx, whose outcome is unknown) must not exist, and none may exist
// twice (a resend of something that ran).

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"

	"sync/atomic"
	"testing"
	"time"
)

// TestStrandSignalsInsertsOnceStorm: INSERTs by QueryRow, Exec with arguments and
// Exec of a simple query, on one Conn under a storm, in each pipeline
// mode, with and without short ctx deadlines.
func TestStrandSignalsInsertsOnceStorm(t *testing.T) {
	for _, mode := range []string{"", "statement_cache_mode=describe", "pipeline_sync=each", "listen"} {
		for _, short := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/short=%v", mode, short), func(t *testing.T) {
				listen, mode := mode == "listen", mode
				if listen {
					mode = ""
				}
				ctx := testCtx(t)
				c := connect(t, srv.DSN(mode, "cancel_grace=1ms"))
				admin := connect(t, srv.DSN())
				tbl := fmt.Sprintf("audit_strand_once_%d", time.Now().UnixNano())
				if _, err := admin.Exec(ctx, "CREATE TABLE "+tbl+" (k int8)"); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { admin.Exec(context.Background(), "DROP TABLE "+tbl) })
				stop := make(chan struct{})
				storm := cancelStorm(t, ctx, c.PID(), 400*time.Microsecond, stop)
				o := newAuditStrandOutcomes()
				l := newAuditLoad(t, 600*time.Millisecond, 10)
				var seq atomic.Int64
				var kind atomic.Int64
				if listen {
					// A wait for notifications on the same Conn: its steps
					// aside split the Sync groups (many more strands).
					if err := c.Listen(ctx, "audit_strand_once"); err != nil {
						t.Fatal(err)
					}
					l.spawn(1, func() {
						wctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
						defer cancel()
						if _, err := c.WaitForNotification(wctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
							l.fail("wait: %v", err)
						}
					})
				}
				l.spawn(40, func() {
					v := seq.Add(1)
					qctx, cancel := ctx, context.CancelFunc(func() {})
					if short && v%5 == 0 {
						qctx, cancel = context.WithTimeout(ctx, time.Duration(rand.IntN(3000))*time.Microsecond)
					}
					defer cancel()
					var err error
					switch kind.Add(1) % 3 {
					case 0:
						var got int64
						err = c.QueryRow(qctx, "INSERT INTO "+tbl+" VALUES ($1) RETURNING k", v).Scan(&got)
						if err == nil && got != v {
							l.fail("inserted %d, got back %d", v, got)
						}
					case 1:
						var tag CommandTag
						tag, err = c.Exec(qctx, "INSERT INTO "+tbl+" VALUES ($1)", v)
						if err == nil && tag.String() != "INSERT 0 1" {
							l.fail("insert %d: tag %q", v, tag.String())
						}
					case 2:
						_, err = c.Exec(qctx, "INSERT INTO "+tbl+" VALUES ("+strconv.FormatInt(v, 10)+")")
					}
					if isCode(err, "25P02") && !errors.Is(err, errRefused) {
						l.fail("insert %d: a 25P02 from a block it did not open: %v", v, err)
					}
					o.note(v, qctx, err)
				})
				l.wait()
				close(stop)
				storm.Wait()
				t.Logf("blocks rolled back %d", c.strands.Load())
				wantUsable(t, ctx, c)
				o.check(t, ctx, admin, tbl)
			})
		}
	}
}
