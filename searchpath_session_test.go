package pgline

// search_path changed for the session (SET, RESET, DISCARD ALL) while other
// goroutines run cached statements on the same Conn.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSearchPathSessionChangesConcurrent: one goroutine changes the
// session's search_path on a shared Conn (SET, DISCARD ALL, DEALLOCATE
// ALL, RESET) while others run cached statements reading a table of the
// same name in several schemas, with other column types. Each row names
// its schema, so each value can be checked against its own row. Errors
// are counted; wrong values fail. A prepare-mode connection must stay in
// prepare mode (DEALLOCATE/DISCARD are the application's, not a
// pooler's).
func TestSearchPathSessionChangesConcurrent(t *testing.T) {
	storm(t)
	for _, mode := range []string{"prepare", "describe", "prepare-cap1"} {
		t.Run(mode, func(t *testing.T) {
			extra := []string{"statement_cache_mode=" + mode}
			if mode == "prepare-cap1" {
				extra = []string{"statement_cache_mode=prepare", "statement_cache_capacity=1"}
			}
			c := connect(t, srv.DSN(extra...))
			ctx := testCtx(t)
			if _, err := c.Exec(ctx, `DROP SCHEMA IF EXISTS sps_s1 CASCADE; DROP SCHEMA IF EXISTS sps_s2 CASCADE; DROP SCHEMA IF EXISTS sps_s3 CASCADE; DROP TABLE IF EXISTS public.sps_spt2;
				CREATE SCHEMA sps_s1; CREATE SCHEMA sps_s2; CREATE SCHEMA sps_s3;
				CREATE TABLE public.sps_spt2 (sn text, v int4); INSERT INTO public.sps_spt2 VALUES ('public', 42);
				CREATE TABLE sps_s1.sps_spt2 (sn text, v int8); INSERT INTO sps_s1.sps_spt2 VALUES ('s1', 42);
				CREATE TABLE sps_s2.sps_spt2 (sn text, v text); INSERT INTO sps_s2.sps_spt2 VALUES ('s2', '42');
				CREATE TABLE sps_s3.sps_spt2 (v float4, sn text); INSERT INTO sps_s3.sps_spt2 VALUES (42, 's3')`); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				c.Exec(context.Background(), "DROP SCHEMA IF EXISTS sps_s1 CASCADE; DROP SCHEMA IF EXISTS sps_s2 CASCADE; DROP SCHEMA IF EXISTS sps_s3 CASCADE; DROP TABLE IF EXISTS public.sps_spt2")
			})
			want := map[string]string{"public": "int32 42", "s1": "int64 42", "s2": "string 42", "s3": "float32 42"}
			const q = "SELECT sn, v FROM sps_spt2 WHERE $1::int4 = 1"
			const qStar = "SELECT * FROM sps_spt2 WHERE $1::int4 = 1"
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var runs, errs, bad atomic.Int64
			var first atomic.Value
			var samples sync.Map
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmds := []string{"SET search_path = sps_s1", "SET search_path = sps_s2", "DEALLOCATE ALL", "SET search_path = sps_s3, public",
					"DISCARD ALL", "SET search_path = sps_s2", "RESET search_path", "SET search_path = sps_s3"}
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := c.Exec(ctx, cmds[i%len(cmds)]); err != nil {
						samples.Store("set: "+err.Error(), true)
					}
					time.Sleep(500 * time.Microsecond)
				}
			}()
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						runs.Add(1)
						var sn string
						var v any
						if err := c.QueryRow(ctx, q, 1).Scan(&sn, &v); err != nil {
							errs.Add(1)
							samples.Store("q: "+err.Error(), true)
						} else if got := fmt.Sprintf("%T %v", v, v); got != want[sn] {
							bad.Add(1)
							first.CompareAndSwap(nil, fmt.Sprintf("q: row of %s read %s, want %s", sn, got, want[sn]))
						}
						vals := make([]any, 2)
						rows, err := c.Query(ctx, qStar, 1)
						if err == nil {
							for rows.Next() {
								vals, err = rows.Values()
							}
							rows.Close()
							if err == nil {
								err = rows.Err()
							}
						}
						if err != nil {
							errs.Add(1)
							samples.Store("qStar: "+err.Error(), true)
							continue
						}
						sn2, v2 := vals[0], vals[1]
						if _, ok := sn2.(string); !ok {
							sn2, v2 = vals[1], vals[0]
						}
						s, _ := sn2.(string)
						if got := fmt.Sprintf("%T %v", v2, v2); got != want[s] {
							bad.Add(1)
							first.CompareAndSwap(nil, fmt.Sprintf("qStar: %#v", vals))
						}
					}
				}(g)
			}
			time.Sleep(1500 * time.Millisecond)
			close(stop)
			wg.Wait()
			samples.Range(func(k, _ any) bool { t.Logf("error seen: %v", k); return true })
			t.Logf("runs %d, errors %d, wrong %d, mode now %s", runs.Load(), errs.Load(), bad.Load(), c.s.StatementCacheMode())
			if bad.Load() > 0 {
				t.Errorf("%d wrong values; first: %v", bad.Load(), first.Load())
			}
			if mode != "describe" && c.s.StatementCacheMode() != "prepare" {
				t.Errorf("the connection switched to %s mode after the application's DEALLOCATE/DISCARD", c.s.StatementCacheMode())
			}
			var sn string
			var v any
			for i := 0; i < 2; i++ {
				if err := c.QueryRow(ctx, q, 1).Scan(&sn, &v); err != nil {
					t.Errorf("after: %v", err)
				}
			}
		})
	}
}
