//go:build pooleropen

package pgline

// Open defects of the pooler detection: these tests FAIL today, each
// showing an open defect (see the closing note of 2026-12-02). They are
// kept out of the default build until fixed; run them with
//
//	go test -tags pooleropen -run TestPoolerSignHiddenDeallocate .

import (
	"testing"
)

// TestPoolerSignHiddenDeallocate: DEALLOCATE ALL run inside a
// function (EXECUTE in PL/pgSQL) is invisible to sqllex; the next cached
// statement's 26000 is taken for a transaction pooler's sign
// (Conn.poolerSign) and the direct connection switches to describe mode
// for good (on a Pool, every connection to the host would follow). Minor:
// the results stay correct.
func TestPoolerSignHiddenDeallocate(t *testing.T) {
	c := connect(t, srv.DSN("statement_cache_mode=auto"))
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, `CREATE OR REPLACE FUNCTION sps_reset() RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'DEALLOCATE ALL'; END $$`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Exec(ctx, "DROP FUNCTION IF EXISTS sps_reset()") })
	var v int32
	if err := c.QueryRow(ctx, "SELECT $1::int4", 1).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "SELECT sps_reset()"); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT $1::int4", 1).Scan(&v); err != nil || v != 1 {
		t.Fatalf("after: %d, %v", v, err)
	}
	if m := c.s.StatementCacheMode(); m != "prepare" {
		t.Fatalf("a direct connection switched to %s mode (taken for a pooler) after the application's own DEALLOCATE ALL", m)
	}
}
