package pgline

// What Commit reports: an error for a COMMIT the server answered with
// ROLLBACK or an error (a deferred constraint, a serialization failure, a
// failed statement earlier in the block, one given up by its ctx), never
// SafeToRetry for work that may have committed, and nil only with every
// statement of the transaction committed; a Commit whose ctx ends while
// COMMIT runs leaves the next caller outside the transaction.

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// TestCommitDeferredConstraintFails: a deferred unique constraint that
// fails at COMMIT (simple and extended INSERTs, and BeginFunc): Commit
// returns the 23505, not SafeToRetry, nothing persists, and the Conn is
// usable outside any transaction.
func TestCommitDeferredConstraintFails(t *testing.T) {
	ctx := testCtx(t)
	c, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := testTable(t, ctx, c, "(id int, CONSTRAINT u UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)")
	for _, args := range [][]any{nil, {1}} {
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if args == nil {
			_, err = tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES (1); INSERT INTO "+tbl+" VALUES (1)")
		} else {
			_, err = tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1), ($1)", args...)
		}
		if err != nil {
			t.Fatalf("insert: %v", err)
		}
		err = tx.Commit(ctx)
		var pgErr *PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
			t.Fatalf("Commit = %v, want 23505", err)
		}
		if session.SafeToRetry(err) {
			t.Fatalf("Commit error SafeToRetry")
		}
		if n := rowCount(t, connect(t, srv.DSN()), tbl); n != 0 {
			t.Fatalf("%d rows after failed commit", n)
		}
		if c.TxStatus() != 'I' {
			t.Fatalf("TxStatus %c", c.TxStatus())
		}
		// the connection is usable and outside any transaction
		if _, err := c.Exec(ctx, "INSERT INTO "+tbl+" VALUES (7)"); err != nil {
			t.Fatal(err)
		}
		if n := rowCount(t, connect(t, srv.DSN()), tbl); n != 1 {
			t.Fatalf("%d rows after autocommit insert", n)
		}
		c.Exec(ctx, "DELETE FROM "+tbl)
	}
	// BeginFunc
	err = BeginFunc(ctx, c, func(tx *Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES (2), (2)")
		return err
	})
	if err == nil {
		t.Fatal("BeginFunc succeeded with a deferred violation")
	}
	if n := rowCount(t, connect(t, srv.DSN()), tbl); n != 0 {
		t.Fatalf("%d rows after failed BeginFunc", n)
	}
}

// TestCommitChainedDeferredFailure: statements of many goroutines on one
// Conn share Syncs (BEGIN/COMMIT replace a Sync). A deferred constraint
// fails at that COMMIT: the statement it belongs to must get the error,
// and the statements of the group must each have the right outcome.
func TestCommitChainedDeferredFailure(t *testing.T) {
	ctx := testCtx(t)
	c, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := testTable(t, ctx, c, "(id int, CONSTRAINT u UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)")
	var next atomic.Int64
	type res struct {
		id  int64
		bad bool
		err error
	}
	out := make(chan res, 100000)
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 150; i++ {
				id := next.Add(1)
				bad := id%3 == 0
				q := "INSERT INTO " + tbl + " VALUES ($1) RETURNING id"
				if bad {
					q = "INSERT INTO " + tbl + " VALUES ($1), ($1) RETURNING id"
				}
				var err error
				switch (id / 3) % 3 {
				case 0:
					_, err = c.Exec(ctx, q, id)
				case 1:
					var x int64
					err = c.QueryRow(ctx, q, id).Scan(&x)
				case 2:
					var r *Rows
					r, err = c.Query(ctx, q, id)
					if err == nil {
						for r.Next() {
						}
						r.Close()
						err = r.Err()
					}
				}
				out <- res{id, bad, err}
			}
		}(g)
	}
	wg.Wait()
	close(out)
	counts := map[int64]int{}
	r, err := c.Query(ctx, "SELECT id, count(*)::int FROM "+tbl+" GROUP BY id")
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var id int64
		var n int
		r.Scan(&id, &n)
		counts[id] = n
	}
	var fails int
	for x := range out {
		got := counts[x.id]
		switch {
		case x.bad && x.err == nil:
			t.Errorf("id %d: deferred violation reported success (rows %d)", x.id, got)
			fails++
		case x.bad && got != 0:
			t.Errorf("id %d: violating insert left %d rows", x.id, got)
			fails++
		case !x.bad && x.err == nil && got != 1:
			t.Errorf("id %d: success but %d rows", x.id, got)
			fails++
		case !x.bad && x.err != nil:
			t.Errorf("id %d: good insert failed: %v (rows %d)", x.id, x.err, got)
			fails++
		case x.bad:
			var pe *PgError
			if !errors.As(x.err, &pe) || pe.Code != "23505" {
				t.Errorf("id %d: error %v, want 23505", x.id, x.err)
				fails++
			}
		}
		if fails > 20 {
			break
		}
	}
	t.Logf("shared syncs %d, resent %d", c.s.Shared, c.s.Resent)
}

// TestCommitSerializationFailure: two serializable transactions whose
// writes conflict: the first Commit succeeds, the second returns 40001,
// and only the first's update exists.
func TestCommitSerializationFailure(t *testing.T) {
	ctx := testCtx(t)
	c1, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	tbl := testTable(t, ctx, c1, "(id int, v int)")
	c1.Exec(ctx, "INSERT INTO "+tbl+" VALUES (1, 0), (2, 0)")
	opts := TxOptions{IsoLevel: "serializable"}
	t1, err := c1.BeginTx(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t2, err := c2.BeginTx(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	var s int
	if err := t1.QueryRow(ctx, "SELECT sum(v)::int FROM "+tbl).Scan(&s); err != nil {
		t.Fatal(err)
	}
	if err := t2.QueryRow(ctx, "SELECT sum(v)::int FROM "+tbl).Scan(&s); err != nil {
		t.Fatal(err)
	}
	if _, err := t1.Exec(ctx, "UPDATE "+tbl+" SET v = v + 1 WHERE id = $1", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := t2.Exec(ctx, "UPDATE "+tbl+" SET v = v + 10 WHERE id = $1", 2); err != nil {
		t.Fatal(err)
	}
	e1 := t1.Commit(ctx)
	e2 := t2.Commit(ctx)
	if e1 != nil {
		t.Fatalf("first commit: %v", e1)
	}
	var pgErr *PgError
	if !errors.As(e2, &pgErr) || pgErr.Code != "40001" {
		t.Fatalf("second commit = %v, want 40001", e2)
	}
	var v1, v2 int
	if err := c1.QueryRow(ctx, "SELECT (SELECT v FROM "+tbl+" WHERE id=1), (SELECT v FROM "+tbl+" WHERE id=2)").Scan(&v1, &v2); err != nil {
		t.Fatal(err)
	}
	if v1 != 1 || v2 != 0 {
		t.Fatalf("v1=%d v2=%d", v1, v2)
	}
}

// TestCommitAfterFailureRollsBack: COMMIT in a failed transaction: the
// server answers ROLLBACK. Tried with failures of every kind of statement,
// and with the failing statement run concurrently with the commit from
// another goroutine.
func TestCommitAfterFailureRollsBack(t *testing.T) {
	ctx := testCtx(t)
	c, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := testTable(t, ctx, c, "(id int)")
	fails := []func(tx *Tx) error{
		func(tx *Tx) error { _, err := tx.Exec(ctx, "SELECT 1/0"); return err },
		func(tx *Tx) error { _, err := tx.Exec(ctx, "SELECT 1/$1::int", 0); return err },
		func(tx *Tx) error { var x int; return tx.QueryRow(ctx, "SELECT 1/$1::int", 0).Scan(&x) },
		func(tx *Tx) error { _, err := tx.Exec(ctx, "SELEC 1"); return err },
		func(tx *Tx) error { _, err := tx.Exec(ctx, "SELEC $1", 1); return err },
		func(tx *Tx) error {
			r, err := tx.Query(ctx, "SELECT 1/(3-g) FROM generate_series(1,5) g")
			if err != nil {
				return err
			}
			for r.Next() {
			}
			r.Close()
			return r.Err()
		},
		func(tx *Tx) error {
			b := &Batch{}
			b.Queue("SELECT 1")
			b.Queue("SELECT 1/0")
			return tx.SendBatch(ctx, b).Close()
		},
	}
	for i, f := range fails {
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", i); err != nil {
			t.Fatal(err)
		}
		if err := f(tx); err == nil {
			t.Fatalf("case %d: no error", i)
		}
		err = tx.Commit(ctx)
		if !errors.Is(err, ErrTxRolledBack) {
			t.Errorf("case %d: Commit = %v, want ErrTxRolledBack", i, err)
		}
		if n := rowCount(t, connect(t, srv.DSN()), tbl); n != 0 {
			t.Fatalf("case %d: %d rows", i, n)
		}
	}
}

// TestCommitAfterCtxEndsMidTx: a Tx whose statement's ctx ends mid-way:
// Commit must not commit, and the next caller of the Conn must not be in
// the dead transaction.
func TestCommitAfterCtxEndsMidTx(t *testing.T) {
	ctx := testCtx(t)
	c, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := testTable(t, ctx, c, "(id int)")
	for round := 0; round < 6; round++ {
		c.Exec(ctx, "DELETE FROM "+tbl)
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		sctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
		var sqlText string
		var args []any
		switch round % 3 {
		case 0:
			sqlText = "INSERT INTO " + tbl + " SELECT 2 FROM pg_sleep(0.2)"
		case 1:
			sqlText, args = "INSERT INTO "+tbl+" SELECT $1 FROM pg_sleep(0.2)", []any{2}
		case 2:
			sqlText = "INSERT INTO " + tbl + " SELECT 2 FROM pg_sleep(0.01)" // may well finish
		}
		_, err = tx.Exec(sctx, sqlText, args...)
		cancel()
		if err == nil {
			tx.Rollback(ctx)
			continue
		}
		if session.SafeToRetry(err) {
			t.Errorf("round %d: abandoned statement error SafeToRetry: %v", round, err)
		}
		// Another goroutine's statement, queued while the tx is open.
		outDone := make(chan error, 1)
		go func() {
			_, err := c.Exec(ctx, "INSERT INTO "+tbl+" VALUES (100)")
			outDone <- err
		}()
		time.Sleep(10 * time.Millisecond)
		err = tx.Commit(ctx)
		if err == nil {
			t.Errorf("round %d: Commit succeeded after an abandoned statement", round)
		}
		if err := <-outDone; err != nil {
			t.Fatal(err)
		}
		var n1, n2, n100 int
		if err := c.QueryRow(ctx, "SELECT count(*) FILTER (WHERE id=1)::int, count(*) FILTER (WHERE id=2)::int, count(*) FILTER (WHERE id=100)::int FROM "+tbl).Scan(&n1, &n2, &n100); err != nil {
			t.Fatal(err)
		}
		if n1 != 0 || n2 != 0 || n100 != 1 {
			t.Errorf("round %d: rows 1:%d 2:%d 100:%d", round, n1, n2, n100)
		}
		if n := rowCount(t, connect(t, srv.DSN()), tbl); n != int64(n1+n2+n100) {
			t.Errorf("round %d: other session sees %d rows (uncommitted state?)", round, n)
		}
	}
}

// TestCommitAfterGivenUpStatement: a statement of a Tx is in flight when
// another goroutine calls Commit; then the statement's ctx ends. Its
// caller is told it failed (ctx's error); Commit must not then report
// success with the statement's effect committed (the transaction is
// doomed, see Tx.doom).
func TestCommitAfterGivenUpStatement(t *testing.T) {
	ctx := testCtx(t)
	c, err := Connect(ctx, srv.DSN()) // default cancel_grace (100ms)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := testTable(t, ctx, c, "(id int)")
	var bad int
	for round := 0; round < 5; round++ {
		c.Exec(ctx, "DELETE FROM "+tbl)
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sctx, cancel := context.WithTimeout(ctx, 40*time.Millisecond)
		done := make(chan error, 1)
		go func() {
			_, err := tx.Exec(sctx, "INSERT INTO "+tbl+" SELECT 1 FROM pg_sleep(0.09)")
			done <- err
		}()
		time.Sleep(20 * time.Millisecond)
		cerr := tx.Commit(ctx)
		serr := <-done
		cancel()
		var n int
		c.QueryRow(ctx, "SELECT count(*)::int FROM "+tbl).Scan(&n)
		t.Logf("round %d: stmt err %v, Commit %v, rows %d", round, serr, cerr, n)
		if serr != nil && cerr == nil && n == 1 {
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d/5: the statement's caller got an error, Commit returned nil, and the statement's effect committed", bad)
	}
}

// TestCommitCtxEnds: a Commit whose ctx ends while COMMIT runs (a slow
// deferred trigger), or before it is sent.
func TestCommitCtxEnds(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	ctx := testCtx(t)
	c, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := testTable(t, ctx, c, "(id int)")
	fn := tbl + "_slow"
	if _, err := c.Exec(ctx, `CREATE OR REPLACE FUNCTION `+fn+`() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.3); RETURN NULL; END $$;
		CREATE CONSTRAINT TRIGGER slow AFTER INSERT ON `+tbl+` DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION `+fn+`()`); err != nil {
		t.Fatal(err)
	}
	defer c.Exec(context.Background(), "DROP FUNCTION IF EXISTS "+fn+" CASCADE")
	for round := 0; round < 4; round++ {
		c.Exec(ctx, "DELETE FROM "+tbl)
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", 1); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(ctx, time.Duration(round*60)*time.Millisecond)
		if round == 0 {
			cancel()
		}
		cerr := tx.Commit(cctx)
		cancel()
		// the next caller
		var inTx bool
		qerr := c.QueryRow(ctx, "SELECT txid_current_if_assigned() IS NOT NULL").Scan(&inTx)
		if qerr != nil || inTx {
			t.Errorf("round %d: next statement inside the transaction (%v, %v)", round, inTx, qerr)
		}
		time.Sleep(400 * time.Millisecond)
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*)::int FROM "+tbl).Scan(&n); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: Commit %v (SafeToRetry %v), rows %d", round, cerr, session.SafeToRetry(cerr), n)
		switch {
		case cerr == nil && n != 1:
			t.Errorf("round %d: Commit nil, %d rows", round, n)
		case cerr != nil && session.SafeToRetry(cerr) && n != 0:
			t.Errorf("round %d: Commit SafeToRetry but committed", round)
		case errors.Is(cerr, ErrTxRolledBack) && n != 0:
			t.Errorf("round %d: ErrTxRolledBack but committed", round)
		}
	}
}
