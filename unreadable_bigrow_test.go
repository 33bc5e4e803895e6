package pgline

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestUnreadableSkipsBigRows: in describe mode, a run bound for binary
// results after a column changed to a type pgline reads in text only
// (money) fails, and its rows are skipped unread. Rows larger than the
// read buffer are skipped too (their bodies by the next read, not whole):
// the connection stays in step, so the statements queued behind, and the
// next runs, get their own replies.
func TestUnreadableSkipsBigRows(t *testing.T) {
	c := connect(t, srv.DSN("statement_cache_mode=describe", "read_buffer_size=4096"))
	ctx := testCtx(t)
	const tbl = "unreadable_big"
	if _, err := c.Exec(ctx, fmt.Sprintf(`DROP TABLE IF EXISTS %[1]s; CREATE TABLE %[1]s (k int4, v int4, pad text);
		INSERT INTO %[1]s SELECT k, k * 10, CASE WHEN k %% 2 = 0 THEN repeat('x', 20000 + k) ELSE 'small' END FROM generate_series(1, 6) k`, tbl)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Exec(ctx, "DROP TABLE IF EXISTS "+tbl) })
	q := "SELECT v, pad FROM " + tbl + " WHERE $1::int4 = 1 ORDER BY k"
	check := func(what string, wantV func(k int) string) {
		t.Helper()
		rows, err := c.Query(ctx, q, 1)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		k := 0
		for rows.Next() {
			k++
			var v, pad string
			if err := rows.Scan(&v, &pad); err != nil {
				t.Fatalf("%s: row %d: %v", what, k, err)
			}
			if v != wantV(k) || (k%2 == 0) != (len(pad) == 20000+k) {
				t.Errorf("%s: row %d: v %q, pad of %d bytes", what, k, v, len(pad))
			}
		}
		if err := rows.Err(); err != nil || k != 6 {
			t.Fatalf("%s: %d rows, %v", what, k, err)
		}
	}
	check("int4", func(k int) string { return fmt.Sprint(k * 10) })
	if _, err := c.Exec(ctx, "ALTER TABLE "+tbl+" ALTER COLUMN v TYPE money USING v::numeric::money"); err != nil {
		t.Fatal(err)
	}

	// The run bound with int4's binary format, with other goroutines'
	// statements queued behind it on the same connection.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			var n int
			if err := c.QueryRow(ctx, "SELECT $1::int8 + 1", g).Scan(&n); err != nil || n != g+1 {
				errs <- fmt.Errorf("goroutine %d: %d, %v", g, n, err)
			}
		})
	}
	got := 0
	rows, err := c.Query(ctx, q, 1) // the portal's description is read first
	if err == nil {
		for rows.Next() {
			got++
		}
		err = rows.Err()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if err == nil || !strings.Contains(err.Error(), "changed type") {
		t.Fatalf("run after ALTER: %d rows, %v; want the changed-type error", got, err)
	}
	if got != 0 {
		t.Errorf("run after ALTER handed out %d rows", got)
	}
	check("money", func(k int) string { return fmt.Sprintf("$%d.00", k*10) })
}
