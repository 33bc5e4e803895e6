package stdlib_test

import (
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pgline/pgline"
)

func TestTxCommitRollback(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 2)
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS tx_t; CREATE TABLE tx_t (n int)"); err != nil {
		t.Fatal(err)
	}
	count := func() int64 { return rowCount(t, db, "tx_t") }

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := tx.ExecContext(ctx, "INSERT INTO tx_t VALUES ($1)", i); err != nil {
			t.Fatal(err)
		}
	}
	var inside int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM tx_t").Scan(&inside); err != nil || inside != 3 {
		t.Fatalf("count inside the tx: %d, %v", inside, err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Fatalf("after rollback: %d rows", n)
	}
	if err := tx.Commit(); !errors.Is(err, sql.ErrTxDone) {
		t.Errorf("commit after rollback: %v", err)
	}

	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO tx_t VALUES (1), (2)"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Fatalf("after commit: %d rows", n)
	}

	// A failed statement makes COMMIT roll back: Commit says so.
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO tx_t VALUES (3)"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "SELECT 1/0"); sqlState(err) != "22012" {
		t.Fatalf("division by zero: %v", err)
	}
	if err := tx.Commit(); !errors.Is(err, pgline.ErrTxRolledBack) {
		t.Errorf("commit of a failed tx: %v, want ErrTxRolledBack", err)
	}
	if n := count(); n != 2 {
		t.Fatalf("after the failed tx: %d rows", n)
	}
}

func TestTxIsolationLevels(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	for _, tc := range []struct {
		level sql.IsolationLevel
		want  string
	}{
		{sql.LevelDefault, "read committed"},
		{sql.LevelReadUncommitted, "read uncommitted"},
		{sql.LevelReadCommitted, "read committed"},
		{sql.LevelRepeatableRead, "repeatable read"},
		{sql.LevelSerializable, "serializable"},
	} {
		for _, ro := range []bool{false, true} {
			tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: tc.level, ReadOnly: ro})
			if err != nil {
				t.Fatalf("%v: %v", tc.level, err)
			}
			var level, readOnly string
			err = tx.QueryRowContext(ctx, "SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')").Scan(&level, &readOnly)
			if err != nil {
				t.Fatalf("%v: %v", tc.level, err)
			}
			if level != tc.want || readOnly != map[bool]string{false: "off", true: "on"}[ro] {
				t.Errorf("%v read-only %v: isolation %q, read only %q", tc.level, ro, level, readOnly)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, level := range []sql.IsolationLevel{sql.LevelSnapshot, sql.LevelLinearizable, sql.LevelWriteCommitted, 99} {
		_, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: level})
		if err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("%v: %v, want a clear refusal", level, err)
		}
	}
	// The refusals left the connection idle and usable.
	var n int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil {
		t.Fatal(err)
	}
}

func TestTxReadOnlyRefusesWrites(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS ro_t; CREATE TABLE ro_t (n int)"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, "INSERT INTO ro_t VALUES ($1)", 1)
	if code := sqlState(err); code != "25006" {
		t.Fatalf("insert in a read-only tx: %v (SQLSTATE %q), want 25006", err, code)
	}
}

func TestTxPrepareAndBusyRows(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()

	// A statement prepared inside a transaction works, and bad SQL is
	// reported by Prepare.
	st, err := tx.PrepareContext(ctx, "SELECT $1::int4 * 3")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := st.QueryRowContext(ctx, 5).Scan(&n); err != nil || n != 15 {
		t.Fatalf("stmt in tx: %d, %v", n, err)
	}
	if _, err := tx.PrepareContext(ctx, "SELEC 1"); sqlState(err) != "42601" {
		t.Fatalf("bad SQL prepared in tx: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}

	// A statement started while rows of the same transaction are open is
	// refused, rather than waiting for ever.
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := tx.QueryContext(ctx, "SELECT generate_series(1, 3)")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := tx.ExecContext(ctx, "SELECT 1")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "busy") {
			t.Errorf("exec with rows open: %v, want a busy error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("exec with rows open hangs")
	}
	rows.Close()
	if _, err := tx.ExecContext(ctx, "SELECT 1"); err != nil {
		t.Errorf("exec after the rows closed: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestBeginTxAfterManualBegin: BeginTx on a connection a BEGIN given to
// Exec left in a transaction is refused (the server would only warn, and
// the Tx's Commit would commit the earlier work too).
func TestBeginTxAfterManualBegin(t *testing.T) {
	ctx := testCtx(t)
	conn := pinConn(t, openDB(t, 1))
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.BeginTx(ctx, nil); err == nil || !strings.Contains(err.Error(), "already open") {
		t.Fatalf("BeginTx inside a transaction: %v", err)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
}
