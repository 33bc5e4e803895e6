package pgline

// Audit of 357f8e0 (a text given to Exec or Query outside a Tx whose last
// transaction-control statement ends a block, and whose reply ends with
// status != 'I', is rolled back as a stranded block). sqllex splits a
// SQL-standard function body (CREATE FUNCTION ... BEGIN ATOMIC ...; END)
// at its semicolons, so the last "statement" it sees is END: the text
// reads as ending a block. Given while the caller holds a block of its
// own (Exec("BEGIN") earlier, libpq style, one goroutine), the reply's
// status is 'T' and pgline rolls the caller's block back behind its back.

import (
	"fmt"
	"testing"
)

const auditAtomicFn = `CREATE FUNCTION %s() RETURNS int LANGUAGE sql
BEGIN ATOMIC
  SELECT 1;
END`

// TestAuditStrand2AtomicRawBlock: BEGIN; CREATE TABLE; CREATE FUNCTION
// ... BEGIN ATOMIC ... END; COMMIT, each given to Exec in turn on a Conn
// used by one goroutine. With libpq both the table and the function
// exist afterwards.
func TestAuditStrand2AtomicRawBlock(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	tbl, fn := auditStrand2Name("audit_s2_atomic_t"), auditStrand2Name("audit_s2_atomic_f")
	t.Cleanup(func() {
		c2 := connect(t, srv.DSN())
		c2.Exec(ctx, "DROP TABLE IF EXISTS "+tbl)
		c2.Exec(ctx, "DROP FUNCTION IF EXISTS "+fn+"()")
	})
	strands := c.strands.Load()
	for _, sql := range []string{"BEGIN", "CREATE TABLE " + tbl + " (a int)", fmt.Sprintf(auditAtomicFn, fn)} {
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%q: %v", sql, err)
		}
		t.Logf("after %.30q: TxStatus %c", sql, c.TxStatus())
	}
	// What the caller's block holds at this point: the table.
	var n int64
	err := c.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname = $1", tbl).Scan(&n)
	t.Logf("table visible in the caller's block: %d (%v), TxStatus %c", n, err, c.TxStatus())
	tag, err := c.Exec(ctx, "COMMIT")
	t.Logf("COMMIT: %q %v", tag, err)
	var tables, funcs int64
	if err := c.QueryRow(ctx, "SELECT (SELECT count(*) FROM pg_class WHERE relname = $1), (SELECT count(*) FROM pg_proc WHERE proname = $2)", tbl, fn).Scan(&tables, &funcs); err != nil {
		t.Fatal(err)
	}
	t.Logf("after COMMIT: table %d, function %d; blocks pgline rolled back: %d", tables, funcs, c.strands.Load()-strands)
	if tables != 1 || funcs != 1 {
		t.Errorf("the caller's block was rolled back behind its back: table %d, function %d after a COMMIT (pgline rolled back %d blocks)", tables, funcs, c.strands.Load()-strands)
	}
}

// TestAuditStrand2AtomicOneText: one text that opens a block the caller
// means to keep ("BEGIN; CREATE FUNCTION ... BEGIN ATOMIC ...; END"), its
// COMMIT in a later Exec.
func TestAuditStrand2AtomicOneText(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	fn := auditStrand2Name("audit_s2_atomic1")
	t.Cleanup(func() { connect(t, srv.DSN()).Exec(ctx, "DROP FUNCTION IF EXISTS "+fn+"()") })
	if _, err := c.Exec(ctx, "BEGIN; "+fmt.Sprintf(auditAtomicFn, fn)); err != nil {
		t.Fatal(err)
	}
	t.Logf("after the text: TxStatus %c", c.TxStatus())
	if _, err := c.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	var funcs int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_proc WHERE proname = $1", fn).Scan(&funcs); err != nil {
		t.Fatal(err)
	}
	if funcs != 1 {
		t.Errorf("function committed: %d, want 1 (the block the text opened was rolled back)", funcs)
	}
}

// TestAuditStrand2AtomicQuery: the same through Query (extended
// protocol, sqlTraits.endsBlock).
func TestAuditStrand2AtomicQuery(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	fn := auditStrand2Name("audit_s2_atomicq")
	t.Cleanup(func() { connect(t, srv.DSN()).Exec(ctx, "DROP FUNCTION IF EXISTS "+fn+"()") })
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	rows, err := c.Query(ctx, fmt.Sprintf(auditAtomicFn, fn))
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("after Query: TxStatus %c", c.TxStatus())
	if _, err := c.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	var funcs int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_proc WHERE proname = $1", fn).Scan(&funcs); err != nil {
		t.Fatal(err)
	}
	if funcs != 1 {
		t.Errorf("function committed: %d, want 1", funcs)
	}
}
