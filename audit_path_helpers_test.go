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

// apStartAbandoned is startAbandoned with room for a loaded machine: A's
// ctx ends at 300 ms (not 30), so that the statement the caller queues
// right after is queued before the driver's cancel for A, whose 57014
// then counts as possibly another's (Conn.strayCancel). Under load, 30 ms
// was not always enough: the statement was queued after the cancel, and
// its 57014 was rightly its own.
func apStartAbandoned(t *testing.T, c *Conn) chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := c.Exec(ctx, "SELECT pg_sleep(3) /* A */")
		done <- err
	}()
	// A must be queued before the caller's statement: on a loaded
	// machine the goroutine may not have run by the time the caller
	// queues (then the caller's fake 57014 comes with no cancel since,
	// rightly unflagged).
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		c.wmu.Lock()
		queued := c.queued
		c.wmu.Unlock()
		if queued > 0 {
			break
		}
	}
	return done
}
