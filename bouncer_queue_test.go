package pgline

// Statements PgBouncer holds in its queue or ends with query_timeout:
// every ctx deadline is kept, and an error is SafeToRetry only when the
// statement never ran.
//
// PgBouncer's query_timeout (and likewise its admin console's KILL, or
// any pooler error it sends as FATAL) ends the CLIENT connection with a
// FATAL of PgBouncer's own (08P01 "query timeout") and closes the server
// socket, while the backend goes on running the statement to its end and
// commits it: PostgreSQL does not notice a closed client socket until it
// writes to it. A FATAL in a statement's reply thus does not prove the
// statement never ran. pgline once took every FATAL for the backend's
// and marked the statement whose reply began with it, and every request
// queued behind it, as never sent (SafeToRetry); the tests below pin that
// such an error is SafeToRetry only if the statement did not commit.

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// TestBouncerQueue_DeadlinesKept: default_pool_size=1 and another client
// holds the one server connection in an open transaction, so PgBouncer
// keeps pgline's statements in its queue (the client is not linked to a
// server: a CancelRequest for it is dropped, "cancel request for idle
// client"). Every caller's ctx deadline is still kept (the head's, and
// those queued behind it on the same Conn); a statement whose ctx ended
// in the queue is not SafeToRetry (PgBouncer runs it later); once the
// holder commits, a caller without deadline gets its own answer and the
// Conn is usable.
func TestBouncerQueue_DeadlinesKept(t *testing.T) {
	b := startSmallBouncer(t, "transaction")
	admin := connect(t, srv.DSN())
	ctx := testCtx(t)
	freshIDTable(t, admin, "pgbouncer_q")
	holder := bouncerConn(t, b)
	c := bouncerConn(t, b, "cancel_timeout=3s")

	// Descriptions cached first (describe mode behind a pooler): the runs
	// themselves wait in PgBouncer's queue, not their describes.
	for _, q := range []string{"INSERT INTO pgbouncer_q VALUES ($1) RETURNING id", "SELECT $1::int"} {
		var v int
		if err := c.QueryRow(ctx, q, 0).Scan(&v); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}

	const deadline = 300 * time.Millisecond
	type result struct {
		name    string
		err     error
		late    time.Duration
		v       int
		hasDead bool
	}
	results := make(chan result, 10)
	var wg sync.WaitGroup
	run := func(name string, d time.Duration, sql string, arg int) {
		defer wg.Done()
		cctx, cancel := context.WithCancel(ctx)
		if d > 0 {
			cctx, cancel = context.WithTimeout(ctx, d)
		}
		defer cancel()
		start := time.Now()
		var v int
		err := c.QueryRow(cctx, sql, arg).Scan(&v)
		results <- result{name, err, time.Since(start) - d, v, d > 0}
	}
	wg.Add(1)
	go run("head-insert", deadline, "INSERT INTO pgbouncer_q VALUES ($1) RETURNING id", 1)
	time.Sleep(50 * time.Millisecond)
	wg.Add(2)
	go run("behind", deadline, "SELECT $1::int", 2)
	go run("no-deadline", 0, "SELECT $1::int", 3)
	time.Sleep(deadline + 400*time.Millisecond)
	// Deadlines: the two with one have returned by now.
	got := map[string]result{}
	for len(got) < 2 {
		select {
		case r := <-results:
			got[r.name] = r
		default:
			t.Fatalf("deadline not kept: only %v returned %v after the start", got, deadline+400*time.Millisecond)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(results)
	for r := range results {
		got[r.name] = r
	}
	for name, r := range got {
		t.Logf("%s: v=%d err=%v late=%v", name, r.v, r.err, r.late)
		if r.hasDead && r.err == nil {
			t.Errorf("%s: succeeded after its deadline with the pool held", name)
		}
		if r.hasDead && r.late > 200*time.Millisecond {
			t.Errorf("%s: returned %v after its deadline", name, r.late)
		}
		if session.SafeToRetry(r.err) && name == "head-insert" {
			t.Errorf("%s: SafeToRetry although PgBouncer holds it in its queue and runs it later: %v", name, r.err)
		}
	}
	if r := got["no-deadline"]; r.err != nil || r.v != 3 {
		t.Errorf("the caller without deadline: %d %v", r.v, r.err)
	}
	var v int
	if err := c.QueryRow(ctx, "SELECT $1::int", 42).Scan(&v); err != nil || v != 42 {
		t.Errorf("Conn after the queue: %d %v", v, err)
	}
	// The head's INSERT, given up in the queue, ran once the pool freed
	// (its error is its ctx's, not SafeToRetry).
	t.Logf("rows with id 1: %d", rowCount(t, admin, "pgbouncer_q WHERE id = 1"))
}

// TestBouncerQueryTimeout_HeadNotSafeToRetry: a slow INSERT (simple
// protocol, then extended) killed by query_timeout returns an error that
// says nothing of it reached the server (SafeToRetry), yet the backend
// finishes it and the row is committed.
func TestBouncerQueryTimeout_HeadNotSafeToRetry(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	b := startSmallBouncer(t, "transaction", "query_timeout = 1")
	admin := connect(t, srv.DSN())
	ctx := testCtx(t)
	for _, tc := range []struct {
		name string
		sql  string
		args []any
	}{
		{"simple", "INSERT INTO pgbouncer_qth SELECT 1 FROM pg_sleep(1.6)", nil},
		{"extended", "INSERT INTO pgbouncer_qth SELECT $1 FROM pg_sleep(1.6)", []any{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			freshIDTable(t, admin, "pgbouncer_qth")
			c := bouncerConn(t, b)
			start := time.Now()
			_, err := c.Exec(ctx, tc.sql, tc.args...)
			t.Logf("after %v: %v (SafeToRetry %v)", time.Since(start).Round(time.Millisecond), err, session.SafeToRetry(err))
			if err == nil {
				t.Skip("query_timeout did not strike")
			}
			time.Sleep(time.Until(start.Add(2 * time.Second)))
			if n := rowCount(t, admin, "pgbouncer_qth"); session.SafeToRetry(err) && n != 0 {
				t.Fatalf("error %v is SafeToRetry (nothing reached the server), yet the INSERT committed (%d row)", err, n)
			}
		})
	}
}

// TestBouncerQueryTimeout_PoolRunsOnce: through a Pool, which makes
// a call again on another connection when its error is SafeToRetry, one
// call of Exec runs its INSERT several times (and still fails).
func TestBouncerQueryTimeout_PoolRunsOnce(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	b := startSmallBouncer(t, "transaction", "query_timeout = 1", "default_pool_size = 2")
	admin := connect(t, srv.DSN())
	ctx := testCtx(t)
	freshIDTable(t, admin, "pgbouncer_qtp")
	p, err := NewPool(ctx, b.DSN("pool_max_conns=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	start := time.Now()
	tag, err := p.Exec(ctx, "INSERT INTO pgbouncer_qtp SELECT $1 FROM pg_sleep(1.6)", 1)
	elapsed := time.Since(start)
	time.Sleep(700 * time.Millisecond) // the last run's backend finishes
	n := rowCount(t, admin, "pgbouncer_qtp")
	t.Logf("after %v: %q %v; rows %d", elapsed.Round(time.Millisecond), tag, err, n)
	if n > 1 {
		t.Fatalf("one Pool.Exec of one INSERT committed %d rows (err %v)", n, err)
	}
}

// TestBouncerQueryTimeout_QueuedNotSafeToRetry: an INSERT batched behind
// a slow statement (one write: the backend has it in its input before
// query_timeout strikes) runs once the slow statement ends; its error
// says it was never sent.
func TestBouncerQueryTimeout_QueuedNotSafeToRetry(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	b := startSmallBouncer(t, "transaction", "query_timeout = 1")
	admin := connect(t, srv.DSN())
	ctx := testCtx(t)
	freshIDTable(t, admin, "pgbouncer_qtb")
	c := bouncerConn(t, b)

	// Two callers of one Conn: the second queued while the first's bytes
	// are still unwritten goes in the same write (often, with its Sync
	// shared). A Batch does the same deterministically.
	batch := &Batch{}
	batch.Queue("SELECT pg_sleep(1.6)")
	batch.Queue("INSERT INTO pgbouncer_qtb VALUES ($1)", 7)
	start := time.Now()
	br := c.SendBatch(ctx, batch)
	_, err0 := br.Exec()
	_, err1 := br.Exec()
	br.Close()
	t.Logf("sleep: %v; insert: %v (SafeToRetry %v)", err0, err1, session.SafeToRetry(err1))
	if err1 == nil {
		t.Skip("query_timeout did not strike")
	}
	time.Sleep(time.Until(start.Add(2200 * time.Millisecond)))
	n := rowCount(t, admin, "pgbouncer_qtb")
	if session.SafeToRetry(err1) && n != 0 {
		t.Errorf("the batched INSERT's error is SafeToRetry, yet it ran (%d row): %v", n, err1)
	}

	// The same with two goroutines sharing the Conn.
	freshIDTable(t, admin, "pgbouncer_qtb")
	c2 := bouncerConn(t, b)
	var wg sync.WaitGroup
	var errIns error
	wg.Add(2)
	ready := make(chan struct{})
	start = time.Now()
	go func() {
		defer wg.Done()
		close(ready)
		c2.Exec(ctx, "SELECT pg_sleep($1::float8)", 1.6)
	}()
	go func() {
		defer wg.Done()
		<-ready
		_, errIns = c2.Exec(ctx, "INSERT INTO pgbouncer_qtb VALUES ($1)", 8)
	}()
	wg.Wait()
	time.Sleep(time.Until(start.Add(2200 * time.Millisecond)))
	n = rowCount(t, admin, "pgbouncer_qtb")
	t.Logf("two goroutines: insert: %v (SafeToRetry %v); rows %d", errIns, session.SafeToRetry(errIns), n)
	if session.SafeToRetry(errIns) && n != 0 {
		t.Fatalf("the pipelined INSERT's error is SafeToRetry, yet it ran (%d row): %v", n, errIns)
	}
}
