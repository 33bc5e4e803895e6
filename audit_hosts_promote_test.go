package pgline

import (
	"context"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
)

// TestAuditHostsPromotedStandbyKeepsStandbyTraffic: a Pool over a primary
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
func TestAuditHostsPromotedStandbyKeepsStandbyTraffic(t *testing.T) {
	P := startPrimary(t)
	S := startStandby(t, P, pgtest.StandbyOptions{Name: "audit_promo_s"})
	if err := P.Exec("CREATE TABLE audit_promo (n int)"); err != nil {
		t.Fatal(err)
	}
	// The default role-check period (1m), as an application has it.
	p := replicaPool(t, []*pgtest.Server{P, S}, 0, 0, "target_session_attrs=read-write", "pool_max_conns=4")
	sb, ro := p.Target("standby"), p.Target("read-only")
	ctx := testCtx(t)
	for range 5 {
		port, standby, err := auditHostsWhere(ctx, sb)
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
		port, standby, err := auditHostsWhere(c, sb)
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
	_, roWriteErr := ro.Exec(c, "INSERT INTO audit_promo VALUES (1)")
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

// TestAuditHostsDemotedPrimaryServesReadWrite: a Pool over P and S with
// target_session_attrs=read-write, idle during a switchover: P shut down
// ("fast"), S promoted, P started again as a standby of S (a failover
// manager's demotion). The first read through the Pool must run on the
// new primary S (or fail): P is read-only now, and a read there may miss
// what was just committed on S.
func TestAuditHostsDemotedPrimaryServesReadWrite(t *testing.T) {
	P := startPrimary(t)
	S := startStandby(t, P, pgtest.StandbyOptions{Name: "audit_demote_s"})
	if err := P.Exec("CREATE TABLE audit_demote (n int)"); err != nil {
		t.Fatal(err)
	}
	p := replicaPool(t, []*pgtest.Server{P, S}, 0, 0, "target_session_attrs=read-write", "pool_max_conns=2")
	ctx := testCtx(t)
	for i := range 3 {
		if _, err := p.Exec(ctx, "INSERT INTO audit_demote VALUES ($1)", i); err != nil {
			t.Fatal(err)
		}
		port, standby, err := auditHostsWhere(ctx, p)
		if err != nil || port != P.Port || standby {
			t.Fatalf("before: read-write read on %d (standby %v): %v", port, standby, err)
		}
	}
	if err := P.Shutdown("fast"); err != nil {
		t.Fatal(err)
	}
	if err := S.Promote(); err != nil {
		t.Fatal(err)
	}
	auditHostsDemote(t, P, S)
	// Committed on the new primary, not yet replayed on the demoted one.
	if err := P.PauseReplay(); err != nil {
		t.Fatal(err)
	}
	if err := S.Exec("INSERT INTO audit_demote VALUES (100)"); err != nil {
		t.Fatal(err)
	}
	var wrong, stale, total int
	var errs []error
	var lastWrong time.Duration
	start := time.Now()
	for time.Since(start) < 500*time.Millisecond {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		var port int
		var standby bool
		var n int
		err := p.QueryRow(c, "SELECT inet_server_port(), pg_is_in_recovery(), (SELECT count(*) FROM audit_demote WHERE n = 100)::int").Scan(&port, &standby, &n)
		cancel()
		total++
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if standby {
			wrong++
			lastWrong = time.Since(start)
		}
		if n == 0 {
			stale++
		}
	}
	// A write through it: on the new primary, or an error.
	c, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, werr := p.Exec(c, "INSERT INTO audit_demote VALUES (200)")
	cancel()
	t.Logf("%d reads in 500ms: %d on the demoted primary (the last %v after the first), %d missed the new primary's commit; a write then: %v",
		total, wrong, lastWrong.Round(time.Millisecond), stale, werr)
	t.Logf("errors: %v", errs)
	if wrong > 0 {
		t.Errorf("%d reads through the read-write Pool ran on the demoted primary (a standby) without error; %d missed a committed row", wrong, stale)
	}
}

// TestAuditHostsDemotedPrimaryServesReadWriteTx: as
// TestAuditHostsDemotedPrimaryServesReadWrite, but the application uses
// transactions only (Begin): every transaction through the read-write
// Pool must run on the new primary S, or fail.
func TestAuditHostsDemotedPrimaryServesReadWriteTx(t *testing.T) {
	P := startPrimary(t)
	S := startStandby(t, P, pgtest.StandbyOptions{Name: "audit_demote_tx_s"})
	if err := P.Exec("CREATE TABLE audit_demote_tx (n int)"); err != nil {
		t.Fatal(err)
	}
	p := replicaPool(t, []*pgtest.Server{P, S}, 0, 0, "target_session_attrs=read-write", "pool_max_conns=2")
	ctx := testCtx(t)
	inTx := func(c context.Context, sql string) (port int, standby bool, n int, err error) {
		tx, err := p.Begin(c)
		if err != nil {
			return 0, false, 0, err
		}
		defer tx.Rollback(c)
		if err = tx.QueryRow(c, sql).Scan(&port, &standby, &n); err != nil {
			return
		}
		err = tx.Commit(c)
		return
	}
	const read = "SELECT inet_server_port(), pg_is_in_recovery(), (SELECT count(*) FROM audit_demote_tx WHERE n = 100)::int"
	for range 3 {
		if port, standby, _, err := inTx(ctx, read); err != nil || port != P.Port || standby {
			t.Fatalf("before: %d %v %v", port, standby, err)
		}
	}
	if err := P.Shutdown("fast"); err != nil {
		t.Fatal(err)
	}
	if err := S.Promote(); err != nil {
		t.Fatal(err)
	}
	auditHostsDemote(t, P, S)
	if err := P.PauseReplay(); err != nil {
		t.Fatal(err)
	}
	if err := S.Exec("INSERT INTO audit_demote_tx VALUES (100)"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var wrong, stale, total int
	var lastWrong time.Duration
	var errs []error
	for time.Since(start) < 2*time.Second {
		c, cancel := context.WithTimeout(ctx, time.Second)
		_, standby, n, err := inTx(c, read)
		cancel()
		total++
		if err != nil {
			errs = append(errs, err)
		} else {
			if standby {
				wrong++
				lastWrong = time.Since(start)
			}
			if n == 0 {
				stale++
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("%d transactions in 2s: %d on the demoted primary (the last %v after the first), %d missed the new primary's commit; errors %v; Stat: %+v",
		total, wrong, lastWrong.Round(time.Millisecond), stale, errs, p.Stat().Hosts[0].Role)
	if wrong > 0 {
		t.Errorf("%d transactions through the read-write Pool ran on the demoted primary (a standby) without error, up to %v after the first; %d missed a committed row",
			wrong, lastWrong.Round(time.Millisecond), stale)
	}
}
