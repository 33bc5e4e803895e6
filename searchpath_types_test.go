package pgline

// Parameter and result types that differ between the session's schema and
// the one a transaction's SET LOCAL search_path selects: each run in the
// transaction is bound with the types and result formats of its own
// search_path.

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The column compared with $1 has another type in the transaction's
// schema (timestamp) than in the session's (date). Outside, the statement
// is cached with a date parameter. Bound with that type in the
// transaction after SET LOCAL search_path (as pgline did before
// statements there were described for each run), the argument
// 2024-01-01 12:00 was cut to the date 2024-01-01 and compared as
// midnight: the row at 00:00 (v=10) came back instead of the one at 12:00
// (v=20), with no error.
const pathParamSetup = `CREATE SCHEMA lp_p;
	CREATE TABLE lp_p.lp_p_t (k timestamp, v int4);
	INSERT INTO lp_p.lp_p_t VALUES ('2024-01-01 00:00', 10), ('2024-01-01 12:00', 20);
	CREATE TABLE public.lp_p_t (k date, v int4);
	INSERT INTO public.lp_p_t VALUES ('2024-01-01', 1)`

const pathParamCleanup = `DROP SCHEMA IF EXISTS lp_p CASCADE; DROP TABLE IF EXISTS public.lp_p_t`

var pathNoon = time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)

// TestSearchPathLocalParamTypeQueryRow: QueryRow in the transaction reads
// the row of the transaction's schema matching the argument.
func TestSearchPathLocalParamTypeQueryRow(t *testing.T) {
	const q = "SELECT v FROM lp_p_t WHERE k = $1"
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			pathSetup(t, c, pathParamSetup, pathParamCleanup)
			ctx := testCtx(t)
			var v int32
			if err := c.QueryRow(ctx, q, pathNoon).Scan(&v); err != nil || v != 1 {
				t.Fatalf("outside: %d, %v; want 1", v, err)
			}
			for i := range 2 {
				var got int32
				err := inLocalPathTx(t, c, "SET LOCAL search_path = lp_p", func(ctx context.Context, tx *Tx) error {
					return tx.QueryRow(ctx, q, pathNoon).Scan(&got)
				})
				if err != nil || got != 20 {
					t.Errorf("tx %d with search_path lp_p (k timestamp): k = 2024-01-01 12:00 read v=%d, %v; want 20 (the 12:00 row); 10 is the midnight row: the argument was bound as the date cached outside", i, got, err)
				}
			}
			// A fresh connection agrees.
			fresh := connect(t, srv.DSN("statement_cache_mode="+mode))
			var want int32
			if err := inLocalPathTx(t, fresh, "SET LOCAL search_path = lp_p", func(ctx context.Context, tx *Tx) error {
				return tx.QueryRow(ctx, q, pathNoon).Scan(&want)
			}); err != nil || want != 20 {
				t.Fatalf("fresh connection: %d, %v; want 20", want, err)
			}
		})
	}
}

// TestSearchPathLocalParamTypeExecWrites: an UPDATE with an argument in the
// transaction writes the value given, not one coerced to the parameter
// type cached outside (date: the time of day lost).
func TestSearchPathLocalParamTypeExecWrites(t *testing.T) {
	const u = "UPDATE lp_p_t SET k = $1 WHERE v = $2"
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			pathSetup(t, c, pathParamSetup, pathParamCleanup)
			ctx := testCtx(t)
			if _, err := c.Exec(ctx, u, pathNoon, 999); err != nil { // cached outside: $1 date
				t.Fatal(err)
			}
			at := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
			err := inLocalPathTx(t, c, "SET LOCAL search_path = lp_p", func(ctx context.Context, tx *Tx) error {
				_, err := tx.Exec(ctx, u, at, 10)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			var got time.Time
			if err := c.QueryRow(ctx, "SELECT k FROM lp_p.lp_p_t WHERE v = 10").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if !got.Equal(at) {
				t.Errorf("UPDATE in the transaction stored %v; want %v", got, at)
			}
		})
	}
}

// TestSearchPathLocalParamTypeAfterTx: the statement is first used in the
// transaction (prepared there under its search_path: $1 timestamp), then
// outside after it: outside, k is a date and 2024-01-01 12:00 must match
// the 2024-01-01 row, as on a fresh connection.
func TestSearchPathLocalParamTypeAfterTx(t *testing.T) {
	const q = "SELECT v FROM lp_p_t WHERE k = $1"
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			pathSetup(t, c, pathParamSetup, pathParamCleanup)
			ctx := testCtx(t)
			var got int32
			if err := inLocalPathTx(t, c, "SET LOCAL search_path = lp_p", func(ctx context.Context, tx *Tx) error {
				return tx.QueryRow(ctx, q, pathNoon).Scan(&got)
			}); err != nil || got != 20 {
				t.Fatalf("in the transaction: %d, %v; want 20", got, err)
			}
			for i := range 2 {
				var v int32
				err := c.QueryRow(ctx, q, pathNoon).Scan(&v)
				if err != nil || v != 1 {
					t.Errorf("outside, run %d, after the transaction: %d, %v (ErrNoRows %v); want 1", i, v, err, errors.Is(err, ErrNoRows))
				}
			}
		})
	}
}

// TestSearchPathLocalParamTextVsInt: k is int4 in the session's schema
// and text in the transaction's: a string argument in the transaction
// must be compared as text.
func TestSearchPathLocalParamTextVsInt(t *testing.T) {
	const q = "SELECT v FROM lp_pt_t WHERE k = $1"
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			pathSetup(t, c, `CREATE SCHEMA lp_pt;
				CREATE TABLE lp_pt.lp_pt_t (k text, v int4); INSERT INTO lp_pt.lp_pt_t VALUES ('abc', 2);
				CREATE TABLE public.lp_pt_t (k int4, v int4); INSERT INTO public.lp_pt_t VALUES (5, 1)`,
				`DROP SCHEMA IF EXISTS lp_pt CASCADE; DROP TABLE IF EXISTS public.lp_pt_t`)
			ctx := testCtx(t)
			var v int32
			if err := c.QueryRow(ctx, q, 5).Scan(&v); err != nil || v != 1 {
				t.Fatalf("outside: %d, %v", v, err)
			}
			for i := range 3 {
				var got int32
				err := inLocalPathTx(t, c, "SET LOCAL search_path = lp_pt", func(ctx context.Context, tx *Tx) error {
					return tx.QueryRow(ctx, q, "abc").Scan(&got)
				})
				if err != nil || got != 2 {
					t.Errorf("tx %d with search_path lp_pt (k text): k = 'abc' read %d, %v; want 2", i, got, err)
				}
			}
		})
	}
}

// TestSearchPathLocalParamTextVsIntOutsideUse: as
// TestSearchPathLocalParamTextVsInt, with the statement used outside
// between the transaction's attempts.
func TestSearchPathLocalParamTextVsIntOutsideUse(t *testing.T) {
	const q = "SELECT v FROM lp_pt_t WHERE k = $1"
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			pathSetup(t, c, `CREATE SCHEMA lp_pt;
				CREATE TABLE lp_pt.lp_pt_t (k text, v int4); INSERT INTO lp_pt.lp_pt_t VALUES ('abc', 2);
				CREATE TABLE public.lp_pt_t (k int4, v int4); INSERT INTO public.lp_pt_t VALUES (5, 1)`,
				`DROP SCHEMA IF EXISTS lp_pt CASCADE; DROP TABLE IF EXISTS public.lp_pt_t`)
			ctx := testCtx(t)
			for i := range 3 {
				var v int32
				if err := c.QueryRow(ctx, q, 5).Scan(&v); err != nil || v != 1 {
					t.Fatalf("outside: %d, %v", v, err)
				}
				var got int32
				err := inLocalPathTx(t, c, "SET LOCAL search_path = lp_pt", func(ctx context.Context, tx *Tx) error {
					return tx.QueryRow(ctx, q, "abc").Scan(&got)
				})
				if err != nil || got != 2 {
					t.Errorf("attempt %d with search_path lp_pt (k text): %d, %v; want 2", i, got, err)
				}
			}
		})
	}
}

// TestSearchPathLocalResultFormatEnum: the result column is int4 in the
// session's schema (cached outside, bound for binary results) and an enum
// in the transaction's, which pgline reads in text only. Bound in the
// transaction, after SET LOCAL search_path, with the result formats of
// the description cached outside (as a first version of that change did),
// the enum came in binary and pgline refused it on every run: each run in
// such a transaction must be described under its search_path.
func TestSearchPathLocalResultFormatEnum(t *testing.T) {
	const q = "SELECT v FROM lp_f_t WHERE $1::int4 = 1"
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			pathSetup(t, c, `CREATE SCHEMA lp_f; CREATE TYPE lp_f.mood AS ENUM ('happy', 'sad');
				CREATE TABLE lp_f.lp_f_t (v lp_f.mood); INSERT INTO lp_f.lp_f_t VALUES ('happy');
				CREATE TABLE public.lp_f_t (v int4); INSERT INTO public.lp_f_t VALUES (7)`,
				`DROP SCHEMA IF EXISTS lp_f CASCADE; DROP TABLE IF EXISTS public.lp_f_t`)
			ctx := testCtx(t)
			var n int32
			if err := c.QueryRow(ctx, q, 1).Scan(&n); err != nil || n != 7 {
				t.Fatalf("outside: %d, %v", n, err)
			}
			for i := range 2 {
				var got [2]string
				var errs [2]error
				err := inLocalPathTx(t, c, "SET LOCAL search_path = lp_f", func(ctx context.Context, tx *Tx) error {
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
						t.Errorf("tx %d, run %d with search_path lp_f (an enum column): %q, %v; want \"happy\"", i, j, got[j], errs[j])
					}
				}
			}
			if err := c.QueryRow(ctx, q, 1).Scan(&n); err != nil || n != 7 {
				t.Fatalf("outside after: %d, %v", n, err)
			}
		})
	}
}

// TestSearchPathLocalResultColumnCount: SELECT * over a table with two
// columns in the session's schema and three in the transaction's, with
// another goroutine using the statement outside between attempts (as in
// TestSearchPathTxRetryAfterOutsideUse). Bound with the cached
// description's two result formats, every attempt failed (08P01 or 0A000,
// aborting the transaction).
func TestSearchPathLocalResultColumnCount(t *testing.T) {
	const q = "SELECT * FROM lp_c_t WHERE $1::int4 = 1"
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			pathSetup(t, c, `CREATE SCHEMA lp_c;
				CREATE TABLE lp_c.lp_c_t (a int4, b int4, d int4); INSERT INTO lp_c.lp_c_t VALUES (1, 2, 3);
				CREATE TABLE public.lp_c_t (a int4, b int4); INSERT INTO public.lp_c_t VALUES (8, 9)`,
				`DROP SCHEMA IF EXISTS lp_c CASCADE; DROP TABLE IF EXISTS public.lp_c_t`)
			ctx := testCtx(t)
			for i := range 3 {
				var a, b int32
				if err := c.QueryRow(ctx, q, 1).Scan(&a, &b); err != nil || a != 8 || b != 9 {
					t.Fatalf("outside: %d %d, %v", a, b, err)
				}
				var x, y, z int32
				err := inLocalPathTx(t, c, "SET LOCAL search_path = lp_c", func(ctx context.Context, tx *Tx) error {
					return tx.QueryRow(ctx, q, 1).Scan(&x, &y, &z)
				})
				if err != nil || x != 1 || y != 2 || z != 3 {
					t.Errorf("attempt %d with search_path lp_c (three columns): %d %d %d, %v; want 1 2 3", i, x, y, z, err)
				}
			}
		})
	}
}
