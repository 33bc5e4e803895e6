package pgline

import (
	"context"
	"testing"
)

// TestAuditCodecColumnRetypedSameSize changes a column's type between
// runs of the same statement to another type of the same binary size
// (int4 -> float4, int8 -> float8, int8 -> timestamp) in each
// statement_cache_mode. A description cached before the change must not
// decode the new type's bytes as the old type: the value read must be the
// new one, or the run must fail.
func TestAuditCodecColumnRetypedSameSize(t *testing.T) {
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
