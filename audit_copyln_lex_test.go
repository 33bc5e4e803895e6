package pgline

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/sqllex"
)

// TestAuditCopylnHiddenCopyScsOff: with standard_conforming_strings off
// (a session setting any user may change), a backslash escapes a quote in
// a plain '...' string. sqllex reads the text with it on, so the COPY FROM
// STDIN below looks to it like a string constant: Exec runs it without a
// copy hold, pipelined with other goroutines' statements, whose messages
// the server then reads as COPY data. The Exec must fail clearly, and the
// other goroutines must get their own correct replies (or errors), within
// their deadlines.
func TestAuditCopylnHiddenCopyScsOff(t *testing.T) {
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

// TestAuditCopylnHiddenCopySJIS: with client_encoding SJIS (a runtime
// parameter pgline lets the user set), the byte 0x5C ('\') can be the
// second byte of a character (表 is 0x95 0x5C). sqllex reads bytes, sees
// an escaped quote in E'...' and takes the COPY FROM STDIN that follows
// for part of the string; the server sees E'表' then the COPY.
func TestAuditCopylnHiddenCopySJIS(t *testing.T) {
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
