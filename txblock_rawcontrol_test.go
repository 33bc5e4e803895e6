package pgline

// Transaction control given as text (Exec, Query, a Batch), libpq
// style, on a Conn one goroutine uses: a text whose last transaction
// control ends a block and whose reply ends with status != 'I' is rolled
// back as a stranded block; every other text leaves the block the caller
// holds as libpq does (a raw BEGIN earlier, a block-ending word only
// inside a string, comment, quoted identifier, dollar-quoted or
// BEGIN ATOMIC body, COMMIT AND CHAIN, savepoints, PREPARE TRANSACTION).
// Each text runs on a real server; the status expected is what the server
// reports, checked with a probe in the block.

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pgline/pgline/internal/sqllex"
)

// TestRawTxLexTransactionControl: texts that may commit must be seen as
// transaction control: a FATAL before their reply would otherwise be taken
// to mean nothing of them persisted.
func TestRawTxLexTransactionControl(t *testing.T) {
	for _, s := range []string{
		"-- comment\nCALL p()",
		"/* c */ CALL p()",
		"/* nested /* c */ */ COMMIT",
		"SELECT 1; COMMIT",
		"select 1;commit",
		"  \n\tEND",
		"((CALL p()))",
		"E'x'; COMMIT",
		"SELECT $$;$$; ROLLBACK",
		"SELECT 'it''s'; ABORT",
		"SELECT \"a;b\"; START TRANSACTION",
		"DO $$BEGIN NULL; END$$",
		"do language plpgsql $x$ begin null; end $x$",
		`SELECT 'a\'; COMMIT`,
		"SELECT 1 /* ; */ ; COMMIT",
		"SELECT U&'\\0041'; COMMIT",
	} {
		if !sqllex.Scan(s).TransactionControl {
			t.Errorf("%q: not seen as transaction control", s)
		}
	}
}

// TestRawTxTextKeepsBlock: texts that leave the session in a block the
// caller keeps (the server's last transaction control is BEGIN, or a
// block-ending word is only inside a string, comment, quoted identifier,
// dollar-quoted or BEGIN ATOMIC body) are not rolled back as stranded.
func TestRawTxTextKeepsBlock(t *testing.T) {
	for _, tc := range []struct {
		name, sql string
		scsOff    bool
	}{
		{"string", `BEGIN; SELECT 'COMMIT'`, false},
		{"string ; COMMIT", `BEGIN; SELECT '; COMMIT'`, false},
		{"dollar", `BEGIN; SELECT $$; COMMIT; $$`, false},
		{"tagged dollar with $$ inside", `BEGIN; SELECT $a$ $$; COMMIT $a$`, false},
		{"dollar tag with digits/underscore", `BEGIN; SELECT $_x1$ ; COMMIT $_x1$`, false},
		{"line comment", "BEGIN; SELECT 1 -- ; COMMIT", false},
		{"nested block comment", `BEGIN; /* a /* b */ ; COMMIT; */ SELECT 1`, false},
		{"E string", `BEGIN; SELECT E'\'; COMMIT; --'`, false},
		{"E string scs off", `BEGIN; SELECT E'\'; COMMIT; --'`, true},
		{"plain string backslash scs off", `BEGIN; SELECT 'a\'; COMMIT; --'`, true},
		{"N string scs off", `BEGIN; SELECT N'a\'; COMMIT; --'`, true},
		{"string continuation", "BEGIN; SELECT 'a'\n'; COMMIT; '", false},
		{"quoted identifier", `BEGIN; SELECT 1 AS "; COMMIT"`, false},
		{"identifier with dollar", `BEGIN; SELECT 1 AS x$$; SELECT 2 AS y$$`, false},
		{"COMMIT; BEGIN", `BEGIN; SELECT 1; COMMIT; BEGIN`, false},
		{"END; START TRANSACTION", `BEGIN; END; START TRANSACTION`, false},
		{"COMMIT AND CHAIN", `BEGIN; SELECT 1; COMMIT AND CHAIN`, false},
		{"END AND CHAIN", `BEGIN; END AND CHAIN`, false},
		{"ABORT AND CHAIN", `BEGIN; ABORT AND CHAIN`, false},
		{"ROLLBACK TO", `BEGIN; SAVEPOINT a; ROLLBACK TO a`, false},
		{"ROLLBACK WORK TO SAVEPOINT", `BEGIN; SAVEPOINT a; ROLLBACK WORK TO SAVEPOINT a`, false},
		{"parenthesized select", `BEGIN; (SELECT 1)`, false},
		{"CREATE FUNCTION BEGIN ATOMIC", `BEGIN; CREATE FUNCTION pg_temp.txblk_f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; END`, false},
		{"CREATE PROCEDURE BEGIN ATOMIC", `BEGIN; CREATE PROCEDURE pg_temp.txblk_p() LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT 2; END`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.sql, "BEGIN ATOMIC") {
				srv.NeedVersion(t, 14, "BEGIN ATOMIC function bodies")
			}
			ctx := testCtx(t)
			c := connect(t, srv.DSN())
			if tc.scsOff {
				if _, err := c.Exec(ctx, "SET standard_conforming_strings = off; SET escape_string_warning = off"); err != nil {
					t.Fatal(err)
				}
			}
			strands := c.s.Block.Strands.Load()
			_, err := c.Exec(ctx, tc.sql)
			if err != nil {
				t.Fatalf("%q: %v", tc.sql, err)
			}
			// Still in the caller's block? The server says whether a
			// SAVEPOINT is allowed.
			_, spErr := c.Exec(ctx, "SAVEPOINT block_probe")
			info := sqllex.Scan(tc.sql)
			if spErr != nil || c.s.Block.Strands.Load() != strands {
				t.Errorf("%q (EndsBlock=%v): the caller's block was rolled back (strands +%d, probe: %v)", tc.sql, info.EndsBlock, c.s.Block.Strands.Load()-strands, spErr)
			}
			c.Exec(ctx, "ROLLBACK")
		})
	}
}

// TestRawTxTextEndsBlock: texts that end their block and fail
// before the end are rolled back (what the rule is for), including with
// comments, odd spellings and scs off.
func TestRawTxTextEndsBlock(t *testing.T) {
	for _, tc := range []struct {
		name, sql string
		scsOff    bool
	}{
		{"plain", `BEGIN; SELECT 1/0; COMMIT`, false},
		{"END", `BEGIN; SELECT 1/0; END`, false},
		{"ABORT", `START TRANSACTION; SELECT 1/0; ABORT`, false},
		{"lower case, comments", "begin /* x */; select 1/0; /* c */ commit work -- done", false},
		{"COMMIT AND NO CHAIN", `BEGIN; SELECT 1/0; COMMIT AND NO CHAIN`, false},
		{"string before commit", `BEGIN; SELECT 'x' || (1/0)::text; COMMIT`, false},
		{"backslash in string scs off", `BEGIN; SELECT 'a\'' || 1/0; COMMIT`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			c := connect(t, srv.DSN())
			if tc.scsOff {
				if _, err := c.Exec(ctx, "SET standard_conforming_strings = off; SET escape_string_warning = off"); err != nil {
					t.Fatal(err)
				}
			}
			_, err := c.Exec(ctx, tc.sql)
			if err == nil {
				t.Fatalf("%q: no error", tc.sql)
			}
			var v int64
			err = c.QueryRow(ctx, "SELECT 5::int8").Scan(&v)
			info := sqllex.Scan(tc.sql)
			if err != nil || v != 5 {
				// "COMMIT AND NO CHAIN" holds the word CHAIN, and a backslash
				// in a string reads differently with scs on and off: not
				// seen as an end (conservative).
				if strings.Contains(tc.sql, "NO CHAIN") || strings.Contains(tc.sql, `\`) {
					t.Logf("%q (EndsBlock=%v): left stranded, next statement: %v (conservative miss)", tc.sql, info.EndsBlock, err)
					return
				}
				t.Errorf("%q (EndsBlock=%v): next statement %v", tc.sql, info.EndsBlock, err)
			}
		})
	}
}

// TestRawTxLibpqSequences: sequences whose outcome must be libpq's
// (passing: they end with status 'I' or have no block-ending text).
func TestRawTxLibpqSequences(t *testing.T) {
	ctx := testCtx(t)
	tbl := intTable(t, "txblk_seq")
	c := connect(t, srv.DSN())
	must := func(sql string) CommandTag {
		t.Helper()
		tag, err := c.Exec(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return tag
	}
	strands := c.s.Block.Strands.Load()

	// BEGIN, 1/0, ROLLBACK: 22012, then 25P02 for the next statement in the block, ROLLBACK ok.
	must("BEGIN")
	must("INSERT INTO " + tbl + " VALUES (10)")
	if _, err := c.Exec(ctx, "SELECT 1/0"); pgCode(err) != "22012" {
		t.Fatalf("1/0: %v", err)
	}
	if c.TxStatus() != 'E' {
		t.Errorf("TxStatus after the failure in the raw block: %c, want E", c.TxStatus())
	}
	if _, err := c.Exec(ctx, "SELECT 1"); pgCode(err) != "25P02" || errors.Is(err, ErrCanceledByOther) {
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
	if _, err := c.Exec(ctx, "SELECT 1/0; COMMIT AND CHAIN"); pgCode(err) != "22012" {
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
	if got := c.s.Block.Strands.Load() - strands; got != 0 {
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

// TestRawTxSavepointRecovers: BEGIN; INSERT 1; SAVEPOINT s;
// "INSERT 1; COMMIT" (duplicate key: the COMMIT is skipped, the block is
// aborted, the caller still holds it); ROLLBACK TO SAVEPOINT s; COMMIT.
// libpq: the savepoint recovers the block and row 1 is committed.
func TestRawTxSavepointRecovers(t *testing.T) {
	ctx := testCtx(t)
	tbl := intTable(t, "txblk_sp")
	c := connect(t, srv.DSN())
	for _, sql := range []string{"BEGIN", "INSERT INTO " + tbl + " VALUES (1)", "SAVEPOINT s"} {
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	_, err := c.Exec(ctx, "INSERT INTO "+tbl+" VALUES (1); COMMIT")
	t.Logf("INSERT dup; COMMIT: %v (TxStatus %c)", err, c.TxStatus())
	if pgCode(err) != "23505" {
		t.Fatalf("want 23505, got %v", err)
	}
	_, errTo := c.Exec(ctx, "ROLLBACK TO SAVEPOINT s")
	tag, errCommit := c.Exec(ctx, "COMMIT")
	n := rowCount(t, c, tbl)
	t.Logf("ROLLBACK TO SAVEPOINT: %v; COMMIT: %q %v; rows committed %d", errTo, tag, errCommit, n)
	if errTo != nil || n != 1 {
		t.Errorf("libpq semantics broken: ROLLBACK TO SAVEPOINT s: %v; rows committed %d, want 1", errTo, n)
	}
}

// TestRawTxSavepointTypo: a failed ROLLBACK TO (a typo: a
// syntax error, which aborts the block) is read as ROLLBACK: pgline rolls
// the whole block back; libpq leaves it aborted, and the caller's next
// ROLLBACK TO SAVEPOINT recovers it.
func TestRawTxSavepointTypo(t *testing.T) {
	ctx := testCtx(t)
	tbl := intTable(t, "txblk_typo")
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
	n := rowCount(t, c, tbl)
	t.Logf("ROLLBACK TO SAVEPOINT: %v; COMMIT: %v; rows committed %d", errTo, errCommit, n)
	if errTo != nil || n != 1 {
		t.Errorf("libpq semantics broken: ROLLBACK TO SAVEPOINT s: %v; rows committed %d, want 1", errTo, n)
	}
}

// TestRawTxPrepareTransaction: PREPARE TRANSACTION and COMMIT/ROLLBACK
// PREPARED are not block ends to sqllex (PREPARED); a failed PREPARE
// TRANSACTION in a raw block (max_prepared_transactions = 0 here) leaves
// the caller's block as libpq does.
func TestRawTxPrepareTransaction(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	var max string
	if err := c.QueryRow(ctx, "SELECT current_setting('max_prepared_transactions')").Scan(&max); err != nil {
		t.Fatal(err)
	}
	t.Logf("max_prepared_transactions = %s", max)
	strands := c.s.Block.Strands.Load()
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	_, err := c.Exec(ctx, "PREPARE TRANSACTION 'txblk_gid'")
	t.Logf("PREPARE TRANSACTION: %v, TxStatus %c", err, c.TxStatus())
	if max == "0" {
		// A failed PREPARE TRANSACTION ends the block itself (status I).
		if c.s.Block.Strands.Load() != strands {
			t.Errorf("pgline rolled back a block after PREPARE TRANSACTION")
		}
	} else {
		c.Exec(ctx, "ROLLBACK PREPARED 'txblk_gid'")
	}
	_, err = c.Exec(ctx, "COMMIT PREPARED 'txblk_none'")
	t.Logf("COMMIT PREPARED of nothing: %v, TxStatus %c", err, c.TxStatus())
	if c.s.Block.Strands.Load() != strands {
		t.Errorf("pgline rolled back %d blocks", c.s.Block.Strands.Load()-strands)
	}
	wantUsable(t, ctx, c)
}

// atomicFnSQL is a SQL-standard function body (BEGIN ATOMIC ...; END):
// sqllex splits it at its semicolons, so the last "statement" it sees is
// END, and a text holding it reads as ending a block. Given while the
// caller holds a block of its own (a raw BEGIN earlier), the reply's
// status is 'T', and pgline used to roll the caller's block back behind
// its back.
const atomicFnSQL = `CREATE FUNCTION %s() RETURNS int LANGUAGE sql
BEGIN ATOMIC
  SELECT 1;
END`

// TestRawTxAtomicBodyInBlock: BEGIN; CREATE TABLE; CREATE FUNCTION
// ... BEGIN ATOMIC ... END; COMMIT, each given to Exec in turn on a Conn
// used by one goroutine. With libpq both the table and the function
// exist afterwards.
func TestRawTxAtomicBodyInBlock(t *testing.T) {
	srv.NeedVersion(t, 14, "BEGIN ATOMIC function bodies")
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	tbl, fn := uniqueName("txblk_atomic_t"), uniqueName("txblk_atomic_f")
	t.Cleanup(func() {
		c2 := connect(t, srv.DSN())
		c2.Exec(ctx, "DROP TABLE IF EXISTS "+tbl)
		c2.Exec(ctx, "DROP FUNCTION IF EXISTS "+fn+"()")
	})
	strands := c.s.Block.Strands.Load()
	for _, sql := range []string{"BEGIN", "CREATE TABLE " + tbl + " (a int)", fmt.Sprintf(atomicFnSQL, fn)} {
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
	t.Logf("after COMMIT: table %d, function %d; blocks pgline rolled back: %d", tables, funcs, c.s.Block.Strands.Load()-strands)
	if tables != 1 || funcs != 1 {
		t.Errorf("the caller's block was rolled back behind its back: table %d, function %d after a COMMIT (pgline rolled back %d blocks)", tables, funcs, c.s.Block.Strands.Load()-strands)
	}
}

// TestRawTxAtomicBodyOneText: one text that opens a block the caller
// means to keep ("BEGIN; CREATE FUNCTION ... BEGIN ATOMIC ...; END"), its
// COMMIT in a later Exec.
func TestRawTxAtomicBodyOneText(t *testing.T) {
	srv.NeedVersion(t, 14, "BEGIN ATOMIC function bodies")
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	fn := uniqueName("txblk_atomic1")
	t.Cleanup(func() { connect(t, srv.DSN()).Exec(ctx, "DROP FUNCTION IF EXISTS "+fn+"()") })
	if _, err := c.Exec(ctx, "BEGIN; "+fmt.Sprintf(atomicFnSQL, fn)); err != nil {
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

// TestRawTxAtomicBodyQuery: the same through Query (extended
// protocol, sqlTraits.endsBlock).
func TestRawTxAtomicBodyQuery(t *testing.T) {
	srv.NeedVersion(t, 14, "BEGIN ATOMIC function bodies")
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	fn := uniqueName("txblk_atomicq")
	t.Cleanup(func() { connect(t, srv.DSN()).Exec(ctx, "DROP FUNCTION IF EXISTS "+fn+"()") })
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	rows, err := c.Query(ctx, fmt.Sprintf(atomicFnSQL, fn))
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
