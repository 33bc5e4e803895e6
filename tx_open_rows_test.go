package pgline

// Commit and Rollback with Rows of the transaction still open close those
// Rows first, as database/sql does, instead of waiting for them: an early
// return from a rows loop followed by the deferred Rollback is the common
// shape, and waiting there blocked the goroutine until its ctx ended (for
// ever without a deadline) and kept a Pool's connection.
//
// pgx fails Commit and Rollback at once with "conn busy" while a Rows of
// the connection is open; pgline's database/sql layer (stdlib) closes the
// Rows as database/sql does.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// manyRowsSQL returns more rows than fit in the read buffer, so that the
// reply is not over when the first row is read.
const manyRowsSQL = "SELECT g, repeat('x', 100) FROM generate_series(1, 50000) g"

// endWithin runs end (a Commit or Rollback) with a 10 s ctx and returns
// its error, failing the test when it has not returned within limit.
func endWithin(t *testing.T, limit time.Duration, end func(ctx context.Context) error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- end(ctx) }()
	select {
	case err := <-done:
		if took := time.Since(start); took > limit {
			t.Errorf("returned after %v, want under %v", took, limit)
		}
		return err
	case <-time.After(limit):
		t.Errorf("still waiting after %v for Rows of the transaction that nobody reads", limit)
		cancel()
		return <-done
	}
}

// readOneAndLeave runs manyRowsSQL in tx and returns its Rows after one
// row, as a loop that returns early leaves them.
func readOneAndLeave(t *testing.T, ctx context.Context, tx *Tx) *Rows {
	t.Helper()
	rows, err := tx.Query(ctx, manyRowsSQL)
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatalf("no row: %v", rows.Err())
	}
	var g int
	var s string
	if err := rows.Scan(&g, &s); err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestTxRollbackClosesOpenRows(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	for range 3 {
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rows := readOneAndLeave(t, ctx, tx)
		if err := endWithin(t, time.Second, tx.Rollback); err != nil {
			t.Fatalf("Rollback: %v", err)
		}
		if rows.Next() {
			t.Fatal("Next gave a row after Rollback closed the rows")
		}
		if !errors.Is(rows.Err(), ErrTxClosed) {
			t.Errorf("Err of the rows closed unread: %v, want ErrTxClosed", rows.Err())
		}
		rows.Close()
		var v int
		if err := c.QueryRow(ctx, "SELECT 7").Scan(&v); err != nil || v != 7 {
			t.Fatalf("next query on the Conn: %v, %d", err, v)
		}
		if st := c.TxStatus(); st != 'I' {
			t.Fatalf("TxStatus %q after Rollback, want 'I'", st)
		}
	}
}

func TestPoolTxRollbackReleasesConnWithOpenRows(t *testing.T) {
	ctx := testCtx(t)
	p, err := NewPool(ctx, srv.DSN("pool_max_conns=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// The common shape: a loop that returns early, the Rows unclosed,
	// the Rollback deferred.
	work := func() (err error) {
		tx, err := p.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() {
			if rerr := endWithin(t, time.Second, tx.Rollback); rerr != nil {
				err = rerr
			}
		}()
		rows, err := tx.Query(ctx, manyRowsSQL)
		if err != nil {
			return err
		}
		for rows.Next() {
			return nil // found what it looked for
		}
		return rows.Err()
	}
	for i := range 3 {
		if err := work(); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if st := p.Stat(); st.AcquiredConns != 0 || st.TotalConns != 1 {
			t.Fatalf("round %d: after Rollback %d connections held of %d, want 0 of 1", i, st.AcquiredConns, st.TotalConns)
		}
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		pc, err := p.Acquire(actx)
		cancel()
		if err != nil {
			t.Fatalf("round %d: Acquire on the Pool of one after Rollback: %v", i, err)
		}
		pc.Release()
	}
}

func TestTxCommitWithOpenRows(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS tx_open_rows; CREATE TABLE tx_open_rows (x int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Exec(context.Background(), "DROP TABLE IF EXISTS tx_open_rows") })
	cases := []struct {
		name string
		open func(ctx context.Context, tx *Tx) *Rows
	}{
		{"unread", func(ctx context.Context, tx *Tx) *Rows { return readOneAndLeave(t, ctx, tx) }},
		{"not-started", func(ctx context.Context, tx *Tx) *Rows {
			rows, err := tx.Query(ctx, manyRowsSQL)
			if err != nil {
				t.Fatal(err)
			}
			return rows
		}},
		{"reply-read", func(ctx context.Context, tx *Tx) *Rows {
			// No row: Query read the reply to its end, and the Rows
			// hold the connection until closed.
			rows, err := tx.Query(ctx, "SELECT 1 WHERE false")
			if err != nil {
				t.Fatal(err)
			}
			return rows
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tx, err := c.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO tx_open_rows VALUES ($1)", i); err != nil {
				t.Fatal(err)
			}
			rows := tc.open(ctx, tx)
			err = endWithin(t, time.Second, tx.Commit)
			if err != nil && !errors.Is(err, ErrTxRolledBack) {
				t.Errorf("Commit: %v, want nil or ErrTxRolledBack", err)
			}
			t.Logf("Commit: %v", err)
			rows.Close()
			var n int64
			if err := c.QueryRow(ctx, "SELECT count(*) FROM tx_open_rows WHERE x = $1", i).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if committed := n == 1; committed != (err == nil) {
				t.Errorf("Commit returned %v, and the row is there: %v", err, committed)
			}
			if err := tx.Rollback(ctx); !errors.Is(err, ErrTxClosed) {
				t.Errorf("Rollback after Commit: %v, want ErrTxClosed", err)
			}
		})
	}
}

// TestBeginFuncWithOpenRows: a BeginFunc whose fn leaves Rows open ends
// promptly, and on a Pool gives its connection back.
func TestBeginFuncWithOpenRows(t *testing.T) {
	ctx := testCtx(t)
	p, err := NewPool(ctx, srv.DSN("pool_max_conns=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, fail := range []bool{false, true} {
		boom := errors.New("boom")
		err := endWithin(t, time.Second, func(ctx context.Context) error {
			return BeginFunc(ctx, p, func(tx *Tx) error {
				rows, err := tx.Query(ctx, manyRowsSQL)
				if err != nil {
					return err
				}
				rows.Next()
				if fail {
					return boom
				}
				return nil
			})
		})
		if fail && !errors.Is(err, boom) || !fail && err != nil && !errors.Is(err, ErrTxRolledBack) {
			t.Errorf("fail=%v: BeginFunc: %v", fail, err)
		}
		if st := p.Stat(); st.AcquiredConns != 0 {
			t.Fatalf("fail=%v: %d connections still held", fail, st.AcquiredConns)
		}
	}
}

// TestNestedTxRollbackClosesItsRows: a nested transaction's Rollback
// closes the Rows of its own queries, and the outer transaction goes on.
// Their statement was given up, which dooms the outer transaction as any
// statement given up does (see Tx.doom): its Commit may roll back, and
// says so.
func TestNestedTxRollbackClosesItsRows(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE nested_open_rows (x int)"); err != nil {
		t.Fatal(err)
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "INSERT INTO nested_open_rows VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows := readOneAndLeave(t, ctx, sp)
	if err := endWithin(t, time.Second, sp.Rollback); err != nil {
		t.Fatalf("nested Rollback: %v", err)
	}
	rows.Close()
	var v int
	if err := tx.QueryRow(ctx, "SELECT 3").Scan(&v); err != nil || v != 3 {
		t.Fatalf("outer transaction after the nested Rollback: %v, %d", err, v)
	}
	err = endWithin(t, time.Second, tx.Commit)
	if err != nil && !errors.Is(err, ErrTxRolledBack) {
		t.Fatalf("outer Commit: %v, want nil or ErrTxRolledBack", err)
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM nested_open_rows").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if committed := n == 1; committed != (err == nil) {
		t.Errorf("outer Commit returned %v, and its row is there: %v", err, committed)
	}
}

// TestTxEndWhileRowsReadConcurrently: Commit or Rollback while another
// goroutine reads Rows of the transaction never races with that reader
// (run with -race) and returns promptly: it closes the Rows between two
// of the reader's calls (one under way closes them as it returns), and
// the reader's next call finds them closed (ErrTxClosed), or they were
// read to their end first.
func TestTxEndWhileRowsReadConcurrently(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	outcomes := map[string]int{}
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; i < 200 && time.Now().Before(deadline); i++ {
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := tx.Query(ctx, "SELECT g FROM generate_series(1, 2000) g")
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			var g int
			for rows.Next() {
				if err := rows.Scan(&g); err != nil {
					// The transaction's end closed the rows
					// between Next and Scan.
					if !errors.Is(err, ErrTxClosed) {
						t.Errorf("Scan: %v", err)
					}
					break
				}
				_ = rows.FieldDescriptions()
				_ = rows.RawValues()
			}
			if err := rows.Err(); err != nil && !errors.Is(err, ErrTxClosed) {
				t.Errorf("Err: %v", err)
			}
			rows.Close()
		}()
		time.Sleep(time.Duration(i%5) * 100 * time.Microsecond)
		end, name := tx.Commit, "commit"
		if i%2 == 1 {
			end, name = tx.Rollback, "rollback"
		}
		err = endWithin(t, 2*time.Second, end)
		switch {
		case err == nil:
			outcomes[name+" ok"]++
		case errors.Is(err, ErrTxRolledBack):
			outcomes[name+" rolled back"]++
		default:
			t.Fatalf("%s: %v", name, err)
		}
		wg.Wait()
		if st := c.TxStatus(); st != 'I' {
			t.Fatalf("TxStatus %q after the transaction ended", st)
		}
	}
	t.Logf("outcomes: %v", outcomes)
}
