package pgline

// A COPY's ctx: it ends while the COPY waits behind other statements,
// while the server blocks it, while the source is slow, or mid CopyTo in a
// transaction. The call returns near its deadline with ctx's error,
// nothing commits, and the Conn answers afterwards.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCopyCtx_EndsWhileQueued: a COPY (every entry point) whose
// ctx ends while it waits behind another goroutine's slow statement
// returns at its deadline with ctx's error; the COPY never commits; the
// statements queued after it get their own replies within their deadlines.
func TestCopyCtx_EndsWhileQueued(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	copyKeyedTable(t, c, "cl_aband")
	kinds := map[string]func(ctx context.Context) error{
		"CopyFromReader": func(ctx context.Context) error {
			_, err := c.CopyFromReader(ctx, "COPY cl_aband FROM STDIN", strings.NewReader("1\ta\n2\tb\n"))
			return err
		},
		"CopyFrom": func(ctx context.Context) error {
			_, err := c.CopyFrom(ctx, Identifier{"cl_aband"}, []string{"a", "b"}, CopyFromRows([][]any{{1, "a"}, {2, "b"}}))
			return err
		},
		"ExecCopy": func(ctx context.Context) error {
			_, err := c.Exec(ctx, "COPY cl_aband FROM STDIN")
			if err == nil {
				return errors.New("Exec COPY FROM STDIN succeeded")
			}
			return err
		},
		"QueryCopy": func(ctx context.Context) error {
			rows, err := c.Query(ctx, "COPY cl_aband FROM STDIN")
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			rows.Close()
			if rows.Err() == nil {
				return errors.New("Query COPY FROM STDIN succeeded")
			}
			return rows.Err()
		},
		"CopyTo": func(ctx context.Context) error {
			var b bytes.Buffer
			_, err := c.CopyTo(ctx, &b, "COPY (SELECT g FROM generate_series(1,100000) g) TO STDOUT")
			return err
		},
	}
	for name, run := range kinds {
		for round := 0; round < 3; round++ {
			var wg sync.WaitGroup
			wg.Add(1)
			base := queuedRequests(c)
			go func() {
				defer wg.Done()
				c.Exec(ctx, "SELECT pg_sleep(0.4)")
			}()
			waitQueued(t, c, base+1) // the COPY waits behind it
			cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			start := time.Now()
			err := run(cctx)
			d := time.Since(start)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) || d > 400*time.Millisecond {
				t.Errorf("%s: %v after %v, want DeadlineExceeded at ~100ms", name, err, d)
			}
			errs := make(chan error, 20)
			for k := 0; k < 10; k++ {
				wg.Add(1)
				go func(k int) {
					defer wg.Done()
					qctx, qcancel := context.WithTimeout(ctx, 5*time.Second)
					defer qcancel()
					var v int
					var s string
					if err := c.QueryRow(qctx, "SELECT $1::int4 + 7, $1::text", k).Scan(&v, &s); err != nil || v != k+7 || s != fmt.Sprint(k) {
						errs <- fmt.Errorf("%s: q%d: %d %q %v", name, k, v, s, err)
					}
				}(k)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if n, err := rowCountErr(c, "cl_aband"); err != nil || n != 0 {
				t.Fatalf("%s: count %d %v", name, n, err)
			}
		}
	}
}

// TestCopyCtx_EndsDuringCopyToInTx: CopyTo in a transaction whose ctx
// ends mid-stream: the error is ctx's, and the transaction's next
// statement and Commit answer correctly (Commit may refuse: doomed).
func TestCopyCtx_EndsDuringCopyToInTx(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	copyKeyedTable(t, c, "cl_ctxtx")
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO cl_ctxtx VALUES (1, 'x')"); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	start := time.Now()
	_, err = tx.CopyTo(cctx, &copySlowWriter{}, "COPY (SELECT g FROM generate_series(1, 10000000) g) TO STDOUT")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("CopyTo: %v after %v", err, time.Since(start))
	}
	var v int
	qerr := tx.QueryRow(ctx, "SELECT 3").Scan(&v)
	t.Logf("after: %d %v", v, qerr)
	if qerr == nil && v != 3 {
		t.Errorf("wrong reply %d", v)
	}
	err = tx.Commit(ctx)
	t.Logf("Commit: %v", err)
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM cl_ctxtx").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if (err == nil) != (n == 1) {
		t.Errorf("Commit %v but %d rows", err, n)
	}
}

// TestCopyCtx_ServerBlockedOnLock: the COPY blocks on the server (a row
// lock held by another session's uncommitted insert of the same key,
// reached after 100,000 rows, so that the client's writes then block on a
// full socket; and a table lock before the COPY starts). With a 500ms ctx
// the call must return near the deadline with ctx's error; nothing
// commits; the Conn answers right afterwards.
func TestCopyCtx_ServerBlockedOnLock(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	ctx := testCtx(t)
	admin := connect(t, srv.DSN())
	if _, err := admin.Exec(ctx, "DROP TABLE IF EXISTS cl_lock; CREATE TABLE cl_lock(a int4 PRIMARY KEY, b text)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec(context.Background(), "DROP TABLE IF EXISTS cl_lock") })
	c := connect(t, srv.DSN())
	locker := connect(t, srv.DSN())

	for _, mode := range []string{"row", "table"} {
		tx, err := locker.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if mode == "row" {
			_, err = tx.Exec(ctx, "INSERT INTO cl_lock VALUES (100000, 'locker')")
		} else {
			_, err = tx.Exec(ctx, "LOCK TABLE cl_lock IN ACCESS EXCLUSIVE MODE")
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, api := range []string{"CopyFrom", "CopyFromReader"} {
			cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			start := time.Now()
			if api == "CopyFrom" {
				i := 0
				_, err = c.CopyFrom(cctx, Identifier{"cl_lock"}, []string{"a", "b"}, CopyFromFunc(func() ([]any, error) {
					i++
					if i > 3_000_000 {
						return nil, nil
					}
					return []any{i, strings.Repeat("z", 50)}, nil
				}))
			} else {
				_, err = c.CopyFromReader(cctx, "COPY cl_lock FROM STDIN", &copyLines{n: 3_000_000})
			}
			d := time.Since(start)
			cancel()
			t.Logf("%s/%s: %v after %v", mode, api, err, d)
			if !errors.Is(err, context.DeadlineExceeded) || d > 2*time.Second {
				t.Errorf("%s/%s: %v after %v; want DeadlineExceeded near 500ms", mode, api, err, d)
			}
			qctx, qcancel := context.WithTimeout(ctx, 3*time.Second)
			var v int
			if err := c.QueryRow(qctx, "SELECT 11").Scan(&v); err != nil || v != 11 {
				t.Errorf("%s/%s: after: %d %v", mode, api, v, err)
			}
			qcancel()
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM cl_lock").Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: count %d %v", mode, n, err)
		}
	}
}

// TestCopyCtx_SlowSourceDeadline: a source that yields a row every
// 20ms; ctx has a 300ms deadline. CopyFrom must return near the deadline
// with ctx's error, nothing committed, and the Conn usable.
func TestCopyCtx_SlowSourceDeadline(t *testing.T) {
	c := connect(t, srv.DSN())
	copyKeyedTable(t, c, "cl_slow")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	i := 0
	start := time.Now()
	n, err := c.CopyFrom(ctx, Identifier{"cl_slow"}, []string{"a", "b"}, CopyFromFunc(func() ([]any, error) {
		i++
		time.Sleep(20 * time.Millisecond)
		return []any{i, "s"}, nil
	}))
	d := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("CopyFrom: %d, %v; want DeadlineExceeded", n, err)
	}
	if d > time.Second {
		t.Errorf("CopyFrom returned %v after start (deadline 300ms)", d)
	}
	if got, err := rowCountErr(c, "cl_slow"); err != nil || got != 0 {
		t.Fatalf("count %d, %v", got, err)
	}
	// CopyFromReader with a reader that blocks briefly each time.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	start = time.Now()
	_, err = c.CopyFromReader(ctx2, "COPY cl_slow FROM STDIN", &gateSlowLines{n: 1000, d: 20 * time.Millisecond})
	d = time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) || d > time.Second {
		t.Errorf("CopyFromReader: %v after %v", err, d)
	}
	if got, err := rowCountErr(c, "cl_slow"); err != nil || got != 0 {
		t.Fatalf("count %d, %v", got, err)
	}
}
