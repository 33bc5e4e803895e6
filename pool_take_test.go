package pgline

// Acquire, Begin and BeginTx waiting in line (see serveTakersLocked): the
// cases the FIFO line got wrong in its first version (a caller whose attempt failed parked with nothing to retry for
// it; statements starved by a line never empty), and its fairness.

import (
	"context"
	"errors"
	"net"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// takePool opens a pool on dsn; the cleanup closes it but gives up after
// 10 s (a hung Close is reported, not waited for).
func takePool(t *testing.T, dsn string) *Pool {
	t.Helper()
	p, err := NewPool(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !poolClosesWithin(p, 10*time.Second) {
			t.Errorf("Close did not return within 10s: %+v\n%s", p.Stat(), takeStacks())
		}
	})
	return p
}

// poolClosesWithin closes p and reports whether Close, which waits for
// the statements in flight, returned within d.
func poolClosesWithin(p *Pool, d time.Duration) bool {
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
		return true
	case <-time.After(d):
		return false
	}
}

func takeStacks() string {
	var b strings.Builder
	pprof.Lookup("goroutine").WriteTo(&b, 1)
	s := b.String()
	if len(s) > 12000 {
		s = s[:12000] + "\n...[truncated]"
	}
	return s
}

// takeRun runs body in a goroutine and fails the test if it does not end
// within d. body must report with t.Error (not Fatal).
func takeRun(t *testing.T, d time.Duration, what string, body func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); body() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %v (hang)\n%s", what, d, takeStacks())
	}
}

// takeProxy is a proxy to the test server that refuses connections
// (accepts and closes them at once) while down, counting them.
type takeProxy struct {
	*testProxy
	up      atomic.Bool
	refused atomic.Int64
}

func newTakeProxy(t *testing.T) *takeProxy {
	t.Helper()
	px := &takeProxy{}
	px.testProxy = newTestProxy(t, srv.Addr, func(_ int, c net.Conn) bool {
		if !px.up.Load() {
			px.refused.Add(1)
			c.Close()
			return false
		}
		return true
	})
	return px
}

// A host that refuses connections: a call without a deadline, arriving
// while one with a (long) deadline waits for the host and the Pool's next
// attempt waits out its backoff, gets the last attempt's error at once,
// without waiting for that attempt (the doc: "a call without one ... gets
// the error at once"); an Acquire and a statement alike.
func TestPoolTakerNoDeadlineBehindDeadline(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	px := newTakeProxy(t)
	p := takePool(t, srv.DSN("host=127.0.0.1", "port="+px.port(), "pool_max_conns=2"))
	longDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := p.Acquire(ctx)
		longDone <- err
	}()
	// Six attempts failed: the backoff is now 160 ms to 1 s, the window
	// in which the calls below must not wait for the next attempt.
	if !waitFor(t, 5*time.Second, func() (bool, error) { return px.refused.Load() >= 6, nil }) {
		t.Fatalf("%d attempts refused in 5 s", px.refused.Load())
	}
	// A statement with a deadline waits in the statements' line too.
	execDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := p.Exec(ctx, "SELECT 1")
		execDone <- err
	}()
	if !waitFor(t, 5*time.Second, func() (bool, error) { return p.Stat().Waiting > 0, nil }) {
		t.Fatalf("the statement with a deadline never waited: %+v", p.Stat())
	}
	t.Logf("while the deadline callers wait: %+v", p.Stat())
	calls := []struct {
		name string
		call func() error
	}{
		{"Acquire", func() error { _, err := p.Acquire(context.Background()); return err }},
		{"Exec", func() error { _, err := p.Exec(context.Background(), "SELECT 1"); return err }},
	}
	for _, c := range calls {
		takeRun(t, 10*time.Second, c.name+" without deadline behind a deadline one", func() {
			// An attempt the Pool started meanwhile (its backoff
			// ended as the call began) would count, so a second try.
			for try := 0; ; try++ {
				before := px.refused.Load()
				start := time.Now()
				err := c.call()
				d := time.Since(start)
				if err == nil {
					t.Errorf("%s succeeded", c.name)
					return
				}
				if !SafeToRetry(err) {
					t.Errorf("%s: %v, want an error saying nothing was sent (SafeToRetry)", c.name, err)
				}
				if px.refused.Load() == before {
					return
				}
				if try == 1 {
					t.Errorf("%s without deadline waited %v for the Pool's next attempt (err %v); want the last attempt's error at once", c.name, d, err)
					return
				}
			}
		})
	}
	// A call whose ctx has ended gets its ctx's error, not the host's.
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Exec(ended, "SELECT 1"); !errors.Is(err, context.Canceled) {
		t.Errorf("Exec with an ended ctx: %v, want context.Canceled", err)
	}
	if _, err := p.Acquire(ended); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire with an ended ctx: %v, want context.Canceled", err)
	}
	if err := <-longDone; err == nil {
		t.Error("the Acquire with a deadline succeeded")
	}
	if err := <-execDone; err == nil {
		t.Error("the Exec with a deadline succeeded")
	}
}

// The host comes back while Acquire/Begin (with a deadline) wait for
// it: the pool retries with backoff (at most 1s apart), so they succeed
// soon after, long before their deadline.
func TestPoolTakersHostBack(t *testing.T) {
	// Not in parallel: it bounds the wait to 2.5 s, which a loaded
	// machine (-race, the storms) exceeded once in parallel (3.1 s).
	// health1s: the same with pool_health_check_period=1s. The health
	// loop's tick calls signalLocked, hence serveTakersLocked: if this one
	// passes while "one" fails, nothing but that tick (1 min by default),
	// another call or a freed connection wakes a taker whose attempt failed.
	for _, tc := range []struct {
		name  string
		n     int
		extra string
	}{{"one", 1, ""}, {"four", 4, ""}, {"health1s", 1, "pool_health_check_period=1s"}} {
		t.Run(tc.name, func(t *testing.T) {
			px := newTakeProxy(t)
			p := takePool(t, srv.DSN("port="+px.port(), "pool_max_conns=2", tc.extra))
			type res struct {
				err error
				d   time.Duration
			}
			out := make(chan res, tc.n)
			start := time.Now()
			for i := range tc.n {
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
					defer cancel()
					var err error
					if i%2 == 0 {
						var c *PoolConn
						if c, err = p.Acquire(ctx); err == nil {
							var v int
							err = c.QueryRow(ctx, "SELECT 1").Scan(&v)
							c.Release()
						}
					} else {
						var tx *Tx
						if tx, err = p.Begin(ctx); err == nil {
							err = tx.Commit(ctx)
						}
					}
					out <- res{err, time.Since(start)}
				}()
			}
			time.Sleep(300 * time.Millisecond)
			t.Logf("host down, callers waiting: %+v", p.Stat())
			px.up.Store(true)
			for i := range tc.n {
				select {
				case r := <-out:
					if r.err != nil || r.d > 2500*time.Millisecond {
						t.Errorf("caller %d: err %v after %v; the host was back at 300ms, want success within ~1.3s", i, r.err, r.d.Round(time.Millisecond))
					}
				case <-time.After(12 * time.Second):
					t.Fatalf("hang: %+v", p.Stat())
				}
			}
			// Control: a routed statement in the same situation.
			px.up.Store(false)
			p2 := takePool(t, srv.DSN("port="+px.port(), "pool_max_conns=2"))
			stmt := make(chan res, 1)
			s2 := time.Now()
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
				defer cancel()
				_, err := p2.Exec(ctx, "SELECT 1")
				stmt <- res{err, time.Since(s2)}
			}()
			time.Sleep(300 * time.Millisecond)
			px.up.Store(true)
			r := <-stmt
			t.Logf("control: a routed Exec in the same situation: err %v after %v", r.err, r.d.Round(time.Millisecond))
		})
	}
}

// Fairness: pool_max_conns=2, 200 goroutines Begin/SELECT/Commit in a
// loop for 2s: each completes at least one, none waits over 1s between two.
func TestPoolTakersFair(t *testing.T) {
	p := takePool(t, srv.DSN("pool_max_conns=2"))
	// warm up both connections
	ctx := testCtx(t)
	a, _ := p.Acquire(ctx)
	b, _ := p.Acquire(ctx)
	a.Release()
	b.Release()
	const g = 200
	count := make([]int, g)
	maxGap := make([]time.Duration, g)
	var errN atomic.Int64
	var firstErr atomic.Value
	start := time.Now()
	end := start.Add(2 * time.Second)
	takeRun(t, 20*time.Second, "fairness loop", func() {
		var wg sync.WaitGroup
		for i := range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				last := start
				for time.Now().Before(end) {
					c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					tx, err := p.Begin(c)
					if err == nil {
						var v int
						if err = tx.QueryRow(c, "SELECT 1").Scan(&v); err == nil {
							err = tx.Commit(c)
						} else {
							tx.Rollback(c)
						}
					}
					cancel()
					if err != nil {
						errN.Add(1)
						firstErr.CompareAndSwap(nil, err.Error())
						continue
					}
					now := time.Now()
					count[i]++
					if gap := now.Sub(last); gap > maxGap[i] {
						maxGap[i] = gap
					}
					last = now
				}
			}()
		}
		wg.Wait()
	})
	total, zero := 0, 0
	var worst time.Duration
	for i := range g {
		total += count[i]
		if count[i] == 0 {
			zero++
		}
		worst = max(worst, maxGap[i])
	}
	t.Logf("%d transactions, %d goroutines with none, worst gap %v, errors %d (%v)", total, zero, worst.Round(time.Millisecond), errN.Load(), firstErr.Load())
	if zero > 0 {
		t.Errorf("%d goroutines completed no transaction", zero)
	}
	if worst > time.Second {
		t.Errorf("a goroutine went %v without completing a transaction", worst)
	}
	if errN.Load() > 0 {
		t.Errorf("%d errors, first: %v", errN.Load(), firstErr.Load())
	}
	takeCheckQuiet(t, p, 2, "after fairness")
}

// Routed statements while Acquire/Begin keep the line busy: a statement
// must still be served (giveBack and done serve the takers' line before
// the statements' queue, and a taker is always in line).
func TestPoolStatementsAmongTakers(t *testing.T) {
	for _, max := range []int{1, 2} {
		t.Run("max"+strconv.Itoa(max), func(t *testing.T) {
			p := takePool(t, srv.DSN("pool_max_conns="+strconv.Itoa(max)))
			ctx := testCtx(t)
			if _, err := p.Exec(ctx, "SELECT 1"); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var txs atomic.Int64
			for range 10 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
						tx, err := p.Begin(c)
						if err == nil {
							tx.Exec(c, "SELECT 1")
							tx.Commit(c)
							txs.Add(1)
						}
						cancel()
					}
				}()
			}
			time.Sleep(200 * time.Millisecond)
			var lat []time.Duration
			failures := 0
			for range 5 {
				c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				s := time.Now()
				var v int
				err := p.QueryRow(c, "SELECT 1").Scan(&v)
				cancel()
				lat = append(lat, time.Since(s).Round(time.Millisecond))
				if err != nil {
					failures++
					t.Logf("statement under taker load: %v (%+v)", err, p.Stat())
				}
			}
			close(stop)
			takeRun(t, 15*time.Second, "taker loop stop", wg.Wait)
			t.Logf("statement latencies %v, transactions %d", lat, txs.Load())
			if failures > 0 {
				t.Errorf("%d of 5 routed statements (2s deadline each) were never served while 10 goroutines ran Begin/Commit in a loop on pool_max_conns=%d", failures, max)
			}
		})
	}
}

// takeCheckQuiet waits (up to 2 s) for the pool to be at rest and checks
// its counters, then checks that an Acquire and a statement are served
// quickly.
func takeCheckQuiet(t *testing.T, p *Pool, max int, label string) bool {
	t.Helper()
	var st PoolStat
	deadline := time.Now().Add(2 * time.Second)
	for {
		st = p.Stat()
		if st.AcquiredConns == 0 && st.AcquireWaiting == 0 && st.Waiting == 0 && st.OpeningConns == 0 && st.TotalConns <= max {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: pool not at rest after 2s: %+v", label, st)
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	ok := true
	takeRun(t, 5*time.Second, label+": Acquire+statement after", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Errorf("%s: Acquire afterwards: %v (%+v)", label, err, p.Stat())
			ok = false
			return
		}
		var v int
		if err := c.QueryRow(ctx, "SELECT 41").Scan(&v); err != nil || v != 41 {
			t.Errorf("%s: on the acquired conn: %d %v", label, v, err)
			ok = false
		}
		c.Release()
		if err := p.QueryRow(ctx, "SELECT 42").Scan(&v); err != nil || v != 42 {
			t.Errorf("%s: statement afterwards: %d %v (%+v)", label, v, err, p.Stat())
			ok = false
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: Acquire+statement afterwards took %v", label, d)
			ok = false
		}
	})
	if st := p.Stat(); st.AcquiredConns != 0 || st.TotalConns > max {
		t.Errorf("%s: after the check: %+v", label, st)
		ok = false
	}
	return ok
}
