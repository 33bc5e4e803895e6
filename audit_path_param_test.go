package pgline

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
const apParamSetup = `CREATE SCHEMA ap_p;
	CREATE TABLE ap_p.ap_p_t (k timestamp, v int4);
	INSERT INTO ap_p.ap_p_t VALUES ('2024-01-01 00:00', 10), ('2024-01-01 12:00', 20);
	CREATE TABLE public.ap_p_t (k date, v int4);
	INSERT INTO public.ap_p_t VALUES ('2024-01-01', 1)`

const apParamCleanup = `DROP SCHEMA IF EXISTS ap_p CASCADE; DROP TABLE IF EXISTS public.ap_p_t`

var apNoon = time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)

// TestAuditPathParamTypeQueryRow: QueryRow in the transaction reads the
// row of the transaction's schema matching the argument.
func TestAuditPathParamTypeQueryRow(t *testing.T) {
	const q = "SELECT v FROM ap_p_t WHERE k = $1"
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := auditConn(t, "statement_cache_mode="+mode)
			apSetup(t, c, apParamSetup, apParamCleanup)
			ctx := testCtx(t)
			var v int32
			if err := c.QueryRow(ctx, q, apNoon).Scan(&v); err != nil || v != 1 {
				t.Fatalf("outside: %d, %v; want 1", v, err)
			}
			for i := range 2 {
				var got int32
				err := apInTx(t, c, "SET LOCAL search_path = ap_p", func(ctx context.Context, tx *Tx) error {
					return tx.QueryRow(ctx, q, apNoon).Scan(&got)
				})
				if err != nil || got != 20 {
					t.Errorf("tx %d with search_path ap_p (k timestamp): k = 2024-01-01 12:00 read v=%d, %v; want 20 (the 12:00 row); 10 is the midnight row: the argument was bound as the date cached outside", i, got, err)
				}
			}
			// A fresh connection agrees.
			fresh := auditConn(t, "statement_cache_mode="+mode)
			var want int32
			if err := apInTx(t, fresh, "SET LOCAL search_path = ap_p", func(ctx context.Context, tx *Tx) error {
				return tx.QueryRow(ctx, q, apNoon).Scan(&want)
			}); err != nil || want != 20 {
				t.Fatalf("fresh connection: %d, %v; want 20", want, err)
			}
		})
	}
}

// TestAuditPathParamTypeExecWrites: an UPDATE with an argument in the
// transaction writes the value given, not one coerced to the parameter
// type cached outside (date: the time of day lost).
func TestAuditPathParamTypeExecWrites(t *testing.T) {
	const u = "UPDATE ap_p_t SET k = $1 WHERE v = $2"
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := auditConn(t, "statement_cache_mode="+mode)
			apSetup(t, c, apParamSetup, apParamCleanup)
			ctx := testCtx(t)
			if _, err := c.Exec(ctx, u, apNoon, 999); err != nil { // cached outside: $1 date
				t.Fatal(err)
			}
			at := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
			err := apInTx(t, c, "SET LOCAL search_path = ap_p", func(ctx context.Context, tx *Tx) error {
				_, err := tx.Exec(ctx, u, at, 10)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			var got time.Time
			if err := c.QueryRow(ctx, "SELECT k FROM ap_p.ap_p_t WHERE v = 10").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if !got.Equal(at) {
				t.Errorf("UPDATE in the transaction stored %v; want %v", got, at)
			}
		})
	}
}

// TestAuditPathParamTypeAfterTx: the statement is first used in the
// transaction (prepared there under its search_path: $1 timestamp), then
// outside after it: outside, k is a date and 2024-01-01 12:00 must match
// the 2024-01-01 row, as on a fresh connection.
func TestAuditPathParamTypeAfterTx(t *testing.T) {
	const q = "SELECT v FROM ap_p_t WHERE k = $1"
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := auditConn(t, "statement_cache_mode="+mode)
			apSetup(t, c, apParamSetup, apParamCleanup)
			ctx := testCtx(t)
			var got int32
			if err := apInTx(t, c, "SET LOCAL search_path = ap_p", func(ctx context.Context, tx *Tx) error {
				return tx.QueryRow(ctx, q, apNoon).Scan(&got)
			}); err != nil || got != 20 {
				t.Fatalf("in the transaction: %d, %v; want 20", got, err)
			}
			for i := range 2 {
				var v int32
				err := c.QueryRow(ctx, q, apNoon).Scan(&v)
				if err != nil || v != 1 {
					t.Errorf("outside, run %d, after the transaction: %d, %v (ErrNoRows %v); want 1", i, v, err, errors.Is(err, ErrNoRows))
				}
			}
		})
	}
}

// TestAuditPathParamTextVsInt: k is int4 in the session's schema and text
// in the transaction's: a string argument in the transaction must be
// compared as text.
func TestAuditPathParamTextVsInt(t *testing.T) {
	const q = "SELECT v FROM ap_pt_t WHERE k = $1"
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := auditConn(t, "statement_cache_mode="+mode)
			apSetup(t, c, `CREATE SCHEMA ap_pt;
				CREATE TABLE ap_pt.ap_pt_t (k text, v int4); INSERT INTO ap_pt.ap_pt_t VALUES ('abc', 2);
				CREATE TABLE public.ap_pt_t (k int4, v int4); INSERT INTO public.ap_pt_t VALUES (5, 1)`,
				`DROP SCHEMA IF EXISTS ap_pt CASCADE; DROP TABLE IF EXISTS public.ap_pt_t`)
			ctx := testCtx(t)
			var v int32
			if err := c.QueryRow(ctx, q, 5).Scan(&v); err != nil || v != 1 {
				t.Fatalf("outside: %d, %v", v, err)
			}
			for i := range 3 {
				var got int32
				err := apInTx(t, c, "SET LOCAL search_path = ap_pt", func(ctx context.Context, tx *Tx) error {
					return tx.QueryRow(ctx, q, "abc").Scan(&got)
				})
				if err != nil || got != 2 {
					t.Errorf("tx %d with search_path ap_pt (k text): k = 'abc' read %d, %v; want 2", i, got, err)
				}
			}
		})
	}
}
