package pgline

import (
	"context"
	"testing"
)

// TestAuditPathSetConfigArgs: search_path set with set_config whose
// setting name is an argument ($1), which the SQL scanner cannot see: the
// statement cached outside (int4) must still read the schema's text. The
// scanner takes the word set_config as a change of search_path; before
// it did, in prepare mode the transaction's statements kept binding the
// named statement, which the server refused (0A000, aborting the
// transaction) on every attempt.
func TestAuditPathSetConfigArgs(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := auditConn(t, "statement_cache_mode="+mode)
			apSetup(t, c, apTypesSetup, apTypesCleanup)
			for i := range 2 {
				apOutside(t, c)
				var v any
				err := apInTx(t, c, "", func(ctx context.Context, tx *Tx) error {
					if _, err := tx.Exec(ctx, "SELECT set_config($1, $2, true)", "search_path", "ap_s"); err != nil {
						return err
					}
					return tx.QueryRow(ctx, apQ, 1).Scan(&v)
				})
				if err != nil || v != "schema" {
					t.Errorf("attempt %d: %#v, %v; want \"schema\"", i, v, err)
				}
			}
		})
	}
}
