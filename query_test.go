package pgline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestQueryRows(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	rows, err := c.Query(ctx, "SELECT g, 'n' || g, g * 1.5::float8, g % 2 = 0 FROM generate_series(1, $1::int) g", 100)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var id int32
		var name string
		var score float64
		var even bool
		if err := rows.Scan(&id, &name, &score, &even); err != nil {
			t.Fatal(err)
		}
		n++
		if id != int32(n) || name != "n"+strconv.Itoa(n) || score != float64(n)*1.5 || even != (n%2 == 0) {
			t.Fatalf("row %d: %d %q %v %v", n, id, name, score, even)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 100 || rows.CommandTag().String() != "SELECT 100" {
		t.Fatalf("%d rows, tag %q", n, rows.CommandTag())
	}
	fds := rows.FieldDescriptions()
	if len(fds) != 4 || fds[0].Name != "g" || fds[0].DataTypeOID != 23 || fds[0].Format != 1 {
		t.Fatalf("field descriptions: %+v", fds)
	}

	// QueryRow, ErrNoRows, Values.
	var s string
	if err := c.QueryRow(ctx, "SELECT $1::text || $2::text", "a", "b").Scan(&s); err != nil || s != "ab" {
		t.Fatalf("QueryRow: %q %v", s, err)
	}
	if err := c.QueryRow(ctx, "SELECT 1 WHERE false").Scan(&s); !errors.Is(err, ErrNoRows) {
		t.Fatalf("no rows: %v", err)
	}
	rows, err = c.Query(ctx, "SELECT 1::int8, 'x'::text, NULL::int4")
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	vals, err := rows.Values()
	rows.Close()
	if err != nil || len(vals) != 3 || vals[0] != int64(1) || vals[1] != "x" || vals[2] != nil {
		t.Fatalf("Values: %#v %v", vals, err)
	}

	// Closing early discards the rest; the connection goes on.
	rows, err = c.Query(ctx, "SELECT g FROM generate_series(1, 10000) g")
	if err != nil {
		t.Fatal(err)
	}
	rows.Next()
	rows.Close()
	rows.Close()
	var one int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after early Close: %v", err)
	}
}

func TestExecWithArgs(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE e(id int PRIMARY KEY, name text); CREATE TEMP TABLE f(x int)"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		tag, err := c.Exec(ctx, "INSERT INTO e VALUES ($1, $2)", i, "name"+strconv.Itoa(i))
		if err != nil || tag.String() != "INSERT 0 1" {
			t.Fatalf("insert %d: %q %v", i, tag, err)
		}
	}
	tag, err := c.Exec(ctx, "UPDATE e SET name = $1 WHERE id >= $2", "z", 2)
	if err != nil || tag.RowsAffected() != 2 {
		t.Fatalf("update: %q %v", tag, err)
	}

	// Errors come back as *PgError and leave the connection usable.
	errCases := []struct {
		sql  string
		args []any
		code string
	}{
		{"SELEC 1", nil, "42601"},
		{"INSERT INTO e VALUES ($1, $2)", []any{1, "dup"}, "23505"},
		{"SELECT 1 / $1::int", []any{0}, "22012"},
		{"SELECT 1/0", nil, "22012"},
	}
	for _, tc := range errCases {
		_, err := c.Exec(ctx, tc.sql, tc.args...)
		var pgErr *PgError
		if !errors.As(err, &pgErr) || pgErr.Code != tc.code {
			t.Fatalf("%s: got %v, want SQLSTATE %s", tc.sql, err, tc.code)
		}
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM e").Scan(&n); err != nil || n != 3 {
			t.Fatalf("after %s: count %d, %v", tc.sql, n, err)
		}
	}

	// A wrong argument count is refused before the run is sent.
	_, err = c.Exec(ctx, "INSERT INTO e VALUES ($1, $2)", 9)
	if err == nil || !strings.Contains(err.Error(), "2 parameters, but 1 arguments") {
		t.Fatalf("argument count: %v", err)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM e").Scan(&n); err != nil || n != 3 {
		t.Fatalf("count %d, %v", n, err)
	}
}

// TestCancelByContext: a statement whose ctx times out returns at once
// with an error wrapping context.DeadlineExceeded, the statement is
// cancelled on the server (the next statement does not wait for the
// 10 s sleep), and the connection stays usable.
func TestCancelByContext(t *testing.T) {
	c := connect(t, srv.DSN("user=scramuser", "password="+pwSCRAM, "sslmode=require"))
	for _, name := range []string{"query", "exec-simple"} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			var err error
			if name == "query" {
				var v string
				err = c.QueryRow(ctx, "SELECT pg_sleep($1)::text", 10).Scan(&v)
			} else {
				_, err = c.Exec(ctx, "SELECT pg_sleep(10)")
			}
			if took := time.Since(start); took > time.Second {
				t.Fatalf("took %v", took)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("got %v, want DeadlineExceeded", err)
			}
			var one int
			if err := c.QueryRow(testCtx(t), "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("next query: %v", err)
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Fatalf("the next query waited for the sleep: %v", took)
			}
		})
	}
	// A ctx already done sends nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Exec(ctx, "SELECT 1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("done ctx: %v", err)
	}
}

// TestCtxEndsWhileRowsBuffered: the head's ctx ends while the rest of its
// rows is already in the read buffer, where its ctx is not registered
// (the watch is armed only for a read that waits on the socket): the next
// Next answers at once with ctx's error, the statements queued behind
// get their own answers, and the connection goes on.
func TestCtxEndsWhileRowsBuffered(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	for round := range 20 {
		qctx, cancel := context.WithCancel(ctx)
		rows, err := c.Query(qctx, "SELECT g FROM generate_series(1, 200) g")
		if err != nil {
			t.Fatal(err)
		}
		var g int
		if !rows.Next() || rows.Scan(&g) != nil || g != 1 {
			t.Fatalf("round %d: first row %d, %v", round, g, rows.Err())
		}
		behind := make(chan error, 1)
		go func() {
			var v int
			err := c.QueryRow(ctx, "SELECT $1::int", round).Scan(&v)
			if err == nil && v != round {
				err = fmt.Errorf("got %d, want %d", v, round)
			}
			behind <- err
		}()
		for queued := false; !queued; time.Sleep(100 * time.Microsecond) {
			c.s.Wmu.Lock()
			queued = c.s.Tail != rows.res.Req
			c.s.Wmu.Unlock()
		}
		cancel()
		n := 0
		for rows.Next() {
			n++
		}
		if n != 0 || !errors.Is(rows.Err(), context.Canceled) {
			t.Fatalf("round %d: %d more rows after the ctx ended, Err %v; want none and context.Canceled", round, n, rows.Err())
		}
		rows.Close()
		if err := <-behind; err != nil {
			t.Fatalf("round %d: the statement behind: %v", round, err)
		}
	}
	var one int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after: %d, %v", one, err)
	}
}

// TestStaleCachedStatement: ALTER TABLE between two runs of a cached
// SELECT * is handled by re-preparing.
func TestStaleCachedStatement(t *testing.T) {
	for _, mode := range []string{"prepare", "describe", "none"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			ctx := testCtx(t)
			if _, err := c.Exec(ctx, "CREATE TEMP TABLE s(a int)"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Exec(ctx, "INSERT INTO s VALUES ($1)", 1); err != nil {
				t.Fatal(err)
			}
			countCols := func() int {
				rows, err := c.Query(ctx, "SELECT * FROM s")
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				return len(rows.FieldDescriptions())
			}
			if n := countCols(); n != 1 {
				t.Fatalf("%d columns", n)
			}
			if _, err := c.Exec(ctx, "ALTER TABLE s ADD COLUMN b text"); err != nil {
				t.Fatal(err)
			}
			if n := countCols(); n != 2 {
				t.Fatalf("%d columns after ALTER TABLE", n)
			}
			// DEALLOCATE ALL drops the named statements behind the cache.
			if _, err := c.Exec(ctx, "DEALLOCATE ALL"); err != nil {
				t.Fatal(err)
			}
			if n := countCols(); n != 2 {
				t.Fatalf("%d columns after DEALLOCATE ALL", n)
			}
		})
	}
}

func TestStatementCacheCapacity(t *testing.T) {
	c := connect(t, srv.DSN("statement_cache_capacity=2"))
	ctx := testCtx(t)
	for i := 0; i < 5; i++ {
		var v int
		if err := c.QueryRow(ctx, "SELECT "+strconv.Itoa(i)+" + $1::int", 1).Scan(&v); err != nil || v != i+1 {
			t.Fatal(v, err)
		}
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*)::int FROM pg_prepared_statements").Scan(&n); err != nil {
		t.Fatal(err)
	}
	// The two cached, plus the one just prepared for this query, minus one
	// evicted and closed with it.
	if n > 3 {
		t.Fatalf("%d prepared statements on the server with capacity 2", n)
	}
}

// TestTerminateMidQuery: the backend is terminated while a query runs.
func TestTerminateMidQuery(t *testing.T) {
	c := connect(t, srv.DSN())
	admin := connect(t, srv.DSN())
	done := make(chan error, 1)
	go func() {
		_, err := c.Exec(testCtx(t), "SELECT pg_sleep($1)", 5)
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if _, err := admin.Exec(testCtx(t), "SELECT pg_terminate_backend($1)", int64(c.PID())); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("query on a terminated backend succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("query did not return after the backend was terminated")
	}
	if _, err := c.Exec(testCtx(t), "SELECT 1"); !errors.Is(err, ErrClosed) {
		t.Fatalf("after termination: %v, want ErrClosed", err)
	}
}

// TestCancelTimeoutClosesConnection: when the server does not act on the
// CancelRequest (here its secret key is wrong, so the server ignores it),
// the statement returns at its deadline, and the connection is closed once
// CancelTimeout has passed after the cancel.
func TestCancelTimeoutClosesConnection(t *testing.T) {
	c := connectCancelTimeout(t, 200*time.Millisecond)
	// Warm the connection's requests up, so that the watch below runs in
	// a request that was used before (requests are reused).
	for i := range 3 {
		ctx, cancel := context.WithCancel(testCtx(t))
		var v int
		err := c.QueryRow(ctx, "SELECT $1::int", i).Scan(&v)
		cancel()
		if err != nil || v != i {
			t.Fatal(v, err)
		}
	}
	c.s.SecretKey[0] ^= 1
	ctx, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Exec(ctx, "SELECT pg_sleep($1)", 3)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("took %v", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want DeadlineExceeded", err)
	}
	for !c.IsClosed() {
		if time.Since(start) > 2*time.Second {
			t.Fatal("the connection is still open after the cancel timeout")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNoColumnsGivesEmptyFieldDescriptions: a statement with no result
// column (SELECT with no list) has an empty, non-nil FieldDescriptions,
// in both statement-cache modes; nil is for rows without a description.
func TestNoColumnsGivesEmptyFieldDescriptions(t *testing.T) {
	ctx := testCtx(t)
	for _, mode := range []string{"prepare", "describe"} {
		c := connect(t, srv.DSN("statement_cache_mode="+mode))
		for range 2 { // described, then from the cache
			rows, err := c.Query(ctx, "SELECT")
			if err != nil {
				t.Fatal(err)
			}
			if fds := rows.FieldDescriptions(); fds == nil || len(fds) != 0 {
				t.Errorf("%s mode: FieldDescriptions() = %#v, want an empty slice", mode, fds)
			}
			rows.Close()
		}
	}
}
