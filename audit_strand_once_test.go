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
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// auditStrandOutcomes records what each INSERT's caller was told.
type auditStrandOutcomes struct {
	mu      sync.Mutex
	ok      map[int64]bool
	failed  map[int64]error
	unknown map[int64]bool
}

func newAuditStrandOutcomes() *auditStrandOutcomes {
	return &auditStrandOutcomes{ok: map[int64]bool{}, failed: map[int64]error{}, unknown: map[int64]bool{}}
}

func (o *auditStrandOutcomes) note(v int64, ctx context.Context, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case err == nil:
		o.ok[v] = true
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		o.unknown[v] = true
	default:
		o.failed[v] = err
	}
}

// check compares the outcomes with the rows of tbl (column k).
func (o *auditStrandOutcomes) check(t *testing.T, ctx context.Context, admin *Conn, tbl string) {
	t.Helper()
	rows, err := admin.Query(ctx, "SELECT k, count(*)::int8 FROM "+tbl+" GROUP BY k")
	if err != nil {
		t.Fatal(err)
	}
	present := map[int64]int64{}
	for rows.Next() {
		var k, n int64
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		present[k] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	bad := 0
	report := func(f string, a ...any) {
		if bad++; bad <= 10 {
			t.Errorf(f, a...)
		}
	}
	for k, n := range present {
		if n > 1 {
			report("row %d exists %d times (ran twice)", k, n)
		}
		if err, ok := o.failed[k]; ok {
			report("row %d exists, but its caller was told it failed: %v", k, err)
		}
		if !o.ok[k] && !o.unknown[k] && o.failed[k] == nil {
			report("row %d exists, but nobody inserted it", k)
		}
	}
	for k := range o.ok {
		if present[k] != 1 {
			report("row %d reported inserted, found %d times", k, present[k])
		}
	}
	t.Logf("ok %d, failed %d, unknown (own ctx) %d, rows %d", len(o.ok), len(o.failed), len(o.unknown), len(present))
}

// TestAuditStrandInsertOnce: INSERTs by QueryRow, Exec with arguments and
// Exec of a simple query, on one Conn under a storm, in each pipeline
// mode, with and without short ctx deadlines.
func TestAuditStrandInsertOnce(t *testing.T) {
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
