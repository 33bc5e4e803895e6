package pgline

import (
	"errors"
	"testing"
)

// TestSearchPathLocalPreparedInTx: a statement first run (prepared and
// cached) inside a transaction whose SET LOCAL search_path points at
// another schema is then run outside it, and in a second transaction with
// a third schema. Each run must read the table its own search_path names:
// the server parses a prepared statement again when search_path changed
// (PostgreSQL 9.3 and later), and pgline's cache must not stand in the
// way, in either statement cache mode. When the other schema's column
// has another type, the run outside meets the server's "cached plan must
// not change result type" and is prepared again: the value comes back
// with its own type, never decoded with the other's. Inside a transaction
// that error aborts it (pgline cannot see search_path change); the
// statement is dropped from the cache, so the transaction's retry works.
func TestSearchPathLocalPreparedInTx(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := auditConn(t, "statement_cache_mode="+mode)
			ctx := testCtx(t)
			if _, err := c.Exec(ctx, `DROP SCHEMA IF EXISTS sp_a CASCADE; DROP SCHEMA IF EXISTS sp_b CASCADE;
				DROP SCHEMA IF EXISTS sp_c CASCADE; DROP TABLE IF EXISTS public.sp_t;
				CREATE SCHEMA sp_a; CREATE SCHEMA sp_b; CREATE SCHEMA sp_c;
				CREATE TABLE sp_c.sp_t (v text); INSERT INTO sp_c.sp_t VALUES ('four');
				CREATE TABLE sp_a.sp_t (v int4); INSERT INTO sp_a.sp_t VALUES (1);
				CREATE TABLE sp_b.sp_t (v int4); INSERT INTO sp_b.sp_t VALUES (2);
				CREATE TABLE public.sp_t (v int4); INSERT INTO public.sp_t VALUES (3)`); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				c.Exec(ctx, "DROP SCHEMA IF EXISTS sp_a CASCADE; DROP SCHEMA IF EXISTS sp_b CASCADE; DROP SCHEMA IF EXISTS sp_c CASCADE; DROP TABLE IF EXISTS public.sp_t")
			})
			const q = "SELECT v FROM sp_t WHERE $1::int4 = 1"
			inTxErr := func(schema string) (any, error) {
				t.Helper()
				tx, err := c.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback(ctx)
				if _, err := tx.Exec(ctx, "SET LOCAL search_path = "+schema); err != nil {
					t.Fatal(err)
				}
				var v any
				if err := tx.QueryRow(ctx, q, 1).Scan(&v); err != nil {
					return nil, err
				}
				return v, tx.Commit(ctx)
			}
			inTx := func(schema string) any {
				t.Helper()
				v, err := inTxErr(schema)
				if err != nil {
					t.Fatalf("in a transaction with search_path %s: %v", schema, err)
				}
				return v
			}
			outside := func() any {
				t.Helper()
				var v any
				if err := c.QueryRow(ctx, q, 1).Scan(&v); err != nil {
					t.Fatalf("outside a transaction: %v", err)
				}
				return v
			}
			if v := inTx("sp_a"); v != int32(1) {
				t.Fatalf("search_path sp_a read %#v, want int32 1", v)
			}
			if v := outside(); v != int32(3) {
				t.Fatalf("outside, after the statement was cached under sp_a: read %#v, want int32 3 (public.sp_t)", v)
			}
			if v := inTx("sp_b"); v != int32(2) {
				t.Fatalf("search_path sp_b read %#v, want int32 2", v)
			}
			if v := outside(); v != int32(3) {
				t.Fatalf("outside again: read %v, want 3", v)
			}
			// The statement cached outside (int4) is parsed again by the
			// server under sp_c (text): with named statements the server
			// refuses it (0A000, aborting the transaction), and pgline
			// drops it so that the transaction's retry prepares it anew.
			v, err := inTxErr("sp_c")
			if err != nil && mode == "prepare" {
				var pgErr *PgError
				if !errors.As(err, &pgErr) || pgErr.Code != "0A000" {
					t.Fatalf("search_path sp_c (a text column), first time: %v, want the server's 0A000", err)
				}
				v, err = inTxErr("sp_c")
			}
			if err != nil || v != "four" {
				t.Fatalf("search_path sp_c (a text column) read %#v, %v; want \"four\"", v, err)
			}
			if v := outside(); v != int32(3) {
				t.Fatalf("outside, after the statement was cached with a text column: read %#v, want int32 3", v)
			}
		})
	}
}
