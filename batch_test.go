package pgline

import (
	"errors"
	"strconv"
	"testing"
)

func TestBatchIndependent(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE bt(x int)"); err != nil {
		t.Fatal(err)
	}
	b := &Batch{}
	b.Queue("INSERT INTO bt VALUES ($1)", 1)
	b.Queue("SELECT 1 / $1::int", 0) // fails alone
	b.Queue("INSERT INTO bt VALUES ($1)", 2)
	b.Queue("SELECT x FROM bt ORDER BY x")
	b.Queue("SELECT $1::text", "last")
	br := c.SendBatch(ctx, b)
	if tag, err := br.Exec(); err != nil || tag.String() != "INSERT 0 1" {
		t.Fatalf("1: %q %v", tag, err)
	}
	var pgErr *PgError
	if _, err := br.Exec(); !errors.As(err, &pgErr) || pgErr.Code != "22012" {
		t.Fatalf("2: %v", err)
	}
	if _, err := br.Exec(); err != nil {
		t.Fatalf("3: %v", err)
	}
	rows, err := br.Query()
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for rows.Next() {
		var x int
		rows.Scan(&x)
		got = append(got, x)
	}
	if rows.Err() != nil || len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("4: %v %v", got, rows.Err())
	}
	var s string
	if err := br.QueryRow().Scan(&s); err != nil || s != "last" {
		t.Fatalf("5: %q %v", s, err)
	}
	if err := br.Close(); !errors.As(err, &pgErr) {
		t.Fatalf("Close: %v, want the batch's error", err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestBatchAllOrNothing(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE ba(x int)"); err != nil {
		t.Fatal(err)
	}
	b := &Batch{AllOrNothing: true}
	b.Queue("INSERT INTO ba VALUES ($1)", 1)
	b.Queue("INSERT INTO ba VALUES ($1 / 0)", 2)
	b.Queue("INSERT INTO ba VALUES ($1)", 3)
	br := c.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		t.Fatal(err)
	}
	if _, err := br.Exec(); err == nil {
		t.Fatal("no error from the failing statement")
	}
	if _, err := br.Exec(); !errors.Is(err, ErrBatchAborted) {
		t.Fatalf("after the failure: %v", err)
	}
	br.Close()
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*)::int FROM ba").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows after a failed all-or-nothing batch, %v", n, err)
	}

	// Unread results are discarded by Close; a good batch commits.
	b = &Batch{AllOrNothing: true}
	for i := 0; i < 10; i++ {
		b.Queue("INSERT INTO ba VALUES ($1)", i)
	}
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT count(*)::int FROM ba").Scan(&n); err != nil || n != 10 {
		t.Fatalf("%d rows, %v", n, err)
	}
}

func TestBatchSameNewStatementTwice(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	b := &Batch{}
	for i := 0; i < 5; i++ {
		b.Queue("SELECT $1::int * 3 AS batch_twice", i)
	}
	br := c.SendBatch(ctx, b)
	for i := 0; i < 5; i++ {
		var v int
		if err := br.QueryRow().Scan(&v); err != nil || v != 3*i {
			t.Fatalf("%d: %d %v", i, v, err)
		}
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBatchIndependentPrepareError: in an independent batch, a statement
// the server cannot prepare fails alone; it used to fail every statement
// of the batch, and nothing ran. In an all-or-nothing batch it fails the
// batch before anything is sent.
func TestBatchIndependentPrepareError(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE bprep (x int)"); err != nil {
		t.Fatal(err)
	}
	b := &Batch{}
	b.Queue("INSERT INTO bprep VALUES (1)")
	b.Queue("SELEC 1")
	b.Queue("INSERT INTO bprep VALUES (3)")
	br := c.SendBatch(ctx, b)
	for i := range 3 {
		_, err := br.Exec()
		if (i == 1) != (pgCode(err) == "42601") || (i != 1 && err != nil) {
			t.Errorf("statement %d: %v", i, err)
		}
	}
	if err := br.Close(); pgCode(err) != "42601" {
		t.Errorf("Close: %v", err)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM bprep").Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d rows, %v; want the two good inserts", n, err)
	}

	// Every statement failing: no request at all.
	b = &Batch{}
	b.Queue("SELEC 1")
	b.Queue("SELEC 2")
	br = c.SendBatch(ctx, b)
	for i := range 2 {
		if _, err := br.Exec(); pgCode(err) != "42601" {
			t.Errorf("statement %d: %v", i, err)
		}
	}
	if err := br.Close(); pgCode(err) != "42601" {
		t.Errorf("Close: %v", err)
	}

	b = &Batch{AllOrNothing: true}
	b.Queue("INSERT INTO bprep VALUES (4)")
	b.Queue("SELEC 1")
	br = c.SendBatch(ctx, b)
	if _, err := br.Exec(); pgCode(err) != "42601" {
		t.Errorf("all-or-nothing: %v", err)
	}
	br.Close()
	if err := c.QueryRow(ctx, "SELECT count(*) FROM bprep").Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d rows, %v after the all-or-nothing batch; want 2", n, err)
	}
}

// TestBatchStaleStatementRecovers: a batch statement whose cached
// statement went stale (ALTER TABLE, DISCARD ALL) fails once; the next
// batch prepares it again. It used to fail for good.
func TestBatchStaleStatementRecovers(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS bstale; CREATE TABLE bstale (a int); INSERT INTO bstale VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	run := func() error {
		b := &Batch{}
		b.Queue("SELECT * FROM bstale")
		br := c.SendBatch(ctx, b)
		_, err := br.Exec()
		br.Close()
		return err
	}
	if err := run(); err != nil {
		t.Fatal(err)
	}
	for _, change := range []string{"ALTER TABLE bstale ADD COLUMN b int", "DISCARD ALL"} {
		if _, err := c.Exec(ctx, change); err != nil {
			t.Fatal(err)
		}
		run() // may fail once
		if err := run(); err != nil {
			t.Fatalf("after %s: %v", change, err)
		}
	}
}

// TestBatchLargerThanCache: a batch of more new statements than the
// statement cache holds used to evict (and close) its own first
// statements before binding them (26000).
func TestBatchLargerThanCache(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN("statement_cache_capacity=2"))
	for round := range 2 {
		b := &Batch{}
		for i := range 5 {
			b.Queue("SELECT " + strconv.Itoa(i+1))
		}
		br := c.SendBatch(ctx, b)
		for i := range 5 {
			var v int
			if err := br.QueryRow().Scan(&v); err != nil || v != i+1 {
				t.Fatalf("round %d, statement %d: %d, %v", round, i, v, err)
			}
		}
		if err := br.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var v int
	if err := c.QueryRow(ctx, "SELECT 42").Scan(&v); err != nil || v != 42 {
		t.Fatalf("after: %d, %v", v, err)
	}
}
