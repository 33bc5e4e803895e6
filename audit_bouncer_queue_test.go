package pgline

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestAuditBouncerQueueDeadline: default_pool_size=1 and another client
// holds the one server connection in an open transaction, so PgBouncer
// keeps pgline's statements in its queue (the client is not linked to a
// server: a CancelRequest for it is dropped, "cancel request for idle
// client"). Every caller's ctx deadline is still kept (the head's, and
// those queued behind it on the same Conn); a statement whose ctx ended
// in the queue is not SafeToRetry (PgBouncer runs it later); once the
// holder commits, a caller without deadline gets its own answer and the
// Conn is usable.
func TestAuditBouncerQueueDeadline(t *testing.T) {
	b := startAuditBouncer(t, "transaction")
	admin := auditConn(t)
	ctx := testCtx(t)
	auditQTTable(t, admin, "audit_bouncer_q")
	holder := auditBouncerConn(t, b)
	c := auditBouncerConn(t, b, "cancel_timeout=3s")

	// Descriptions cached first (describe mode behind a pooler): the runs
	// themselves wait in PgBouncer's queue, not their describes.
	for _, q := range []string{"INSERT INTO audit_bouncer_q VALUES ($1) RETURNING id", "SELECT $1::int"} {
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
	go run("head-insert", deadline, "INSERT INTO audit_bouncer_q VALUES ($1) RETURNING id", 1)
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
		if SafeToRetry(r.err) && name == "head-insert" {
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
	t.Logf("rows with id 1: %d", auditDirectCount(t, admin, "audit_bouncer_q WHERE id = 1"))
}
