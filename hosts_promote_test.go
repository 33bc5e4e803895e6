package pgline

// Role changes under a Pool: a standby promoted (its connections leave the
// standby views), a former primary demoted to a standby (it leaves the
// read-write view), and a promotion under load.

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
)

// TestHostsPromote_StandbyViewLeavesPromoted: a Pool over a primary
// P and a standby S, used only for reads through Target("standby") (and
// Target("read-only")). P is shut down and S promoted: S is a primary now
// and tells each session in_hot_standby=off with its next reply. A call
// through Target("standby") must then run on a standby or fail (no
// standby is left: it waits up to its deadline). A connection open across
// the promotion runs one more statement there (it learns of the promotion
// with that statement's reply, as a libpq connection would go on), no
// more; a connection opened after the promotion (Begin holds one each)
// never serves the view. Before, every read for 2 s ran on the new
// primary, new connections (opened with target_session_attrs=any) too,
// and a write through Target(read-only) succeeded.
func TestHostsPromote_StandbyViewLeavesPromoted(t *testing.T) {
	// Before 14 a session is not told of its server's role (see
	// pool.Host.noteRole): only the role checks would tell.
	srv.NeedVersion(t, 14, "in_hot_standby reported to sessions")
	t.Parallel() // its own clusters (see ownClusters)
	P := startPrimary(t)
	S := startStandby(t, P, pgtest.StandbyOptions{Name: "hosts_promo_s"})
	if err := P.Exec("CREATE TABLE hosts_promo (n int)"); err != nil {
		t.Fatal(err)
	}
	// The default role-check period (1m), as an application has it.
	p := replicaPool(t, []*pgtest.Server{P, S}, 0, 0, "target_session_attrs=read-write", "pool_max_conns=4")
	sb, ro := p.Target("standby"), p.Target("read-only")
	ctx := testCtx(t)
	for range 5 {
		port, standby, err := whichServer(ctx, sb)
		if err != nil || port != S.Port || !standby {
			t.Fatalf("before: standby read on %d (standby %v): %v", port, standby, err)
		}
	}
	openAtPromotion := hostStat(t, p, S.Port).TotalConns
	if err := P.Shutdown("fast"); err != nil {
		t.Fatal(err)
	}
	if err := S.Promote(); err != nil {
		t.Fatal(err)
	}
	promoted := time.Now()
	var wrong, failed, total int
	var lastWrong time.Duration
	for time.Since(promoted) < 2*time.Second {
		c, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		port, standby, err := whichServer(c, sb)
		cancel()
		total++
		switch {
		case err != nil:
			failed++
		case !standby:
			wrong++
			lastWrong = time.Since(promoted)
			_ = port
		}
		time.Sleep(20 * time.Millisecond)
	}
	// New sessions for the view, opened after the promotion.
	var txs []*Tx
	newWrong := 0
	for range 3 {
		c, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		tx, err := sb.Begin(c)
		if err == nil {
			txs = append(txs, tx)
			var rec bool
			if err := tx.QueryRow(c, "SELECT pg_is_in_recovery()").Scan(&rec); err == nil && !rec {
				newWrong++
			}
		}
		cancel()
	}
	for _, tx := range txs {
		tx.Rollback(ctx)
	}
	// What the sessions were told.
	hs := "(no connection)"
	ac, acancel := context.WithTimeout(ctx, 300*time.Millisecond)
	if pc, err := sb.Acquire(ac); err == nil {
		hs = pc.ParameterStatus("in_hot_standby")
		pc.Release()
	}
	acancel()
	t.Logf("a connection of Target(standby) has in_hot_standby=%q", hs)
	// A write through the read-only view.
	c, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, roWriteErr := ro.Exec(c, "INSERT INTO hosts_promo VALUES (1)")
	cancel()
	t.Logf("after the promotion: %d reads through Target(standby), %d ran on the new primary (the last %v after Promote returned), %d failed; "+
		"%d of 3 transactions of Target(standby) on the new primary; a write through Target(read-only): %v",
		total, wrong, lastWrong.Round(time.Millisecond), failed, newWrong, roWriteErr)
	if wrong > int(openAtPromotion) || newWrong > 0 {
		t.Errorf("Target(standby) ran %d reads (%d connections were open at the promotion) and %d transactions on a server no longer in recovery (in_hot_standby=off), up to %v after the promotion",
			wrong, openAtPromotion, newWrong, lastWrong.Round(time.Millisecond))
	}
	if roWriteErr == nil {
		t.Errorf("a write through Target(read-only) succeeded on the promoted server")
	}
}

// TestHostsPromote_UnderLoad: a promotion under load through
// Target("standby"), Target("prefer-standby") and Target("read-write"),
// with connections handed back on reroute (noteRole, stillMatches): no
// call through the standby view runs on the promoted server on a
// connection opened after the promotion, none through the read-write
// view runs on a standby, nothing leaks (Stat), no race (-race).
func TestHostsPromote_UnderLoad(t *testing.T) {
	storm(t)
	srv.NeedVersion(t, 14, "in_hot_standby reported to sessions")
	t.Parallel() // its own clusters (see ownClusters)
	p := startPrimary(t)
	s := startStandby(t, p, pgtest.StandbyOptions{Name: "hosts_promote_load_s"})
	pool := replicaPool(t, []*pgtest.Server{p, s}, 200*time.Millisecond, 0, "pool_max_conns=3")
	ctx := testCtx(t)
	sb := pool.Target("standby")
	pf := pool.Target("prefer-standby")
	rw := pool.Target("read-write")
	var wrong, ok, failed atomic.Int32
	var promoted atomic.Value // when Promote was called; an hour ahead until then
	promoted.Store(time.Now().Add(time.Hour))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				q := sb
				if i%3 == 1 {
					q = pf
				} else if i%3 == 2 {
					q = rw
				}
				var standby bool
				var backendStart time.Time
				err := q.QueryRow(cctx, "SELECT pg_is_in_recovery(), backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()").Scan(&standby, &backendStart)
				cancel()
				switch {
				case err != nil:
					failed.Add(1)
				case q == sb && !standby && backendStart.After(promoted.Load().(time.Time)):
					wrong.Add(1)
				case q == rw && standby:
					wrong.Add(1)
				default:
					ok.Add(1)
				}
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	promoted.Store(time.Now())
	if err := s.Promote(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	st := pool.Stat()
	t.Logf("ok=%d failed=%d wrong=%d stat=%+v", ok.Load(), failed.Load(), wrong.Load(), st)
	if wrong.Load() > 0 {
		t.Errorf("%d calls ran on a server of the wrong role on a connection opened after the promotion", wrong.Load())
	}
	if st.InFlight != 0 || st.AcquiredConns != 0 || st.Waiting != 0 || st.AcquireWaiting != 0 {
		t.Errorf("after the load: %+v", st)
	}
	if st.TotalConns > 2*st.MaxConns {
		t.Errorf("TotalConns %d > %d", st.TotalConns, 2*st.MaxConns)
	}
	// Every view still answers.
	for _, q := range []*Pool{pf, rw} {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var v int
		if err := q.QueryRow(cctx, "SELECT 1").Scan(&v); err != nil {
			t.Errorf("after the promotion: %v", err)
		}
		cancel()
	}
}

// hostsSwitchedOver starts P and its standby S with table (n int), and a
// read-write Pool of two connections over both, on which warm runs three
// times before a switchover: P shut down ("fast"), S promoted, P started
// again as a standby of S (a failover manager's demotion) with its replay
// paused, and n = 100 committed on S, which P has not replayed.
func hostsSwitchedOver(t *testing.T, table, standbyName string, warm func(ctx context.Context, p *Pool, P *pgtest.Server, i int)) (P, S *pgtest.Server, p *Pool) {
	t.Helper()
	P = startPrimary(t)
	S = startStandby(t, P, pgtest.StandbyOptions{Name: standbyName})
	if err := P.Exec("CREATE TABLE " + table + " (n int)"); err != nil {
		t.Fatal(err)
	}
	p = replicaPool(t, []*pgtest.Server{P, S}, 0, 0, "target_session_attrs=read-write", "pool_max_conns=2")
	for i := range 3 {
		warm(testCtx(t), p, P, i)
	}
	if err := P.Shutdown("fast"); err != nil {
		t.Fatal(err)
	}
	if err := S.Promote(); err != nil {
		t.Fatal(err)
	}
	hostsDemote(t, P, S)
	if err := P.PauseReplay(); err != nil {
		t.Fatal(err)
	}
	if err := S.Exec("INSERT INTO " + table + " VALUES (100)"); err != nil {
		t.Fatal(err)
	}
	return P, S, p
}

// demotedTally counts the calls of hostsDemotedReads: those that ran on a
// standby (wrong, the last lastWrong after the first), those that missed
// the row committed on the new primary (stale), and the errors.
type demotedTally struct {
	total, wrong, stale int
	lastWrong           time.Duration
	errs                []error
}

// hostsDemotedReads calls read, each call under its own timeout and pause
// apart, for dur; read reports whether it ran on a standby and how many
// rows n = 100 it saw.
func hostsDemotedReads(ctx context.Context, dur, timeout, pause time.Duration, read func(context.Context) (standby bool, n int, err error)) demotedTally {
	var r demotedTally
	start := time.Now()
	for time.Since(start) < dur {
		c, cancel := context.WithTimeout(ctx, timeout)
		standby, n, err := read(c)
		cancel()
		r.total++
		if err != nil {
			r.errs = append(r.errs, err)
		} else {
			if standby {
				r.wrong++
				r.lastWrong = time.Since(start).Round(time.Millisecond)
			}
			if n == 0 {
				r.stale++
			}
		}
		time.Sleep(pause)
	}
	return r
}

// TestHostsPromote_DemotedPrimaryNotReadWrite: a Pool over P and S with
// target_session_attrs=read-write, idle during a switchover (see
// hostsSwitchedOver). The first read through the Pool must run on the
// new primary S (or fail): P is read-only now, and a read there may miss
// what was just committed on S.
func TestHostsPromote_DemotedPrimaryNotReadWrite(t *testing.T) {
	// Before 14 a session is not told of its server's role (see
	// pool.Host.noteRole): only the role checks would tell.
	srv.NeedVersion(t, 14, "in_hot_standby reported to sessions")
	t.Parallel() // its own clusters (see ownClusters)
	_, _, p := hostsSwitchedOver(t, "hosts_demote", "hosts_demote_s", func(ctx context.Context, p *Pool, P *pgtest.Server, i int) {
		if _, err := p.Exec(ctx, "INSERT INTO hosts_demote VALUES ($1)", i); err != nil {
			t.Fatal(err)
		}
		port, standby, err := whichServer(ctx, p)
		if err != nil || port != P.Port || standby {
			t.Fatalf("before: read-write read on %d (standby %v): %v", port, standby, err)
		}
	})
	ctx := testCtx(t)
	r := hostsDemotedReads(ctx, 500*time.Millisecond, 2*time.Second, 0, func(c context.Context) (standby bool, n int, err error) {
		err = p.QueryRow(c, "SELECT pg_is_in_recovery(), (SELECT count(*) FROM hosts_demote WHERE n = 100)::int").Scan(&standby, &n)
		return
	})
	// A write through it: on the new primary, or an error.
	c, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, werr := p.Exec(c, "INSERT INTO hosts_demote VALUES (200)")
	cancel()
	t.Logf("%d reads in 500ms: %d on the demoted primary (the last %v after the first), %d missed the new primary's commit; a write then: %v",
		r.total, r.wrong, r.lastWrong, r.stale, werr)
	t.Logf("errors: %v", r.errs)
	if r.wrong > 0 {
		t.Errorf("%d reads through the read-write Pool ran on the demoted primary (a standby) without error; %d missed a committed row", r.wrong, r.stale)
	}
}

// TestHostsPromote_DemotedPrimaryNotReadWriteTx: as
// TestHostsPromote_DemotedPrimaryNotReadWrite, but the application uses
// transactions only (Begin): every transaction through the read-write
// Pool must run on the new primary S, or fail.
func TestHostsPromote_DemotedPrimaryNotReadWriteTx(t *testing.T) {
	// Before 14 a session is not told of its server's role (see
	// pool.Host.noteRole): only the role checks would tell.
	srv.NeedVersion(t, 14, "in_hot_standby reported to sessions")
	t.Parallel() // its own clusters (see ownClusters)
	const read = "SELECT inet_server_port(), pg_is_in_recovery(), (SELECT count(*) FROM hosts_demote_tx WHERE n = 100)::int"
	inTx := func(c context.Context, p *Pool) (port int, standby bool, n int, err error) {
		tx, err := p.Begin(c)
		if err != nil {
			return 0, false, 0, err
		}
		defer tx.Rollback(c)
		if err = tx.QueryRow(c, read).Scan(&port, &standby, &n); err != nil {
			return
		}
		err = tx.Commit(c)
		return
	}
	_, _, p := hostsSwitchedOver(t, "hosts_demote_tx", "hosts_demote_tx_s", func(ctx context.Context, p *Pool, P *pgtest.Server, _ int) {
		if port, standby, _, err := inTx(ctx, p); err != nil || port != P.Port || standby {
			t.Fatalf("before: %d %v %v", port, standby, err)
		}
	})
	r := hostsDemotedReads(testCtx(t), 2*time.Second, time.Second, 50*time.Millisecond, func(c context.Context) (bool, int, error) {
		_, standby, n, err := inTx(c, p)
		return standby, n, err
	})
	t.Logf("%d transactions in 2s: %d on the demoted primary (the last %v after the first), %d missed the new primary's commit; errors %v; Stat: %+v",
		r.total, r.wrong, r.lastWrong, r.stale, r.errs, p.Stat().Hosts[0].Role)
	if r.wrong > 0 {
		t.Errorf("%d transactions through the read-write Pool ran on the demoted primary (a standby) without error, up to %v after the first; %d missed a committed row",
			r.wrong, r.lastWrong, r.stale)
	}
}
