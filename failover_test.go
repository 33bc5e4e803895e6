package pgline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/pgtest"
)

// These tests run against clusters of their own, which they crash, shut
// down, restart and promote: a primary P and a hot standby S of it
// (pgtest's StartStandby), never the shared srv.

// startPrimary starts a cluster without TLS for one test, stopped when
// the test ends.
func startPrimary(t *testing.T) *pgtest.Server {
	t.Helper()
	p, err := pgtest.Start(pgtest.Options{})
	if err != nil {
		t.Fatalf("start the primary: %v", err)
	}
	t.Cleanup(func() { p.Stop() })
	return p
}

// startStandby starts a hot standby of p, stopped when the test ends
// (before p: cleanups run last first).
func startStandby(t *testing.T, p *pgtest.Server, opts pgtest.StandbyOptions) *pgtest.Server {
	t.Helper()
	s, err := p.StartStandby(opts)
	if err != nil {
		t.Fatalf("start a standby: %v", err)
	}
	t.Cleanup(func() { s.Stop() })
	return s
}

// twoHostDSN is a DSN listing the servers a then b, with extra key=value
// pairs.
func twoHostDSN(a, b *pgtest.Server, extra ...string) string {
	return hostsDSN([]int{a.Port, b.Port}, "postgres", "postgres", extra...)
}

// whichServer says which server q (a Conn, a Pool or a Pool's Target)
// reaches: the port the server listens on, and whether it is a standby in
// recovery.
func whichServer(ctx context.Context, q rowReader) (port int, standby bool, err error) {
	err = q.QueryRow(ctx, "SELECT inet_server_port(), pg_is_in_recovery()").Scan(&port, &standby)
	return port, standby, err
}

// TestTargetSessionAttrsWithStandby connects to a primary and a hot
// standby listed in both orders, and checks that each target_session_attrs
// picks the server libpq picks.
func TestTargetSessionAttrsWithStandby(t *testing.T) {
	t.Parallel() // its own clusters (see ownClusters)
	P := startPrimary(t)
	S := startStandby(t, P, pgtest.StandbyOptions{Name: "tsa_standby"})
	ctx := testCtx(t)

	orders := []struct {
		name        string
		first, next *pgtest.Server
	}{
		{"P,S", P, S},
		{"S,P", S, P},
	}
	// want gives the server libpq connects to, from the first host listed.
	cases := []struct {
		attrs string
		want  func(first *pgtest.Server) *pgtest.Server
	}{
		{"any", func(first *pgtest.Server) *pgtest.Server { return first }},
		{"read-write", func(*pgtest.Server) *pgtest.Server { return P }},
		{"primary", func(*pgtest.Server) *pgtest.Server { return P }},
		{"read-only", func(*pgtest.Server) *pgtest.Server { return S }},
		{"standby", func(*pgtest.Server) *pgtest.Server { return S }},
		{"prefer-standby", func(*pgtest.Server) *pgtest.Server { return S }},
	}
	name := func(s *pgtest.Server) string {
		if s == P {
			return "P"
		}
		return "S"
	}
	for _, o := range orders {
		for _, tc := range cases {
			t.Run(o.name+"/"+tc.attrs, func(t *testing.T) {
				want := tc.want(o.first)
				c := connect(t, twoHostDSN(o.first, o.next, "target_session_attrs="+tc.attrs))
				port, standby, err := whichServer(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				if port != want.Port || standby != (want == S) || int(c.Host().Port) != want.Port {
					t.Fatalf("connected to port %d (Host() port %d, in recovery %v), want %s (port %d)",
						port, c.Host().Port, standby, name(want), want.Port)
				}
			})
		}
	}

	// Only one server listed: the wrong kind fails, naming the attribute;
	// prefer-standby and any take what there is.
	single := []struct {
		srv   *pgtest.Server
		attrs string
		ok    bool
	}{
		{S, "read-write", false},
		{S, "primary", false},
		{S, "read-only", true},
		{S, "standby", true},
		{S, "prefer-standby", true},
		{S, "any", true},
		{P, "read-only", false},
		{P, "standby", false},
		{P, "read-write", true},
		{P, "primary", true},
		{P, "prefer-standby", true},
		{P, "any", true},
	}
	for _, tc := range single {
		t.Run("only "+name(tc.srv)+"/"+tc.attrs, func(t *testing.T) {
			c, err := Connect(ctx, tc.srv.DSN("target_session_attrs="+tc.attrs))
			if !tc.ok {
				if err == nil {
					port, standby, qerr := whichServer(ctx, c)
					c.Close()
					t.Fatalf("connected (port %d, in recovery %v, %v); want the session refused", port, standby, qerr)
				}
				if !strings.Contains(err.Error(), "target_session_attrs="+tc.attrs) {
					t.Fatalf("error does not name target_session_attrs=%s: %v", tc.attrs, err)
				}
				var ce *ConnectError
				if !errors.As(err, &ce) {
					t.Fatalf("got %T %v, want a *ConnectError", err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			port, standby, err := whichServer(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if port != tc.srv.Port || standby != (tc.srv == S) {
				t.Fatalf("on port %d, in recovery %v; want %s (port %d)", port, standby, name(tc.srv), tc.srv.Port)
			}
		})
	}

	// The same choices through a Pool.
	pools := []struct {
		first, next *pgtest.Server
		attrs       string
		want        *pgtest.Server
	}{
		{P, S, "read-write", P},
		{S, P, "read-write", P},
		{P, S, "standby", S},
		{P, S, "prefer-standby", S},
		{S, P, "primary", P},
		{S, P, "any", S},
	}
	for _, tc := range pools {
		t.Run("pool/"+name(tc.first)+","+name(tc.next)+"/"+tc.attrs, func(t *testing.T) {
			p, err := NewPool(ctx, twoHostDSN(tc.first, tc.next, "target_session_attrs="+tc.attrs, "pool_max_conns=2"))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			for range 4 {
				port, standby, err := whichServer(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if port != tc.want.Port || standby != (tc.want == S) {
					t.Fatalf("on port %d, in recovery %v; want %s (port %d)", port, standby, name(tc.want), tc.want.Port)
				}
			}
		})
	}

	// A Pool with only the wrong kind of server: a call without deadline
	// gets the error at once, one with a deadline by its deadline, and both
	// name the attribute.
	t.Run("pool/only S/read-write", func(t *testing.T) {
		p, err := NewPool(ctx, S.DSN("target_session_attrs=read-write", "pool_max_conns=2"))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		start := time.Now()
		var v int
		err = p.QueryRow(context.Background(), "SELECT 1").Scan(&v)
		if err == nil || !strings.Contains(err.Error(), "target_session_attrs=read-write") {
			t.Fatalf("QueryRow without deadline: %v, want an error naming target_session_attrs=read-write", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("QueryRow without deadline failed after %v, want at once", d)
		}
		dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		_, err = p.Exec(dctx, "SELECT 1")
		dl, _ := dctx.Deadline()
		over := time.Since(dl)
		if err == nil || !errors.Is(err, context.DeadlineExceeded) ||
			!strings.Contains(err.Error(), "target_session_attrs=read-write") {
			t.Fatalf("Exec with a 300ms deadline: %v, want DeadlineExceeded naming target_session_attrs=read-write", err)
		}
		if over > 100*time.Millisecond {
			t.Errorf("Exec with a 300ms deadline returned %v after it", over)
		}
	})
}

// connectCounter is a Tracer that records the connection attempts.
type connectCounter struct {
	mu       sync.Mutex
	attempts []connectAttemptRec
}

type connectAttemptRec struct {
	start, end time.Time
	err        error
}

func (c *connectCounter) TraceStart(ctx context.Context, ev *TraceEvent) context.Context { return ctx }

func (c *connectCounter) TraceEnd(ctx context.Context, ev *TraceEvent) {
	if ev.Kind != TraceConnect {
		return
	}
	c.mu.Lock()
	c.attempts = append(c.attempts, connectAttemptRec{ev.Start, ev.Start.Add(ev.Duration), ev.Err})
	c.mu.Unlock()
}

// between counts the attempts started in [from, to), and those of them
// that failed.
func (c *connectCounter) between(from, to time.Time) (n, failed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range c.attempts {
		if !a.start.Before(from) && a.start.Before(to) {
			n++
			if a.err != nil {
				failed++
			}
		}
	}
	return n, failed
}

// firstSuccessAfter returns the end of the first successful attempt that
// ended after t.
func (c *connectCounter) firstSuccessAfter(t time.Time) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first time.Time
	for _, a := range c.attempts {
		if a.err == nil && a.end.After(t) && (first.IsZero() || a.end.Before(first)) {
			first = a.end
		}
	}
	return first, !first.IsZero()
}

// writeRec is one INSERT of TestPoolFailover.
type writeRec struct {
	n                    int64
	start, end, deadline time.Time
	err                  error
}

// TestPoolFailover crashes the primary under writers going through a
// Pool, promotes its synchronous standby, and checks that the writes go
// on on the new primary soon, with every acknowledged row there once,
// every call returned by its deadline, and nothing left behind.
func TestPoolFailover(t *testing.T) {
	P := startPrimary(t)
	S := startStandby(t, P, pgtest.StandbyOptions{Name: "failover_sync", Synchronous: true})
	if err := P.Exec("CREATE TABLE failover_t (n bigint, w int)"); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)

	const (
		writers      = 4
		callTimeout  = time.Second
		probeTimeout = 150 * time.Millisecond
		slack        = 100 * time.Millisecond
		recoverBy    = 2 * time.Second
	)

	goroutinesBefore := runtime.NumGoroutine()

	tracer := &connectCounter{}
	cfg, err := ParseConfig(twoHostDSN(P, S, "target_session_attrs=read-write", "pool_max_conns=4"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tracer = tracer
	wpool, err := NewPoolConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rpool, err := NewPool(ctx, twoHostDSN(P, S, "target_session_attrs=prefer-standby", "pool_max_conns=2"))
	if err != nil {
		wpool.Close()
		t.Fatal(err)
	}
	closed := false
	closePools := func() {
		if !closed {
			closed = true
			wpool.Close()
			rpool.Close()
		}
	}
	defer closePools()

	var (
		stop    atomic.Bool
		counter atomic.Int64
		wg      sync.WaitGroup
		recMu   sync.Mutex
		recs    []writeRec
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				n := counter.Add(1)
				cctx, cancel := context.WithTimeout(ctx, callTimeout)
				dl, _ := cctx.Deadline()
				start := time.Now()
				_, err := wpool.Exec(cctx, "INSERT INTO failover_t VALUES ($1, $2)", n, w)
				end := time.Now()
				cancel()
				recMu.Lock()
				recs = append(recs, writeRec{n: n, start: start, end: end, deadline: dl, err: err})
				recMu.Unlock()
				if err != nil {
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}
	var reads, readErrs atomic.Int64
	var lastReadErr atomic.Value
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			var n int64
			err := rpool.QueryRow(cctx, "SELECT count(*) FROM failover_t").Scan(&n)
			cancel()
			reads.Add(1)
			if err != nil {
				readErrs.Add(1)
				lastReadErr.Store(err.Error())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	// The outage is shorter than callTimeout: a probe with a shorter
	// deadline, through the writers' Pool, makes sure some calls wait for
	// a host up to their deadline.
	var probes []writeRec // guarded by recMu
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			cctx, cancel := context.WithTimeout(ctx, probeTimeout)
			dl, _ := cctx.Deadline()
			start := time.Now()
			_, err := wpool.Exec(cctx, "SELECT 1")
			end := time.Now()
			cancel()
			recMu.Lock()
			probes = append(probes, writeRec{start: start, end: end, deadline: dl, err: err})
			recMu.Unlock()
			time.Sleep(50 * time.Millisecond)
		}
	}()

	time.Sleep(time.Second)
	shutdownAt := time.Now()
	if err := P.Shutdown("immediate"); err != nil {
		stop.Store(true)
		wg.Wait()
		t.Fatal(err)
	}
	crashed := time.Now() // the primary is gone
	time.Sleep(300 * time.Millisecond)
	if err := S.Promote(); err != nil {
		stop.Store(true)
		wg.Wait()
		t.Fatal(err)
	}
	promoted := time.Now()
	t.Logf("Shutdown(immediate) took %v; Promote returned %v after the primary was gone",
		crashed.Sub(shutdownAt).Round(time.Millisecond), promoted.Sub(crashed).Round(time.Millisecond))
	time.Sleep(4 * time.Second)
	stop.Store(true)
	wg.Wait()
	closePools()

	// The calls.
	recMu.Lock()
	defer recMu.Unlock()
	acked := map[int64]bool{}
	var (
		firstAfter         time.Time // end of the first acknowledged write started after the promotion
		firstAckAfterCrash time.Time // end of the first acknowledged write started after the crash
		worstOver          time.Duration
		worstOverRec       writeRec
		lateErrs           []writeRec
		failed             []writeRec
		errsByPhase        [3]int // before the crash, in the outage up to promotion+2s, after
	)
	for _, r := range recs {
		if r.err == nil {
			acked[r.n] = true
			if !r.start.Before(promoted) && (firstAfter.IsZero() || r.end.Before(firstAfter)) {
				firstAfter = r.end
			}
			if !r.start.Before(crashed) && (firstAckAfterCrash.IsZero() || r.end.Before(firstAckAfterCrash)) {
				firstAckAfterCrash = r.end
			}
		} else {
			failed = append(failed, r)
			switch {
			case r.start.Before(shutdownAt):
				errsByPhase[0]++
			case r.start.Before(promoted.Add(recoverBy)):
				errsByPhase[1]++
			default:
				errsByPhase[2]++
				lateErrs = append(lateErrs, r)
			}
		}
		if over := r.end.Sub(r.deadline); worstOverRec.deadline.IsZero() || over > worstOver {
			worstOver, worstOverRec = over, r
		}
	}
	t.Logf("%d writes, %d acknowledged; errors: %d before the crash, %d from the crash to promotion+%v, %d after",
		len(recs), len(acked), errsByPhase[0], errsByPhase[1], recoverBy, errsByPhase[2])
	t.Logf("reader (prefer-standby): %d reads, %d errors (last: %v)", reads.Load(), readErrs.Load(), lastReadErr.Load())

	if firstAfter.IsZero() {
		t.Errorf("no write started after the promotion was acknowledged")
	} else {
		rec := firstAfter.Sub(promoted)
		t.Logf("recovery: first acknowledged write started after the promotion ended %v after it (%v after the crash)",
			rec.Round(time.Millisecond), firstAfter.Sub(crashed).Round(time.Millisecond))
		if rec > recoverBy {
			t.Errorf("writes succeeded again %v after the promotion, want within %v", rec, recoverBy)
		}
	}
	if !firstAckAfterCrash.IsZero() {
		t.Logf("first acknowledged write started after the crash ended %v after the crash (%v after Promote returned)",
			firstAckAfterCrash.Sub(crashed).Round(time.Millisecond), firstAckAfterCrash.Sub(promoted).Round(time.Millisecond))
	}
	if up, ok := tracer.firstSuccessAfter(crashed); ok {
		// Promote returns once psql sees the server out of recovery: the
		// Pool may get there first.
		t.Logf("first connection after the crash: %v after it (%v after Promote returned)",
			up.Sub(crashed).Round(time.Millisecond), up.Sub(promoted).Round(time.Millisecond))
	}

	// Negative: every call returned before its deadline, the latest by that much.
	t.Logf("worst return after the ctx deadline: %v (err %v)", worstOver.Round(time.Millisecond), worstOverRec.err)
	if worstOver > slack {
		t.Errorf("a call returned %v after its deadline (started %v after Shutdown was called, err %v), want at most %v",
			worstOver, worstOverRec.start.Sub(shutdownAt).Round(time.Millisecond), worstOverRec.err, slack)
	}
	var (
		probeErrs, probeTimeouts int
		probeOver                = time.Duration(math.MinInt64)
		probeOverRec             writeRec
	)
	for _, r := range probes {
		if r.err != nil {
			probeErrs++
			if errors.Is(r.err, context.DeadlineExceeded) {
				probeTimeouts++
			}
		}
		if over := r.end.Sub(r.deadline); over > probeOver {
			probeOver, probeOverRec = over, r
		}
	}
	t.Logf("probes (%v deadline): %d calls, %d errors, %d of them DeadlineExceeded; worst return after the deadline: %v (err %v)",
		probeTimeout, len(probes), probeErrs, probeTimeouts, probeOver.Round(time.Millisecond), probeOverRec.err)
	if probeTimeouts == 0 {
		t.Errorf("no probe reached its %v deadline in the outage", probeTimeout)
	}
	if probeOver > slack {
		t.Errorf("a probe returned %v after its deadline (started %v after Shutdown was called, err %v), want at most %v",
			probeOver, probeOverRec.start.Sub(shutdownAt).Round(time.Millisecond), probeOverRec.err, slack)
	}

	if len(lateErrs) > 0 {
		for i, r := range lateErrs {
			if i == 5 {
				t.Logf("... and %d more", len(lateErrs)-5)
				break
			}
			t.Logf("late error: started %v after the promotion, took %v: %v",
				r.start.Sub(promoted).Round(time.Millisecond), r.end.Sub(r.start).Round(time.Millisecond), r.err)
		}
		t.Errorf("%d writes started more than %v after the promotion failed, want 0", len(lateErrs), recoverBy)
	}

	// Connection attempts during the outage (crash to promotion) and the
	// recovery.
	nOut, failedOut := tracer.between(shutdownAt, promoted)
	nRec, failedRec := tracer.between(promoted, promoted.Add(recoverBy))
	nAll, failedAll := tracer.between(time.Time{}, time.Now())
	t.Logf("connection attempts: %d (%d failed) in the %v outage, %d (%d failed) in the %v after the promotion, %d (%d failed) in all",
		nOut, failedOut, promoted.Sub(shutdownAt).Round(time.Millisecond), nRec, failedRec, recoverBy, nAll, failedAll)
	// Backoff: the connections that broke at the crash may each start an
	// attempt, then one at a time, 10ms doubling (each drawn between
	// half and all of it): at most log2(1 + outage/5ms) + 1 more.
	outage := promoted.Sub(shutdownAt)
	if limit := 4 + 1 + int(math.Log2(1+float64(outage)/float64(5*time.Millisecond))); failedOut > limit {
		t.Errorf("%d failed connection attempts in the %v outage, want at most %d (exponential backoff)", failedOut, outage.Round(time.Millisecond), limit)
	}

	// The table on the new primary.
	inTable, missing, dup := idsOnServer(t, S, "SELECT n, count(*) FROM failover_t GROUP BY n", acked)
	unacked := 0
	for n := range inTable {
		if !acked[n] {
			unacked++
		}
	}
	t.Logf("on the new primary: %d distinct rows, %d acknowledged missing, %d duplicated, %d present but not acknowledged",
		len(inTable), len(missing), len(dup), unacked)
	if len(missing) > 0 {
		t.Errorf("%d acknowledged writes missing on the new primary, e.g. %v", len(missing), head(missing, 10))
	}
	if len(dup) > 0 {
		t.Errorf("%d rows written twice, e.g. n=%v", len(dup), head(dup, 10))
	}
	// A failed write is either SafeToRetry (nothing reached the server:
	// its row must not be there) or of unknown outcome.
	for i, r := range failed {
		safe := session.SafeToRetry(r.err)
		if i < 10 {
			t.Logf("failed write n=%d: started %v after Shutdown was called, took %v, SafeToRetry %v, in the table %v: %v",
				r.n, r.start.Sub(shutdownAt).Round(time.Millisecond), r.end.Sub(r.start).Round(time.Millisecond),
				safe, inTable[r.n] > 0, r.err)
		}
		if safe && inTable[r.n] > 0 {
			t.Errorf("write n=%d failed with an error marked SafeToRetry, yet its row is on the new primary: %v", r.n, r.err)
		}
	}

	checkNoGoroutinesLeft(t, goroutinesBefore)
}

// head returns the first n elements of s at most.
func head[T any](s []T, n int) []T { return s[:min(n, len(s))] }

// checkNoGoroutinesLeft waits up to 2s for the number of goroutines to
// come back to before, and prints every stack when it does not.
func checkNoGoroutinesLeft(t *testing.T, before int) {
	t.Helper()
	var now int
	if waitFor(t, 2*time.Second, func() (bool, error) {
		now = runtime.NumGoroutine()
		return now <= before, nil
	}) {
		return
	}
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	t.Errorf("%d goroutines after the pools closed, %d before:\n%s", now, before, buf)
}

// TestPoolRestartNoSafeToRetryErrors restarts the server under a Pool
// whose connections are idle, then requires that no call fails: the Pool
// must find the dead connections and send the calls on new ones.
func TestPoolRestartNoSafeToRetryErrors(t *testing.T) {
	t.Parallel() // its own clusters (see ownClusters)
	s := startPrimary(t)
	ctx := testCtx(t)
	p, err := NewPool(ctx, s.DSN("pool_max_conns=4", "application_name=restart_test"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	// Open the 4 connections (each Acquire holds one) and leave them idle.
	var held []*PoolConn
	for range 4 {
		pc, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pc.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		held = append(held, pc)
	}
	for _, pc := range held {
		pc.Release()
	}
	if st := p.Stat(); st.TotalConns != 4 || st.IdleConns != 4 {
		t.Fatalf("before the restart: %+v, want 4 idle connections", st)
	}

	if err := s.Shutdown("fast"); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}

	// The calls of the idle-session tests (QueryRow, Begin/Commit,
	// Acquire+QueryRow+Release, Exec) in turn.
	run := func(i int) error {
		c := deadPoolOps[i%len(deadPoolOps)]
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := c.run(cctx, p, i); err != nil {
			return fmt.Errorf("%s #%d: %w (SafeToRetry %v)", c.name, i, err, session.SafeToRetry(err))
		}
		return nil
	}

	var (
		mu     sync.Mutex
		errs   []error
		ncalls int
	)
	sequential := func(phase string) {
		for i := range 20 {
			ncalls++
			if err := run(i); err != nil {
				errs = append(errs, fmt.Errorf("%s: sequential %w", phase, err))
			}
		}
	}
	concurrent := func(phase string) {
		var wg sync.WaitGroup
		for i := range 20 {
			ncalls++
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := run(i); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("%s: concurrent %w", phase, err))
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	sequential("after the restart")
	concurrent("after the restart")
	// Once more with concurrent calls first: every connection they find
	// is dead, and some were used less than pool_idle_check ago.
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	concurrent("after a second restart")
	for _, err := range errs {
		t.Error(err)
	}
	if len(errs) > 0 {
		t.Errorf("%d of %d calls failed after a restart, want 0", len(errs), ncalls)
	}
}

// idsOnServer runs sql, which lists ids and how often each is in a table
// (SELECT id, count(*) … GROUP BY id), on s, and returns those counts with
// the acknowledged ids missing and the ids present more than once, sorted.
func idsOnServer(t *testing.T, s *pgtest.Server, sql string, acked map[int64]bool) (inTable map[int64]int, missing, dup []int64) {
	t.Helper()
	out, err := s.Query(sql)
	if err != nil {
		t.Fatal(err)
	}
	inTable = map[int64]int{}
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		a, b, ok := strings.Cut(line, "|")
		id, err1 := strconv.ParseInt(a, 10, 64)
		n, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("unexpected psql output line %q", line)
		}
		inTable[id] = n
	}
	for id := range acked {
		if inTable[id] == 0 {
			missing = append(missing, id)
		}
	}
	for id, n := range inTable {
		if n > 1 {
			dup = append(dup, id)
		}
	}
	slices.Sort(missing)
	slices.Sort(dup)
	return inTable, missing, dup
}
