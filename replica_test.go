package pgline

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/pgtest"
)

// These tests run one Pool over a primary and two streaming standbys of
// clusters of their own (see failover_test.go).

// startStandbys starts the hot standbys of p named names, at once.
func startStandbys(t *testing.T, p *pgtest.Server, opts ...pgtest.StandbyOptions) []*pgtest.Server {
	t.Helper()
	sts := make([]*pgtest.Server, len(opts))
	errs := make([]error, len(opts))
	var wg sync.WaitGroup
	for i, o := range opts {
		wg.Go(func() { sts[i], errs[i] = p.StartStandby(o) })
	}
	wg.Wait()
	for i, st := range sts {
		if st != nil {
			t.Cleanup(func() { st.Stop() })
		}
		if errs[i] != nil {
			t.Fatalf("start standby %s: %v", opts[i].Name, errs[i])
		}
	}
	return sts
}

// replicaPool opens a Pool over servers with the extra DSN pairs, its
// role checks every period and pool_max_replica_lag maxLag (0: none).
func replicaPool(t *testing.T, servers []*pgtest.Server, period, maxLag time.Duration, extra ...string) *Pool {
	t.Helper()
	cfg, err := ParseConfig(pgtest.HostsDSN(servers, extra...))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Pool.HealthCheckPeriod = period
	cfg.Pool.MaxReplicaLag = maxLag
	p, err := NewPoolConfig(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// spread runs n reads through q and counts them per port; a read on a
// server whose recovery state is not wantStandby fails the test.
func spread(t *testing.T, q *Pool, n int, wantStandby bool) map[int]int {
	t.Helper()
	ctx := testCtx(t)
	got := map[int]int{}
	for range n {
		port, standby, err := whichServer(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if standby != wantStandby {
			t.Fatalf("a read ran on port %d, in recovery %v; want in recovery %v", port, standby, wantStandby)
		}
		got[port]++
	}
	return got
}

// hostStat returns the HostStat of the server on port.
func hostStat(t *testing.T, p *Pool, port int) HostStat {
	t.Helper()
	for _, h := range p.Stat().Hosts {
		if strings.HasSuffix(h.Host, ":"+strconv.Itoa(port)) {
			return h
		}
	}
	t.Fatalf("no host with port %d in %+v", port, p.Stat().Hosts)
	return HostStat{}
}

// writeFor inserts a row on P through p every 20ms for d.
func writeFor(t *testing.T, p *Pool, d time.Duration) {
	t.Helper()
	ctx := testCtx(t)
	for end := time.Now().Add(d); time.Now().Before(end); {
		if _, err := p.Exec(ctx, "INSERT INTO replica_t (v) VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPoolReplicas: one Pool over a primary and two standbys, with
// load_balance_hosts=random. Writes go to the primary; Target views route
// by role, prefer-standby reads spread over both standbys; a standby held
// behind past pool_max_replica_lag gets no reads until it catches up, a
// quiet database keeps both; with both behind, prefer-standby falls back
// to the primary and Target("standby") waits per its ctx. Stat reports
// each host.
func TestPoolReplicas(t *testing.T) {
	t.Parallel() // its own clusters (see ownClusters)
	P := startPrimary(t)
	sts := startStandbys(t, P, pgtest.StandbyOptions{Name: "replica_s1"}, pgtest.StandbyOptions{Name: "replica_s2"})
	S1, S2 := sts[0], sts[1]
	if err := P.Exec("CREATE TABLE replica_t (id bigserial PRIMARY KEY, v int)"); err != nil {
		t.Fatal(err)
	}
	const (
		period = 100 * time.Millisecond
		maxLag = time.Second
	)
	p := replicaPool(t, []*pgtest.Server{P, S1, S2}, period, maxLag,
		"target_session_attrs=read-write", "load_balance_hosts=random", "pool_max_conns=2")
	reads := p.Target("prefer-standby")
	ctx := testCtx(t)

	t.Run("routing", func(t *testing.T) {
		for range 20 {
			var port int
			var standby bool
			if err := p.QueryRow(ctx, "INSERT INTO replica_t (v) VALUES (0) RETURNING inet_server_port(), pg_is_in_recovery()").Scan(&port, &standby); err != nil {
				t.Fatal(err)
			}
			if port != P.Port || standby {
				t.Fatalf("a write through the Pool ran on port %d (in recovery %v), want the primary's %d", port, standby, P.Port)
			}
		}
		for _, tc := range []struct {
			attrs   string
			standby bool
			ports   []int
		}{
			{"read-write", false, []int{P.Port}},
			{"primary", false, []int{P.Port}},
			{"standby", true, []int{S1.Port, S2.Port}},
			{"read-only", true, []int{S1.Port, S2.Port}},
			{"prefer-standby", true, []int{S1.Port, S2.Port}},
		} {
			got := spread(t, p.Target(tc.attrs), 200, tc.standby)
			t.Logf("Target(%q): 200 reads by port: %v", tc.attrs, got)
			for _, port := range tc.ports {
				// A fair share is 200/len(ports); 60 of 100 is 5.6
				// standard deviations below it.
				if got[port] < 120/len(tc.ports) {
					t.Errorf("Target(%q): %d of 200 reads on port %d, want a fair share of each of %v", tc.attrs, got[port], port, tc.ports)
				}
			}
		}
		// any, with load_balance_hosts=random: every host.
		anyPorts := map[int]int{}
		for range 150 {
			port, _, err := whichServer(ctx, p.Target("any"))
			if err != nil {
				t.Fatal(err)
			}
			anyPorts[port]++
		}
		t.Logf("Target(\"any\"): 150 reads by port: %v", anyPorts)
		for _, port := range []int{P.Port, S1.Port, S2.Port} {
			if anyPorts[port] < 20 {
				t.Errorf("Target(any): %d of 150 reads on port %d, want a fair share of each host", anyPorts[port], port)
			}
		}
	})

	t.Run("stat", func(t *testing.T) {
		// Rows left open count as in flight on their host.
		rows, err := reads.Query(ctx, "SELECT inet_server_port() FROM generate_series(1, 3)")
		if err != nil {
			t.Fatal(err)
		}
		st := p.Stat()
		if len(st.Hosts) != 3 {
			t.Fatalf("Stat().Hosts: %+v, want 3", st.Hosts)
		}
		for i, h := range st.Hosts {
			wantRole, wantPort := HostStandby, []int{P.Port, S1.Port, S2.Port}[i]
			if i == 0 {
				wantRole = HostPrimary
			}
			t.Logf("host %s: %s read-only %v lag %v conns %d idle %d in flight %d, checked %v ago",
				h.Host, h.Role, h.ReadOnly, h.Lag, h.TotalConns, h.IdleConns, h.InFlight, time.Since(h.Checked).Round(time.Millisecond))
			if !strings.HasSuffix(h.Host, ":"+strconv.Itoa(wantPort)) || h.Role != wantRole || h.ReadOnly != (i > 0) ||
				h.Down || h.Err != nil || h.Lag >= maxLag || h.TotalConns < 1 || time.Since(h.Checked) > 10*period {
				t.Errorf("Stat().Hosts[%d] = %+v; want port %d, %v, up, lag under %v, a connection, checked within %v",
					i, h, wantPort, wantRole, maxLag, 10*period)
			}
		}
		if !rows.Next() {
			t.Fatal(rows.Err())
		}
		var port int
		if err := rows.Scan(&port); err != nil {
			t.Fatal(err)
		}
		// A role check may be in flight as well: the counts are polled.
		eventually := func(what string, ok func(st PoolStat, h HostStat) bool) {
			t.Helper()
			var st PoolStat
			var h HostStat
			for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if st, h = p.Stat(), hostStat(t, p, port); ok(st, h) {
					return
				}
			}
			t.Errorf("%s: never seen; last Stat %+v, host of port %d %+v", what, st, port, h)
		}
		eventually("with one Rows open, 1 in flight on its host and in all", func(st PoolStat, h HostStat) bool {
			return st.InFlight == 1 && h.InFlight == 1 && h.Role == HostStandby && h.IdleConns < h.TotalConns
		})
		rows.Close()
		eventually("after Rows.Close, none in flight", func(st PoolStat, h HostStat) bool {
			return st.InFlight == 0 && h.InFlight == 0 && h.IdleConns == h.TotalConns
		})
	})

	t.Run("lag", func(t *testing.T) {
		// Nothing written for longer than the bound: both standbys are
		// caught up, with lag 0, and both get reads.
		time.Sleep(maxLag + 5*period)
		for _, s := range []*pgtest.Server{S1, S2} {
			h := hostStat(t, p, s.Port)
			t.Logf("quiet database: standby port %d lag %v", s.Port, h.Lag)
			if h.Lag >= maxLag/2 {
				t.Errorf("quiet database: standby port %d has lag %v, want about 0", s.Port, h.Lag)
			}
		}
		got := spread(t, reads, 100, true)
		if got[S1.Port] < 20 || got[S2.Port] < 20 {
			t.Errorf("quiet database: reads by port %v, want both standbys", got)
		}

		// S1 held behind while the primary is written past the bound.
		if err := S1.PauseReplay(); err != nil {
			t.Fatal(err)
		}
		writeFor(t, p, maxLag+8*period)
		h1 := hostStat(t, p, S1.Port)
		t.Logf("S1 paused: lag %v; S2: lag %v", h1.Lag, hostStat(t, p, S2.Port).Lag)
		if h1.Lag <= maxLag {
			t.Errorf("S1 paused while the primary was written for %v: lag %v, want over %v", maxLag+8*period, h1.Lag, maxLag)
		}
		if got := spread(t, reads, 100, true); got[S2.Port] != 100 {
			t.Errorf("S1 held behind: reads by port %v, want all on S2 (port %d)", got, S2.Port)
		}

		// Resumed, it catches up and gets reads again.
		resumed := time.Now()
		if err := S1.ResumeReplay(); err != nil {
			t.Fatal(err)
		}
		for {
			port, _, err := whichServer(ctx, reads)
			if err != nil {
				t.Fatal(err)
			}
			if port == S1.Port {
				break
			}
			if time.Since(resumed) > 5*time.Second {
				t.Fatalf("S1 resumed 5s ago gets no reads: %+v", hostStat(t, p, S1.Port))
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Logf("S1 got reads again %v after ResumeReplay", time.Since(resumed).Round(time.Millisecond))

		// Both held behind: prefer-standby reads go to the primary;
		// Target("standby") fails at once without a deadline, waits for
		// its deadline with one, and gets its answer when a standby
		// catches up in time.
		for _, s := range []*pgtest.Server{S1, S2} {
			if err := s.PauseReplay(); err != nil {
				t.Fatal(err)
			}
		}
		writeFor(t, p, maxLag+8*period)
		if got := spread(t, reads, 50, false); got[P.Port] != 50 {
			t.Errorf("both standbys behind: prefer-standby reads by port %v, want all on the primary", got)
		}
		standby := p.Target("standby")
		start := time.Now()
		_, _, err := whichServer(context.Background(), standby)
		if err == nil || !session.SafeToRetry(err) || !strings.Contains(err.Error(), "pool_max_replica_lag") || time.Since(start) > 200*time.Millisecond {
			t.Errorf("Target(standby), both behind, no deadline: %v after %v; want a SafeToRetry error naming pool_max_replica_lag at once", err, time.Since(start))
		}
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		start = time.Now()
		_, _, err = whichServer(short, standby)
		cancel()
		if took := time.Since(start); err == nil || !errors.Is(err, context.DeadlineExceeded) || !session.SafeToRetry(err) ||
			took < 290*time.Millisecond || took > 500*time.Millisecond {
			t.Errorf("Target(standby), both behind, 300ms deadline: %v after %v; want DeadlineExceeded, SafeToRetry, at the deadline", err, took)
		}
		t.Logf("Target(standby), both behind: %v", err)
		type answer struct {
			port    int
			standby bool
			err     error
		}
		done := make(chan answer, 1)
		go func() {
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			port, standby, err := whichServer(wctx, standby)
			done <- answer{port, standby, err}
		}()
		time.Sleep(200 * time.Millisecond)
		resumed = time.Now()
		if err := S2.ResumeReplay(); err != nil {
			t.Fatal(err)
		}
		a := <-done
		t.Logf("a Target(standby) call waiting: answered %v after S2 resumed", time.Since(resumed).Round(time.Millisecond))
		if a.err != nil || a.port != S2.Port || !a.standby {
			t.Errorf("Target(standby) waiting while S2 catches up: port %d, in recovery %v, %v; want S2 (port %d)", a.port, a.standby, a.err, S2.Port)
		}
		if err := S1.ResumeReplay(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPoolTargetOneHost: the views of a Pool with one host (a primary).
func TestPoolTargetOneHost(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "pool_max_conns=2")
	for _, attrs := range []string{"any", "read-write", "primary", "prefer-standby"} {
		if _, standby, err := whichServer(ctx, p.Target(attrs)); err != nil || standby {
			t.Errorf("Target(%q) on a primary: in recovery %v, %v", attrs, standby, err)
		}
	}
	if p.Target("prefer-standby") != p.Target("prefer-standby") || p.Target("any") != p {
		t.Error("Target makes a new view each time")
	}
	for _, attrs := range []string{"standby", "read-only"} {
		// Without a deadline: the error once the role is known.
		start := time.Now()
		_, _, err := whichServer(context.Background(), p.Target(attrs))
		if err == nil || !session.SafeToRetry(err) || !strings.Contains(err.Error(), "target_session_attrs="+attrs) {
			t.Errorf("Target(%q) on a primary: %v; want a SafeToRetry error naming target_session_attrs=%s", attrs, err, attrs)
		}
		t.Logf("Target(%q): %v after %v", attrs, err, time.Since(start).Round(time.Millisecond))
		// With one: at the deadline.
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		_, _, err = whichServer(short, p.Target(attrs))
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || !session.SafeToRetry(err) {
			t.Errorf("Target(%q) on a primary, 100ms deadline: %v", attrs, err)
		}
	}
	if _, _, err := whichServer(ctx, p.Target("bogus")); err == nil || !strings.Contains(err.Error(), `"bogus"`) {
		t.Errorf("Target(bogus): %v", err)
	}
	hs := p.Stat().Hosts
	if len(hs) != 1 || hs[0].Role != HostPrimary || hs[0].ReadOnly || hs[0].Down {
		t.Errorf("Stat().Hosts after the role checks: %+v, want one primary", hs)
	}
}

// promoWrite is one INSERT of TestPoolPromotion.
type promoWrite struct {
	id         int64
	start, end time.Time
	err        error
}

// promoRead is one read of TestPoolPromotion.
type promoRead struct {
	end     time.Time
	port    int
	standby bool
	err     error
}

// TestPoolPromotion stops the primary of a Pool over a primary and two
// standbys under a writer and a reader, promotes its synchronous standby
// and points the other at it: writes succeed on the new primary within
// 2s of the promotion, no acknowledged write is lost or written twice,
// and reads go on, on the remaining standby, throughout.
func TestPoolPromotion(t *testing.T) {
	P := startPrimary(t)
	sts := startStandbys(t, P, pgtest.StandbyOptions{Name: "promo_s1", Synchronous: true}, pgtest.StandbyOptions{Name: "promo_s2"})
	S1, S2 := sts[0], sts[1]
	if err := P.Exec("CREATE TABLE promo_t (id bigint, src int)"); err != nil {
		t.Fatal(err)
	}
	goroutinesBefore := runtime.NumGoroutine()
	ctx := testCtx(t)
	// The default health check period (1m): the Pool follows the
	// promotion from what it sees, not from a periodic check.
	p := replicaPool(t, []*pgtest.Server{P, S1, S2}, 0, 0,
		"target_session_attrs=read-write", "load_balance_hosts=random", "pool_max_conns=4")
	reads := p.Target("prefer-standby")

	const callTimeout = time.Second
	var (
		stop   atomic.Bool
		wg     sync.WaitGroup
		ids    atomic.Int64
		mu     sync.Mutex
		writes []promoWrite
		rds    []promoRead
	)
	wg.Go(func() {
		for !stop.Load() {
			id := ids.Add(1)
			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			start := time.Now()
			_, err := p.Exec(cctx, "INSERT INTO promo_t VALUES ($1, 1)", id)
			cancel()
			mu.Lock()
			writes = append(writes, promoWrite{id, start, time.Now(), err})
			mu.Unlock()
			if err != nil {
				time.Sleep(5 * time.Millisecond)
			}
		}
	})
	wg.Go(func() {
		for !stop.Load() {
			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			var r promoRead
			r.err = reads.QueryRow(cctx, "SELECT inet_server_port(), pg_is_in_recovery()").Scan(&r.port, &r.standby)
			cancel()
			r.end = time.Now()
			mu.Lock()
			rds = append(rds, r)
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	})

	time.Sleep(time.Second)
	stopped := time.Now()
	// fast: the standbys get all the WAL, so that S2 can follow S1.
	shutErr := P.Shutdown("fast")
	down := time.Now()
	time.Sleep(300 * time.Millisecond)
	var promoteErr error
	promoteStart := time.Now()
	if shutErr == nil {
		promoteErr = S1.Promote()
	}
	promoted := time.Now()
	followErr := make(chan error, 1)
	go func() { followErr <- S2.Follow(S1) }()
	time.Sleep(2500 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	if shutErr != nil || promoteErr != nil {
		t.Fatalf("shutdown: %v; promote: %v", shutErr, promoteErr)
	}
	followed := <-followErr
	t.Logf("Shutdown(fast) took %v; Promote returned %v after the primary was down; S2.Follow(S1): %v",
		down.Sub(stopped).Round(time.Millisecond), promoted.Sub(down).Round(time.Millisecond), followed)

	mu.Lock()
	defer mu.Unlock()
	// Writes: on the new primary within 2s of the promotion.
	acked := map[int64]bool{}
	var firstAfter, firstAny time.Time // first acknowledged write started after / ended after the promotion
	var failed []promoWrite
	for _, w := range writes {
		if w.err != nil {
			failed = append(failed, w)
			continue
		}
		acked[w.id] = true
		if !w.start.Before(promoted) && (firstAfter.IsZero() || w.end.Before(firstAfter)) {
			firstAfter = w.end
		}
		if w.end.After(down) && (firstAny.IsZero() || w.end.Before(firstAny)) {
			firstAny = w.end
		}
	}
	t.Logf("%d writes, %d acknowledged, %d failed", len(writes), len(acked), len(failed))
	if firstAfter.IsZero() {
		t.Fatal("no write started after the promotion was acknowledged")
	}
	t.Logf("first acknowledged write after the primary went down ended %v after it was down, %v after Promote was called, "+
		"%v after it returned (it took %v); the first started after the promotion ended %v after it",
		firstAny.Sub(down).Round(time.Millisecond), firstAny.Sub(promoteStart).Round(time.Millisecond),
		firstAny.Sub(promoted).Round(time.Millisecond), promoted.Sub(promoteStart).Round(time.Millisecond),
		firstAfter.Sub(promoted).Round(time.Millisecond))
	if d := firstAfter.Sub(promoted); d > 2*time.Second {
		t.Errorf("writes succeeded again %v after the promotion, want within 2s", d)
	}
	for i, w := range failed {
		if i < 5 {
			t.Logf("failed write %d: started %v after the shutdown, SafeToRetry %v: %v",
				w.id, w.start.Sub(stopped).Round(time.Millisecond), session.SafeToRetry(w.err), w.err)
		}
		if w.start.After(promoted) && w.end.Sub(promoted) > 2*time.Second {
			t.Errorf("write %d failed %v after the promotion: %v", w.id, w.end.Sub(promoted), w.err)
		}
	}

	// The table on the new primary: every acknowledged id once, none
	// that failed before it was sent.
	inTable, missing, dup := idsOnServer(t, S1, "SELECT id, count(*) FROM promo_t GROUP BY id", acked)
	t.Logf("on the new primary: %d rows, %d acknowledged missing, %d duplicated", len(inTable), len(missing), len(dup))
	if len(missing) > 0 || len(dup) > 0 {
		t.Errorf("acknowledged writes missing: %v; written twice: %v", head(missing, 10), head(dup, 10))
	}
	for _, w := range failed {
		if session.SafeToRetry(w.err) && inTable[w.id] > 0 {
			t.Errorf("write %d failed SafeToRetry, yet it is on the new primary: %v", w.id, w.err)
		}
	}

	// Reads: none failed, none stopped for long, and S2 served reads
	// before the shutdown, before the promotion and after it.
	var readErrs int
	var lastEnd time.Time
	var worstGap time.Duration
	onS2 := [3]int{}
	for _, r := range rds {
		if r.err != nil {
			readErrs++
			t.Logf("read error %v after the shutdown: %v", r.end.Sub(stopped).Round(time.Millisecond), r.err)
			continue
		}
		if !lastEnd.IsZero() {
			worstGap = max(worstGap, r.end.Sub(lastEnd))
		}
		lastEnd = r.end
		if r.port == S2.Port && r.standby {
			switch {
			case r.end.Before(stopped):
				onS2[0]++
			case r.end.Before(promoted):
				onS2[1]++
			default:
				onS2[2]++
			}
		}
	}
	t.Logf("%d reads, %d errors, longest gap between two %v; on S2: %d before the shutdown, %d up to the promotion, %d after",
		len(rds), readErrs, worstGap.Round(time.Millisecond), onS2[0], onS2[1], onS2[2])
	if readErrs > 0 || worstGap > time.Second || onS2[0] == 0 || onS2[1] == 0 || onS2[2] == 0 {
		t.Errorf("reads did not go on on the remaining standby throughout")
	}
	if followed == nil {
		// S2 follows the new primary: what was written there reaches it.
		want := fmt.Sprint(len(inTable))
		var got string
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if got, _ = S2.Query("SELECT count(DISTINCT id) FROM promo_t"); got == want {
				break
			}
		}
		if got != want {
			t.Errorf("S2 following S1 has %s ids, S1 %s", got, want)
		}
	}
	p.Close()
	checkNoGoroutinesLeft(t, goroutinesBefore)
}
