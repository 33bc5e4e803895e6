package pgline

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestPgBouncerTransactionPooling runs pgline through PgBouncer in
// transaction pooling mode with statement_cache_mode=describe: pipelined
// statements from many goroutines, a transaction, a batch, a pool, and a
// table altered under a cached description.
func TestPgBouncerTransactionPooling(t *testing.T) {
	b := startTestPgBouncer(t, "transaction")
	ctx := testCtx(t)
	c := connect(t, b.DSN("statement_cache_mode=describe"))

	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for w := 0; w < 20; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				var v int
				var s string
				if i%7 == 3 {
					// A failure inside a shared Sync group: the runs after
					// it are sent again.
					var pgErr *PgError
					if err := c.QueryRow(ctx, "SELECT 1 / ($1::int - $1::int)", i).Scan(&v); !errors.As(err, &pgErr) || pgErr.Code != "22012" {
						errs <- fmt.Errorf("worker %d: want 22012, got %v", w, err)
						return
					}
					continue
				}
				if err := c.QueryRow(ctx, "SELECT $1::int, $2::text", w*100+i, "x").Scan(&v, &s); err != nil || v != w*100+i {
					errs <- fmt.Errorf("worker %d: %d %v", w, v, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if shared, resent := syncCounts(c); shared == 0 || resent == 0 {
		t.Errorf("shared %d, resent %d: Sync sharing was not exercised through PgBouncer", shared, resent)
	}

	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS bouncer_t; CREATE TABLE bouncer_t(a int)"); err != nil {
		t.Fatal(err)
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO bouncer_t VALUES ($1)", 1); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	batch := &Batch{}
	batch.Queue("INSERT INTO bouncer_t VALUES ($1)", 2)
	batch.Queue("SELECT 1/0")
	batch.Queue("INSERT INTO bouncer_t VALUES ($1)", 3)
	var pgErr *PgError
	if err := c.SendBatch(ctx, batch).Close(); !errors.As(err, &pgErr) {
		t.Fatalf("batch: %v", err)
	}
	count := func() int {
		var n, cols int
		rows, err := c.Query(ctx, "SELECT * FROM bouncer_t")
		if err != nil {
			t.Fatal(err)
		}
		cols = len(rows.FieldDescriptions())
		for rows.Next() {
			n++
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
		return n*10 + cols
	}
	if got := count(); got != 31 {
		t.Fatalf("rows*10+columns = %d, want 31", got)
	}
	if _, err := c.Exec(ctx, "ALTER TABLE bouncer_t ADD COLUMN b text"); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != 32 {
		t.Fatalf("after ALTER TABLE: rows*10+columns = %d, want 32", got)
	}

	p, err := NewPool(ctx, b.DSN("statement_cache_mode=describe", "pool_max_conns=4"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var n int
	if err := p.QueryRow(ctx, "SELECT count(*)::int FROM bouncer_t WHERE a > $1", 0).Scan(&n); err != nil || n != 3 {
		t.Fatalf("pool through pgbouncer: %d %v", n, err)
	}
}

// syncCounts returns how many runs gave their Sync away and how many were
// sent again after their Sync group failed.
func syncCounts(c *Conn) (shared, resent uint64) {
	c.s.Wmu.Lock()
	defer c.s.Wmu.Unlock()
	return c.s.Shared, c.s.Resent
}
