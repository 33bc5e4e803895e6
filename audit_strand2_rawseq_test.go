package pgline

// Audit of 357f8e0: raw transaction control split over several Exec calls
// on a Conn that one goroutine uses, as with libpq. pgline treats a text
// ending with COMMIT/END/ROLLBACK/ABORT whose reply ends with status != 'I'
// as a block nobody holds (owner == nil) and rolls it back; but with a
// raw BEGIN sent earlier the caller does hold it.

import (
	"errors"
	"testing"
)

// TestAuditStrand2RawSavepointRecover: BEGIN; INSERT 1; SAVEPOINT s;
// "INSERT 1; COMMIT" (duplicate key: the COMMIT is skipped, the block is
// aborted, the caller still holds it); ROLLBACK TO SAVEPOINT s; COMMIT.
// libpq: the savepoint recovers the block and row 1 is committed.
func TestAuditStrand2RawSavepointRecover(t *testing.T) {
	ctx := testCtx(t)
	tbl := auditIntTable(t, "audit_s2_sp")
	c := connect(t, srv.DSN())
	for _, sql := range []string{"BEGIN", "INSERT INTO " + tbl + " VALUES (1)", "SAVEPOINT s"} {
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	_, err := c.Exec(ctx, "INSERT INTO "+tbl+" VALUES (1); COMMIT")
	t.Logf("INSERT dup; COMMIT: %v (TxStatus %c)", err, c.TxStatus())
	if !isCode(err, "23505") {
		t.Fatalf("want 23505, got %v", err)
	}
	_, errTo := c.Exec(ctx, "ROLLBACK TO SAVEPOINT s")
	tag, errCommit := c.Exec(ctx, "COMMIT")
	n := auditTableCount(t, c, tbl)
	t.Logf("ROLLBACK TO SAVEPOINT: %v; COMMIT: %q %v; rows committed %d", errTo, tag, errCommit, n)
	if errTo != nil || n != 1 {
		t.Errorf("libpq semantics broken: ROLLBACK TO SAVEPOINT s: %v; rows committed %d, want 1", errTo, n)
	}
}

// TestAuditStrand2RawSavepointTypo: a failed ROLLBACK TO (a typo: a
// syntax error, which aborts the block) is read as ROLLBACK: pgline rolls
// the whole block back; libpq leaves it aborted, and the caller's next
// ROLLBACK TO SAVEPOINT recovers it.
func TestAuditStrand2RawSavepointTypo(t *testing.T) {
	ctx := testCtx(t)
	tbl := auditIntTable(t, "audit_s2_typo")
	c := connect(t, srv.DSN())
	for _, sql := range []string{"BEGIN", "INSERT INTO " + tbl + " VALUES (1)", "SAVEPOINT s", "INSERT INTO " + tbl + " VALUES (2)"} {
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	_, err := c.Exec(ctx, "ROLLBACK TOO SAVEPOINT s")
	t.Logf("typo: %v (TxStatus %c)", err, c.TxStatus())
	_, errTo := c.Exec(ctx, "ROLLBACK TO SAVEPOINT s")
	_, errCommit := c.Exec(ctx, "COMMIT")
	n := auditTableCount(t, c, tbl)
	t.Logf("ROLLBACK TO SAVEPOINT: %v; COMMIT: %v; rows committed %d", errTo, errCommit, n)
	if errTo != nil || n != 1 {
		t.Errorf("libpq semantics broken: ROLLBACK TO SAVEPOINT s: %v; rows committed %d, want 1", errTo, n)
	}
}

// TestAuditStrand2RawLibpqSeq: sequences whose outcome must be libpq's
// (passing: they end with status 'I' or have no block-ending text).
func TestAuditStrand2RawLibpqSeq(t *testing.T) {
	ctx := testCtx(t)
	tbl := auditIntTable(t, "audit_s2_seq")
	c := connect(t, srv.DSN())
	must := func(sql string) CommandTag {
		t.Helper()
		tag, err := c.Exec(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return tag
	}
	strands := c.strands.Load()

	// BEGIN, 1/0, ROLLBACK: 22012, then 25P02 for the next statement in the block, ROLLBACK ok.
	must("BEGIN")
	must("INSERT INTO " + tbl + " VALUES (10)")
	if _, err := c.Exec(ctx, "SELECT 1/0"); !isCode(err, "22012") {
		t.Fatalf("1/0: %v", err)
	}
	if c.TxStatus() != 'E' {
		t.Errorf("TxStatus after the failure in the raw block: %c, want E", c.TxStatus())
	}
	if _, err := c.Exec(ctx, "SELECT 1"); !isCode(err, "25P02") || errors.Is(err, ErrCanceledByOther) {
		t.Errorf("statement in the aborted raw block: %v, want a plain 25P02", err)
	}
	if tag := must("ROLLBACK"); tag.String() != "ROLLBACK" {
		t.Errorf("ROLLBACK tag %q", tag)
	}
	// BEGIN, 1/0, COMMIT: the COMMIT answers ROLLBACK.
	must("BEGIN")
	must("INSERT INTO " + tbl + " VALUES (11)")
	c.Exec(ctx, "SELECT 1/0")
	if tag := must("COMMIT"); tag.String() != "ROLLBACK" {
		t.Errorf("COMMIT of a failed raw block: tag %q, want ROLLBACK", tag)
	}
	// BEGIN, INSERT, COMMIT and END and ABORT texts.
	must("BEGIN")
	must("INSERT INTO " + tbl + " VALUES (12)")
	must("COMMIT")
	must("BEGIN")
	must("INSERT INTO " + tbl + " VALUES (13)")
	must("END")
	must("BEGIN")
	must("INSERT INTO " + tbl + " VALUES (14)")
	must("ABORT")
	// Lone COMMIT and ROLLBACK outside a block: warnings only.
	must("COMMIT")
	must("ROLLBACK")
	// "BEGIN; ...; COMMIT; BEGIN": the caller keeps the second block.
	must("BEGIN; INSERT INTO " + tbl + " VALUES (15); COMMIT; BEGIN")
	if c.TxStatus() != 'T' {
		t.Errorf("after ...; COMMIT; BEGIN: TxStatus %c, want T", c.TxStatus())
	}
	must("INSERT INTO " + tbl + " VALUES (16)")
	must("ROLLBACK")
	// COMMIT AND CHAIN keeps a block open.
	must("BEGIN")
	must("INSERT INTO " + tbl + " VALUES (17)")
	must("COMMIT AND CHAIN")
	if c.TxStatus() != 'T' {
		t.Errorf("after COMMIT AND CHAIN: TxStatus %c, want T", c.TxStatus())
	}
	must("INSERT INTO " + tbl + " VALUES (18)")
	must("ROLLBACK AND CHAIN")
	if c.TxStatus() != 'T' {
		t.Errorf("after ROLLBACK AND CHAIN: TxStatus %c, want T", c.TxStatus())
	}
	must("INSERT INTO " + tbl + " VALUES (19)")
	must("COMMIT")
	// A failed statement before COMMIT AND CHAIN in one text: not rolled back by pgline (the text keeps a block).
	must("BEGIN")
	if _, err := c.Exec(ctx, "SELECT 1/0; COMMIT AND CHAIN"); !isCode(err, "22012") {
		t.Fatalf("got %v", err)
	}
	if c.TxStatus() != 'E' {
		t.Errorf("after a failure before COMMIT AND CHAIN: TxStatus %c, want E (the caller's)", c.TxStatus())
	}
	must("ROLLBACK")
	// Savepoints: ROLLBACK TO keeps the block.
	must("BEGIN")
	must("INSERT INTO " + tbl + " VALUES (20)")
	must("SAVEPOINT a")
	c.Exec(ctx, "SELECT 1/0")
	must("ROLLBACK TO SAVEPOINT a")
	must("ROLLBACK TRANSACTION TO a")
	must("RELEASE a")
	must("COMMIT")
	if got := c.strands.Load() - strands; got != 0 {
		t.Errorf("pgline rolled back %d blocks in a libpq-style sequence", got)
	}
	var got []int64
	rows, _ := c.Query(ctx, "SELECT a FROM "+tbl+" ORDER BY a")
	for rows.Next() {
		var v int64
		rows.Scan(&v)
		got = append(got, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []int64{12, 13, 15, 17, 19, 20} // 18 rolled back by ROLLBACK AND CHAIN
	if len(got) != len(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("rows %v, want %v", got, want)
		}
	}
	wantUsable(t, ctx, c)
}
