package pgline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"
)

// TestAuditCopylnSlowSourceDeadline: a source that yields a row every
// 20ms; ctx has a 300ms deadline. CopyFrom must return near the deadline
// with ctx's error, nothing committed, and the Conn usable.
func TestAuditCopylnSlowSourceDeadline(t *testing.T) {
	c := connect(t, srv.DSN())
	copylnTable(t, c, "cl_slow")
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
	if got, err := copylnCount(t, c, "cl_slow"); err != nil || got != 0 {
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
	if got, err := copylnCount(t, c, "cl_slow"); err != nil || got != 0 {
		t.Fatalf("count %d, %v", got, err)
	}
}

// TestAuditCopylnBackendKilled: the backend is terminated mid-COPY. The
// caller gets an error (not success), nothing is committed (checked on a
// fresh connection), and others on the Conn get errors, never hang.
func TestAuditCopylnBackendKilled(t *testing.T) {
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

// copylnFailWriter fails at its nth write.
type copylnFailWriter struct{ n, at int }

func (w *copylnFailWriter) Write(p []byte) (int, error) {
	if w.n++; w.n == w.at {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// TestAuditCopylnCopyToWriterFails: the writer fails mid CopyTo while
// other goroutines queue statements; each gets its own reply, and the
// statements after are right.
func TestAuditCopylnCopyToWriterFails(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	for round := 0; round < 5; round++ {
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		w := &copylnFailWriter{at: 1000}
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

// TestAuditCopylnExecCopyExtended: COPY FROM STDIN sent with Exec with
// arguments (extended protocol) and without, and through Query, while
// other goroutines run statements: it must fail clearly, others get their
// own replies, and nothing hangs.
func TestAuditCopylnExecCopyExtended(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	copylnTable(t, c, "cl_execcopy")
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for k := 0; k < 30; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			var err error
			switch k % 3 {
			case 0:
				_, err = c.Exec(qctx, "COPY cl_execcopy FROM STDIN")
			case 1:
				var rows *Rows
				rows, err = c.Query(qctx, "copy cl_execcopy (a, b) from stdin with (format csv)")
				if err == nil {
					for rows.Next() {
					}
					err = rows.Err()
					rows.Close()
				}
			case 2:
				var v int
				if err2 := c.QueryRow(qctx, "SELECT $1::int4 + 100", k).Scan(&v); err2 != nil || v != k+100 {
					errs <- fmt.Errorf("q%d: %d %v", k, v, err2)
				}
				return
			}
			if err == nil {
				errs <- fmt.Errorf("COPY FROM STDIN via Exec/Query %d succeeded", k)
			}
			if errors.Is(err, context.DeadlineExceeded) {
				errs <- fmt.Errorf("COPY %d hung: %v", k, err)
			}
		}(k)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got, err := copylnCount(t, c, "cl_execcopy"); err != nil || got != 0 {
		t.Fatalf("count %d %v", got, err)
	}
}
