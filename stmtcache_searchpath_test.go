package pgline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// spRun runs work on n goroutines until d has passed, then waits for
// them; work gets its goroutine's number and the round.
func spRun(d time.Duration, n int, work func(g, i int)) {
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(stop); i++ {
				work(g, i)
			}
		}()
	}
	wg.Wait()
}

// spFailures counts failures and keeps the first.
type spFailures struct {
	n     atomic.Int64
	first atomic.Value
}

func (f *spFailures) add(err error) {
	if f.n.Add(1) == 1 {
		f.first.Store(err)
	}
}

func (f *spFailures) check(t *testing.T, what string, runs int64) {
	t.Helper()
	if n := f.n.Load(); n > 0 {
		t.Errorf("%s: %d of %d failed, first: %v", what, n, runs, f.first.Load())
	}
}

// TestSearchPathReadsKeepOthersStatements: goroutines read search_path
// on a shared Conn, or a Pool of 4 (SHOW, current_setting, a literal
// naming it) or set a custom setting with set_config while others run a
// few distinct cached texts. Reading a setting is not changing it: none of the others'
// statements fails. Before, any text that mentioned search_path or
// set_config dropped the statement cache and failed the statements
// described before it with errPathChanged ("a statement that may change
// search_path was queued after this statement was described"), once they
// had been described again 5 times (the budget shared with cancels).
func TestSearchPathReadsKeepOthersStatements(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	for _, mode := range []string{"prepare", "describe", "pool4"} {
		t.Run(mode, func(t *testing.T) {
			var c interface {
				Exec(context.Context, string, ...any) (CommandTag, error)
				QueryRow(context.Context, string, ...any) *Row
			}
			if mode == "pool4" {
				c = newTestPool(t, "pool_max_conns=4")
			} else {
				c = connect(t, srv.DSN("statement_cache_mode="+mode))
			}
			ctx := testCtx(t)
			readers := []func() error{
				func() error { _, err := c.Exec(ctx, "SHOW search_path"); return err },
				func() error {
					var s string
					return c.QueryRow(ctx, "SELECT current_setting('search_path')").Scan(&s)
				},
				func() error {
					var s string
					return c.QueryRow(ctx, "SELECT set_config('app.user_id', $1, false)", "42").Scan(&s)
				},
				func() error {
					var s string
					return c.QueryRow(ctx, "SELECT 'the search_path is set by set_config' || $1::text", "x").Scan(&s)
				},
			}
			var others, readFails spFailures
			var runs atomic.Int64
			spRun(1500*time.Millisecond, len(readers)+16, func(g, i int) {
				if g < len(readers) {
					if err := readers[g](); err != nil {
						readFails.add(err)
					}
					return
				}
				k := (g + i) % 8
				var v int32
				err := c.QueryRow(ctx, fmt.Sprintf("SELECT $1::int4 + %d", k), 1).Scan(&v)
				runs.Add(1)
				if err == nil && v != int32(1+k) {
					err = fmt.Errorf("text %d: got %d, want %d", k, v, 1+k)
				}
				if err != nil {
					others.add(err)
				}
			})
			readFails.check(t, "readers", 0)
			others.check(t, "others' statements", runs.Load())
			if runs.Load() == 0 {
				t.Fatal("no statement ran")
			}
		})
	}
}

// spTwoSchemas creates the table sp_two in the schemas sp_a and sp_b,
// whose one row names its schema, with another column type in each.
func spTwoSchemas(t *testing.T, c *Conn) {
	t.Helper()
	ctx := testCtx(t)
	const drop = "DROP SCHEMA IF EXISTS sp_a CASCADE; DROP SCHEMA IF EXISTS sp_b CASCADE"
	if _, err := c.Exec(ctx, drop+`; CREATE SCHEMA sp_a; CREATE SCHEMA sp_b;
		CREATE TABLE sp_a.sp_two (sn text, v int4); INSERT INTO sp_a.sp_two VALUES ('sp_a', 1);
		CREATE TABLE sp_b.sp_two (sn text, v text); INSERT INTO sp_b.sp_two VALUES ('sp_b', 'one')`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Exec(context.Background(), drop) })
}

// TestSearchPathSetStillResolvesAfterReads: one goroutine sets
// search_path to one schema or the other and runs a cached statement on
// a table that exists in both, while others read search_path on the same
// Conn: each run reads the table of the schema just set, in its own
// column type (no wrong answer), though reads no longer drop the cache.
func TestSearchPathSetStillResolvesAfterReads(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			spTwoSchemas(t, c)
			ctx := testCtx(t)
			want := map[string]any{"sp_a": int32(1), "sp_b": "one"}
			var fails spFailures
			var runs atomic.Int64
			spRun(time.Second, 3, func(g, i int) {
				var err error
				switch g {
				case 0:
					schema := []string{"sp_a", "sp_b"}[i%2]
					if _, err = c.Exec(ctx, "SET search_path = "+schema); err != nil {
						break
					}
					var sn string
					var v any
					if err = c.QueryRow(ctx, "SELECT sn, v FROM sp_two WHERE $1::int4 = 1", 1).Scan(&sn, &v); err != nil {
						break
					}
					runs.Add(1)
					if sn != schema || v != want[schema] {
						err = fmt.Errorf("after SET search_path = %s: read %s's row, v %#v (want %#v)", schema, sn, v, want[schema])
					}
				case 1:
					_, err = c.Exec(ctx, "SHOW search_path")
				default:
					var s string
					err = c.QueryRow(ctx, "SELECT current_setting('search_path')").Scan(&s)
				}
				if err != nil {
					fails.add(err)
				}
			})
			fails.check(t, "statements", runs.Load())
			if runs.Load() < 2 {
				t.Fatalf("%d runs", runs.Load())
			}
		})
	}
}

// TestSearchPathBatchResentAfterOutsideChange: batches queued while
// another goroutine really changes search_path (SET search_path, every
// millisecond) are described again and sent, as single statements are:
// none fails, and each reads its own values. Before, a batch whose
// statements were described before the other's SET was queued failed
// whole with "batch statement 0: ... nothing was sent".
func TestSearchPathBatchResentAfterOutsideChange(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			ctx := testCtx(t)
			var fails spFailures
			var runs atomic.Int64
			spRun(time.Second, 5, func(g, i int) {
				if g == 0 {
					if _, err := c.Exec(ctx, "SET search_path = public"); err != nil {
						fails.add(err)
					}
					time.Sleep(time.Millisecond)
					return
				}
				b := &Batch{AllOrNothing: i%2 == 1}
				for k := range 3 {
					b.Queue(fmt.Sprintf("SELECT $1::int4 + %d", k), g*1000+i)
				}
				br := c.SendBatch(ctx, b)
				var err error
				for k := 0; k < 3 && err == nil; k++ {
					var v int32
					if err = br.QueryRow().Scan(&v); err == nil && v != int32(g*1000+i+k) {
						err = fmt.Errorf("statement %d: got %d, want %d", k, v, g*1000+i+k)
					}
				}
				if cerr := br.Close(); err == nil {
					err = cerr
				}
				runs.Add(1)
				if err != nil {
					fails.add(err)
				}
			})
			fails.check(t, "batches", runs.Load())
			if runs.Load() == 0 {
				t.Fatal("no batch ran")
			}
		})
	}
}

// TestSearchPathOwnBatchChangeStillFails: a batch whose own statement
// changes search_path before another of its statements is not sent again
// (that statement would be described under the old search_path each
// time): it fails with errPathChanged, as TestSearchPathBatchAfterPathChangeFails
// pins in a transaction, here outside one, without looping.
func TestSearchPathOwnBatchChangeStillFails(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	b := &Batch{}
	b.Queue("SET search_path = public")
	b.Queue("SELECT $1::int4", 1)
	if err := c.SendBatch(ctx, b).Close(); !errors.Is(err, session.ErrPathChanged) {
		t.Fatalf("%v; want errPathChanged", err)
	}
}

// TestSearchPathDiscardAllInBatch: DISCARD ALL resets search_path (it
// runs RESET ALL) as well as deallocating. In a batch [DISCARD ALL, q],
// q was described under the session's search_path (spd_s: d is a date)
// and would run after the DISCARD under the default one (public: d is a
// timestamp) with a date parameter: the timestamp argument cut to its
// day, and the count of rows equal to it 0 instead of 1, a wrong answer.
// The batch fails before it is sent, as for a SET before q in the same
// batch (see TestSearchPathOwnBatchChangeStillFails); q sent on its own
// after the DISCARD is described again and counts 1.
func TestSearchPathDiscardAllInBatch(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			ctx := testCtx(t)
			const drop = "DROP SCHEMA IF EXISTS spd_s CASCADE; DROP TABLE IF EXISTS public.spd_t"
			if _, err := c.Exec(ctx, drop+`; CREATE SCHEMA spd_s;
				CREATE TABLE spd_s.spd_t (d date); INSERT INTO spd_s.spd_t VALUES ('2024-01-01');
				CREATE TABLE public.spd_t (d timestamp); INSERT INTO public.spd_t VALUES ('2024-01-01 12:00')`); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Exec(context.Background(), drop) })
			if _, err := c.Exec(ctx, "SET search_path = spd_s, public"); err != nil {
				t.Fatal(err)
			}
			const q = "SELECT count(*)::int FROM spd_t WHERE d = $1"
			noon := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
			if _, err := c.Prepare(ctx, q); err != nil {
				t.Fatal(err)
			}
			b := &Batch{}
			b.Queue("DISCARD ALL")
			b.Queue(q, noon)
			br := c.SendBatch(ctx, b)
			_, discardErr := br.Exec()
			var n int
			scanErr := br.QueryRow().Scan(&n)
			closeErr := br.Close()
			if scanErr == nil {
				t.Fatalf("after DISCARD ALL in the batch: count %d (public's timestamp compared with a date parameter; want the batch refused), DISCARD: %v", n, discardErr)
			}
			if !errors.Is(closeErr, session.ErrPathChanged) {
				t.Fatalf("batch: %v, %v; want errPathChanged", scanErr, closeErr)
			}
			if _, err := c.Exec(ctx, "DISCARD ALL"); err != nil {
				t.Fatal(err)
			}
			if err := c.QueryRow(ctx, q, noon).Scan(&n); err != nil || n != 1 {
				t.Fatalf("after DISCARD ALL: count %d, %v; want 1 (public's row at noon)", n, err)
			}
		})
	}
}
