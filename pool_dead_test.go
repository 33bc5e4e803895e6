package pgline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// These tests end the server sessions under a Pool's idle connections
// (idle_session_timeout, pg_terminate_backend) and require that the Pool
// never hands one of them to a caller: a statement that reached a dead
// session ran nothing, so the Pool sends it on a live connection instead
// of failing; Begin and Acquire give a live connection.

// newDeadPool opens a Pool of 4 connections (pool_min_conns=4) whose
// sessions carry application_name app, closed when the test ends.
func newDeadPool(t *testing.T, ctx context.Context, app string, extra ...string) *Pool {
	t.Helper()
	dsn := srv.DSN(append([]string{"pool_max_conns=4", "pool_min_conns=4", "application_name=" + app}, extra...)...)
	p, err := NewPool(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// warmPool waits until p's 4 connections are open, then uses each of
// them (a simple query, a prepared statement) and returns their backend
// pids.
func warmPool(t *testing.T, ctx context.Context, p *Pool) []int {
	t.Helper()
	for {
		st := p.Stat()
		if st.TotalConns == 4 && st.OpeningConns == 0 && st.AcquiredConns == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the pool did not open its 4 connections: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	held := make([]*PoolConn, 4)
	seen := map[int]bool{}
	var pids []int
	for i := range held {
		pc, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held[i] = pc
		var pid, v int
		if err := pc.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		if err := pc.QueryRow(ctx, "SELECT $1::int", i).Scan(&v); err != nil || v != i {
			t.Fatalf("warm-up: %d, %v", v, err)
		}
		if _, err := pc.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		if !seen[pid] {
			seen[pid] = true
			pids = append(pids, pid)
		}
	}
	for _, pc := range held {
		pc.Release()
	}
	if len(pids) != 4 {
		t.Fatalf("the 4 connections have %d distinct backends, want 4", len(pids))
	}
	// Routed statements too, spread over the connections.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var v int
			if err := p.QueryRow(ctx, "SELECT $1::int FROM pg_sleep(0.02)", i).Scan(&v); err != nil || v != i {
				errs <- fmt.Errorf("warm-up QueryRow %d: %d, %v", i, v, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st := p.Stat(); st.TotalConns != 4 || st.AcquiredConns != 0 {
		t.Fatalf("after the warm-up: %+v, want 4 connections, none held", st)
	}
	return pids
}

// terminateApp ends, with pg_terminate_backend, every session whose
// application_name is app, and returns their pids.
func terminateApp(t *testing.T, ctx context.Context, mon *Conn, app string) []int {
	t.Helper()
	rows, err := mon.Query(ctx, "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1::text", app)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for rows.Next() {
		var pid int
		var ok bool
		if err := rows.Scan(&pid, &ok); err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Fatalf("pg_terminate_backend(%d) returned false", pid)
		}
		pids = append(pids, pid)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return pids
}

// deadPoolOp is one kind of call on a Pool whose connections' sessions
// have ended; i distinguishes the calls.
type deadPoolOp struct {
	name string
	n    int // how many times it runs in a row
	run  func(ctx context.Context, p *Pool, i int) error
}

var deadPoolOps = []deadPoolOp{
	{"QueryRow", 10, func(ctx context.Context, p *Pool, i int) error {
		var v int
		if err := p.QueryRow(ctx, "SELECT $1::int", i).Scan(&v); err != nil {
			return err
		}
		if v != i {
			return fmt.Errorf("got %d, want %d", v, i)
		}
		return nil
	}},
	{"Begin", 4, func(ctx context.Context, p *Pool, i int) error {
		tx, err := p.Begin(ctx)
		if err != nil {
			return fmt.Errorf("Begin: %w", err)
		}
		if err := tx.Commit(ctx); err != nil {
			return fmt.Errorf("Commit: %w", err)
		}
		return nil
	}},
	{"Acquire", 4, func(ctx context.Context, p *Pool, i int) error {
		pc, err := p.Acquire(ctx)
		if err != nil {
			return fmt.Errorf("Acquire: %w", err)
		}
		defer pc.Release()
		var v int
		if err := pc.QueryRow(ctx, "SELECT $1::int", i).Scan(&v); err != nil {
			return fmt.Errorf("QueryRow on the acquired connection: %w", err)
		}
		if v != i {
			return fmt.Errorf("got %d, want %d", v, i)
		}
		return nil
	}},
	{"Exec", 4, func(ctx context.Context, p *Pool, i int) error {
		// Without arguments: the simple query protocol.
		_, err := p.Exec(ctx, "SELECT 1")
		return err
	}},
}

// deadPoolCases are the subtests of the idle-session tests: each kind of
// call alone, on a pool all of whose connections are dead, and all of
// them in a row.
func deadPoolCases() []struct {
	name string
	ops  []deadPoolOp
} {
	cases := []struct {
		name string
		ops  []deadPoolOp
	}{{"all", deadPoolOps}}
	for _, op := range deadPoolOps {
		cases = append(cases, struct {
			name string
			ops  []deadPoolOp
		}{op.name, []deadPoolOp{op}})
	}
	return cases
}

// runDeadPoolOps runs ops one call at a time and fails the test for every
// error: none may reach the caller.
func runDeadPoolOps(t *testing.T, ctx context.Context, p *Pool, ops []deadPoolOp) {
	t.Helper()
	failed, total := 0, 0
	for _, op := range ops {
		for i := range op.n {
			total++
			if err := op.run(ctx, p, i); err != nil {
				failed++
				t.Errorf("%s #%d: %v (SQLSTATE %q, safe to retry: %v)", op.name, i, err, pgCode(err), session.SafeToRetry(err))
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d calls failed after the server ended the idle sessions; want 0", failed, total)
	}
}

// TestPoolIdleSessionTimeout: the server ends the sessions of a Pool's 4
// idle connections (idle_session_timeout, FATAL 57P05). The calls made
// afterwards, one at a time, must all succeed: QueryRow, Begin+Commit,
// Acquire+QueryRow+Release, Exec without arguments (simple protocol).
func TestPoolIdleSessionTimeout(t *testing.T) {
	for i, tc := range deadPoolCases() {
		t.Run(tc.name, func(t *testing.T) {
			srv.NeedVersion(t, 14, "idle_session_timeout")
			t.Parallel()
			ctx := testCtx(t)
			app := fmt.Sprintf("pool_idle_timeout_%d", i)
			p := newDeadPool(t, ctx, app, "idle_session_timeout=1500")
			mon := connect(t, srv.DSN())
			pids := warmPool(t, ctx, p)
			// The scenario: the connections stay idle past the timeout,
			// until the server has ended all 4 sessions.
			waitSessionsGone(t, mon, pids)
			runDeadPoolOps(t, ctx, p, tc.ops)
		})
	}
}

// TestPoolTerminatedBackends: the sessions of a Pool's connections are
// ended by pg_terminate_backend (FATAL 57P01).
//
// idle/*: while they are idle; the calls made afterwards, one at a time,
// must all succeed.
//
// under_load: while 20 goroutines issue statements. A statement running
// at the kill may fail (it may have run), but no routed statement (Pool's
// QueryRow, Exec) nor Pool.Begin may return an error that says nothing
// ran (SafeToRetry): the Pool sends it again on a live connection. Calls
// started after the sessions ended must all succeed.
func TestPoolTerminatedBackends(t *testing.T) {
	for i, tc := range deadPoolCases() {
		t.Run("idle/"+tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			app := fmt.Sprintf("pool_terminated_idle_%d", i)
			p := newDeadPool(t, ctx, app)
			mon := connect(t, srv.DSN())
			warmPool(t, ctx, p)
			pids := terminateApp(t, ctx, mon, app)
			if len(pids) != 4 {
				t.Fatalf("terminated %d sessions, want the pool's 4", len(pids))
			}
			waitSessionsGone(t, mon, pids)
			runDeadPoolOps(t, ctx, p, tc.ops)
		})
	}
	t.Run("under_load", func(t *testing.T) {
		t.Parallel()
		testPoolTerminatedUnderLoad(t)
	})
}

// heldConnError is the error of a statement on a connection the caller
// held (a Tx of Pool.Begin, a PoolConn of Acquire), which the Pool cannot
// send elsewhere. takenLate: the connection was handed out after the
// killed sessions had ended.
type heldConnError struct {
	err       error
	takenLate bool
}

func (e *heldConnError) Error() string { return e.err.Error() }
func (e *heldConnError) Unwrap() error { return e.err }

// errWrongReply marks a reply that is not the caller's.
var errWrongReply = errors.New("wrong reply")

func testPoolTerminatedUnderLoad(t *testing.T) {
	ctx := testCtx(t)
	const app = "pool_terminated_load"
	p := newDeadPool(t, ctx, app)
	mon := connect(t, srv.DSN())
	warmPool(t, ctx, p)

	const workers, afterKill = 20, 10
	var (
		gone      atomic.Bool  // the killed sessions have ended
		completed atomic.Int64 // calls finished
		started   = make(chan struct{})
		startOnce sync.Once

		mu       sync.Mutex // protects the fields below
		bad      []string   // errors no caller may get
		inFlight []string   // errors of calls under way at the kill (allowed)
	)
	call := func(w, i int) error {
		switch i % 4 {
		case 0:
			// A few milliseconds each: statements queue behind it, on
			// every connection, when the sessions end.
			var v int
			if err := p.QueryRow(ctx, "SELECT $1::int FROM pg_sleep(0.005)", w*1000+i).Scan(&v); err != nil {
				return fmt.Errorf("QueryRow: %w", err)
			} else if v != w*1000+i {
				return fmt.Errorf("%w: QueryRow: got %d, want %d", errWrongReply, v, w*1000+i)
			}
		case 1:
			if _, err := p.Exec(ctx, "SELECT 1"); err != nil {
				return fmt.Errorf("Exec: %w", err)
			}
		case 2:
			// Late when Begin began after the sessions had ended: one
			// that began before may have had its connection looked at,
			// and found alive, before the kill.
			late := gone.Load()
			tx, err := p.Begin(ctx)
			if err != nil {
				return fmt.Errorf("Begin: %w", err)
			}
			var v int
			if err := tx.QueryRow(ctx, "SELECT $1::int", i).Scan(&v); err != nil {
				tx.Rollback(ctx)
				return &heldConnError{fmt.Errorf("QueryRow in a Tx: %w", err), late}
			} else if v != i {
				tx.Rollback(ctx)
				return fmt.Errorf("%w: QueryRow in a Tx: got %d, want %d", errWrongReply, v, i)
			}
			if err := tx.Commit(ctx); err != nil {
				return &heldConnError{fmt.Errorf("Commit: %w", err), late}
			}
		case 3:
			late := gone.Load() // as for Begin
			pc, err := p.Acquire(ctx)
			if err != nil {
				return fmt.Errorf("Acquire: %w", err)
			}
			defer pc.Release()
			var v int
			if err := pc.QueryRow(ctx, "SELECT $1::int", i).Scan(&v); err != nil {
				return &heldConnError{fmt.Errorf("QueryRow on an acquired connection: %w", err), late}
			} else if v != i {
				return fmt.Errorf("%w: QueryRow on an acquired connection: got %d, want %d", errWrongReply, v, i)
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			after := 0
			for i := 0; after < afterKill && ctx.Err() == nil; i++ {
				late := gone.Load() // started after the sessions ended
				err := call(w, i)
				if completed.Add(1) == 100 {
					startOnce.Do(func() { close(started) })
				}
				if late {
					after++
				}
				if err == nil {
					continue
				}
				msg := fmt.Sprintf("worker %d call %d: %v (SQLSTATE %q, safe to retry: %v)", w, i, err, pgCode(err), session.SafeToRetry(err))
				var held *heldConnError
				mu.Lock()
				switch {
				case errors.Is(err, errWrongReply):
					bad = append(bad, msg)
				case late:
					bad = append(bad, msg+": started after the sessions had ended")
				case errors.As(err, &held):
					// The session ended under its holder: nobody can send
					// the statement elsewhere, and SafeToRetry tells the
					// caller that nothing ran. Unless the connection was
					// handed out already dead.
					if held.takenLate {
						bad = append(bad, msg+": on a connection handed out after the sessions had ended")
					} else {
						inFlight = append(inFlight, msg)
					}
				case session.SafeToRetry(err):
					bad = append(bad, msg+": nothing ran, so the Pool should have sent it again on a live connection")
				default:
					inFlight = append(inFlight, msg)
				}
				mu.Unlock()
			}
		}()
	}
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the workers did not get going")
	}
	pids := terminateApp(t, ctx, mon, app)
	if len(pids) == 0 {
		t.Fatal("no session to terminate")
	}
	waitSessionsGone(t, mon, pids)
	gone.Store(true)
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the workers did not finish: %v", ctx.Err())
	}
	t.Logf("terminated %d sessions; %d calls; %d failed at the kill (allowed)", len(pids), completed.Load(), len(inFlight))
	for _, m := range inFlight {
		t.Logf("  allowed: %s", m)
	}
	for _, m := range bad {
		t.Error(m)
	}
}

// TestSimpleQueryReportsFatal: on a Conn whose session the server ended
// while idle (idle_session_timeout), the next statement gets the server's
// FATAL as a *PgError with SQLSTATE 57P05, and SafeToRetry reports that
// it ran nothing: with the simple protocol (Exec without arguments) and
// with the extended one.
func TestSimpleQueryReportsFatal(t *testing.T) {
	for i, tc := range []struct {
		name string
		warm string // run once before the session ends (prepares it)
		run  func(ctx context.Context, c *Conn) error
	}{
		{"simple Exec", "", func(ctx context.Context, c *Conn) error {
			_, err := c.Exec(ctx, "SELECT 1")
			return err
		}},
		{"QueryRow prepared", "SELECT $1::int", func(ctx context.Context, c *Conn) error {
			var v int
			return c.QueryRow(ctx, "SELECT $1::int", 2).Scan(&v)
		}},
		{"QueryRow new statement", "", func(ctx context.Context, c *Conn) error {
			var v int
			return c.QueryRow(ctx, "SELECT $1::int + 1", 2).Scan(&v)
		}},
		{"Exec with args prepared", "SELECT $1::int", func(ctx context.Context, c *Conn) error {
			_, err := c.Exec(ctx, "SELECT $1::int", 2)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.NeedVersion(t, 14, "idle_session_timeout")
			t.Parallel()
			ctx := testCtx(t)
			mon := connect(t, srv.DSN())
			c := connect(t, srv.DSN("idle_session_timeout=500", fmt.Sprintf("application_name=fatal_report_%d", i)))
			if tc.warm != "" {
				var v int
				if err := c.QueryRow(ctx, tc.warm, 1).Scan(&v); err != nil {
					t.Fatal(err)
				}
			}
			waitSessionsGone(t, mon, []int{int(c.PID())})
			err := tc.run(ctx, c)
			var pgErr *PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "57P05" {
				t.Errorf("error %v (%T), want a *PgError with SQLSTATE 57P05", err, err)
			}
			if !session.SafeToRetry(err) {
				t.Errorf("SafeToRetry(%v) = false, want true: the session had ended before the statement, which ran nothing", err)
			}
		})
	}
}
