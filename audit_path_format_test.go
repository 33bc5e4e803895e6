package pgline

import (
	"context"
	"testing"
)

// The result column is int4 in the session's schema (cached outside,
// bound for binary results) and an enum in the transaction's, which
// pgline reads in text only. Bound in the transaction, after SET LOCAL
// search_path, with the result formats of the description cached outside
// (as a first version of that change did), the enum came in binary and
// pgline refused it on every run: each run in such a transaction must be
// described under its search_path.
func TestAuditPathFormatEnumColumn(t *testing.T) {
	const q = "SELECT v FROM ap_f_t WHERE $1::int4 = 1"
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := auditConn(t, "statement_cache_mode="+mode)
			apSetup(t, c, `CREATE SCHEMA ap_f; CREATE TYPE ap_f.mood AS ENUM ('happy', 'sad');
				CREATE TABLE ap_f.ap_f_t (v ap_f.mood); INSERT INTO ap_f.ap_f_t VALUES ('happy');
				CREATE TABLE public.ap_f_t (v int4); INSERT INTO public.ap_f_t VALUES (7)`,
				`DROP SCHEMA IF EXISTS ap_f CASCADE; DROP TABLE IF EXISTS public.ap_f_t`)
			ctx := testCtx(t)
			var n int32
			if err := c.QueryRow(ctx, q, 1).Scan(&n); err != nil || n != 7 {
				t.Fatalf("outside: %d, %v", n, err)
			}
			for i := range 2 {
				var got [2]string
				var errs [2]error
				err := apInTx(t, c, "SET LOCAL search_path = ap_f", func(ctx context.Context, tx *Tx) error {
					for j := range got {
						errs[j] = tx.QueryRow(ctx, q, 1).Scan(&got[j])
					}
					return nil
				})
				if err != nil {
					t.Errorf("tx %d: %v", i, err)
				}
				for j := range got {
					if errs[j] != nil || got[j] != "happy" {
						t.Errorf("tx %d, run %d with search_path ap_f (an enum column): %q, %v; want \"happy\"", i, j, got[j], errs[j])
					}
				}
			}
			if err := c.QueryRow(ctx, q, 1).Scan(&n); err != nil || n != 7 {
				t.Fatalf("outside after: %d, %v", n, err)
			}
		})
	}
}

// TestAuditPathFormatColumnCount: SELECT * over a table with two columns
// in the session's schema and three in the transaction's, with another
// goroutine using the statement outside between attempts (as in
// TestSearchPathTxRetryAfterOutsideUse). Bound with the cached
// description's two result formats, every attempt failed (08P01 or
// 0A000, aborting the transaction).
func TestAuditPathFormatColumnCount(t *testing.T) {
	const q = "SELECT * FROM ap_c_t WHERE $1::int4 = 1"
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := auditConn(t, "statement_cache_mode="+mode)
			apSetup(t, c, `CREATE SCHEMA ap_c;
				CREATE TABLE ap_c.ap_c_t (a int4, b int4, d int4); INSERT INTO ap_c.ap_c_t VALUES (1, 2, 3);
				CREATE TABLE public.ap_c_t (a int4, b int4); INSERT INTO public.ap_c_t VALUES (8, 9)`,
				`DROP SCHEMA IF EXISTS ap_c CASCADE; DROP TABLE IF EXISTS public.ap_c_t`)
			ctx := testCtx(t)
			for i := range 3 {
				var a, b int32
				if err := c.QueryRow(ctx, q, 1).Scan(&a, &b); err != nil || a != 8 || b != 9 {
					t.Fatalf("outside: %d %d, %v", a, b, err)
				}
				var x, y, z int32
				err := apInTx(t, c, "SET LOCAL search_path = ap_c", func(ctx context.Context, tx *Tx) error {
					return tx.QueryRow(ctx, q, 1).Scan(&x, &y, &z)
				})
				if err != nil || x != 1 || y != 2 || z != 3 {
					t.Errorf("attempt %d with search_path ap_c (three columns): %d %d %d, %v; want 1 2 3", i, x, y, z, err)
				}
			}
		})
	}
}

// TestAuditPathParamTextVsIntOutsideUse: as TestAuditPathParamTextVsInt,
// with the statement used outside between the transaction's attempts.
func TestAuditPathParamTextVsIntOutsideUse(t *testing.T) {
	const q = "SELECT v FROM ap_pt_t WHERE k = $1"
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := auditConn(t, "statement_cache_mode="+mode)
			apSetup(t, c, `CREATE SCHEMA ap_pt;
				CREATE TABLE ap_pt.ap_pt_t (k text, v int4); INSERT INTO ap_pt.ap_pt_t VALUES ('abc', 2);
				CREATE TABLE public.ap_pt_t (k int4, v int4); INSERT INTO public.ap_pt_t VALUES (5, 1)`,
				`DROP SCHEMA IF EXISTS ap_pt CASCADE; DROP TABLE IF EXISTS public.ap_pt_t`)
			ctx := testCtx(t)
			for i := range 3 {
				var v int32
				if err := c.QueryRow(ctx, q, 5).Scan(&v); err != nil || v != 1 {
					t.Fatalf("outside: %d, %v", v, err)
				}
				var got int32
				err := apInTx(t, c, "SET LOCAL search_path = ap_pt", func(ctx context.Context, tx *Tx) error {
					return tx.QueryRow(ctx, q, "abc").Scan(&got)
				})
				if err != nil || got != 2 {
					t.Errorf("attempt %d with search_path ap_pt (k text): %d, %v; want 2", i, got, err)
				}
			}
		})
	}
}
