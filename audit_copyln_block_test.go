package pgline

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAuditCopylnBlockedOnLock: the COPY blocks on the server (a row lock
// held by another session's uncommitted insert of the same key, reached
// after 100,000 rows, so that the client's writes then block on a full
// socket; and a table lock before the COPY starts). With a 500ms ctx the
// call must return near the deadline with ctx's error; nothing commits;
// the Conn answers right afterwards.
func TestAuditCopylnBlockedOnLock(t *testing.T) {
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
				_, err = c.CopyFromReader(cctx, "COPY cl_lock FROM STDIN", &copylnLines{n: 3_000_000})
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

// copylnLines yields lines "i\tzzz...\n" for i = 1..n.
type copylnLines struct{ i, n int }

func (r *copylnLines) Read(p []byte) (int, error) {
	k := 0
	for r.i < r.n && k+80 < len(p) {
		r.i++
		line := strconv.Itoa(r.i) + "\t" + strings.Repeat("z", 50) + "\n"
		k += copy(p[k:], line)
	}
	if k == 0 {
		return 0, io.EOF
	}
	return k, nil
}
