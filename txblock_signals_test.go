package pgline

// Stranded blocks under a storm of cancel signals (pg_cancel_backend at
// the connection's backend, or at PgBouncer's server sessions) on a Conn
// that many goroutines share: a signal landing in a transaction's BEGIN,
// COMMIT or ROLLBACK, or in a text with its own BEGIN and COMMIT, leaves
// an aborted block that pgline rolls back. Every INSERT reported
// successful exists exactly once, none reported failed exists (other than
// by its own ctx, whose outcome is unknown), a Commit's report matches
// the rows, echo callers get their own values and never a 25P02 from a
// block they did not open, notifications arrive once, and the Conn ends
// outside any transaction.

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

	"github.com/pgline/pgline/internal/session"
)

// TestStrandSignalsInsertsOnceStorm: INSERTs by QueryRow, Exec with
// arguments and Exec of a simple query, on one Conn under a storm, in each
// pipeline mode, with and without short ctx deadlines.
func TestStrandSignalsInsertsOnceStorm(t *testing.T) {
	storm(t)
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
				tbl := fmt.Sprintf("strand_once_%d", time.Now().UnixNano())
				if _, err := admin.Exec(ctx, "CREATE TABLE "+tbl+" (k int8)"); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { admin.Exec(context.Background(), "DROP TABLE "+tbl) })
				if listen {
					// Before the storm, which would cancel the LISTEN too.
					if err := c.Listen(ctx, "strand_once"); err != nil {
						t.Fatal(err)
					}
				}
				stop := make(chan struct{})
				storm := cancelStorm(t, ctx, c.PID(), 400*time.Microsecond, stop)
				o := newInsertOutcomes()
				l := newLoopLoad(t, 600*time.Millisecond, 10)
				var seq atomic.Int64
				var kind atomic.Int64
				if listen {
					// A wait for notifications on the same Conn: its steps
					// aside split the Sync groups (many more strands).
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
					if pgCode(err) == "25P02" && !errors.Is(err, session.ErrRefused) {
						l.fail("insert %d: a 25P02 from a block it did not open: %v", v, err)
					}
					o.note(v, qctx, err)
				})
				l.wait()
				close(stop)
				storm.Wait()
				t.Logf("blocks rolled back %d", c.s.Block.Strands.Load())
				wantUsable(t, ctx, c)
				o.check(t, ctx, admin, tbl)
			})
		}
	}
}

// TestStrandSignalsCommitCtx: transactions whose Commit has a short ctx
// (the COMMIT given up, its reply drained after the connection is let
// go, and maybe canceled by pgline) on a Conn that echo callers share,
// under the storm. What a Commit reports matches what exists: committed
// rows for nil, none for an error other than the ctx's.
func TestStrandSignalsCommitCtx(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN("cancel_grace=1ms"))
	tbl, admin := strandTable(t, "txctx")
	stop := make(chan struct{})
	storm := cancelStorm(t, ctx, c.PID(), 300*time.Microsecond, stop)
	o := newInsertOutcomes()
	l := newLoopLoad(t, time.Second, 10)
	var seq atomic.Int64
	l.spawn(15, func() {
		v := seq.Add(1)
		var got int64
		err := c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
		if err == nil && got != v || err != nil && pgCode(err) != "57014" {
			l.fail("echo: sent %d, got %d, %v", v, got, err)
		}
	})
	l.spawn(3, func() {
		tx, err := c.Begin(ctx)
		if err != nil {
			if pgCode(err) != "57014" {
				l.fail("begin: %v", err)
			}
			return
		}
		v := seq.Add(1)
		if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", v); err != nil {
			if pgCode(err) != "57014" {
				l.fail("insert: %v", err)
			}
			tx.Rollback(ctx)
			o.note(v, ctx, err)
			return
		}
		cctx, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(1500))*time.Microsecond)
		defer cancel()
		start := time.Now()
		err = tx.Commit(cctx)
		if el := time.Since(start); el > time.Second { // -race on a small, loaded machine
			l.fail("Commit answered after %v (deadline ~1.5ms): %v", el, err)
		}
		if err != nil && pgCode(err) != "57014" && !errors.Is(err, ErrTxRolledBack) && !errors.Is(err, context.DeadlineExceeded) {
			l.fail("commit: %v", err)
		}
		o.note(v, cctx, err)
	})
	l.wait()
	close(stop)
	storm.Wait()
	t.Logf("blocks rolled back %d", c.s.Block.Strands.Load())
	wantUsable(t, ctx, c)
	o.check(t, ctx, admin, tbl)
}

// TestStrandSignalsNestedTx: a transaction with a savepoint under the storm,
// the nested transaction committed or rolled back, the outer committed;
// another goroutine shares the Conn. A row of the outer transaction
// exists iff its Commit returned nil; the nested one's iff, besides, the
// nested Commit returned nil.
func TestStrandSignalsNestedTx(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	tbl, admin := strandTable(t, "nested")
	stop := make(chan struct{})
	storm := cancelStorm(t, ctx, c.PID(), 300*time.Microsecond, stop)
	var mu sync.Mutex
	want := map[int64]bool{} // key -> must exist
	l := newLoopLoad(t, time.Second, 10)
	var seq atomic.Int64
	l.spawn(10, func() {
		v := seq.Add(1)
		var got int64
		err := c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
		if err == nil && got != v || err != nil && pgCode(err) != "57014" {
			l.fail("echo: sent %d, got %d, %v", v, got, err)
		}
	})
	l.spawn(2, func() {
		tx, err := c.Begin(ctx)
		if err != nil {
			if pgCode(err) != "57014" {
				l.fail("begin: %v", err)
			}
			return
		}
		a, b := seq.Add(1), seq.Add(1)
		var errs []error
		_, err = tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", a)
		errs = append(errs, err)
		nestedOK := false
		if sp, err := tx.Begin(ctx); err == nil {
			_, err = sp.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", b)
			errs = append(errs, err)
			if rand.N(2) == 0 {
				err = sp.Commit(ctx)
				nestedOK = err == nil
			} else {
				err = sp.Rollback(ctx)
			}
			errs = append(errs, err)
		} else {
			errs = append(errs, err)
		}
		err = tx.Commit(ctx)
		for _, e := range errs {
			if e != nil && pgCode(e) != "57014" && pgCode(e) != "25P02" {
				l.fail("in the transaction: %v", e)
			}
		}
		if err != nil && pgCode(err) != "57014" && !errors.Is(err, ErrTxRolledBack) {
			l.fail("commit: %v", err)
		}
		mu.Lock()
		want[a] = err == nil && errs[0] == nil
		want[b] = err == nil && nestedOK && errs[1] == nil
		mu.Unlock()
	})
	l.wait()
	close(stop)
	storm.Wait()
	wantUsable(t, ctx, c)
	have := map[int64]bool{}
	for _, k := range kValues(t, admin, tbl) {
		if have[k] {
			t.Errorf("row %d twice", k)
		}
		have[k] = true
	}
	bad := 0
	for k, w := range want {
		if have[k] != w && bad < 10 {
			bad++
			t.Errorf("row %d exists %v, want %v", k, have[k], w)
		}
	}
	t.Logf("transactions %d, blocks rolled back %d", len(want)/2, c.s.Block.Strands.Load())
}

// TestStrandSignalsRawTxText: the same with no error of the caller's
// own: Exec("BEGIN; INSERT ...; COMMIT") under a storm of signals. A
// signal landing in the INSERT (or before the COMMIT ran) leaves the
// session in the aborted block after the call has returned its 57014;
// every later statement, whoever sends it, fails with 25P02.
func TestStrandSignalsRawTxText(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	tbl, _ := strandTable(t, "rawsig")
	stop := make(chan struct{})
	storm := cancelStorm(t, ctx, c.PID(), 300*time.Microsecond, stop)
	defer func() { close(stop); storm.Wait() }()
	calls, failed, stuck := 0, 0, 0
	end := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(end) {
		calls++
		_, callErr := c.Exec(ctx, "BEGIN; INSERT INTO "+tbl+" SELECT generate_series(1, 50); COMMIT")
		if callErr == nil {
			continue
		}
		failed++
		if c.TxStatus() != 'I' {
			stuck++
			// What another caller of the Conn would get now.
			var v int64
			err := c.QueryRow(ctx, "SELECT 1::int8").Scan(&v)
			if stuck == 1 {
				t.Logf("after the call's %v: TxStatus %c, next statement: %v", callErr, c.TxStatus(), err)
			}
			if _, err := c.Exec(ctx, "ROLLBACK"); err != nil { // to go on
				t.Fatal(err)
			}
		}
	}
	t.Logf("calls %d, failed %d, left the session in an aborted block %d", calls, failed, stuck)
	if stuck > 0 {
		t.Errorf("%d of %d calls left the session in an aborted transaction block that nobody holds", stuck, calls)
	}
}

// TestStrandSignalsListenStorm: a Conn that LISTENs and waits for
// notifications in one goroutine while others share it under the storm
// (the stranded blocks' ROLLBACKs are queued while the wait reads the
// idle connection). Every notification sent arrives once, every echo is
// its caller's, and the wait keeps its deadlines.
func TestStrandSignalsListenStorm(t *testing.T) {
	storm(t)
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	notifier := connect(t, srv.DSN())
	ch := fmt.Sprintf("strand_%d", time.Now().UnixNano())
	// LISTEN itself may be hit by a signal.
	var err error
	for range 5 {
		if err = c.Listen(ctx, ch); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	storm := cancelStorm(t, ctx, c.PID(), 300*time.Microsecond, stop)
	l := newLoopLoad(t, time.Second, 10)
	var seq, sent atomic.Int64
	l.spawn(20, func() {
		v := seq.Add(1)
		var got int64
		err := c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
		if err == nil && got != v || err != nil && pgCode(err) != "57014" {
			l.fail("sent %d, got %d, %v", v, got, err)
		}
	})
	l.spawn(1, func() {
		n := sent.Load() + 1
		if _, err := notifier.Exec(ctx, "SELECT pg_notify($1, $2)", ch, strconv.FormatInt(n, 10)); err != nil {
			l.fail("notify: %v", err)
			return
		}
		sent.Store(n)
		time.Sleep(time.Millisecond)
	})
	got := map[string]int{}
	var waitErr error
	recvDone := make(chan struct{})
	go func() {
		defer close(recvDone)
		deadline := time.Now().Add(2500 * time.Millisecond)
		for time.Now().Before(deadline) {
			wctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			start := time.Now()
			n, err := c.WaitForNotification(wctx)
			cancel()
			if el := time.Since(start); el > 250*time.Millisecond {
				waitErr = fmt.Errorf("WaitForNotification returned after %v (deadline 20ms): %v", el, err)
				return
			}
			if err != nil {
				if !errors.Is(err, context.DeadlineExceeded) {
					waitErr = err
					return
				}
				continue
			}
			got[n.Payload]++
		}
	}()
	l.wait()
	close(stop)
	storm.Wait()
	<-recvDone
	if waitErr != nil {
		t.Fatal(waitErr)
	}
	// Drain what is still on its way.
	for {
		wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		n, err := c.WaitForNotification(wctx)
		cancel()
		if err != nil {
			break
		}
		got[n.Payload]++
	}
	missing, dup := 0, 0
	for i := int64(1); i <= sent.Load(); i++ {
		switch got[strconv.FormatInt(i, 10)] {
		case 0:
			missing++
		case 1:
		default:
			dup++
		}
	}
	t.Logf("notifications sent %d, received %d distinct, blocks rolled back %d", sent.Load(), len(got), c.s.Block.Strands.Load())
	if missing+dup > 0 {
		t.Errorf("%d notifications missing, %d received twice", missing, dup)
	}
	wantUsable(t, ctx, c)
}

// TestStrandSignalsBouncerStorm: through a real PgBouncer in transaction
// mode (statement_cache_mode=describe, as auto picks behind a pooler),
// one Conn shared by many goroutines, a storm of pg_cancel_backend at
// the server sessions PgBouncer links it to: INSERTs run exactly once,
// echo values go to their own caller, no caller gets a 25P02 from a
// block it did not open, and no server session is left in a transaction.
func TestStrandSignalsBouncerStorm(t *testing.T) {
	storm(t)
	for _, extra := range [][]string{{"statement_cache_mode=describe"}, {"statement_cache_mode=describe", "cancel_grace=1ms"}} {
		t.Run(fmt.Sprint(extra), func(t *testing.T) {
			b := startSmallBouncer(t, "transaction", "default_pool_size = 2")
			ctx := testCtx(t)
			c := bouncerConn(t, b, extra...)
			tbl, admin := strandTable(t, "bouncer")
			app := "strand_killer"
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
			o := newInsertOutcomes()
			l := newLoopLoad(t, time.Second, 10)
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
					if err != nil && pgCode(err) != "57014" && !errors.Is(err, ErrCanceledByOther) {
						l.fail("echo %d: %v", v, err)
					}
				}
				if pgCode(err) == "25P02" && !errors.Is(err, session.ErrRefused) {
					l.fail("%d: 25P02 from a block it did not open: %v", v, err)
				}
			})
			l.spawn(1, func() { strandTx(ctx, l, c.Begin, tbl, &seq, o) })
			l.wait()
			close(stop)
			<-stormDone
			t.Logf("signals %d, blocks rolled back %d", signals.Load(), c.s.Block.Strands.Load())
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
