package pgline

// Server-side timeouts in a transaction (idle_in_transaction_session_timeout,
// SET LOCAL statement_timeout and lock_timeout): the statement fails with
// the server's error (neither ErrCanceledByOther nor SafeToRetry), Commit
// reports the rollback, nothing persists, and SET LOCAL does not leak.

import (
	"errors"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// TestTxIdleInTransactionTimeout: a Tx idle past
// idle_in_transaction_session_timeout (the server closes the session):
// its next statement and its Commit fail, and nothing persists.
func TestTxIdleInTransactionTimeout(t *testing.T) {
	ctx := testCtx(t)
	mon, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	tbl := testTable(t, ctx, mon, "(id int)")
	for round := 0; round < 3; round++ {
		c, err := Connect(ctx, srv.DSN("options='-c idle_in_transaction_session_timeout=100'"))
		if err != nil {
			t.Fatal(err)
		}
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", round); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		switch round {
		case 0:
			_, err = tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES (99)")
			if err == nil {
				t.Errorf("statement after idle timeout succeeded")
			}
		case 1:
			_, err = tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", 99)
			if err == nil {
				t.Errorf("statement after idle timeout succeeded")
			}
		}
		cerr := tx.Commit(ctx)
		if cerr == nil {
			t.Errorf("round %d: Commit succeeded after idle_in_transaction timeout", round)
		}
		var n int
		mon.QueryRow(ctx, "SELECT count(*)::int FROM "+tbl).Scan(&n)
		if n != 0 {
			t.Fatalf("round %d: %d rows", round, n)
		}
		c.Close()
	}
}

// TestTxStatementAndLockTimeout: a statement of a Tx stopped by SET LOCAL
// statement_timeout or lock_timeout fails with the server's error
// (neither ErrCanceledByOther nor SafeToRetry), Commit returns
// ErrTxRolledBack, nothing persists, and the settings do not leak.
func TestTxStatementAndLockTimeout(t *testing.T) {
	ctx := testCtx(t)
	c, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := testTable(t, ctx, c, "(id int primary key)")
	c.Exec(ctx, "INSERT INTO "+tbl+" VALUES (1)")
	locker, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	ltx, _ := locker.Begin(ctx)
	ltx.Exec(ctx, "SELECT * FROM "+tbl+" FOR UPDATE")
	defer ltx.Rollback(ctx)
	for i, setup := range []string{"SET LOCAL statement_timeout = 50", "SET LOCAL lock_timeout = 50"} {
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, setup); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", 10+i); err != nil {
			t.Fatal(err)
		}
		_, err = tx.Exec(ctx, "UPDATE "+tbl+" SET id = id WHERE id = $1", 1)
		if err == nil {
			t.Fatalf("%s: blocked UPDATE succeeded", setup)
		}
		if errors.Is(err, ErrCanceledByOther) || session.SafeToRetry(err) {
			t.Errorf("%s: error %v", setup, err)
		}
		cerr := tx.Commit(ctx)
		if !errors.Is(cerr, ErrTxRolledBack) {
			t.Errorf("%s: Commit = %v, want ErrTxRolledBack", setup, cerr)
		}
		var n int
		c.QueryRow(ctx, "SELECT count(*)::int FROM "+tbl).Scan(&n)
		if n != 1 {
			t.Errorf("%s: %d rows", setup, n)
		}
		// SET LOCAL did not leak
		var st, lt string
		c.QueryRow(ctx, "SELECT current_setting('statement_timeout'), current_setting('lock_timeout')").Scan(&st, &lt)
		if st != "0" || lt != "0" {
			t.Errorf("settings leaked: %s %s", st, lt)
		}
	}
}
