package session

// Sync sharing (pipeline.go): runs queued behind one another give their
// Sync away and run in one Sync group, each in its own named BEGIN and
// COMMIT; a failure ends the group, whose other runs are sent again.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// syncCounts returns how many runs gave their Sync away and how many were
// sent again after their Sync group failed.
func syncCounts(s *Session) (shared, resent uint64) {
	s.Wmu.Lock()
	defer s.Wmu.Unlock()
	return s.Shared, s.Resent
}

// commitStateOf returns the state of s's named BEGIN and COMMIT.
func commitStateOf(s *Session) int {
	s.Wmu.Lock()
	defer s.Wmu.Unlock()
	return s.CommitState
}

// dialCountingWarnings is dialSessionOpts with an OnNotice that counts the
// notices of severity WARNING (what a misplaced BEGIN or COMMIT raises).
func dialCountingWarnings(t *testing.T, set func(*SessionOpts)) (*Session, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	s := dialSessionOpts(t, func(o *SessionOpts) {
		o.OnNotice = func(f wire.ErrorFields) {
			if f.Severity == "WARNING" {
				n.Add(1)
				t.Logf("warning: %s", f.Message)
			}
		}
		if set != nil {
			set(o)
		}
	})
	return s, &n
}

// uniqueTable returns a table name made of prefix unique to this run (the
// cluster is shared by the package's tests), and drops the table when
// the test ends.
func uniqueTable(t *testing.T, s *Session, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano())
	t.Cleanup(func() {
		s.SimpleQueryUntraced(context.Background(), nil, "DROP TABLE IF EXISTS "+name+" CASCADE", nil, nil)
	})
	return name
}

// mustExec runs sql with the simple protocol (the API's Exec without
// arguments), failing the test on an error.
func mustExec(t *testing.T, ctx context.Context, s *Session, sql string) {
	t.Helper()
	if _, err := s.SimpleQueryUntraced(ctx, nil, sql, nil, nil); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// queryInts runs sql, whose columns are cast to text, as the API's
// QueryRow does, and returns its first row's values as integers.
func queryInts(ctx context.Context, s *Session, sql string, args ...any) ([]int64, error) {
	rows, err := queryResendingText(ctx, s, sql, args...)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errors.New("no rows")
	}
	var out []int64
	for _, v := range rows[0] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// sqlState returns the SQLSTATE of the server's error err, or "".
func sqlState(err error) string {
	var se *testServerError
	if errors.As(err, &se) {
		return se.SQLState()
	}
	return ""
}

// TestSharedSyncEachRunCommitsAlone: statements pipelined from many
// goroutines share Syncs, yet each commits on its own. Inserts that
// violate the primary key fail alone; every other insert is committed,
// including those queued in the same Sync group before and after a
// failure; no warning is raised (a misplaced BEGIN or COMMIT would warn).
func TestSharedSyncEachRunCommitsAlone(t *testing.T) {
	for _, mode := range []string{CachePrepare, CacheDescribe} {
		t.Run(mode, func(t *testing.T) { testSharedSyncEachRunCommitsAlone(t, mode) })
	}
}

func testSharedSyncEachRunCommitsAlone(t *testing.T, mode string) {
	ctx := testCtx(t)
	s, warnings := dialCountingWarnings(t, func(o *SessionOpts) { o.CacheMode = mode })
	tbl := uniqueTable(t, s, "share_iso")
	mustExec(t, ctx, s, "CREATE TABLE "+tbl+" (id int PRIMARY KEY)")
	const workers, each = 50, 40
	dup := func(id int) bool { return id%7 == 3 }
	// The duplicates exist before the run.
	if _, _, err := queryResending(ctx, s, "INSERT INTO "+tbl+" SELECT g FROM generate_series(0, $1::int) g WHERE g % 7 = 3", workers*each); err != nil {
		t.Fatal(err)
	}
	ok := execConcurrently(t, s, workers, each, "INSERT INTO "+tbl+" VALUES ($1)",
		func(id int) []any { return []any{id} },
		func(id int) string {
			if dup(id) {
				return "23505"
			}
			return ""
		})
	n, err := queryInts(ctx, s, "SELECT count(*)::text FROM "+tbl+" WHERE id % 7 <> 3")
	if err != nil {
		t.Fatal(err)
	}
	if n[0] != int64(ok) {
		t.Errorf("%d rows committed, %d inserts succeeded", n[0], ok)
	}
	shared, resent := syncCounts(s)
	t.Logf("%d runs gave their Sync away, %d were sent again", shared, resent)
	if shared == 0 || resent == 0 {
		t.Errorf("shared %d, resent %d: the test did not exercise Sync sharing", shared, resent)
	}
	if warnings.Load() != 0 {
		t.Errorf("%d warnings", warnings.Load())
	}
	if st := s.TxStatus(); st != 'I' {
		t.Errorf("transaction status %c after the run", st)
	}
	if st := commitStateOf(s); mode == CachePrepare && st != CommitReady {
		t.Errorf("named BEGIN and COMMIT in state %d, want ready", st)
	}
}

// execConcurrently runs sql with args(id) for workers×each ids from
// workers goroutines sharing s, as the API's Exec with arguments. An id
// for which wantCode gives an SQLSTATE must fail with it, the others must
// succeed; it returns how many did.
func execConcurrently(t *testing.T, s *Session, workers, each int, sql string, args func(id int) []any, wantCode func(id int) string) int {
	t.Helper()
	ctx := testCtx(t)
	var ok atomic.Int64
	concurrently(t, workers, each, func(id int) error {
		_, _, err := queryResending(ctx, s, sql, args(id)...)
		switch want := wantCode(id); {
		case want != "" && sqlState(err) != want:
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

// TestSharedSyncCommitFailureStaysWithItsRun: a statement whose COMMIT
// fails (a deferred foreign key) gets that error and leaves nothing
// behind; the statements sharing its Sync group are unaffected.
func TestSharedSyncCommitFailureStaysWithItsRun(t *testing.T) {
	ctx := testCtx(t)
	s := dialSession(t)
	parent := uniqueTable(t, s, "share_parent")
	child := uniqueTable(t, s, "share_child")
	mustExec(t, ctx, s, `
		CREATE TABLE `+parent+` (id int PRIMARY KEY);
		INSERT INTO `+parent+` VALUES (1);
		CREATE TABLE `+child+` (id int PRIMARY KEY,
			parent int REFERENCES `+parent+` DEFERRABLE INITIALLY DEFERRED)`)
	// No parent 2: the COMMIT of those inserts fails.
	ok := execConcurrently(t, s, 40, 30, "INSERT INTO "+child+" VALUES ($1, $2)",
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
	got, err := queryInts(ctx, s, "SELECT count(*)::text, (count(*) FILTER (WHERE parent = 2))::text FROM "+child)
	if err != nil {
		t.Fatal(err)
	}
	if n, bad := got[0], got[1]; n != int64(ok) || bad != 0 {
		t.Errorf("%d rows (%d orphans), %d inserts succeeded", n, bad, ok)
	}
	if shared, _ := syncCounts(s); shared == 0 {
		t.Error("no Sync was shared")
	}
	// A COMMIT that fails on a constraint says nothing against the named
	// BEGIN and COMMIT.
	if st := commitStateOf(s); st != CommitReady {
		t.Errorf("named BEGIN and COMMIT in state %d, want ready", st)
	}
}

// TestSharedSyncBlockRefusersRunAlone: statements that refuse to run in a
// transaction block or in a pipeline (VACUUM, CREATE INDEX CONCURRENTLY)
// still run when queued among others, as alone.
func TestSharedSyncBlockRefusersRunAlone(t *testing.T) {
	ctx := testCtx(t)
	s, warnings := dialCountingWarnings(t, nil)
	tbl := uniqueTable(t, s, "share_vac") // not temporary: CREATE INDEX CONCURRENTLY refuses a block for a table others see
	mustExec(t, ctx, s, "CREATE TABLE "+tbl+" (a int, b int)")
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	run := func(sql string, args ...any) {
		defer wg.Done()
		if _, _, err := query(ctx, s, sql, args...); err != nil {
			errs <- fmt.Errorf("%s: %v", sql, err)
		}
	}
	for round := range 20 {
		for i := range 10 {
			wg.Add(1)
			go run("INSERT INTO "+tbl+" VALUES ($1, $2)", round, i)
		}
		wg.Add(3)
		go run("VACUUM " + tbl)
		go run(fmt.Sprintf("CREATE INDEX CONCURRENTLY IF NOT EXISTS %s_%d ON %s (a)", tbl, round%3, tbl))
		go run("SELECT count(*) FROM " + tbl)
		wg.Wait()
	}
	reportErrs(t, errs)
	if n, err := queryInts(ctx, s, "SELECT count(*)::text FROM "+tbl); err != nil || n[0] != 200 {
		t.Errorf("count %v, %v; want 200", n, err)
	}
	if warnings.Load() != 0 {
		t.Errorf("%d warnings", warnings.Load())
	}
	shared, _ := syncCounts(s)
	t.Logf("%d runs gave their Sync away", shared)
}

// TestSharedSyncOffGivesEachRunItsSync: ShareSyncs false
// (pipeline_sync=each) gives every run its own Sync.
func TestSharedSyncOffGivesEachRunItsSync(t *testing.T) {
	ctx := testCtx(t)
	s := dialSessionOpts(t, func(o *SessionOpts) { o.ShareSyncs = false })
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got, err := queryInts(ctx, s, "SELECT $1::int::text", i); err != nil || got[0] != int64(i) {
				t.Errorf("got %v, %v; want %d", got, err, i)
			}
		}()
	}
	wg.Wait()
	if shared, _ := syncCounts(s); shared != 0 {
		t.Errorf("%d runs gave their Sync away with pipeline_sync=each", shared)
	}
}

// TestSharedSyncAbandonedRunsKeepOthersInStep: callers that give up while
// their runs wait in shared Sync groups (some of which fail) leave the
// session in step: every other caller gets its own answer.
func TestSharedSyncAbandonedRunsKeepOthersInStep(t *testing.T) {
	ctx := testCtx(t)
	s := dialSession(t)
	concurrently(t, 40, 50, func(v int) error {
		qctx, cancel := context.WithCancel(ctx)
		if v%9 == 0 {
			cancel() // soon, perhaps while queued
		}
		got, err := queryInts(qctx, s, "SELECT (10 / ($1::int % 4))::text", v)
		cancel()
		switch {
		case v%9 == 0:
			// Either outcome is fine: what matters is the others.
		case v%4 == 0:
			if sqlState(err) != "22012" {
				return fmt.Errorf("%d: want 22012, got %v, %v", v, got, err)
			}
		case err != nil || got[0] != int64(10/(v%4)):
			return fmt.Errorf("%d: got %v, %v", v, got, err)
		}
		return nil
	})
	if one, err := queryInts(ctx, s, "SELECT 1::text"); err != nil || one[0] != 1 {
		t.Fatalf("after the run: %v, %v", one, err)
	}
}

// TestSharedSyncDeallocateAllDisablesNamedCommit: DEALLOCATE ALL (and
// DISCARD ALL) removes the named BEGIN and COMMIT with the other prepared
// statements; the runs after it use unnamed ones, and nothing fails.
func TestSharedSyncDeallocateAllDisablesNamedCommit(t *testing.T) {
	ctx := testCtx(t)
	s := dialSession(t)
	load := func() {
		t.Helper()
		var wg sync.WaitGroup
		for w := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 20 {
					if got, err := queryInts(ctx, s, "SELECT ($1::int + 1)::text", w*20+i); err != nil || got[0] != int64(w*20+i+1) {
						t.Errorf("got %v, %v", got, err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	load()
	if st := commitStateOf(s); st != CommitReady {
		t.Fatalf("named BEGIN and COMMIT in state %d, want ready", st)
	}
	for _, sql := range []string{"DEALLOCATE ALL", "discard   ALL"} {
		mustExec(t, ctx, s, sql)
		if st := commitStateOf(s); st != CommitDisabled {
			t.Fatalf("after %s: named BEGIN and COMMIT in state %d, want disabled", sql, st)
		}
		load()
	}
}
