package pgline

// Through a Pool: a storm of pg_cancel_backend signals
// at every backend of the pool (found by application_name), with echo
// QueryRows, INSERTs (each must exist iff reported successful, never
// twice), batches and transactions. No caller may get a 25P02 from a
// block it did not open, and afterwards no backend of the pool may be
// left in a transaction.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// seen records the backends appStorm signalled.
var (
	seenMu sync.Mutex
	seen   = map[int32]bool{}
)

// appStorm signals every backend whose application_name is app, with
// pauses of up to maxPause, until stop is closed; it counts the signals.
// Backends still starting are left alone: PostgreSQL 18 lists them (state
// 'starting', with the application_name of the startup message), and a
// signal there fails the connection attempt, which the storms are not
// about and which would show as one more backend of the Pool.
func appStorm(t *testing.T, ctx context.Context, app string, maxPause time.Duration, stop <-chan struct{}) (*sync.WaitGroup, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	wg := signalLoop(t, maxPause, stop, func(killer *Conn) error {
		var k int64
		var pids []int32
		err := killer.QueryRow(ctx, "SELECT count(pg_cancel_backend(pid)), coalesce(array_agg(pid), '{}') FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid() AND state IS DISTINCT FROM 'starting'", app).Scan(&k, &pids)
		if err != nil {
			return err
		}
		n.Add(k)
		seenMu.Lock()
		for _, p := range pids {
			seen[p] = true
		}
		seenMu.Unlock()
		return nil
	})
	return wg, &n
}

func TestPoolSignalsStorm(t *testing.T) {
	storm(t)
	for _, mode := range []string{"", "statement_cache_mode=describe"} {
		t.Run(mode, func(t *testing.T) {
			ctx := testCtx(t)
			app := fmt.Sprintf("strand_pool_%d", time.Now().UnixNano())
			p, err := NewPool(ctx, srv.DSN(mode, "application_name="+app, "pool_max_conns=3", "cancel_grace=1ms"))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			tbl, admin := strandTable(t, "pool")
			stop := make(chan struct{})
			storm, signals := appStorm(t, ctx, app, 300*time.Microsecond, stop)
			o := newInsertOutcomes()
			l := newLoopLoad(t, time.Second, 10)
			var seq atomic.Int64
			l.spawn(30, func() {
				v := seq.Add(1)
				var got int64
				var err error
				if v%2 == 0 {
					err = p.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
					if err == nil && got != v {
						l.fail("sent %d, got %d", v, got)
					}
				} else {
					qctx, cancel := ctx, context.CancelFunc(func() {})
					if v%7 == 0 {
						qctx, cancel = context.WithTimeout(ctx, time.Duration(rand.IntN(2000))*time.Microsecond)
					}
					_, err = p.Exec(qctx, "INSERT INTO "+tbl+" VALUES ($1)", v)
					cancel()
					o.note(v, qctx, err)
				}
				if pgCode(err) == "25P02" && !errors.Is(err, session.ErrRefused) {
					l.fail("%d: 25P02 from a block it did not open: %v", v, err)
				}
			})
			l.spawn(2, func() { strandTx(ctx, l, p.Begin, tbl, &seq, o) })
			l.wait()
			close(stop)
			storm.Wait()
			// Late signals: wait for in-flight work to settle, then check.
			time.Sleep(50 * time.Millisecond)
			var v int64
			for i := 0; i < 3; i++ {
				if err = p.QueryRow(ctx, "SELECT 4242::int8").Scan(&v); err == nil {
					break
				}
			}
			if err != nil || v != 4242 {
				t.Fatalf("after the storm: %d %v", v, err)
			}
			var stuck int64
			if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state LIKE 'idle in transaction%'", app).Scan(&stuck); err != nil {
				t.Fatal(err)
			}
			if stuck != 0 {
				t.Errorf("%d backends of the pool left in a transaction", stuck)
			}
			st := p.Stat()
			seenMu.Lock()
			t.Logf("signals %d, backends seen %d, stat %+v", signals.Load(), len(seen), st.Hosts)
			clear(seen)
			seenMu.Unlock()
			o.check(t, ctx, admin, tbl)
		})
	}
}

// strandTx runs one transaction of the storm tests: an INSERT of a
// fresh negative value, committed; each outcome is noted in o, and an
// error other than a cancel's (or the rollback it causes) fails l.
func strandTx(ctx context.Context, l *loopLoad, begin func(context.Context) (*Tx, error), tbl string, seq *atomic.Int64, o *insertOutcomes) {
	tx, err := begin(ctx)
	if err != nil {
		if pgCode(err) != "57014" {
			l.fail("begin: %v", err)
		}
		return
	}
	v := -seq.Add(1)
	_, err = tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", v)
	if err != nil && pgCode(err) != "57014" {
		l.fail("tx insert: %v", err)
	}
	err = tx.Commit(ctx)
	if err != nil && pgCode(err) != "57014" && !errors.Is(err, ErrTxRolledBack) {
		l.fail("commit: %v", err)
	}
	o.note(v, ctx, err)
}
