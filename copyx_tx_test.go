package pgline

// COPY in a transaction: Commit while the COPY runs, and Commit after
// the COPY failed.

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCopyTx_CommitDuringCopy: Commit, with a short ctx, is called
// while the transaction's own CopyFrom (a slow source) still runs on
// another goroutine. Commit waits behind the COPY; when its ctx ends
// first it must report failure and nothing of the transaction may be
// committed; when it reports success, the COPY's rows and the earlier
// INSERT are there.
func TestCopyTx_CommitDuringCopy(t *testing.T) {
	ctx := testCtx(t)
	admin := connect(t, srv.DSN())
	if _, err := admin.Exec(ctx, "DROP TABLE IF EXISTS cl_txc; CREATE TABLE cl_txc(a int4 PRIMARY KEY, b text)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec(context.Background(), "DROP TABLE IF EXISTS cl_txc") })
	for _, commitTimeout := range []time.Duration{100 * time.Millisecond, 10 * time.Second} {
		admin.Exec(ctx, "TRUNCATE cl_txc")
		c := connect(t, srv.DSN())
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO cl_txc VALUES (0, 'pre')"); err != nil {
			t.Fatal(err)
		}
		copyDone := make(chan error, 1)
		started := make(chan struct{})
		go func() {
			i := 0
			_, err := tx.CopyFrom(ctx, Identifier{"cl_txc"}, []string{"a", "b"}, CopyFromFunc(func() ([]any, error) {
				i++
				if i == 2 {
					close(started)
				}
				if i > 30 {
					return nil, nil
				}
				time.Sleep(10 * time.Millisecond)
				return []any{i, "c"}, nil
			}))
			copyDone <- err
		}()
		<-started
		cctx, cancel := context.WithTimeout(ctx, commitTimeout)
		cerr := tx.Commit(cctx)
		cancel()
		copyErr := <-copyDone
		time.Sleep(100 * time.Millisecond)
		var n int64
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM cl_txc").Scan(&n); err != nil {
			t.Fatal(err)
		}
		t.Logf("commit timeout %v: Commit %v, CopyFrom %v, rows %d", commitTimeout, cerr, copyErr, n)
		switch {
		case cerr != nil && n != 0:
			t.Errorf("Commit failed (%v) but %d rows committed", cerr, n)
		case cerr == nil && copyErr == nil && n != 31:
			t.Errorf("Commit and CopyFrom succeeded but %d rows (want 31)", n)
		case cerr == nil && copyErr != nil && n != 0:
			t.Errorf("CopyFrom failed (%v), Commit succeeded, %d rows", copyErr, n)
		}
		// Conn usable afterwards.
		qctx, qcancel := context.WithTimeout(ctx, 5*time.Second)
		var v int
		if err := c.QueryRow(qctx, "SELECT 5").Scan(&v); err != nil || v != 5 || c.TxStatus() != 'I' {
			t.Errorf("after: %d %v %c", v, err, c.TxStatus())
		}
		qcancel()
	}
}

// TestCopyTx_CopyFailsThenCommit: in a transaction, a CopyFrom
// whose source fails mid-way (CopyFail) aborts the transaction; Commit
// must then report failure (the server answers ROLLBACK) and nothing of
// it persists. The same for a COPY whose ctx ends, and for a wrong
// column count mid-way.
func TestCopyTx_CopyFailsThenCommit(t *testing.T) {
	ctx := testCtx(t)
	admin := connect(t, srv.DSN())
	if _, err := admin.Exec(ctx, "DROP TABLE IF EXISTS cl_txf; CREATE TABLE cl_txf(a int4 PRIMARY KEY, b text)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec(context.Background(), "DROP TABLE IF EXISTS cl_txf") })
	c := connect(t, srv.DSN())
	kinds := map[string]func(i int) ([]any, error){
		"source error": func(i int) ([]any, error) {
			if i == 40000 {
				return nil, errors.New("boom")
			}
			return []any{i, "f"}, nil
		},
		"wrong width": func(i int) ([]any, error) {
			if i == 40000 {
				return []any{i}, nil
			}
			return []any{i, "f"}, nil
		},
		"bad value": func(i int) ([]any, error) {
			if i == 40000 {
				return []any{"not a number", "f"}, nil
			}
			return []any{i, "f"}, nil
		},
		"bad utf8": func(i int) ([]any, error) {
			if i == 40000 {
				return []any{i, "\xff\xfe"}, nil
			}
			return []any{i, "f"}, nil
		},
		"nul in text": func(i int) ([]any, error) {
			if i == 40000 {
				return []any{i, "a\x00b"}, nil
			}
			return []any{i, "f"}, nil
		},
	}
	for name, src := range kinds {
		admin.Exec(ctx, "TRUNCATE cl_txf")
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO cl_txf VALUES (-1, 'pre')"); err != nil {
			t.Fatal(err)
		}
		i := 0
		_, cerr := tx.CopyFrom(ctx, Identifier{"cl_txf"}, []string{"a", "b"}, CopyFromFunc(func() ([]any, error) {
			i++
			if i > 80000 {
				return nil, nil
			}
			return src(i)
		}))
		if cerr == nil {
			t.Errorf("%s: CopyFrom succeeded", name)
		}
		err = tx.Commit(ctx)
		var n int64
		admin.QueryRow(ctx, "SELECT count(*) FROM cl_txf").Scan(&n)
		t.Logf("%s: CopyFrom %v; Commit %v; rows %d", name, cerr, err, n)
		if cerr != nil && err == nil {
			t.Errorf("%s: Commit succeeded after the transaction's COPY failed (rows %d)", name, n)
		}
		if cerr != nil && n != 0 {
			t.Errorf("%s: %d rows persisted", name, n)
		}
		var v int
		if err := c.QueryRow(ctx, "SELECT 9").Scan(&v); err != nil || v != 9 {
			t.Fatalf("%s: after: %v", name, err)
		}
	}
	// Outside a transaction, the same kinds commit nothing.
	for name, src := range kinds {
		admin.Exec(ctx, "TRUNCATE cl_txf")
		i := 0
		_, cerr := c.CopyFrom(ctx, Identifier{"cl_txf"}, []string{"a", "b"}, CopyFromFunc(func() ([]any, error) {
			i++
			if i > 80000 {
				return nil, nil
			}
			return src(i)
		}))
		var n int64
		admin.QueryRow(ctx, "SELECT count(*) FROM cl_txf").Scan(&n)
		if (cerr == nil) != (n == 80000) || cerr != nil && n != 0 {
			t.Errorf("%s (no tx): CopyFrom %v, rows %d", name, cerr, n)
		}
	}
}
