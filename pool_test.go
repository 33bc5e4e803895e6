package pgline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

func newTestPool(t *testing.T, extra ...string) *Pool {
	t.Helper()
	p, err := NewPool(testCtx(t), srv.DSN(extra...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// serverConns counts the server sessions with the given application_name.
func serverConns(t *testing.T, app string) int {
	t.Helper()
	out, err := srv.Query("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + app + "'")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(out)
	return n
}

// TestPoolMultiplexes: 500 concurrent requests on a pool of at most 5
// connections all succeed, with no more than 5 server sessions.
func TestPoolMultiplexes(t *testing.T) {
	p := newTestPool(t, "pool_max_conns=5", "application_name=pool_mux")
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 500)
	for i := 0; i < 500; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var v int
			var s string
			if err := p.QueryRow(ctx, "SELECT $1::int, repeat('x', 14)", i).Scan(&v, &s); err != nil || v != i {
				errs <- errors.Join(err, errors.New("wrong value "+strconv.Itoa(v)))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st := p.Stat()
	if st.TotalConns > 5 || st.TotalConns < 1 || st.InFlight != 0 {
		t.Fatalf("stat after the burst: %+v", st)
	}
	if n := serverConns(t, "pool_mux"); n > 5 {
		t.Fatalf("%d server sessions for a pool of 5", n)
	}
}

// TestPoolRoutesAroundOpenRows: statements do not queue behind Rows held
// open on one connection when another connection can take them.
func TestPoolRoutesAroundOpenRows(t *testing.T) {
	p := newTestPool(t, "pool_max_conns=3")
	ctx := testCtx(t)
	rows, err := p.Query(ctx, "SELECT g FROM generate_series(1, 100000) g")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	rows.Next()
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 20; i++ {
			var v int
			if err := p.QueryRow(ctx, "SELECT $1::int", i).Scan(&v); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("statements waited behind open Rows")
	}
}

// TestPoolAcquireSessionState: an acquired connection keeps its session
// state until Release, which resets it before others use the connection.
func TestPoolAcquireSessionState(t *testing.T) {
	p := newTestPool(t, "pool_max_conns=1")
	ctx := testCtx(t)
	pc, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Exec(ctx, "SET search_path = pg_catalog; CREATE TEMP TABLE acq(x int)"); err != nil {
		t.Fatal(err)
	}
	var sp string
	if err := pc.QueryRow(ctx, "SELECT current_setting('search_path')").Scan(&sp); err != nil || sp != "pg_catalog" {
		t.Fatalf("search_path %q %v", sp, err)
	}
	// The only connection is held: a pool statement waits for it.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := p.Exec(short, "SELECT 1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("statement while the only connection is held: %v", err)
	}
	pc.Release()
	pc.Release()
	if err := p.QueryRow(ctx, "SELECT current_setting('search_path')").Scan(&sp); err != nil || sp == "pg_catalog" {
		t.Fatalf("search_path after Release: %q %v", sp, err)
	}
	var n int
	if err := p.QueryRow(ctx, "SELECT count(*)::int FROM pg_class WHERE relname = 'acq' AND relpersistence = 't'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("temporary table survived Release: %d %v", n, err)
	}
}

func TestPoolTransaction(t *testing.T) {
	p := newTestPool(t, "pool_max_conns=2")
	ctx := testCtx(t)
	if _, err := p.Exec(ctx, "DROP TABLE IF EXISTS pool_tx; CREATE TABLE pool_tx(x int)"); err != nil {
		t.Fatal(err)
	}
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) // on failure, so that the pool's Close does not wait for it
	tx.Exec(ctx, "INSERT INTO pool_tx VALUES ($1)", 7)
	var n int
	// Other statements go to the other connection and do not see the
	// uncommitted row.
	if err := p.QueryRow(ctx, "SELECT count(*)::int FROM pool_tx WHERE x = 7").Scan(&n); err != nil || n != 0 {
		t.Fatalf("outside the tx: %d %v", n, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.QueryRow(ctx, "SELECT count(*)::int FROM pool_tx WHERE x = 7").Scan(&n); err != nil || n != 1 {
		t.Fatalf("after commit: %d %v", n, err)
	}
	if st := p.Stat(); st.AcquiredConns != 0 {
		t.Fatalf("connection not returned after Commit: %+v", st)
	}
}

// TestPoolReplacesBrokenConnections: after the server ends every session
// of the pool, statements fail at most once per broken connection and
// then succeed on new ones.
func TestPoolReplacesBrokenConnections(t *testing.T) {
	p := newTestPool(t, "pool_max_conns=3", "application_name=pool_broken")
	ctx := testCtx(t)
	var wg sync.WaitGroup
	for i := 0; i < 30; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); p.Exec(ctx, "SELECT pg_sleep(0.01)") }()
	}
	wg.Wait()
	if err := srv.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'pool_broken'"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	failures := 0
	for i := 0; i < 20; i++ {
		var v int
		if err := p.QueryRow(ctx, "SELECT $1::int", i).Scan(&v); err != nil {
			failures++
			continue
		}
		if v != i {
			t.Fatalf("got %d want %d", v, i)
		}
	}
	if failures > 3 {
		t.Fatalf("%d failures after the sessions ended (pool of 3)", failures)
	}
	var v int
	if err := p.QueryRow(ctx, "SELECT 1").Scan(&v); err != nil {
		t.Fatal(err)
	}
}

// TestPoolCloseWaits: Close waits for statements in flight; calls after
// it fail with ErrPoolClosed.
func TestPoolCloseWaits(t *testing.T) {
	p, err := NewPool(testCtx(t), srv.DSN("pool_max_conns=2"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	result := make(chan error, 1)
	go func() {
		_, err := p.Exec(ctx, "SELECT pg_sleep(1)")
		result <- err
	}()
	// Once the statement is in flight (on a loaded machine, opening the
	// connection may take a while), it has a second of sleep ahead.
	for p.Stat().InFlight == 0 {
		if ctx.Err() != nil {
			t.Fatal("the statement never went in flight")
		}
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	p.Close()
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Fatalf("Close returned %v after the statement went in flight: it did not wait for it", d)
	}
	if err := <-result; err != nil {
		t.Fatalf("statement in flight during Close: %v", err)
	}
	if _, err := p.Exec(ctx, "SELECT 1"); !errors.Is(err, ErrPoolClosed) {
		t.Fatalf("after Close: %v", err)
	}
	p.Close()
}

func TestPoolBadConfig(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	for _, dsn := range []string{"pool_max_conns=0", "pool_min_conns=5 pool_max_conns=2", "pool_max_conn_lifetime=soon"} {
		if _, err := NewPool(testCtx(t), srv.DSN(dsn)); err == nil {
			t.Fatalf("%s: no error", dsn)
		}
	}
	// A pool that cannot connect reports why.
	p, err := NewPool(testCtx(t), "host=127.0.0.1 port="+strconv.Itoa(closedPort(t))+" sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = p.Exec(ctx, "SELECT 1")
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("a pool whose server is down: %v, want the connection's error", err)
	}
}

// TestPoolCloseStopsOpening: Close does not wait for a connection attempt
// to a server that never answers.
func TestPoolCloseStopsOpening(t *testing.T) {
	dsn := fakeServer(t, func(t *testing.T, c net.Conn) {
		io.Copy(io.Discard, c) // accept, never answer
	})
	p, err := NewPool(testCtx(t), strings.Replace(dsn, "connect_timeout=10", "connect_timeout=0", 1))
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := p.Exec(short, "SELECT 1"); err == nil {
		t.Fatal("no error from a server that never answers")
	}
	// Acquire opens its connection itself, with its caller's ctx: Close
	// ends that attempt too instead of waiting for the ctx.
	acquired := make(chan error, 1)
	go func() {
		long, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := p.Acquire(long)
		acquired <- err
	}()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	p.Close()
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("Close took %v", took)
	}
	if err := <-acquired; !errors.Is(err, ErrPoolClosed) {
		t.Fatalf("Acquire during Close: %v, want ErrPoolClosed", err)
	}
}

// TestPoolZeroLifetimeIsNoLimit: pool_max_conn_lifetime=0 and
// pool_max_conn_idle_time=0 turn the limits off (as 0 does in
// database/sql); they used to retire every connection after its first use.
func TestPoolZeroLifetimeIsNoLimit(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "pool_max_conns=1 pool_max_conn_lifetime=0 pool_max_conn_idle_time=0")
	pids := make(map[int]bool)
	for range 5 {
		for _, use := range []string{"route", "acquire"} {
			var pid int
			if use == "route" {
				if err := p.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
					t.Fatal(err)
				}
			} else {
				pc, err := p.Acquire(ctx)
				if err != nil {
					t.Fatal(err)
				}
				err = pc.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid)
				pc.Release()
				if err != nil {
					t.Fatal(err)
				}
			}
			pids[pid] = true
		}
	}
	if len(pids) != 1 {
		t.Fatalf("%d server sessions served 10 statements, want 1", len(pids))
	}
}

// TestPoolRoutedStatementLeavingTx: a routed statement that leaves its
// session in a transaction used to poison its connection: later
// statements failed with 25P02 or ran inside it. A text that fails inside
// the block it opens leaves nothing behind; a raw BEGIN given to Exec is
// refused (ErrRoutedBlock), unsent.
func TestPoolRoutedStatementLeavingTx(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "pool_max_conns=1")
	if _, err := p.Exec(ctx, "DROP TABLE IF EXISTS pool_leftx; CREATE TABLE pool_leftx (x int)"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exec(ctx, "BEGIN; SELECT 1/0; COMMIT"); err == nil {
		t.Fatal("no error from the division by zero")
	}
	var v int
	if err := p.QueryRow(ctx, "SELECT 1").Scan(&v); err != nil || v != 1 {
		t.Fatalf("after a failed explicit block: %d, %v", v, err)
	}
	if _, err := p.Exec(ctx, "BEGIN"); !errors.Is(err, ErrRoutedBlock) {
		t.Fatalf("raw BEGIN: %v, want ErrRoutedBlock", err)
	}
	if _, err := p.Exec(ctx, "INSERT INTO pool_leftx VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if n := rowCount(t, connect(t, srv.DSN()), "pool_leftx"); n != 1 {
		t.Fatalf("%d rows visible outside: the insert ran in the transaction BEGIN left open", n)
	}
}

// TestPoolDropsRoutedNotifications: notifications reaching a routed
// connection (LISTEN run in a Pool transaction) are dropped by the health
// check instead of piling up.
func TestPoolDropsRoutedNotifications(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "pool_max_conns=1 pool_health_check_period=1s")
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LISTEN routed_ch"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if _, err := p.Exec(ctx, "NOTIFY routed_ch, 'x'"); err != nil {
			t.Fatal(err)
		}
	}
	queued := func() int {
		n := 0
		for _, c := range p.routedConns() { // the Pool's one host
			c.s.NotifyMu.Lock()
			n += len(c.s.Notifications)
			c.s.NotifyMu.Unlock()
		}
		return n
	}
	if queued() == 0 {
		t.Fatal("no notification reached the routed connection: the test shows nothing")
	}
	deadline := time.Now().Add(5 * time.Second)
	for queued() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d notifications still queued on the routed connection", queued())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPoolIdleConnectionKilled: a statement routed to a connection whose
// session the server ended while it was idle (pg_terminate_backend, a
// restart, idle_session_timeout) ran nothing there: it is sent again on a
// fresh connection instead of failing with 57P01.
func TestPoolIdleConnectionKilled(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "pool_max_conns=1")
	other := connect(t, srv.DSN())
	kill := func() int {
		var pid int
		if err := p.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // the FATAL is on its way
		return pid
	}
	old := kill()
	var pid int
	if err := p.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil || pid == old {
		t.Fatalf("QueryRow after the kill: pid %d (killed %d), %v", pid, old, err)
	}
	kill()
	if _, err := p.Exec(ctx, "SELECT $1::int", 1); err != nil {
		t.Fatalf("Exec after the kill: %v", err)
	}

	// On a Conn of one's own the error says nothing ran.
	c := connect(t, srv.DSN())
	if _, err := other.Exec(ctx, "SELECT pg_terminate_backend($1)", int(c.PID())); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	_, err := c.Exec(ctx, "SELECT $1::int", 1)
	if pgCode(err) != "57P01" || !session.SafeToRetry(err) {
		t.Fatalf("Conn after the kill: %v (safe to retry: %v)", err, session.SafeToRetry(err))
	}
}

// TestPoolConnReleaseTwiceConcurrently: Release is safe to call more than
// once, also from two goroutines at once (the flag was a data race).
func TestPoolConnReleaseTwiceConcurrently(t *testing.T) {
	p := newTestPool(t, "pool_max_conns=1")
	for range 20 {
		pc, err := p.Acquire(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() { defer wg.Done(); pc.Release() }()
		}
		wg.Wait()
	}
	if st := p.Stat(); st.AcquiredConns != 0 || st.TotalConns != 1 {
		t.Fatalf("after double releases: %+v", st)
	}
}

// TestPoolKilledWithPipelinedStatements: when the server ends a session
// while statements are pipelined on it, the one running gets the error;
// those queued behind it never ran and are sent again on a fresh
// connection.
func TestPoolKilledWithPipelinedStatements(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "pool_max_conns=1")
	var pid int
	if err := p.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	const n = 10
	errs := make(chan error, n)
	for i := range n {
		go func() {
			var v int
			err := p.QueryRow(ctx, "SELECT $1::int FROM pg_sleep(0.1)", i).Scan(&v)
			if err == nil && v != i {
				err = fmt.Errorf("got %d, want %d", v, i)
			}
			errs <- err
		}()
	}
	time.Sleep(250 * time.Millisecond)
	other := connect(t, srv.DSN())
	if _, err := other.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for range n {
		if err := <-errs; err != nil {
			failed++
			if pgCode(err) != "57P01" {
				t.Errorf("unexpected error: %v", err)
			}
		}
	}
	if failed > 1 {
		t.Fatalf("%d of %d statements failed; want at most the one running at the kill", failed, n)
	}
}
