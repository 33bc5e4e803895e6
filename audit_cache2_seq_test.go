//go:build auditopen

package pgline

// Audit of the statement cache against schema and session changes
// (sequential, deterministic cases). These tests FAIL today: each shows
// an open defect (see the closing note of 2026-12-02). They are kept out
// of the default build until fixed; run them with
//
//	go test -tags auditopen -run TestAuditCache2 .

import (
	"errors"
	"testing"
)

// TestAuditCache2TxRetryAfterOutsideUse: a transaction with SET LOCAL
// search_path (a schema whose table has a text column) runs a statement
// the connection cached under the session's search_path (int4 column):
// 0A000 aborts it, and pgline drops the statement so that "the
// transaction's retry prepares it anew". But on a shared Conn another
// goroutine runs the same statement outside between the attempts (here:
// deterministically, once between each), which caches it again under the
// session search_path: every retry of the transaction fails the same way.
func TestAuditCache2TxRetryAfterOutsideUse(t *testing.T) {
	c := auditConn(t, "statement_cache_mode=prepare")
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, `DROP SCHEMA IF EXISTS ac2_sp CASCADE; DROP TABLE IF EXISTS public.ac2_spt;
		CREATE SCHEMA ac2_sp; CREATE TABLE ac2_sp.ac2_spt (v text); INSERT INTO ac2_sp.ac2_spt VALUES ('schema');
		CREATE TABLE public.ac2_spt (v int4); INSERT INTO public.ac2_spt VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Exec(ctx, "DROP SCHEMA IF EXISTS ac2_sp CASCADE; DROP TABLE IF EXISTS public.ac2_spt") })
	const q = "SELECT v FROM ac2_spt WHERE $1::int4 = 1"
	outside := func() {
		t.Helper()
		var v any
		if err := c.QueryRow(ctx, q, 1).Scan(&v); err != nil || v != int32(7) {
			t.Fatalf("outside: %#v, %v", v, err)
		}
	}
	attempt := func() (any, error) {
		tx, err := c.Begin(ctx)
		if err != nil {
			return nil, err
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, "SET LOCAL search_path = ac2_sp"); err != nil {
			return nil, err
		}
		var v any
		if err := tx.QueryRow(ctx, q, 1).Scan(&v); err != nil {
			return nil, err
		}
		return v, tx.Commit(ctx)
	}
	outside()
	var err error
	for i := 0; i < 4; i++ {
		var v any
		v, err = attempt()
		if err == nil {
			if v != "schema" {
				t.Fatalf("attempt %d read %#v, want \"schema\"", i, v)
			}
			return
		}
		t.Logf("attempt %d: %v", i, err)
		outside() // another goroutine of the application, between attempts
	}
	t.Fatalf("every retry of the transaction failed: %v", err)
}

// TestAuditCache2HiddenDeallocatePoolerSign: DEALLOCATE ALL run inside a
// function (EXECUTE in PL/pgSQL) is invisible to sqllex; the next cached
// statement's 26000 is taken for a transaction pooler's sign
// (Conn.poolerSign) and the direct connection switches to describe mode
// for good (on a Pool, every connection to the host would follow). Minor:
// the results stay correct.
func TestAuditCache2HiddenDeallocatePoolerSign(t *testing.T) {
	c := auditConn(t, "statement_cache_mode=auto")
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, `CREATE OR REPLACE FUNCTION ac2_reset() RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'DEALLOCATE ALL'; END $$`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Exec(ctx, "DROP FUNCTION IF EXISTS ac2_reset()") })
	var v int32
	if err := c.QueryRow(ctx, "SELECT $1::int4", 1).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "SELECT ac2_reset()"); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT $1::int4", 1).Scan(&v); err != nil || v != 1 {
		t.Fatalf("after: %d, %v", v, err)
	}
	if m := c.StatementCacheMode(); m != "prepare" {
		t.Fatalf("a direct connection switched to %s mode (taken for a pooler) after the application's own DEALLOCATE ALL", m)
	}
}
