package pgline

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

// TestAuditCopylnAbandonedWhileQueued: a COPY (every entry point) whose
// ctx ends while it waits behind another goroutine's slow statement
// returns at its deadline with ctx's error; the COPY never commits; the
// statements queued after it get their own replies within their deadlines.
func TestAuditCopylnAbandonedWhileQueued(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	copylnTable(t, c, "cl_aband")
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
			go func() {
				defer wg.Done()
				c.Exec(ctx, "SELECT pg_sleep(0.4)")
			}()
			time.Sleep(30 * time.Millisecond)
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
			if n, err := copylnCount(t, c, "cl_aband"); err != nil || n != 0 {
				t.Fatalf("%s: count %d %v", name, n, err)
			}
		}
	}
}

// TestAuditCopylnCtxEndsDuringCopyToTx: CopyTo in a transaction whose ctx
// ends mid-stream: the error is ctx's, and the transaction's next
// statement and Commit answer correctly (Commit may refuse: doomed).
func TestAuditCopylnCtxEndsDuringCopyToTx(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	copylnTable(t, c, "cl_ctxtx")
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO cl_ctxtx VALUES (1, 'x')"); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	start := time.Now()
	_, err = tx.CopyTo(cctx, &copylnSlowWriter{}, "COPY (SELECT g FROM generate_series(1, 10000000) g) TO STDOUT")
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

type copylnSlowWriter struct{ n int }

func (w *copylnSlowWriter) Write(p []byte) (int, error) {
	if w.n++; w.n%1000 == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	return len(p), nil
}
