package stdlib_test

import (
	"database/sql/driver"
	"io"
	"strings"
	"testing"

	"github.com/pgline/pgline/stdlib"
)

func TestPreparedStatementsReused(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	conn := pinConn(t, db)
	const q = "SELECT $1::int8 + 1"

	rowCount(t, conn, "pg_prepared_statements") // prepares the counting statement itself
	before := rowCount(t, conn, "pg_prepared_statements")

	for i := range 20 {
		st, err := conn.PrepareContext(ctx, q)
		if err != nil {
			t.Fatalf("prepare %d: %v", i, err)
		}
		for j := range 5 {
			var got int64
			if err := st.QueryRowContext(ctx, int64(j)).Scan(&got); err != nil {
				t.Fatalf("run %d/%d: %v", i, j, err)
			}
			if got != int64(j)+1 {
				t.Fatalf("run %d/%d: got %d", i, j, got)
			}
		}
		if _, err := st.ExecContext(ctx, 7); err != nil {
			t.Fatalf("exec %d: %v", i, err)
		}
		st.Close()
		// The same SQL text outside the Stmt shares the statement.
		if _, err := conn.ExecContext(ctx, q, 1); err != nil {
			t.Fatalf("conn exec %d: %v", i, err)
		}
	}
	if after := rowCount(t, conn, "pg_prepared_statements"); after != before+1 {
		t.Errorf("pg_prepared_statements went from %d to %d after 20 prepares of one statement, want +1", before, after)
	}
}

func TestStmtNumInput(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 2)
	st, err := db.PrepareContext(ctx, "SELECT $1::text || $2::text")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var s string
	if err := st.QueryRowContext(ctx, "a", "b").Scan(&s); err != nil || s != "ab" {
		t.Fatalf("got %q, %v", s, err)
	}
	// database/sql checks the count against NumInput before the driver runs.
	err = st.QueryRowContext(ctx, "a").Scan(&s)
	if err == nil || !strings.Contains(err.Error(), "expected 2 arguments, got 1") {
		t.Errorf("one argument for two parameters: %v", err)
	}
}

func TestPrepareSyntaxError(t *testing.T) {
	db := openDB(t, 1)
	_, err := db.PrepareContext(testCtx(t), "SELEC 1")
	if code := sqlState(err); code != "42601" {
		t.Fatalf("prepare of bad SQL: %v (SQLSTATE %q), want 42601", err, code)
	}
	// The connection is still fine.
	var n int
	if err := db.QueryRow("SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("after the error: %d, %v", n, err)
	}
}

func TestStmtClosedAndLegacyMethods(t *testing.T) {
	db := openDB(t, 1)
	conn := pinConn(t, db)
	err := conn.Raw(func(dc any) error {
		st, err := dc.(*stdlib.Conn).Prepare("SELECT $1::int4 + 1")
		if err != nil {
			return err
		}
		if n := st.NumInput(); n != 1 {
			t.Errorf("NumInput = %d, want 1", n)
		}
		rows, err := st.Query([]driver.Value{int64(41)})
		if err != nil {
			return err
		}
		dest := make([]driver.Value, 1)
		if err := rows.Next(dest); err != nil || dest[0] != int64(42) {
			t.Errorf("legacy Query: %#v, %v", dest[0], err)
		}
		if err := rows.Next(dest); err != io.EOF {
			t.Errorf("after the last row: %v, want io.EOF", err)
		}
		rows.Close()
		res, err := st.Exec([]driver.Value{int64(1)})
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); n != 1 || err != nil {
			t.Errorf("legacy Exec RowsAffected = %d, %v", n, err)
		}
		st.Close()
		if _, err := st.Exec([]driver.Value{int64(1)}); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("Exec after Close: %v", err)
		}
		if _, err := st.(driver.StmtQueryContext).QueryContext(testCtx(t), nil); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("Query after Close: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
