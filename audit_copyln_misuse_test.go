package pgline

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAuditCopylnCopyOutViaQuery: "COPY ... TO STDOUT" given to Query /
// QueryRow (extended protocol) must fail clearly (or return its data)
// without breaking the Conn: other goroutines' statements in flight and
// the statements after must get their own, correct replies.
func TestAuditCopylnCopyOutViaQuery(t *testing.T) {
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

// TestAuditCopylnTwoCopiesInText: a text with two COPY FROM STDIN given to
// CopyFromReader: the second is refused, the whole text (one implicit
// transaction) must commit nothing and the caller gets an error.
func TestAuditCopylnTwoCopiesInText(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	copylnTable(t, c, "cl_two")
	tag, err := c.CopyFromReader(ctx, "COPY cl_two FROM STDIN; COPY cl_two FROM STDIN", strings.NewReader("1\ta\n2\tb\n"))
	t.Logf("two copies: %v %v", tag, err)
	n, cerr := copylnCount(t, c, "cl_two")
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
	if n, err := copylnCount(t, c, "cl_two"); err != nil || n != 0 {
		t.Errorf("after: %d %v", n, err)
	}
}
