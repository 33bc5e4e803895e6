package pgline

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestTxIdleInTransactionTimeout(t *testing.T) {
	ctx := testCtx(t)
	mon, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	tbl := auditTestTable(t, ctx, mon, "(id int)")
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

func TestTxStatementAndLockTimeout(t *testing.T) {
	ctx := testCtx(t)
	c, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := auditTestTable(t, ctx, c, "(id int primary key)")
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
		if errors.Is(err, ErrCanceledByOther) || SafeToRetry(err) {
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

func TestDetachedNestedRollbackThenSavepointFailure(t *testing.T) {
	ctx := testCtx(t)
	c, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := auditTestTable(t, ctx, c, "(id int)")
	dead, cancel := context.WithCancel(ctx)
	cancel()
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES (1)")
	sp, err := tx.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sp.Exec(ctx, "INSERT INTO "+tbl+" VALUES (2)")
	if err := sp.Rollback(dead); err == nil {
		t.Log("nested Rollback with a dead ctx returned nil")
	}
	if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES (3)"); err != nil {
		t.Fatal(err)
	}
	// a second nested tx with a failure, rolled back properly
	sp2, err := tx.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sp2.Exec(ctx, "INSERT INTO "+tbl+" VALUES (4)")
	sp2.Exec(ctx, "SELECT 1/0")
	if err := sp2.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	var ids []int
	r, _ := c.Query(ctx, "SELECT id FROM "+tbl+" ORDER BY id")
	for r.Next() {
		var x int
		r.Scan(&x)
		ids = append(ids, x)
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if len(ids) != 2 || ids[0] != 1 || ids[1] != 3 {
		t.Errorf("rows %v, want [1 3]", ids)
	}
}
