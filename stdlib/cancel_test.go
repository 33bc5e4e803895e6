package stdlib_test

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestCancelRunningQuery(t *testing.T) {
	db := openDB(t, 1)
	for _, via := range []string{"db", "conn", "tx"} {
		t.Run(via, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			var err error
			switch via {
			case "db":
				_, err = db.QueryContext(ctx, "SELECT pg_sleep(10)")
			case "conn":
				conn := pinConn(t, db)
				_, err = conn.QueryContext(ctx, "SELECT pg_sleep(10)")
				// The pinned connection itself is still usable.
				var n int
				if err := conn.QueryRowContext(testCtx(t), "SELECT 2").Scan(&n); err != nil || n != 2 {
					t.Errorf("pinned conn after the cancel: %d, %v", n, err)
				}
				conn.Close()
			case "tx":
				tx, berr := db.BeginTx(testCtx(t), nil)
				if berr != nil {
					t.Fatal(berr)
				}
				_, err = tx.ExecContext(ctx, "SELECT pg_sleep(10)")
				if rerr := tx.Rollback(); rerr != nil {
					t.Errorf("rollback after the cancel: %v", rerr)
				}
			}
			elapsed := time.Since(start)
			if elapsed > time.Second {
				t.Errorf("canceled query returned after %v", elapsed)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v does not wrap context.DeadlineExceeded", err)
			}
			// The caller is answered at its deadline; the statement is
			// cancelled on the server behind it, so the next query does
			// not wait for the 10 s sleep.
			var n int
			if err := db.QueryRowContext(testCtx(t), "SELECT 1").Scan(&n); err != nil || n != 1 {
				t.Fatalf("next query on the DB: %d, %v", n, err)
			}
			if elapsed := time.Since(start); elapsed > 3*time.Second {
				t.Errorf("the next query waited for the sleep: %v", elapsed)
			}
		})
	}
}

// A ctx that ends while rows are being read stops the rows.
func TestCancelDuringRows(t *testing.T) {
	db := openDB(t, 1)
	ctx, cancel := context.WithCancel(testCtx(t))
	// In the target list the series streams, and reading all of it would
	// take far longer than the test.
	rows, err := db.QueryContext(ctx, "SELECT generate_series(1, 1000000000)")
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatalf("first row: %v", rows.Err())
	}
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	for rows.Next() {
	}
	if time.Since(start) > time.Second {
		t.Errorf("rows ended %v after the cancel", time.Since(start))
	}
	if !errors.Is(rows.Err(), context.Canceled) {
		t.Errorf("rows.Err() = %v, want context.Canceled", rows.Err())
	}
	rows.Close()
	var n int
	if err := db.QueryRowContext(testCtx(t), "SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("next query on the DB: %d, %v", n, err)
	}
}
