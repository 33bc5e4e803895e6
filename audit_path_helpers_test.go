package pgline

import (
	"context"
	"testing"
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
