package pgline

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ac2Types are the column types the mutators cycle through; 42 in each.
var ac2Types = []string{"int4", "int8", "float4", "float8", "text", "numeric", "int2"}

// ac2Expect returns, per type, the %T and %v of 42::type scanned into any
// on a fresh connection.
func ac2Expect(t *testing.T, extra ...string) map[string]string {
	c := auditConn(t, extra...)
	m := map[string]string{}
	for _, ty := range ac2Types {
		var v any
		if err := c.QueryRow(testCtx(t), "SELECT 42::"+ty+" WHERE $1::int4 = 1", 1).Scan(&v); err != nil {
			t.Fatal(err)
		}
		m[ty] = fmt.Sprintf("%T %v", v, v)
	}
	return m
}

type ac2Runner interface {
	QueryRow(ctx context.Context, sql string, args ...any) *Row
	Exec(ctx context.Context, sql string, args ...any) (CommandTag, error)
}

// TestAuditCache2ConcurrentAlter: goroutines sharing one Conn (or a Pool)
// run the same cached statements while another goroutine changes the
// column's type (ALTER COLUMN TYPE) or drops and recreates the table with
// the columns in the other order; each row carries the name of its
// column's type, so every value can be checked against what the table
// held when the statement ran. A value decoded with another type than its
// row's is a defect; errors are counted.
func TestAuditCache2ConcurrentAlter(t *testing.T) {
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
			want := ac2Expect(t, tc.extra...)
			ctx := testCtx(t)
			var db ac2Runner
			if tc.pool {
				p, err := NewPool(ctx, srv.DSN(tc.extra...))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(p.Close)
				db = p
			} else {
				db = auditConn(t, tc.extra...)
			}
			admin := auditConn(t)
			tbl := "ac2_conc"
			tbl2 := "ac2_conc2"
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
					ty := ac2Types[i%len(ac2Types)]
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
