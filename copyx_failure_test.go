package pgline

// A COPY that fails mid-stream (backend killed, server error, writer
// error, a panic in the source, reader or writer): the caller gets an
// error, nothing commits, and the other goroutines on the Conn (or Pool)
// get their own replies.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"
)

// TestCopyFailure_BackendKilled: the backend is terminated mid-COPY. The
// caller gets an error (not success), nothing is committed (checked on a
// fresh connection), and others on the Conn get errors, never hang.
func TestCopyFailure_BackendKilled(t *testing.T) {
	ctx := testCtx(t)
	admin := connect(t, srv.DSN())
	if _, err := admin.Exec(ctx, "DROP TABLE IF EXISTS cl_kill; CREATE TABLE cl_kill(a int4 PRIMARY KEY, b text)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec(context.Background(), "DROP TABLE IF EXISTS cl_kill") })
	c := connect(t, srv.DSN())
	pid := c.PID()
	i := 0
	start := time.Now()
	var wg sync.WaitGroup
	var otherErr error
	n, err := c.CopyFrom(ctx, Identifier{"cl_kill"}, []string{"a", "b"}, CopyFromFunc(func() ([]any, error) {
		i++
		if i == 30_000 {
			if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend($1)", int(pid)); err != nil {
				return nil, err
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				qctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				var v int
				otherErr = c.QueryRow(qctx, "SELECT 1").Scan(&v)
				if otherErr == nil {
					otherErr = fmt.Errorf("got %d", v)
					if v == 1 {
						otherErr = nil
					}
				}
			}()
			time.Sleep(100 * time.Millisecond)
		}
		if i > 2_000_000 {
			return nil, nil
		}
		return []any{i, "k"}, nil
	}))
	t.Logf("CopyFrom after kill: %d, %v (%v)", n, err, time.Since(start))
	if err == nil {
		t.Errorf("CopyFrom succeeded (%d rows) though its backend was killed", n)
	}
	wg.Wait()
	t.Logf("other: %v", otherErr)
	var cnt int64
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM cl_kill").Scan(&cnt); err != nil || cnt != 0 {
		t.Errorf("count %d, %v", cnt, err)
	}
}

// TestCopyFailure_CopyToWriterFails: the writer fails mid CopyTo while
// other goroutines queue statements; each gets its own reply, and the
// statements after are right.
func TestCopyFailure_CopyToWriterFails(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	for round := 0; round < 5; round++ {
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		w := &copyFailAtWriter{at: 1000}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.CopyTo(ctx, w, "COPY (SELECT g, repeat('x', 100) FROM generate_series(1, 2000000) g) TO STDOUT")
			if err == nil || !errors.Is(err, io.ErrShortWrite) && err.Error() == "" {
				errs <- fmt.Errorf("CopyTo: %v", err)
			}
		}()
		for k := 0; k < 20; k++ {
			wg.Add(1)
			go func(k int) {
				defer wg.Done()
				time.Sleep(time.Duration(k) * time.Millisecond)
				qctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				defer cancel()
				var v int
				var s string
				err := c.QueryRow(qctx, "SELECT $1::int4 * 3, 'r'||$1::text", k).Scan(&v, &s)
				if err != nil {
					errs <- fmt.Errorf("q%d: %w", k, err)
				} else if v != 3*k || s != fmt.Sprint("r", k) {
					errs <- fmt.Errorf("q%d: got %d %q", k, v, s)
				}
			}(k)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
		var v int
		if err := c.QueryRow(ctx, "SELECT 7").Scan(&v); err != nil || v != 7 {
			t.Fatalf("after: %d %v", v, err)
		}
	}
}

// TestCopyFailure_ServerErrorWithOthers: a COPY that fails on the server at
// row 50,000 (duplicate key) while 20 other goroutines issue statements on
// the same Conn: each must get its own reply, nothing of the COPY is
// committed, and the COPY's caller gets the *PgError.
func TestCopyFailure_ServerErrorWithOthers(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	copyKeyedTable(t, c, "cl_srverr")
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	query := func(k int) {
		defer wg.Done()
		var v int
		var s string
		if err := c.QueryRow(ctx, "SELECT $1::int4 * 2, $2::text", k, fmt.Sprint("q", k)).Scan(&v, &s); err != nil {
			errs <- fmt.Errorf("query %d: %w", k, err)
			return
		}
		if v != 2*k || s != fmt.Sprint("q", k) {
			errs <- fmt.Errorf("query %d got %d %q", k, v, s)
		}
	}
	for round := 0; round < 3; round++ {
		i := 0
		n, err := c.CopyFrom(ctx, Identifier{"cl_srverr"}, []string{"a", "b"}, CopyFromFunc(func() ([]any, error) {
			if i == 100_000 {
				return nil, nil
			}
			i++
			if i%5000 == 0 {
				for k := 0; k < 10; k++ {
					wg.Add(1)
					go query(i + k)
				}
			}
			a := i
			if i == 50_000 {
				a = 1 // duplicate key
			}
			return []any{a, "v"}, nil
		}))
		var pgErr *PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
			t.Fatalf("round %d: CopyFrom: %d, %v; want 23505", round, n, err)
		}
		wg.Wait()
		if got, err := rowCountErr(c, "cl_srverr"); err != nil || got != 0 {
			t.Fatalf("round %d: count %d, %v", round, got, err)
		}
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestCopyFailure_SourcePanic: the row source (CopyFrom), the reader
// (CopyFromReader) or the writer (CopyTo) panics in the middle of the
// COPY, on the caller's goroutine; the caller recovers. Nothing may be
// committed, and the Conn must either answer the next statement correctly
// or fail it with an error, not hang until the statement's deadline.
func TestCopyFailure_SourcePanic(t *testing.T) {
	kinds := map[string]func(c *Conn){
		"CopyFrom": func(c *Conn) {
			i := 0
			c.CopyFrom(testCtx(t), Identifier{"cl_panic"}, []string{"a", "b"}, CopyFromFunc(func() ([]any, error) {
				i++
				if i == 50_000 {
					panic("source exploded")
				}
				return []any{i, "x"}, nil
			}))
		},
		"CopyFromReader": func(c *Conn) {
			c.CopyFromReader(testCtx(t), "COPY cl_panic FROM STDIN", &copyPanicReader{})
		},
		"CopyTo": func(c *Conn) {
			c.CopyTo(testCtx(t), &copyPanicWriter{}, "COPY (SELECT generate_series(1, 1000000)) TO STDOUT")
		},
	}
	for name, run := range kinds {
		c := connect(t, srv.DSN())
		copyKeyedTable(t, c, "cl_panic")
		func() {
			defer func() { recover() }()
			run(c)
		}()
		done := make(chan struct{})
		var n int64
		var err error
		start := time.Now()
		go func() {
			defer close(done)
			n, err = rowCountErr(c, "cl_panic")
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the statement after the panic hangs past its 5s deadline", name)
		}
		t.Logf("%s: count after panic: %d, %v after %v", name, n, err, time.Since(start))
		if err == nil && n != 0 {
			t.Errorf("%s: %d rows committed after the panic", name, n)
		}
		if err != nil {
			t.Errorf("%s: the statement after a recovered panic gets %v after %v (the Conn stays wedged: the COPY never ended)", name, err, time.Since(start).Round(time.Millisecond))
		}
	}
}

// TestCopyFailure_PoolSourcePanic: Pool.CopyFrom whose source panics (the
// caller recovers): the pool gives the connection back while its COPY
// never ended; the pool's next statement must not hang on it.
func TestCopyFailure_PoolSourcePanic(t *testing.T) {
	ctx := testCtx(t)
	p, err := NewPool(ctx, srv.DSN("pool_max_conns=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { go p.Close() }() // Close may wait for the wedged connection
	if _, err := p.Exec(ctx, "CREATE TEMP TABLE cl_ppanic(a int4, b text)"); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() { recover() }()
		i := 0
		p.CopyFrom(ctx, Identifier{"cl_ppanic"}, []string{"a", "b"}, CopyFromFunc(func() ([]any, error) {
			i++
			if i == 50_000 {
				panic("source exploded")
			}
			return []any{i, "x"}, nil
		}))
	}()
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	start := time.Now()
	var v int
	err = p.QueryRow(qctx, "SELECT 1").Scan(&v)
	if err != nil {
		t.Errorf("Pool statement after a panicked Pool.CopyFrom: %v after %v (the pool kept the wedged connection)", err, time.Since(start).Round(time.Millisecond))
	}
}
