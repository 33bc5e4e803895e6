package pgline

import (
	"context"
	"testing"
	"time"
)

// apSetup runs setup (a multi-statement text) on c and drops the schemas
// and public tables listed in cleanup afterwards.
func apSetup(t *testing.T, c *Conn, setup, cleanup string) {
	t.Helper()
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, cleanup); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, setup); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Exec(context.Background(), cleanup) })
}

// apInTx runs fn in a transaction of c whose first statement is set
// (SET LOCAL search_path = ...), and commits it.
func apInTx(t *testing.T, c *Conn, set string, fn func(ctx context.Context, tx *Tx) error) error {
	t.Helper()
	ctx := testCtx(t)
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if set != "" {
		if _, err := tx.Exec(ctx, set); err != nil {
			return err
		}
	}
	if err := fn(ctx, tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// apStartAbandoned starts A, a 3 s statement on c, and returns once A is
// queued. A's ctx ends once behind more requests are queued after A: the
// caller's statements are then queued before the driver's cancel for A,
// so a 57014 they get counts as possibly another's (Conn.strayCancel). A
// timed ctx (30 ms, then 300 ms) was not enough on a loaded machine: the
// caller's statement was sometimes queued after the cancel, and its 57014
// was then rightly its own.
func apStartAbandoned(t *testing.T, c *Conn, behind int) chan error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		defer cancel()
		_, err := c.Exec(ctx, "SELECT pg_sleep(3) /* A */")
		done <- err
	}()
	auditWaitQueued(t, c, 1)
	go func() {
		defer cancel()
		for end := time.Now().Add(10 * time.Second); auditQueued(c) < 1+behind; time.Sleep(200 * time.Microsecond) {
			if time.Now().After(end) {
				t.Errorf("%d requests queued behind A after 10 s, want %d", auditQueued(c)-1, behind)
				return
			}
		}
	}()
	return done
}
