package stdlib_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A row larger than the read buffer that pgline cannot materialize for
// RawValues: stdlib's Rows.Next drops pgline's error and reports a
// bogus column-count mismatch.
func TestBigRowErrorReported(t *testing.T) {
	ctx := testCtx(t)
	t.Run("max_message_size", func(t *testing.T) {
		db := openDB(t, 1, "read_buffer_size=8192", "max_message_size=100000")
		rows, err := db.QueryContext(ctx, "SELECT repeat('x', 200000)")
		if err != nil {
			t.Fatal(err)
		}
		// Scanned: with Go 1.27's driver.RowsColumnScanner, a row is
		// decoded only when scanned, and the error comes from Scan.
		for rows.Next() && err == nil {
			var s string
			err = rows.Scan(&s)
		}
		if err == nil {
			err = rows.Err()
		}
		rows.Close()
		t.Logf("rows.Scan or rows.Err = %v", err)
		if err == nil || strings.Contains(err.Error(), "row has 0 columns") {
			t.Errorf("want pgline's max_message_size error, got %v", err)
		}
		var x int
		if err := db.QueryRowContext(ctx, "SELECT 3").Scan(&x); err != nil || x != 3 {
			t.Errorf("after: %d %v", x, err)
		}
	})
	t.Run("ctx deadline", func(t *testing.T) {
		db := openDB(t, 1)
		hits := 0
		ds := []time.Duration{10, 20, 30, 40, 60, 80, 120}
		for i := 0; i < 2*len(ds) && hits == 0; i++ {
			d := ds[i%len(ds)] * time.Millisecond
			cctx, cancel := context.WithTimeout(ctx, d)
			rows, err := db.QueryContext(cctx, "SELECT x FROM (SELECT repeat('x', 3000000) x) s, generate_series(1, 60)")
			if err == nil {
				for rows.Next() {
					var s string
					rows.Scan(&s)
				}
				err = rows.Err()
				rows.Close()
			}
			cancel()
			var x int
			if err := db.QueryRowContext(ctx, "SELECT 3").Scan(&x); err != nil || x != 3 {
				t.Errorf("after: %d %v", x, err)
			}
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				hits++
				t.Errorf("deadline %v: error does not wrap context.DeadlineExceeded: %v", d, err)
			}
		}
	})
}
