package pgline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// copylnTable creates a temp table t(a int4 primary key, b text) on c.
func copylnTable(t *testing.T, c *Conn, name string) {
	t.Helper()
	if _, err := c.Exec(testCtx(t), "CREATE TEMP TABLE "+name+"(a int4 PRIMARY KEY, b text)"); err != nil {
		t.Fatal(err)
	}
}

// copylnCount counts rows of table with a short deadline (a wedged Conn
// fails instead of hanging).
func copylnCount(t *testing.T, c *Conn, table string) (int64, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var n int64
	err := c.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n)
	return n, err
}

// TestAuditCopylnSourcePanic: the row source (CopyFrom), the reader
// (CopyFromReader) or the writer (CopyTo) panics in the middle of the
// COPY, on the caller's goroutine; the caller recovers. Nothing may be
// committed, and the Conn must either answer the next statement correctly
// or fail it with an error, not hang until the statement's deadline.
func TestAuditCopylnSourcePanic(t *testing.T) {
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
			c.CopyFromReader(testCtx(t), "COPY cl_panic FROM STDIN", &copylnPanicReader{})
		},
		"CopyTo": func(c *Conn) {
			c.CopyTo(testCtx(t), &copylnPanicWriter{}, "COPY (SELECT generate_series(1, 1000000)) TO STDOUT")
		},
	}
	for name, run := range kinds {
		c := connect(t, srv.DSN())
		copylnTable(t, c, "cl_panic")
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
			n, err = copylnCount(t, c, "cl_panic")
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

type copylnPanicReader struct{ n int }

func (r *copylnPanicReader) Read(p []byte) (int, error) {
	if r.n++; r.n == 20 {
		panic("reader exploded")
	}
	k := 0
	for k+20 < len(p) {
		k += copy(p[k:], fmt.Sprintf("%d\tv\n", r.n*100000+k))
	}
	return k, nil
}

type copylnPanicWriter struct{ n int }

func (w *copylnPanicWriter) Write(p []byte) (int, error) {
	if w.n++; w.n == 1000 {
		panic("writer exploded")
	}
	return len(p), nil
}

// TestAuditCopylnServerErrorWithOthers: a COPY that fails on the server at
// row 50,000 (duplicate key) while 20 other goroutines issue statements on
// the same Conn: each must get its own reply, nothing of the COPY is
// committed, and the COPY's caller gets the *PgError.
func TestAuditCopylnServerErrorWithOthers(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	copylnTable(t, c, "cl_srverr")
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
		if got, err := copylnCount(t, c, "cl_srverr"); err != nil || got != 0 {
			t.Fatalf("round %d: count %d, %v", round, got, err)
		}
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestAuditCopylnTextEscapes: text COPY of backslashes, \N, tabs and
// unicode through CopyFromReader, then back through CopyTo.
func TestAuditCopylnTextEscapes(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	copylnTable(t, c, "cl_text")
	data := "1\t\\\\N\n2\t\\N\n3\ta\\tb\\nc\n4\tдобрый день ✓\n5\t\\\\\\\\\n"
	tag, err := c.CopyFromReader(ctx, "COPY cl_text FROM STDIN", strings.NewReader(data))
	if err != nil || tag.RowsAffected() != 5 {
		t.Fatalf("%v %v", tag, err)
	}
	rows, err := c.Query(ctx, "SELECT a, b FROM cl_text ORDER BY a")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]*string{}
	s := func(v string) *string { return &v }
	want[1], want[2], want[3], want[4], want[5] = s(`\N`), nil, s("a\tb\nc"), s("добрый день ✓"), s(`\\`)
	for rows.Next() {
		var a int
		var b *string
		if err := rows.Scan(&a, &b); err != nil {
			t.Fatal(err)
		}
		w := want[a]
		if (w == nil) != (b == nil) || (w != nil && *w != *b) {
			t.Errorf("row %d: got %v want %v", a, b, w)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if _, err := c.CopyTo(ctx, &out, "COPY cl_text TO STDOUT"); err != nil {
		t.Fatal(err)
	}
	if out.String() != data {
		t.Errorf("CopyTo: %q want %q", out.String(), data)
	}
}

// TestAuditCopylnPoolSourcePanic: Pool.CopyFrom whose source panics (the
// caller recovers): the pool gives the connection back while its COPY
// never ended; the pool's next statement must not hang on it.
func TestAuditCopylnPoolSourcePanic(t *testing.T) {
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
