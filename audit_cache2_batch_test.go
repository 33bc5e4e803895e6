package pgline

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestAuditCache2BatchStaleRetry: a batch (independent, all-or-nothing,
// and all-or-nothing inside a Tx) holds a cached statement whose table was
// dropped and recreated with other column types and order. The first
// attempt may fail (0A000 / 08P01); the retry must succeed with values of
// the new types, never the old.
func TestAuditCache2BatchStaleRetry(t *testing.T) {
	for _, mode := range []string{"prepare", "describe", "prepare-cap1", "describe-cap1"} {
		for _, kind := range []string{"independent", "allornothing", "tx"} {
			t.Run(mode+"/"+kind, func(t *testing.T) {
				extra := []string{"statement_cache_mode=" + strings.TrimSuffix(mode, "-cap1")}
				if strings.HasSuffix(mode, "-cap1") {
					extra = append(extra, "statement_cache_capacity=1")
				}
				c := auditConn(t, extra...)
				ctx := testCtx(t)
				tbl := "ac2_bst_" + strings.ReplaceAll(mode, "-", "_") + "_" + kind
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
