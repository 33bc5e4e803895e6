package pgline

// Which FATALs mean "the backend ended, nothing after it ran"
// (nothingRanAfter: the next statement is SafeToRetry), directly and
// through PgBouncer, and which do not (a statement that committed part of
// its work before the FATAL).

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// TestFatalIdleSessionSafeToRetry: PostgreSQL's own FATALs that end
// an idle session before the next statement arrives (pg_terminate_backend,
// idle_session_timeout) still make that statement SafeToRetry, and
// nothing of it ran.
func TestFatalIdleSessionSafeToRetry(t *testing.T) {
	admin := connect(t, srv.DSN())
	ctx := testCtx(t)
	freshIDTable(t, admin, "fatal_t")
	t.Run("terminate", func(t *testing.T) {
		c := connect(t, srv.DSN())
		if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend($1)", int(c.PID())); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		_, err := c.Exec(ctx, "INSERT INTO fatal_t VALUES (1)")
		t.Logf("err: %v", err)
		if err == nil || !session.SafeToRetry(err) {
			t.Errorf("after pg_terminate_backend of an idle session: %v, SafeToRetry=%v; want SafeToRetry", err, session.SafeToRetry(err))
		}
	})
	t.Run("idle_session_timeout", func(t *testing.T) {
		srv.NeedVersion(t, 14, "idle_session_timeout")
		c := connect(t, srv.DSN("options='-c idle_session_timeout=300'"))
		time.Sleep(700 * time.Millisecond)
		_, err := c.Exec(ctx, "INSERT INTO fatal_t VALUES (2)")
		t.Logf("err: %v", err)
		if err == nil || !session.SafeToRetry(err) {
			t.Errorf("after idle_session_timeout: %v, SafeToRetry=%v; want SafeToRetry", err, session.SafeToRetry(err))
		}
	})
	if n := rowCount(t, admin, "fatal_t"); n != 0 {
		t.Errorf("%d rows: a statement reported SafeToRetry ran", n)
	}
}

// TestFatalRelayedByBouncerSafeToRetry: through PgBouncer (session
// mode), the backend's own FATAL (pg_terminate_backend of the server
// connection while the client is idle) is relayed with its Routine: the
// next statement is still SafeToRetry.
func TestFatalRelayedByBouncerSafeToRetry(t *testing.T) {
	b := startSmallBouncer(t, "session")
	admin := connect(t, srv.DSN())
	ctx := testCtx(t)
	c := bouncerConn(t, b)
	var pid int
	if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	_, err := c.Exec(ctx, "SELECT 1")
	var pe *PgError
	errors.As(err, &pe)
	t.Logf("err: %v; pgErr: %+v", err, pe)
	if err == nil || !session.SafeToRetry(err) {
		t.Errorf("backend terminated while idle behind PgBouncer: %v SafeToRetry=%v; want SafeToRetry", err, session.SafeToRetry(err))
	}
}

// TestFatalBouncerQueryWaitTimeoutNotSent: PgBouncer's
// query_wait_timeout FATAL ends a client whose statement waited in
// PgBouncer's queue and was never given a server: it provably never ran.
// Before e2e5d91 it was SafeToRetry (and a Pool sent it again and
// succeeded); now it is reported as "may have run", and a Pool call that
// would have succeeded on its retry fails.
func TestFatalBouncerQueryWaitTimeoutNotSent(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	b := startSmallBouncer(t, "transaction", "query_wait_timeout = 1")
	admin := connect(t, srv.DSN())
	ctx := testCtx(t)
	freshIDTable(t, admin, "fatal_qwt")
	holder := bouncerConn(t, b)
	c := bouncerConn(t, b)
	pool, err := NewPool(ctx, b.DSN("pool_max_conns=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, "INSERT INTO fatal_qwt VALUES ($1)", 0); err != nil {
		t.Fatal(err)
	}
	// Cache the description first (describe mode behind a pooler).
	if _, err := c.Exec(ctx, "INSERT INTO fatal_qwt VALUES ($1)", 0); err != nil {
		t.Fatal(err)
	}
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Exec(ctx, "INSERT INTO fatal_qwt VALUES ($1)", 1)
	t.Logf("Conn: after %v: %v", time.Since(start).Round(time.Millisecond), err)
	var pe *PgError
	if errors.As(err, &pe) {
		t.Logf("PgError: severity=%s code=%s msg=%q routine=%q", pe.Severity, pe.Code, pe.Message, pe.Routine)
	}
	if err == nil || !strings.Contains(err.Error(), "query_wait_timeout") {
		t.Fatalf("want PgBouncer's query_wait_timeout: %v", err)
	}
	if !session.SafeToRetry(err) {
		t.Errorf("query_wait_timeout (the statement waited in PgBouncer's queue, never sent to a server) is not SafeToRetry: %v", err)
	}

	// The Pool: the holder commits 1.5 s later; a retry would succeed.
	tx.Rollback(ctx)
	tx2, err := holder.Begin(ctx)
	if err == nil {
		_, err = tx2.Exec(ctx, "SELECT 1")
	}
	if err != nil {
		t.Fatalf("holder: %v", err)
	}
	var released atomic.Bool
	go func() {
		time.Sleep(1500 * time.Millisecond)
		tx2.Rollback(context.Background())
		released.Store(true)
	}()
	pctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	_, err = pool.Exec(pctx, "INSERT INTO fatal_qwt VALUES ($1)", 2)
	t.Logf("Pool: %v (holder released: %v)", err, released.Load())
	if err != nil {
		t.Errorf("Pool.Exec failed on query_wait_timeout although the statement never reached a server and a retry would have run it: %v", err)
	}
	time.Sleep(1600 * time.Millisecond)
	t.Logf("rows id=1: %d, id=2: %d", rowCount(t, admin, "fatal_qwt WHERE id = 1"), rowCount(t, admin, "fatal_qwt WHERE id = 2"))
	if n := rowCount(t, admin, "fatal_qwt WHERE id = 1"); n != 0 {
		t.Errorf("the query_wait_timeout statement ran (%d rows)", n)
	}
}

// TestFatalBouncerClientIdleTimeout: PgBouncer's client_idle_timeout
// FATAL arrives while the client is idle; the next statement on the Conn
// provably never reached anything (PgBouncer had closed the link).
func TestFatalBouncerClientIdleTimeout(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	b := startSmallBouncer(t, "transaction", "client_idle_timeout = 1")
	admin := connect(t, srv.DSN())
	ctx := testCtx(t)
	freshIDTable(t, admin, "fatal_cit")
	c := bouncerConn(t, b)
	if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	_, err := c.Exec(ctx, "INSERT INTO fatal_cit VALUES (1)")
	var pe *PgError
	if errors.As(err, &pe) {
		t.Logf("PgError: severity=%s code=%s msg=%q routine=%q", pe.Severity, pe.Code, pe.Message, pe.Routine)
	}
	t.Logf("err: %v", err)
	if n := rowCount(t, admin, "fatal_cit"); n != 0 {
		t.Fatalf("ran: %d", n)
	}
	if err == nil || !session.SafeToRetry(err) {
		t.Errorf("the statement after PgBouncer's client_idle_timeout never reached a server, yet: %v SafeToRetry=%v", err, session.SafeToRetry(err))
	}
}

// TestFatalAfterInnerCommitNotRetried: a statement that commits part of
// its work itself (a DO block, or a procedure, with COMMIT) and is then
// ended by PostgreSQL's own FATAL (pg_terminate_backend: it has a
// Routine) ran, and what it committed persists; its error must not say
// it was never sent (SafeToRetry), and a Pool must not run it again.
func TestFatalAfterInnerCommitNotRetried(t *testing.T) {
	admin := connect(t, srv.DSN())
	ctx := testCtx(t)
	freshIDTable(t, admin, "fatal_inner")
	if _, err := admin.Exec(ctx, "CREATE OR REPLACE PROCEDURE fatal_proc(x int) LANGUAGE plpgsql AS $$ BEGIN INSERT INTO fatal_inner VALUES (x); COMMIT; PERFORM pg_sleep(3); END $$"); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		"DO $$ BEGIN INSERT INTO fatal_inner VALUES (1); COMMIT; PERFORM pg_sleep(3); END $$ /*inner_marker*/",
		"CALL fatal_proc($1) /*inner_marker*/",
	} {
		freshIDTable(t, admin, "fatal_inner")
		var args []any
		if strings.Contains(sql, "$1") {
			args = []any{1}
		}
		c := connect(t, srv.DSN())
		done := make(chan error, 1)
		go func() { _, err := c.Exec(ctx, sql, args...); done <- err }()
		pid := waitActivity(t, admin, 5*time.Second, "state = 'active' AND query LIKE '%'||$1||'%'", "inner_marker")
		if pid == 0 {
			t.Fatal("no backend runs the statement")
		}
		if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
			t.Fatal(err)
		}
		err := <-done
		n := rowCount(t, admin, "fatal_inner")
		t.Logf("Conn: err=%v SafeToRetry=%v rows=%d", err, session.SafeToRetry(err), n)
		if n == 1 && session.SafeToRetry(err) {
			t.Errorf("the statement committed a row, yet its error is SafeToRetry: %v", err)
		}

		// The Pool runs it again.
		freshIDTable(t, admin, "fatal_inner")
		pool, err := NewPool(ctx, srv.DSN("pool_max_conns=2"))
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		var killed atomic.Bool
		go func() {
			pid := waitActivity(t, admin, 5*time.Second, "state = 'active' AND query LIKE '%'||$1||'%'", "inner_marker")
			if pid == 0 {
				t.Error("no backend runs the statement")
			}
			admin.Exec(ctx, "SELECT pg_terminate_backend($1)", pid)
			killed.Store(true)
		}()
		_, err = pool.Exec(ctx, sql, args...)
		n = rowCount(t, admin, "fatal_inner")
		t.Logf("Pool: err=%v rows=%d", err, n)
		if n > 1 {
			t.Errorf("Pool.Exec ran the statement %d times (its first run was ended by a FATAL after it committed)", n)
		}
	}
}
