package pgline

import (
	"context"
	"testing"
)

// TestPoolSearchPathLocalInBeginFunc: on a one-connection Pool, the statement is
// cached outside (int4), then run in BeginFunc after SET LOCAL
// search_path (text), then outside again, three times: each read gives
// its own schema's value and type.
func TestPoolSearchPathLocalInBeginFunc(t *testing.T) {
	for _, mode := range []string{"prepare", "describe", "auto"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN())
			pathSetup(t, c, pathTypesSetup, pathTypesCleanup)
			p, err := NewPool(testCtx(t), srv.DSN("pool_max_conns=1", "statement_cache_mode="+mode))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			ctx := testCtx(t)
			outside := func() {
				t.Helper()
				var v any
				if err := p.QueryRow(ctx, pathQ, 1).Scan(&v); err != nil || v != int32(7) {
					t.Fatalf("outside: %#v, %v; want int32 7", v, err)
				}
			}
			for i := range 3 {
				outside()
				var v any
				err := BeginFunc(ctx, p, func(tx *Tx) error {
					if _, err := tx.Exec(ctx, "SET LOCAL search_path TO lp_s, public"); err != nil {
						return err
					}
					return tx.QueryRow(ctx, pathQ, 1).Scan(&v)
				})
				if err != nil || v != "schema" {
					t.Fatalf("attempt %d in BeginFunc: %#v, %v; want \"schema\"", i, v, err)
				}
			}
			outside()
		})
	}
}

// TestSearchPathLocalCopyInTx: after SET LOCAL search_path, CopyFrom into the
// unqualified table writes the transaction's schema's table (text), having
// copied into public's (int4) outside before, and a cached read after it
// in the transaction sees the copied text.
func TestSearchPathLocalCopyInTx(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			pathSetup(t, c, pathTypesSetup, pathTypesCleanup)
			ctx := testCtx(t)
			if n, err := c.CopyFrom(ctx, Identifier{"lp_t"}, []string{"v"}, CopyFromRows([][]any{{int32(8)}})); err != nil || n != 1 {
				t.Fatalf("outside copy: %d, %v", n, err)
			}
			const q = "SELECT count(*)::int FROM lp_t WHERE $1::int4 = 1"
			var n int32
			if err := c.QueryRow(ctx, q, 1).Scan(&n); err != nil || n != 2 {
				t.Fatalf("outside count: %d, %v; want 2", n, err)
			}
			var got []string
			err := inLocalPathTx(t, c, "SET LOCAL search_path = lp_s", func(ctx context.Context, tx *Tx) error {
				if _, err := tx.CopyFrom(ctx, Identifier{"lp_t"}, []string{"v"}, CopyFromRows([][]any{{"copied"}})); err != nil {
					return err
				}
				if err := tx.QueryRow(ctx, q, 1).Scan(&n); err != nil {
					return err
				}
				rows, err := tx.Query(ctx, "SELECT v FROM lp_t WHERE $1::int4 = 1 ORDER BY v", 1)
				if err != nil {
					return err
				}
				defer rows.Close()
				for rows.Next() {
					var s string
					if err := rows.Scan(&s); err != nil {
						return err
					}
					got = append(got, s)
				}
				return rows.Err()
			})
			if err != nil || n != 2 || len(got) != 2 || got[0] != "copied" || got[1] != "schema" {
				t.Fatalf("in the transaction: count %d, rows %q, %v; want 2, [copied schema]", n, got, err)
			}
			if err := c.QueryRow(ctx, q, 1).Scan(&n); err != nil || n != 2 {
				t.Fatalf("outside count after: %d, %v; want 2", n, err)
			}
		})
	}
}
