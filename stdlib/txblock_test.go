package stdlib_test

// Transaction blocks through database/sql: IsValid,
// ResetSession and BeginTx decide from pgline's TxStatus, which is 'I'
// while a detached ROLLBACK is in flight; and a text ending with a
// block-ending word is rolled back when its reply leaves a block.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"
)

const strandingText = "BEGIN; SELECT 1/0; COMMIT"

// inBlock reports whether the connection is inside a transaction
// block: the server accepts a SAVEPOINT only there.
func inBlock(t *testing.T, ctx context.Context, q interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}) bool {
	t.Helper()
	if _, err := q.ExecContext(ctx, "SAVEPOINT block_probe"); err != nil {
		return false
	}
	if _, err := q.ExecContext(ctx, "RELEASE block_probe"); err != nil {
		t.Fatal(err)
	}
	return true
}

// TestTxBlockSQLBeginAfterStrand: on one sql.Conn, a stranding text
// then at once BeginTx (the detached ROLLBACK may be in flight: TxStatus
// 'I'): the Tx must be a real transaction, Rollback undoing its rows.
func TestTxBlockSQLBeginAfterStrand(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	tbl := testTable(t, db, "(a int)")
	conn := pinConn(t, db)
	for i := range 10 {
		if _, err := conn.ExecContext(ctx, strandingText); err == nil {
			t.Fatal("no error")
		}
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			t.Fatalf("%d: BeginTx: %v", i, err)
		}
		if !inBlock(t, ctx, tx) {
			t.Errorf("%d: the Tx's statements run outside a block", i)
		}
		tx.ExecContext(ctx, "INSERT INTO "+tbl+" VALUES ($1)", i)
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
	}
	if n := rowCount(t, conn, tbl); n != 0 {
		t.Errorf("rows %d, want 0", n)
	}
}

// TestTxBlockSQLReturnedConn: a stranding text, then the sql.Conn
// goes back to the pool at once (kept: IsValid); with a raw BEGIN after
// the strander, it must be discarded. Whatever connection the next
// caller gets is outside any block.
func TestTxBlockSQLReturnedConn(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	for i := range 10 {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var pid int
		conn.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid)
		conn.ExecContext(ctx, strandingText)
		raw := i%2 == 1
		if raw {
			if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
				t.Fatal(err)
			}
		}
		conn.Close()
		var pid2 int
		if err := db.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid2); err != nil {
			t.Fatal(err)
		}
		if raw && pid2 == pid {
			t.Errorf("%d: the connection left in a raw BEGIN's block was reused", i)
		}
		if !raw && pid2 != pid {
			t.Logf("%d: the connection was discarded after a strand (a new backend)", i)
		}
		if inBlock(t, ctx, db) {
			t.Errorf("%d: the next caller's statement runs inside a block", i)
		}
	}
}

// TestTxBlockSQLRawAtomic: database/sql user, raw transaction on a
// sql.Conn: BEGIN; INSERT; CREATE FUNCTION ... BEGIN ATOMIC ... END;
// COMMIT. pgline reads the function body's END as the end of the block
// and rolls the caller's block back: the INSERT and the function are lost
// although every call succeeded.
func TestTxBlockSQLRawAtomic(t *testing.T) {
	srv.NeedVersion(t, 14, "BEGIN ATOMIC function bodies")
	ctx := testCtx(t)
	db := openDB(t, 1)
	tbl := testTable(t, db, "(a int)")
	fn := fmt.Sprintf("txblock_sql_f_%d", time.Now().UnixNano())
	t.Cleanup(func() {
		d, err := sql.Open("pgline", srv.DSN())
		if err == nil {
			d.Exec("DROP FUNCTION IF EXISTS " + fn + "()")
			d.Close()
		}
	})
	conn := pinConn(t, db)
	for _, s := range []string{"BEGIN", "INSERT INTO " + tbl + " VALUES (1)",
		"CREATE FUNCTION " + fn + "() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; END", "COMMIT"} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	var rows, funcs int
	if err := conn.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM "+tbl+"), (SELECT count(*) FROM pg_proc WHERE proname = $1)", fn).Scan(&rows, &funcs); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || funcs != 1 {
		t.Errorf("after BEGIN; INSERT; CREATE FUNCTION ... BEGIN ATOMIC ... END; COMMIT (all successful): rows %d, functions %d, want 1 and 1", rows, funcs)
	}
}

// TestTxBlockSQLTxAtomic: the same inside a database/sql Tx (a
// pgline Tx: owner set, never rolled back by pgline): passes.
func TestTxBlockSQLTxAtomic(t *testing.T) {
	srv.NeedVersion(t, 14, "BEGIN ATOMIC function bodies")
	ctx := testCtx(t)
	db := openDB(t, 1)
	fn := fmt.Sprintf("txblock_sql_tf_%d", time.Now().UnixNano())
	t.Cleanup(func() { db.Exec("DROP FUNCTION IF EXISTS " + fn + "()") })
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "CREATE FUNCTION "+fn+"() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; END"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		t.Fatal(err)
	}
	var funcs int
	db.QueryRowContext(ctx, "SELECT count(*) FROM pg_proc WHERE proname = $1", fn).Scan(&funcs)
	if funcs != 1 {
		t.Errorf("functions %d, want 1", funcs)
	}
}
