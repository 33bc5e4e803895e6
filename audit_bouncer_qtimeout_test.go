package pgline

import (
	"sync"
	"testing"
	"time"
)

// PgBouncer's query_timeout (and likewise its admin console's KILL, or
// any pooler error it sends as FATAL) ends the CLIENT connection with a
// FATAL of PgBouncer's own (08P01 "query timeout") and closes the server
// socket, while the backend goes on running the statement to its end and
// commits it: PostgreSQL does not notice a closed client socket until it
// writes to it. pgline takes every FATAL for the backend's (the session
// ends, nothing after it runs: pgError, readSimple, Rows.readRow,
// failedErr) and marks the statement whose reply begins with the FATAL,
// and every request queued behind it, as never sent (SafeToRetry).

// auditQTTable creates table afresh, straight on the server.
func auditQTTable(t *testing.T, admin *Conn, table string) {
	t.Helper()
	if _, err := admin.Exec(testCtx(t), "DROP TABLE IF EXISTS "+table+"; CREATE TABLE "+table+"(id int)"); err != nil {
		t.Fatal(err)
	}
}

// TestAuditBouncerQueryTimeoutHeadSafeToRetry: a slow INSERT (simple
// protocol, then extended) killed by query_timeout returns an error that
// says nothing of it reached the server (SafeToRetry), yet the backend
// finishes it and the row is committed.
func TestAuditBouncerQueryTimeoutHeadSafeToRetry(t *testing.T) {
	b := startAuditBouncer(t, "transaction", "query_timeout = 1")
	admin := auditConn(t)
	ctx := testCtx(t)
	for _, tc := range []struct {
		name string
		sql  string
		args []any
	}{
		{"simple", "INSERT INTO audit_bouncer_qth SELECT 1 FROM pg_sleep(1.6)", nil},
		{"extended", "INSERT INTO audit_bouncer_qth SELECT $1 FROM pg_sleep(1.6)", []any{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			auditQTTable(t, admin, "audit_bouncer_qth")
			c := auditBouncerConn(t, b)
			start := time.Now()
			_, err := c.Exec(ctx, tc.sql, tc.args...)
			t.Logf("after %v: %v (SafeToRetry %v)", time.Since(start).Round(time.Millisecond), err, SafeToRetry(err))
			if err == nil {
				t.Skip("query_timeout did not strike")
			}
			time.Sleep(time.Until(start.Add(2 * time.Second)))
			if n := auditDirectCount(t, admin, "audit_bouncer_qth"); SafeToRetry(err) && n != 0 {
				t.Fatalf("error %v is SafeToRetry (nothing reached the server), yet the INSERT committed (%d row)", err, n)
			}
		})
	}
}

// TestAuditBouncerQueryTimeoutPoolRunsTwice: through a Pool, which makes
// a call again on another connection when its error is SafeToRetry, one
// call of Exec runs its INSERT several times (and still fails).
func TestAuditBouncerQueryTimeoutPoolRunsTwice(t *testing.T) {
	b := startAuditBouncer(t, "transaction", "query_timeout = 1", "default_pool_size = 2")
	admin := auditConn(t)
	ctx := testCtx(t)
	auditQTTable(t, admin, "audit_bouncer_qtp")
	p, err := NewPool(ctx, b.DSN("pool_max_conns=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	start := time.Now()
	tag, err := p.Exec(ctx, "INSERT INTO audit_bouncer_qtp SELECT $1 FROM pg_sleep(1.6)", 1)
	elapsed := time.Since(start)
	time.Sleep(700 * time.Millisecond) // the last run's backend finishes
	n := auditDirectCount(t, admin, "audit_bouncer_qtp")
	t.Logf("after %v: %q %v; rows %d", elapsed.Round(time.Millisecond), tag, err, n)
	if n > 1 {
		t.Fatalf("one Pool.Exec of one INSERT committed %d rows (err %v)", n, err)
	}
}

// TestAuditBouncerQueryTimeoutBehindSafeToRetry: an INSERT batched behind
// a slow statement (one write: the backend has it in its input before
// query_timeout strikes) runs once the slow statement ends; its error
// says it was never sent.
func TestAuditBouncerQueryTimeoutBehindSafeToRetry(t *testing.T) {
	b := startAuditBouncer(t, "transaction", "query_timeout = 1")
	admin := auditConn(t)
	ctx := testCtx(t)
	auditQTTable(t, admin, "audit_bouncer_qtb")
	c := auditBouncerConn(t, b)

	// Two callers of one Conn: the second queued while the first's bytes
	// are still unwritten goes in the same write (often, with its Sync
	// shared). A Batch does the same deterministically.
	batch := &Batch{}
	batch.Queue("SELECT pg_sleep(1.6)")
	batch.Queue("INSERT INTO audit_bouncer_qtb VALUES ($1)", 7)
	start := time.Now()
	br := c.SendBatch(ctx, batch)
	_, err0 := br.Exec()
	_, err1 := br.Exec()
	br.Close()
	t.Logf("sleep: %v; insert: %v (SafeToRetry %v)", err0, err1, SafeToRetry(err1))
	if err1 == nil {
		t.Skip("query_timeout did not strike")
	}
	time.Sleep(time.Until(start.Add(2200 * time.Millisecond)))
	n := auditDirectCount(t, admin, "audit_bouncer_qtb")
	if SafeToRetry(err1) && n != 0 {
		t.Errorf("the batched INSERT's error is SafeToRetry, yet it ran (%d row): %v", n, err1)
	}

	// The same with two goroutines sharing the Conn.
	auditQTTable(t, admin, "audit_bouncer_qtb")
	c2 := auditBouncerConn(t, b)
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
		_, errIns = c2.Exec(ctx, "INSERT INTO audit_bouncer_qtb VALUES ($1)", 8)
	}()
	wg.Wait()
	time.Sleep(time.Until(start.Add(2200 * time.Millisecond)))
	n = auditDirectCount(t, admin, "audit_bouncer_qtb")
	t.Logf("two goroutines: insert: %v (SafeToRetry %v); rows %d", errIns, SafeToRetry(errIns), n)
	if SafeToRetry(errIns) && n != 0 {
		t.Fatalf("the pipelined INSERT's error is SafeToRetry, yet it ran (%d row): %v", n, errIns)
	}
}
