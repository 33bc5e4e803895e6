package pgline

// Audit of the statement cache: a parameter's type inferred from a column
// that changed type.

import (
	"fmt"
	"testing"
)

// TestAuditCache2ParamTypeChangeForever: a cached statement whose
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
func TestAuditCache2ParamTypeChangeForever(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := auditConn(t, "statement_cache_mode="+mode)
			ctx := testCtx(t)
			tbl := "ac2_param_" + mode
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
			fresh := auditConn(t, "statement_cache_mode="+mode)
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
