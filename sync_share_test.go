package pgline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pgline/pgline/internal/session"
)

// syncCounts returns how many runs gave their Sync away and how many were
// sent again after their Sync group failed.
func syncCounts(c *Conn) (shared, resent uint64) {
	c.s.Wmu.Lock()
	defer c.s.Wmu.Unlock()
	return c.s.Shared, c.s.Resent
}

// connectCountingWarnings connects with an OnNotice that counts the
// warnings of severity WARNING (what a misplaced BEGIN or COMMIT raises).
func connectCountingWarnings(t *testing.T, dsn string) (*Conn, *atomic.Int64) {
	t.Helper()
	cfg, err := ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	cfg.OnNotice = func(nt *Notice) {
		if nt.Severity == "WARNING" {
			n.Add(1)
			t.Logf("warning: %s", nt.Message)
		}
	}
	c, err := ConnectConfig(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, &n
}

// TestSharedSyncIsolation: statements pipelined from many goroutines share
// Syncs, yet each commits on its own. Inserts that violate the primary key
// fail alone; every other insert is committed, including those queued in
// the same Sync group before and after a failure; no warning is raised (a
// misplaced BEGIN or COMMIT would warn).
func TestSharedSyncIsolation(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) { testSharedSyncIsolation(t, mode) })
	}
}

func testSharedSyncIsolation(t *testing.T, mode string) {
	ctx := testCtx(t)
	c, warnings := connectCountingWarnings(t, srv.DSN("statement_cache_mode="+mode))
	if _, err := c.Exec(ctx, `DROP TABLE IF EXISTS share_iso; CREATE TABLE share_iso (id int PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	const workers, each = 50, 40
	dup := func(id int) bool { return id%7 == 3 }
	// The duplicates exist before the run.
	if _, err := c.Exec(ctx, `INSERT INTO share_iso SELECT g FROM generate_series(0, $1::int) g WHERE g % 7 = 3`, workers*each); err != nil {
		t.Fatal(err)
	}
	ok := execConcurrently(t, c, workers, each, "INSERT INTO share_iso VALUES ($1)",
		func(id int) []any { return []any{id} },
		func(id int) string {
			if dup(id) {
				return "23505"
			}
			return ""
		})
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM share_iso WHERE id % 7 <> 3").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != ok {
		t.Errorf("%d rows committed, %d inserts succeeded", n, ok)
	}
	shared, resent := syncCounts(c)
	t.Logf("%d runs gave their Sync away, %d were sent again", shared, resent)
	if shared == 0 || resent == 0 {
		t.Errorf("shared %d, resent %d: the test did not exercise Sync sharing", shared, resent)
	}
	if warnings.Load() != 0 {
		t.Errorf("%d warnings", warnings.Load())
	}
	if s := c.TxStatus(); s != 'I' {
		t.Errorf("transaction status %c after the run", s)
	}
	if st := commitStateOf(c); mode == "prepare" && st != session.CommitReady {
		t.Errorf("named BEGIN and COMMIT in state %d, want ready", st)
	}
}

// execConcurrently runs sql with args(id) for workers×each ids from
// workers goroutines sharing c. An id for which wantCode gives an SQLSTATE
// must fail with it, the others must succeed; it returns how many did.
func execConcurrently(t *testing.T, c *Conn, workers, each int, sql string, args func(id int) []any, wantCode func(id int) string) int {
	t.Helper()
	ctx := testCtx(t)
	var ok atomic.Int64
	concurrently(t, workers, each, func(id int) error {
		_, err := c.Exec(ctx, sql, args(id)...)
		var pgErr *PgError
		switch want := wantCode(id); {
		case want != "" && !(errors.As(err, &pgErr) && pgErr.Code == want):
			return fmt.Errorf("id %d: want %s, got %v", id, want, err)
		case want == "" && err != nil:
			return fmt.Errorf("id %d: %v", id, err)
		case err == nil:
			ok.Add(1)
		}
		return nil
	})
	return int(ok.Load())
}

// concurrently calls f for workers×each ids from workers goroutines (ids
// w*each to w*each+each-1 in goroutine w) and reports the errors f
// returns; a goroutine stops at its first.
func concurrently(t *testing.T, workers, each int, f func(id int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := f(w*each + i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	reportErrs(t, errs)
}

// reportErrs closes errs, which nothing sends to any more, and reports
// what it holds.
func reportErrs(t *testing.T, errs chan error) {
	t.Helper()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func commitStateOf(c *Conn) int {
	c.s.Wmu.Lock()
	defer c.s.Wmu.Unlock()
	return c.s.CommitState
}

// TestSharedSyncCommitFails: a statement whose COMMIT fails (a deferred
// foreign key) gets that error and leaves nothing behind; the statements
// sharing its Sync group are unaffected.
func TestSharedSyncCommitFails(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	_, err := c.Exec(ctx, `
		DROP TABLE IF EXISTS share_child; DROP TABLE IF EXISTS share_parent;
		CREATE TABLE share_parent (id int PRIMARY KEY);
		INSERT INTO share_parent VALUES (1);
		CREATE TABLE share_child (id int PRIMARY KEY,
			parent int REFERENCES share_parent DEFERRABLE INITIALLY DEFERRED)`)
	if err != nil {
		t.Fatal(err)
	}
	// No parent 2: the COMMIT of those inserts fails.
	ok := execConcurrently(t, c, 40, 30, "INSERT INTO share_child VALUES ($1, $2)",
		func(id int) []any {
			if id%5 == 0 {
				return []any{id, 2}
			}
			return []any{id, 1}
		},
		func(id int) string {
			if id%5 == 0 {
				return "23503"
			}
			return ""
		})
	var n, bad int
	if err := c.QueryRow(ctx, "SELECT count(*), count(*) FILTER (WHERE parent = 2) FROM share_child").Scan(&n, &bad); err != nil {
		t.Fatal(err)
	}
	if n != ok || bad != 0 {
		t.Errorf("%d rows (%d orphans), %d inserts succeeded", n, bad, ok)
	}
	if shared, _ := syncCounts(c); shared == 0 {
		t.Error("no Sync was shared")
	}
	// A COMMIT that fails on a constraint says nothing against the named
	// BEGIN and COMMIT.
	if st := commitStateOf(c); st != session.CommitReady {
		t.Errorf("named BEGIN and COMMIT in state %d, want ready", st)
	}
}

// TestSharedSyncStatementsOutsideBlocks: statements that refuse to run in
// a transaction block or in a pipeline (VACUUM, CREATE INDEX
// CONCURRENTLY) still run when queued among others, as alone.
func TestSharedSyncStatementsOutsideBlocks(t *testing.T) {
	ctx := testCtx(t)
	c, warnings := connectCountingWarnings(t, srv.DSN())
	if _, err := c.Exec(ctx, `DROP TABLE IF EXISTS share_vac; CREATE TABLE share_vac (a int, b int)`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	run := func(sql string, args ...any) {
		defer wg.Done()
		rows, err := c.Query(ctx, sql, args...)
		if err == nil {
			rows.Close()
			err = rows.Err()
		}
		if err != nil {
			errs <- fmt.Errorf("%s: %v", sql, err)
		}
	}
	for round := range 20 {
		for i := range 10 {
			wg.Add(1)
			go run("INSERT INTO share_vac VALUES ($1, $2)", round, i)
		}
		wg.Add(3)
		go run("VACUUM share_vac")
		go run(fmt.Sprintf("CREATE INDEX CONCURRENTLY IF NOT EXISTS share_vac_%d ON share_vac (a)", round%3))
		go run("SELECT count(*) FROM share_vac")
		wg.Wait()
	}
	reportErrs(t, errs)
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM share_vac").Scan(&n); err != nil || n != 200 {
		t.Errorf("count %d, %v; want 200", n, err)
	}
	if warnings.Load() != 0 {
		t.Errorf("%d warnings", warnings.Load())
	}
	shared, _ := syncCounts(c)
	t.Logf("%d runs gave their Sync away", shared)
}

// TestSharedSyncOff: pipeline_sync=each gives every run its own Sync.
func TestSharedSyncOff(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN()+" pipeline_sync=each")
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got int
			if err := c.QueryRow(ctx, "SELECT $1::int", i).Scan(&got); err != nil || got != i {
				t.Errorf("got %d, %v; want %d", got, err, i)
			}
		}()
	}
	wg.Wait()
	if shared, _ := syncCounts(c); shared != 0 {
		t.Errorf("%d runs gave their Sync away with pipeline_sync=each", shared)
	}
}

// TestSharedSyncAbandoned: callers that give up while their runs wait in
// shared Sync groups (some of which fail) leave the connection in step:
// every other caller gets its own answer.
func TestSharedSyncAbandoned(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	concurrently(t, 40, 50, func(v int) error {
		qctx, cancel := context.WithCancel(ctx)
		if v%9 == 0 {
			cancel() // soon, perhaps while queued
		}
		var got int
		err := c.QueryRow(qctx, "SELECT 10 / ($1::int % 4)", v).Scan(&got)
		cancel()
		var pgErr *PgError
		switch {
		case v%9 == 0:
			// Either outcome is fine: what matters is the others.
		case v%4 == 0:
			if !errors.As(err, &pgErr) || pgErr.Code != "22012" {
				return fmt.Errorf("%d: want 22012, got %d, %v", v, got, err)
			}
		case err != nil || got != 10/(v%4):
			return fmt.Errorf("%d: got %d, %v", v, got, err)
		}
		return nil
	})
	var one int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after the run: %d, %v", one, err)
	}
}

// TestSharedSyncAfterDeallocate: DEALLOCATE ALL removes the named BEGIN
// and COMMIT with the other prepared statements; the runs after it use
// unnamed ones, and nothing fails.
func TestSharedSyncAfterDeallocate(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	load := func() {
		t.Helper()
		var wg sync.WaitGroup
		for w := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 20 {
					var got int
					if err := c.QueryRow(ctx, "SELECT $1::int + 1", w*20+i).Scan(&got); err != nil || got != w*20+i+1 {
						t.Errorf("got %d, %v", got, err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	load()
	if st := commitStateOf(c); st != session.CommitReady {
		t.Fatalf("named BEGIN and COMMIT in state %d, want ready", st)
	}
	for _, sql := range []string{"DEALLOCATE ALL", "discard   ALL"} {
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
		if st := commitStateOf(c); st != session.CommitDisabled {
			t.Fatalf("after %s: named BEGIN and COMMIT in state %d, want disabled", sql, st)
		}
		load()
	}
}
