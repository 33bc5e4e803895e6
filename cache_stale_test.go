package pgline

// Cached statements whose tables change under them (DROP and CREATE with
// other columns, ALTER COLUMN TYPE): a value is read with the type its row
// has now, never decoded with the old one; a run may fail once, and the
// statement works again after it.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCacheBatchRetryAfterTableRecreated: a batch (independent,
// all-or-nothing, and all-or-nothing inside a Tx) holds a cached
// statement whose table was dropped and recreated with other column types
// and order. The first attempt may fail (0A000 / 08P01); the retry must
// succeed with values of the new types, never the old.
func TestCacheBatchRetryAfterTableRecreated(t *testing.T) {
	for _, mode := range []string{"prepare", "describe", "prepare-cap1", "describe-cap1"} {
		for _, kind := range []string{"independent", "allornothing", "tx"} {
			t.Run(mode+"/"+kind, func(t *testing.T) {
				extra := []string{"statement_cache_mode=" + strings.TrimSuffix(mode, "-cap1")}
				if strings.HasSuffix(mode, "-cap1") {
					extra = append(extra, "statement_cache_capacity=1")
				}
				c := connect(t, srv.DSN(extra...))
				ctx := testCtx(t)
				tbl := "sps_bst_" + strings.ReplaceAll(mode, "-", "_") + "_" + kind
				if _, err := c.Exec(ctx, fmt.Sprintf("DROP TABLE IF EXISTS %[1]s; CREATE TABLE %[1]s (a int4, b text); INSERT INTO %[1]s VALUES (7, 'seven')", tbl)); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Exec(ctx, "DROP TABLE IF EXISTS "+tbl) })
				q := "SELECT * FROM " + tbl + " WHERE $1::int4 = 1"
				run := func() (x, y any, err error) {
					b := &Batch{AllOrNothing: kind != "independent"}
					b.Queue("SELECT $1::int4 + 1", int32(1))
					b.Queue(q, 1)
					b.Queue("SELECT $1::text", "z")
					var br *BatchResults
					var tx *Tx
					if kind == "tx" {
						if tx, err = c.Begin(ctx); err != nil {
							return
						}
						defer tx.Rollback(ctx)
						br = tx.SendBatch(ctx, b)
					} else {
						br = c.SendBatch(ctx, b)
					}
					var k int32
					e1 := br.QueryRow().Scan(&k)
					e2 := br.QueryRow().Scan(&x, &y)
					var s string
					e3 := br.QueryRow().Scan(&s)
					e4 := br.Close()
					if err = errors.Join(e1, e2, e3, e4); err != nil {
						return
					}
					if k != 2 || s != "z" {
						err = fmt.Errorf("other statements: %d %q", k, s)
						return
					}
					if tx != nil {
						err = tx.Commit(ctx)
					}
					return
				}
				x, y, err := run()
				if err != nil || x != int32(7) || y != "seven" {
					t.Fatalf("first: %#v %#v %v", x, y, err)
				}
				if _, err := c.Exec(ctx, fmt.Sprintf("DROP TABLE %[1]s; CREATE TABLE %[1]s (a float8, b int8); INSERT INTO %[1]s VALUES (1.5, 9000000000)", tbl)); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < 3; i++ {
					x, y, err = run()
					if err == nil {
						if x != 1.5 || y != int64(9000000000) {
							t.Fatalf("attempt %d: read %#v %#v, want 1.5 9000000000", i, x, y)
						}
						if i > 1 {
							t.Fatalf("needed %d retries", i)
						}
						return
					}
					t.Logf("attempt %d: %v", i, err)
				}
				t.Fatalf("every attempt failed: %v", err)
			})
		}
	}
}

// schemaChangeTypes are the column types the mutators cycle through; 42
// in each.
var schemaChangeTypes = []string{"int4", "int8", "float4", "float8", "text", "numeric", "int2"}

// schemaChangeExpect returns, per type, the %T and %v of 42::type scanned
// into any on a fresh connection.
func schemaChangeExpect(t *testing.T, extra ...string) map[string]string {
	c := connect(t, srv.DSN(extra...))
	m := map[string]string{}
	for _, ty := range schemaChangeTypes {
		var v any
		if err := c.QueryRow(testCtx(t), "SELECT 42::"+ty+" WHERE $1::int4 = 1", 1).Scan(&v); err != nil {
			t.Fatal(err)
		}
		m[ty] = fmt.Sprintf("%T %v", v, v)
	}
	return m
}

type queryExecer interface {
	QueryRow(ctx context.Context, sql string, args ...any) *Row
	Exec(ctx context.Context, sql string, args ...any) (CommandTag, error)
}

// TestCacheConcurrentSchemaChanges: goroutines sharing one Conn (or a Pool)
// run the same cached statements while another goroutine changes the
// column's type (ALTER COLUMN TYPE) or drops and recreates the table with
// the columns in the other order; each row carries the name of its
// column's type, so every value can be checked against what the table
// held when the statement ran. A value decoded with another type than its
// row's is a defect; errors are counted.
func TestCacheConcurrentSchemaChanges(t *testing.T) {
	storm(t)
	cases := []struct {
		name  string
		extra []string
		pool  bool
	}{
		{"prepare", []string{"statement_cache_mode=prepare"}, false},
		{"describe", []string{"statement_cache_mode=describe"}, false},
		{"prepare-cap2", []string{"statement_cache_mode=prepare", "statement_cache_capacity=2"}, false},
		{"describe-cap1", []string{"statement_cache_mode=describe", "statement_cache_capacity=1"}, false},
		{"pool-prepare", []string{"statement_cache_mode=prepare", "pool_max_conns=3"}, true},
		{"pool-describe-cap2", []string{"statement_cache_mode=describe", "pool_max_conns=3", "statement_cache_capacity=2"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := schemaChangeExpect(t, tc.extra...)
			ctx := testCtx(t)
			var db queryExecer
			if tc.pool {
				p, err := NewPool(ctx, srv.DSN(tc.extra...))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(p.Close)
				db = p
			} else {
				db = connect(t, srv.DSN(tc.extra...))
			}
			admin := connect(t, srv.DSN())
			tbl := "sps_conc"
			tbl2 := "sps_conc2"
			if _, err := admin.Exec(ctx, fmt.Sprintf(`DROP TABLE IF EXISTS %[1]s; DROP TABLE IF EXISTS %[2]s;
				CREATE TABLE %[1]s (tn text, v int4); INSERT INTO %[1]s VALUES ('int4', 42);
				CREATE TABLE %[2]s (a text, b int4); INSERT INTO %[2]s VALUES ('a:text', 42)`, tbl, tbl2)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { admin.Exec(context.Background(), "DROP TABLE IF EXISTS "+tbl+"; DROP TABLE IF EXISTS "+tbl2) })
			q1 := "SELECT tn, v FROM " + tbl + " WHERE $1::int4 = 1"
			q2 := "SELECT * FROM " + tbl2 + " WHERE $1::int4 = 1"
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var runs, errs, bad atomic.Int64
			var firstBad atomic.Value
			var errSample sync.Map
			report := func(format string, args ...any) {
				bad.Add(1)
				firstBad.CompareAndSwap(nil, fmt.Sprintf(format, args...))
			}
			// Mutators: on the shared Conn/Pool itself (so that the ALTER
			// is pipelined with the reads).
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					ty := schemaChangeTypes[i%len(schemaChangeTypes)]
					using := "v::numeric::" + ty
					if ty == "text" {
						using = "v::numeric::int4::text"
					}
					if _, err := db.Exec(ctx, fmt.Sprintf("ALTER TABLE %s ALTER COLUMN v TYPE %s USING %s; UPDATE %s SET tn = '%s'", tbl, ty, using, tbl, ty)); err != nil {
						errSample.Store("alter: "+err.Error(), true)
					}
					var ddl string
					if i%2 == 0 {
						ddl = fmt.Sprintf("DROP TABLE %[1]s; CREATE TABLE %[1]s (b %[2]s, a text); INSERT INTO %[1]s VALUES (42, 'a:text b:%[2]s')", tbl2, ty)
					} else {
						ddl = fmt.Sprintf("DROP TABLE %[1]s; CREATE TABLE %[1]s (a text, b %[2]s); INSERT INTO %[1]s VALUES ('a:text b:%[2]s', 42)", tbl2, ty)
					}
					if _, err := db.Exec(ctx, ddl); err != nil {
						errSample.Store("ddl: "+err.Error(), true)
					}
					time.Sleep(time.Millisecond)
				}
			}()
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						runs.Add(1)
						var tn string
						var v any
						if err := db.QueryRow(ctx, q1, 1).Scan(&tn, &v); err != nil {
							errs.Add(1)
							errSample.Store("q1: "+err.Error(), true)
						} else if got := fmt.Sprintf("%T %v", v, v); got != want[tn] {
							report("q1: row of type %s read as %s, want %s", tn, got, want[tn])
						}
						var x, y any
						if err := db.QueryRow(ctx, q2, 1).Scan(&x, &y); err != nil {
							errs.Add(1)
							errSample.Store("q2: "+err.Error(), true)
						} else {
							var label string
							var num any
							if s, ok := x.(string); ok && len(s) > 2 && s[:2] == "a:" {
								label, num = s, y
							} else if s, ok := y.(string); ok && len(s) > 2 && s[:2] == "a:" {
								label, num = s, x
							} else {
								report("q2: no label: %#v %#v", x, y)
								continue
							}
							var ty string
							fmt.Sscanf(label, "a:text b:%s", &ty)
							if ty == "" {
								ty = "int4"
							}
							if ty == "text" {
								// 42 as text
								if num != "42" {
									report("q2: %s read %#v", label, num)
								}
							} else if got := fmt.Sprintf("%T %v", num, num); got != want[ty] {
								report("q2: %s read %s, want %s", label, got, want[ty])
							}
						}
						if g%2 == 0 {
							// other statements, for eviction with a small cache
							var k int32
							if err := db.QueryRow(ctx, "SELECT $1::int4 + 1", int32(g)).Scan(&k); err != nil || k != int32(g)+1 {
								report("filler: %d, %v", k, err)
							}
						}
					}
				}(g)
			}
			time.Sleep(1200 * time.Millisecond)
			close(stop)
			wg.Wait()
			errSample.Range(func(k, _ any) bool { t.Logf("error seen: %v", k); return true })
			t.Logf("runs %d, errors %d, wrong values %d", runs.Load(), errs.Load(), bad.Load())
			if bad.Load() > 0 {
				t.Errorf("%d wrong values; first: %v", bad.Load(), firstBad.Load())
			}
			// Quiescent: every statement must work now.
			for i := 0; i < 3; i++ {
				var tn string
				var v any
				if err := db.QueryRow(ctx, q1, 1).Scan(&tn, &v); err != nil {
					t.Errorf("q1 after the changes stopped: %v", err)
				} else if got := fmt.Sprintf("%T %v", v, v); got != want[tn] {
					t.Errorf("q1 after the changes stopped: %s read %s", tn, got)
				}
				var x, y any
				if err := db.QueryRow(ctx, q2, 1).Scan(&x, &y); err != nil {
					t.Errorf("q2 after the changes stopped: %v", err)
				}
			}
		})
	}
}

// TestCacheColumnRetypedToTextFormatType: in describe mode the Bind asks
// for the result formats of the cached description. After ALTER COLUMN v
// TYPE money (a type pgtype does not decode in binary, so normally
// requested as text), the first run still asks binary (int4's format):
// the server sends money's binary form (int8 cents) and the caller gets
// that instead of the value. No run may give another value than a fresh
// connection gives; in describe mode the first run after the change may
// fail instead (pgline sees the new type only in the portal's
// description, after its Bind asked for binary), and the runs after it
// must give the value.
func TestCacheColumnRetypedToTextFormatType(t *testing.T) {
	for _, mode := range []string{"describe", "prepare"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			ctx := testCtx(t)
			tbl := "sps_money_" + mode
			if _, err := c.Exec(ctx, fmt.Sprintf("DROP TABLE IF EXISTS %[1]s; CREATE TABLE %[1]s (v int4); INSERT INTO %[1]s VALUES (1234)", tbl)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Exec(ctx, "DROP TABLE IF EXISTS "+tbl) })
			q := "SELECT v FROM " + tbl + " WHERE $1::int4 = 1"
			var a any
			if err := c.QueryRow(ctx, q, 1).Scan(&a); err != nil || a != int32(1234) {
				t.Fatalf("first run: %#v, %v", a, err)
			}
			if _, err := c.Exec(ctx, "ALTER TABLE "+tbl+" ALTER COLUMN v TYPE money USING v::numeric::money"); err != nil {
				t.Fatal(err)
			}
			fresh := connect(t, srv.DSN("statement_cache_mode="+mode))
			var wantAny any
			var wantStr string
			if err := fresh.QueryRow(ctx, q, 1).Scan(&wantAny); err != nil {
				t.Fatal(err)
			}
			if err := fresh.QueryRow(ctx, q, 1).Scan(&wantStr); err != nil {
				t.Fatal(err)
			}
			t.Logf("fresh connection: any %#v, string %q", wantAny, wantStr)
			// firstMayFail: the first run after the change, in describe
			// mode, may fail with pgline's "changed type" error.
			firstMayFail := func(i int, err error) bool {
				return i == 0 && mode == "describe" && strings.Contains(err.Error(), "changed type")
			}
			for i := 0; i < 3; i++ {
				var s string
				err := c.QueryRow(ctx, q, 1).Scan(&s)
				if err != nil && firstMayFail(i, err) {
					continue
				}
				if err != nil || s != wantStr {
					t.Errorf("run %d after ALTER into *string: %q, %v; want %q", i, s, err, wantStr)
				}
			}
			if _, err := c.Exec(ctx, "ALTER TABLE "+tbl+" ALTER COLUMN v TYPE int4 USING v::numeric::int4"); err != nil {
				t.Fatal(err)
			}
			if err := c.QueryRow(ctx, q, 1).Scan(&a); err != nil || a != int32(1234) {
				t.Fatalf("back to int4: %#v, %v", a, err)
			}
			if _, err := c.Exec(ctx, "ALTER TABLE "+tbl+" ALTER COLUMN v TYPE money USING v::numeric::money"); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ {
				var a any
				err := c.QueryRow(ctx, q, 1).Scan(&a)
				if err != nil && firstMayFail(i, err) {
					continue
				}
				if err != nil || fmt.Sprintf("%#v", a) != fmt.Sprintf("%#v", wantAny) {
					t.Errorf("run %d after ALTER into *any: %#v, %v; want %#v", i, a, err, wantAny)
				}
			}
		})
	}
}

// TestCacheColumnRetypedSameSize changes a column's type between
// runs of the same statement to another type of the same binary size
// (int4 -> float4, int8 -> float8, int8 -> timestamp) in each
// statement_cache_mode. A description cached before the change must not
// decode the new type's bytes as the old type: the value read must be the
// new one, or the run must fail.
func TestCacheColumnRetypedSameSize(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"prepare", "describe", "none"} {
		for _, ch := range []struct{ from, to, val, want string }{
			{"int4", "float4", "2.5", "2.5"},
			{"int8", "float8", "2.5", "2.5"},
			{"int8", "float8", "3", "3"},
		} {
			t.Run(mode+" "+ch.from+"->"+ch.to, func(t *testing.T) {
				c, err := Connect(ctx, srv.DSN("statement_cache_mode="+mode))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				for _, s := range []string{
					`DROP TABLE IF EXISTS acodec_retype`,
					`CREATE TABLE acodec_retype (v ` + ch.from + `)`,
					`INSERT INTO acodec_retype VALUES (7)`,
				} {
					if _, err := c.Exec(ctx, s); err != nil {
						t.Fatal(err)
					}
				}
				const q = `SELECT v FROM acodec_retype`
				var s string
				if err := c.QueryRow(ctx, q).Scan(&s); err != nil || s != "7" {
					t.Fatalf("first run: %q %v", s, err)
				}
				if _, err := c.Exec(ctx, `ALTER TABLE acodec_retype ALTER v TYPE `+ch.to+`; UPDATE acodec_retype SET v = `+ch.val); err != nil {
					// multi-statement may be refused; do it in two
					if _, err := c.Exec(ctx, `ALTER TABLE acodec_retype ALTER v TYPE `+ch.to); err != nil {
						t.Fatal(err)
					}
					if _, err := c.Exec(ctx, `UPDATE acodec_retype SET v = `+ch.val); err != nil {
						t.Fatal(err)
					}
				}
				for run := 0; run < 3; run++ {
					var got string
					err := c.QueryRow(ctx, q).Scan(&got)
					if err != nil {
						t.Logf("run %d: error (fine): %v", run, err)
						continue
					}
					if got != ch.want {
						t.Errorf("run %d: got %q, want %q", run, got, ch.want)
					}
				}
			})
		}
	}
}

// TestCacheParamTypeFromRetypedColumn: a cached statement whose
// parameter's type was inferred from a column (WHERE k = $1) keeps the
// old parameter type after ALTER COLUMN k TYPE text. In prepare mode the
// server re-analyzes the named statement with the fixed int4 parameter;
// in describe mode pgline sends the cached parameter OIDs in every Parse
// (and portalDescribed copies them into the refreshed description). The
// statement then fails with 42883 (operator does not exist: text =
// integer) on every run, for ever, on that connection, while a fresh
// connection runs it fine. (Now a class 42 error drops the statement from
// the cache: the first run after the change fails, the next describes
// it anew.)
func TestCacheParamTypeFromRetypedColumn(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			ctx := testCtx(t)
			tbl := "sps_param_" + mode
			if _, err := c.Exec(ctx, fmt.Sprintf("DROP TABLE IF EXISTS %[1]s; CREATE TABLE %[1]s (k int4, v text); INSERT INTO %[1]s VALUES (1, 'one')", tbl)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Exec(ctx, "DROP TABLE IF EXISTS "+tbl) })
			q := "SELECT v FROM " + tbl + " WHERE k = $1"
			var v string
			if err := c.QueryRow(ctx, q, int32(1)).Scan(&v); err != nil || v != "one" {
				t.Fatalf("first run: %q, %v", v, err)
			}
			if _, err := c.Exec(ctx, "ALTER TABLE "+tbl+" ALTER COLUMN k TYPE text"); err != nil {
				t.Fatal(err)
			}
			// A fresh connection runs the text fine.
			fresh := connect(t, srv.DSN("statement_cache_mode="+mode))
			if err := fresh.QueryRow(ctx, q, "1").Scan(&v); err != nil || v != "one" {
				t.Fatalf("fresh connection: %q, %v", v, err)
			}
			var lastErr error
			for i := 0; i < 5; i++ {
				v = ""
				lastErr = c.QueryRow(ctx, q, "1").Scan(&v)
				if lastErr == nil {
					if v != "one" {
						t.Fatalf("run %d after ALTER: %q, want one", i, v)
					}
					t.Logf("run %d after ALTER succeeded", i)
					return
				}
				t.Logf("run %d after ALTER: %v", i, lastErr)
			}
			t.Fatalf("the cached statement keeps failing after ALTER COLUMN k TYPE text (5 runs), while a fresh connection runs it: %v", lastErr)
		})
	}
}
