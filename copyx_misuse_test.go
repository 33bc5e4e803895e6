package pgline

// A COPY where it does not belong: COPY FROM STDIN through Exec or Query,
// COPY TO STDOUT through Query, two COPYs in one text, and a COPY FROM
// STDIN the lexer cannot see (standard_conforming_strings off, SJIS). It
// fails clearly, and the other goroutines on the Conn get their own
// replies.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/sqllex"
)

// TestCopyMisuse_CopyFromViaExecOrQuery: COPY FROM STDIN sent with Exec
// with arguments (extended protocol) and without, and through Query, while
// other goroutines run statements: it must fail clearly, others get their
// own replies, and nothing hangs.
func TestCopyMisuse_CopyFromViaExecOrQuery(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	copyKeyedTable(t, c, "cl_execcopy")
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
	if got, err := rowCountErr(c, "cl_execcopy"); err != nil || got != 0 {
		t.Fatalf("count %d %v", got, err)
	}
}

// TestCopyMisuse_CopyToViaQuery: "COPY ... TO STDOUT" given to Query /
// QueryRow (extended protocol) must fail clearly (or return its data)
// without breaking the Conn: other goroutines' statements in flight and
// the statements after must get their own, correct replies.
func TestCopyMisuse_CopyToViaQuery(t *testing.T) {
	ctx := testCtx(t)
	kinds := map[string]func(ctx context.Context, c *Conn) error{
		"Query": func(ctx context.Context, c *Conn) error {
			rows, err := c.Query(ctx, "COPY (SELECT g FROM generate_series(1,10) g) TO STDOUT")
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			rows.Close()
			return rows.Err()
		},
		"QueryRow": func(ctx context.Context, c *Conn) error {
			var s string
			return c.QueryRow(ctx, "COPY (SELECT 'x') TO STDOUT").Scan(&s)
		},
		"Exec": func(ctx context.Context, c *Conn) error {
			_, err := c.Exec(ctx, "COPY (SELECT g FROM generate_series(1,10) g) TO STDOUT")
			return err
		},
	}
	for name, run := range kinds {
		c := connect(t, srv.DSN())
		var wg sync.WaitGroup
		errs := make(chan error, 50)
		wg.Add(2)
		go func() { defer wg.Done(); c.Exec(ctx, "SELECT pg_sleep(0.2)") }()
		time.Sleep(20 * time.Millisecond)
		go func() {
			defer wg.Done()
			err := run(ctx, c)
			t.Logf("%s: %v", name, err)
		}()
		time.Sleep(20 * time.Millisecond)
		for k := 0; k < 10; k++ {
			wg.Add(1)
			go func(k int) {
				defer wg.Done()
				qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				var v int
				if err := c.QueryRow(qctx, "SELECT $1::int4 + 1", k).Scan(&v); err != nil || v != k+1 {
					errs <- fmt.Errorf("%s: other goroutine's query %d, queued behind it: %d %v", name, k, v, err)
				}
			}(k)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var v int
		if err := c.QueryRow(qctx, "SELECT 77").Scan(&v); err != nil || v != 77 {
			t.Errorf("%s: statement after: %d %v", name, v, err)
		}
		cancel()
	}
}

// TestCopyMisuse_TwoCopiesInText: a text with two COPY FROM STDIN given to
// CopyFromReader: the second is refused, the whole text (one implicit
// transaction) must commit nothing and the caller gets an error.
func TestCopyMisuse_TwoCopiesInText(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	copyKeyedTable(t, c, "cl_two")
	tag, err := c.CopyFromReader(ctx, "COPY cl_two FROM STDIN; COPY cl_two FROM STDIN", strings.NewReader("1\ta\n2\tb\n"))
	t.Logf("two copies: %v %v", tag, err)
	n, cerr := rowCountErr(c, "cl_two")
	if cerr != nil {
		t.Fatal(cerr)
	}
	if err == nil || n != 0 {
		t.Errorf("CopyFromReader of two COPYs: %v %v; %d rows", tag, err, n)
	}
	// A COPY TO given to CopyFromReader, a COPY FROM given to CopyTo.
	if _, err := c.CopyFromReader(ctx, "COPY cl_two TO STDOUT", strings.NewReader("")); err == nil {
		t.Error("CopyFromReader of COPY TO succeeded")
	}
	var b strings.Builder
	if _, err := c.CopyTo(ctx, &b, "COPY cl_two FROM STDIN"); err == nil {
		t.Error("CopyTo of COPY FROM succeeded")
	}
	if n, err := rowCountErr(c, "cl_two"); err != nil || n != 0 {
		t.Errorf("after: %d %v", n, err)
	}
}

// TestCopyMisuse_HiddenCopyScsOff: with standard_conforming_strings off
// (a session setting any user may change), a backslash escapes a quote in
// a plain '...' string. sqllex reads the text with it on, so the COPY FROM
// STDIN below looks to it like a string constant: Exec runs it without a
// copy hold, pipelined with other goroutines' statements, whose messages
// the server then reads as COPY data. The Exec must fail clearly, and the
// other goroutines must get their own correct replies (or errors), within
// their deadlines.
func TestCopyMisuse_HiddenCopyScsOff(t *testing.T) {
	const sql = `SELECT 'a\', '; COPY cl_scs FROM STDIN; SELECT ' --'`
	info := sqllex.Scan(sql)
	t.Logf("sqllex: CopyFromStdin=%v Statements=%d", info.CopyFromStdin, info.Statements)
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE cl_scs(a text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "SET standard_conforming_strings = off"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for k := 0; k < 20; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			qctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var v int
			err := c.QueryRow(qctx, "SELECT $1::int4 + 1", k).Scan(&v)
			if err == nil && v != k+1 {
				errs <- fmt.Errorf("query %d got %d", k, v)
			}
			if err != nil {
				errs <- fmt.Errorf("query %d: %w", k, err)
			}
		}(k)
		if k == 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				qctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_, err := c.Exec(qctx, sql)
				t.Logf("hidden COPY Exec: %v", err)
				if err == nil {
					errs <- fmt.Errorf("hidden COPY FROM STDIN succeeded")
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	qctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var v int
	if err := c.QueryRow(qctx, "SELECT 41 + 1").Scan(&v); err != nil || v != 42 {
		t.Errorf("after: %d %v", v, err)
	}
}

// TestCopyMisuse_HiddenCopySJIS: with client_encoding SJIS (a runtime
// parameter pgline lets the user set), the byte 0x5C ('\') can be the
// second byte of a character (表 is 0x95 0x5C). sqllex reads bytes, sees
// an escaped quote in E'...' and takes the COPY FROM STDIN that follows
// for part of the string; the server sees E'表' then the COPY.
func TestCopyMisuse_HiddenCopySJIS(t *testing.T) {
	sql := "SELECT E'\x95\x5c'; COPY cl_sjis FROM STDIN; -- '"
	info := sqllex.Scan(sql)
	t.Logf("sqllex: CopyFromStdin=%v Statements=%d", info.CopyFromStdin, info.Statements)
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE cl_sjis(a text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "SET client_encoding = 'SJIS'"); err != nil {
		// pgline refuses encodings other than UTF8: the connection
		// fails, and nothing runs under SJIS.
		if !strings.Contains(err.Error(), "client_encoding") || !c.IsClosed() {
			t.Fatalf("SET client_encoding: %v (closed %v); want the connection to fail on it", err, c.IsClosed())
		}
		return
	}
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	wg.Add(1)
	go func() { defer wg.Done(); c.Exec(ctx, "SELECT pg_sleep(0.1)") }()
	time.Sleep(20 * time.Millisecond)
	wg.Add(1)
	go func() {
		defer wg.Done()
		qctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := c.Exec(qctx, sql)
		t.Logf("hidden COPY Exec: %v", err)
	}()
	time.Sleep(20 * time.Millisecond)
	for k := 0; k < 10; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			qctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var v int
			if err := c.QueryRow(qctx, "SELECT $1::int4 + 1", k).Scan(&v); err != nil || v != k+1 {
				errs <- fmt.Errorf("other goroutine's query %d: %d %v", k, v, err)
			}
		}(k)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
