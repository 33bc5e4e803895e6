package pgline

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestQueryErrorGivesUsableRows: a Query that fails returns its error and
// Rows that carry it, as pgx's do, so that the `rows, _ := Query(...)`
// idiom reports the server's error: Next is false; Err, CollectRows and
// ForEachRow return the error; Close and CommandTag are harmless. For a
// Conn, a Pool, a Tx and a batch's statement.
func TestQueryErrorGivesUsableRows(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	p := newTestPool(t)
	tx, err := connect(t, srv.DSN()).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, q := range []struct {
		name  string
		query func(ctx context.Context, sql string, args ...any) (*Rows, error)
	}{{"Conn", c.Query}, {"Pool", p.Query}, {"Tx", tx.Query}} {
		t.Run(q.name, func(t *testing.T) {
			const bad = "SELECT no_such_column"
			rows, err := q.query(ctx, bad)
			if pgCode(err) != "42703" {
				t.Fatalf("Query's error: %v, want 42703", err)
			}
			if rows == nil {
				t.Fatal("Query returned nil Rows with its error")
			}
			if rows.Next() {
				t.Fatal("Next is true on the Rows of a failed Query")
			}
			if !errors.Is(rows.Err(), err) {
				t.Fatalf("Err: %v, want Query's %v", rows.Err(), err)
			}
			rows.Close()
			if tag := rows.CommandTag(); tag.String() != "" {
				t.Fatalf("CommandTag %q", tag)
			}
			// The idiom: the error is checked once, where the rows are read
			// (a Tx's later Query fails as aborted, 25P02: its own error).
			rows, qerr := q.query(ctx, bad)
			if _, err := CollectRows(rows, RowTo[int]); qerr == nil || !errors.Is(err, qerr) {
				t.Fatalf("CollectRows: %v, want Query's %v", err, qerr)
			}
			rows, qerr = q.query(ctx, bad)
			var n int
			if _, err := ForEachRow(rows, []any{&n}, func() error { return nil }); qerr == nil || !errors.Is(err, qerr) {
				t.Fatalf("ForEachRow: %v, want Query's %v", err, qerr)
			}
		})
	}
	b := &Batch{}
	b.Queue("SELECT no_such_column")
	br := c.SendBatch(ctx, b)
	rows, err := br.Query()
	if pgCode(err) != "42703" || rows == nil || rows.Next() || !errors.Is(rows.Err(), err) {
		t.Fatalf("a batch statement's Query: %v, rows %v", err, rows)
	}
	br.Close()
	tx.Rollback(ctx)
	if rows, err := tx.Query(ctx, "SELECT 1"); !errors.Is(err, ErrTxClosed) || !errors.Is(rows.Err(), ErrTxClosed) {
		t.Fatalf("Query after Rollback: %v, rows' %v; want ErrTxClosed", err, rows.Err())
	}
}

// TestScanWithoutRowSaysWhy: Scan, ScanColumn and Values without a current
// row say why: before the first Next, call Next; after Close or after
// Next returned false, the Rows are closed.
func TestScanWithoutRowSaysWhy(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	var n int
	calls := map[string]func(*Rows) error{
		"Scan":       func(r *Rows) error { return r.Scan(&n) },
		"ScanColumn": func(r *Rows) error { return r.ScanColumn(0, &n) },
		"Values":     func(r *Rows) error { _, err := r.Values(); return err },
	}
	for name, call := range calls {
		rows, err := c.Query(ctx, "SELECT 1")
		if err != nil {
			t.Fatal(err)
		}
		if err := call(rows); err == nil || !strings.Contains(err.Error(), name+" called without a current row (call Next first)") {
			t.Errorf("%s before Next: %v", name, err)
		}
		if !rows.Next() {
			t.Fatal(rows.Err())
		}
		if err := call(rows); err != nil {
			t.Errorf("%s on a row: %v", name, err)
		}
		rows.Close()
		if err := call(rows); err == nil || !strings.Contains(err.Error(), name+" called on closed Rows") {
			t.Errorf("%s after Close: %v", name, err)
		}
		rows, _ = c.Query(ctx, "SELECT 1")
		for rows.Next() {
		}
		if err := call(rows); err == nil || !strings.Contains(err.Error(), name+" called on closed Rows") {
			t.Errorf("%s after Next returned false: %v", name, err)
		}
	}
}
