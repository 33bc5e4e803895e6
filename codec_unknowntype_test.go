package pgline

// Types pgline has no codec for (money, pg_lsn, xid, unregistered domains)
// inside composites, anonymous records and arrays, or as parameters: the
// value arrives and comes back as the program passed it, or fails.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtype"
)

// TestCodecCompositeUnknownFieldParam sends a struct for a
// registered composite one of whose fields has a type pgline has no codec
// for (money, pg_lsn, xid). The field's Go string (or integer) can only be
// sent as text, yet pgline puts those text bytes inside a BINARY
// composite, where the server reads them with the field type's binary
// receive function: 8 ASCII bytes become a money or pg_lsn value, 4 an
// xid. The server must get the value the program passed, or pgline must
// fail.
func TestCodecCompositeUnknownFieldParam(t *testing.T) {
	ctx := context.Background()
	c := connect(t, srv.DSN())
	for _, s := range []string{
		`DROP TYPE IF EXISTS acodec_money, acodec_lsn, acodec_xid CASCADE`,
		`CREATE TYPE acodec_money AS (m money, n int4)`,
		`CREATE TYPE acodec_lsn AS (l pg_lsn, n int4)`,
		`CREATE TYPE acodec_xid AS (x xid, n int4)`,
	} {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.LoadTypes(ctx, []string{"acodec_money", "acodec_lsn", "acodec_xid"}); err != nil {
		t.Fatal(err)
	}
	type moneyRow struct {
		M string
		N int32
	}
	type moneyIntRow struct {
		M int64
		N int32
	}
	cases := []struct {
		typ  string
		arg  any
		want string // the server's text of the value the program passed
	}{
		{"acodec_money", moneyRow{"12345.67", 7}, `("$12,345.67",7)`},
		{"acodec_money", moneyIntRow{12345678, 7}, `("$12,345,678.00",7)`},
		{"acodec_lsn", moneyRow{"0/16B374", 7}, "(0/16B374,7)"},
		{"acodec_xid", moneyRow{"1234", 7}, "(1234,7)"},
		{"acodec_xid", moneyIntRow{1234, 7}, "(1234,7)"},
	}
	for _, tc := range cases {
		var got string
		err := c.QueryRow(ctx, "SELECT $1::"+tc.typ+"::text", tc.arg).Scan(&got)
		if err != nil {
			t.Logf("%s %#v: error (fine): %v", tc.typ, tc.arg, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s %#v reached the server as %s, want %s", tc.typ, tc.arg, got, tc.want)
		}
	}
}

// TestCodecRecordUnknownFieldBinary reads an anonymous record
// (ROW(...)) with a field of a type pgline has no codec for (money,
// pg_lsn). pgline requests record in binary and then hands out such a
// field's BINARY bytes as if they were its text: money 12.34 scans into a
// string as "\x00\x00\x00\x00\x00\x00\x04\xd2" instead of "$12.34". The
// field must come back as the server's text of the value, or fail.
func TestCodecRecordUnknownFieldBinary(t *testing.T) {
	ctx := context.Background()
	c := connect(t, srv.DSN())
	const q = "SELECT ROW(12.34::money, 'x'::text, '0/16B374'::pg_lsn)"
	want := struct{ M, X, L string }{"$12.34", "x", "0/16B374"}

	var st struct{ M, X, L string }
	if err := c.QueryRow(ctx, q).Scan(&st); err != nil {
		t.Logf("struct: error (fine): %v", err)
	} else if st != want {
		t.Errorf("struct: got %q, want %q", st, want)
	}

	var s string
	if err := c.QueryRow(ctx, q).Scan(&s); err != nil {
		t.Logf("string: error (fine): %v", err)
	} else if s != "($12.34,x,0/16B374)" {
		t.Errorf("string: got %q, want %q", s, "($12.34,x,0/16B374)")
	}

	var a []any
	if err := c.QueryRow(ctx, q).Scan(&a); err != nil {
		t.Logf("[]any: error (fine): %v", err)
	} else if len(a) != 3 || a[0] != any("$12.34") || a[2] != any("0/16B374") {
		t.Errorf("[]any: got %#v, want [$12.34 x 0/16B374]", a)
	}

	// Same cause: a nested anonymous record (documented as not decoded)
	// makes *string, which promises the text form, hold binary bytes.
	const nested = "SELECT ROW(ROW(1, 'x'), 2)"
	if err := c.QueryRow(ctx, nested).Scan(&s); err != nil {
		t.Logf("nested string: error (fine): %v", err)
	} else if s != `("(1,x)",2)` {
		t.Errorf("nested record into *string: got %q, want %q", s, `("(1,x)",2)`)
	}
}

// TestCodecUnregisteredByteaDomainParam inserts []byte values into
// a column whose type is a domain over bytea (the parameter is described
// with the domain's OID), without LoadType, as a database/sql user or
// anyone who did not register the domain does. pgline sends the []byte as
// TEXT for an unknown type, so the server runs bytea's input function on
// the raw bytes: backslash sequences are decoded ("\\x41" arrives as
// "A", `a\\b` as `a\b`), silently changing the stored value. It must
// arrive unchanged, or fail.
func TestCodecUnregisteredByteaDomainParam(t *testing.T) {
	ctx := context.Background()
	c := connect(t, srv.DSN())
	for _, s := range []string{
		`DROP TABLE IF EXISTS acodec_blobs`,
		`DROP DOMAIN IF EXISTS acodec_bytes`,
		`CREATE DOMAIN acodec_bytes AS bytea`,
		`CREATE TABLE acodec_blobs (id int, b acodec_bytes)`,
	} {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for i, in := range [][]byte{
		[]byte(`\x41`),
		[]byte(`a\\b`),
		[]byte(`\101`),
		{0x5c, 0x5c, 0xff, 0x01},
	} {
		if _, err := c.Exec(ctx, "INSERT INTO acodec_blobs VALUES ($1, $2)", i, in); err != nil {
			t.Logf("%q: error (fine): %v", in, err)
			continue
		}
		var got []byte
		if err := c.QueryRow(ctx, "SELECT b FROM acodec_blobs WHERE id = $1", i).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, in) {
			t.Errorf("[]byte %q stored as %q", in, got)
		}
	}
	// A Go string for the same parameter, likewise.
	var got []byte
	if err := c.QueryRow(ctx, "SELECT $1::acodec_bytes", `\x41`).Scan(&got); err == nil && string(got) != `\x41` {
		t.Logf("string %q arrives as %q (a string for a non-text type is documented to go as text)", `\x41`, got)
	}
}

// TestCodecUnregisteredByteaDomainArrayResult reads an array of an
// unregistered domain over bytea. Its array type (the domain's own) is
// unknown to pgline, so it is read in text and its elements handed out as
// their TEXT: '\x0102' scans into [][]byte as the 6 bytes `\x0102`
// instead of {1, 2}. (A domain scalar column is described with its base
// type and reads right; its array is not.)
func TestCodecUnregisteredByteaDomainArrayResult(t *testing.T) {
	ctx := context.Background()
	c := connect(t, srv.DSN())
	for _, s := range []string{
		`DROP DOMAIN IF EXISTS acodec_b2 CASCADE`,
		`CREATE DOMAIN acodec_b2 AS bytea`,
	} {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	var one []byte
	if err := c.QueryRow(ctx, `SELECT '\x0102'::acodec_b2`).Scan(&one); err != nil || !bytes.Equal(one, []byte{1, 2}) {
		t.Fatalf("scalar: %q %v", one, err)
	}
	var bb [][]byte
	err := c.QueryRow(ctx, `SELECT ARRAY['\x0102'::acodec_b2, '\x'::acodec_b2]`).Scan(&bb)
	if err != nil {
		t.Logf("array: error (fine): %v", err)
		return
	}
	if len(bb) != 2 || !bytes.Equal(bb[0], []byte{1, 2}) || len(bb[1]) != 0 {
		t.Errorf("array of bytea domain: got %q, want [\"\\x01\\x02\" \"\"]", bb)
	}
}

// uktAddress is a Go struct for a composite type scanned without the type
// registered (LoadType): pgtype cannot fill it.
type uktAddress struct{ Street, City string }

// createUnknownComposite creates the composite type name (schema-qualified
// or not) with two text fields, and returns its OID. The Conn's TypeMap
// does not know it.
func createUnknownComposite(t *testing.T, c *Conn, name string) uint32 {
	t.Helper()
	ctx := testCtx(t)
	for _, s := range []string{
		"DROP TYPE IF EXISTS " + name + " CASCADE",
		"CREATE TYPE " + name + " AS (street text, city text)",
	} {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	var oid uint32
	if err := c.QueryRow(ctx, "SELECT $1::regtype::oid", name).Scan(&oid); err != nil {
		t.Fatal(err)
	}
	return oid
}

// wantTypeNamed checks that err is the scan error of column col of an
// unknown type named name (OID oid), with how to register it.
func wantTypeNamed(t *testing.T, how string, err error, col, name string, oid uint32) {
	t.Helper()
	var ute *pgtype.UnknownTypeError
	want := fmt.Sprintf(`pgline: column %s: pgtype: cannot scan %s (OID %d), a type this Map does not know (register it: Conn.LoadType(ctx, %q) for an enum, composite, domain or range), into *pgline.uktAddress: unsupported destination type`, col, name, oid, name)
	if err == nil || err.Error() != want || !errors.As(err, &ute) || ute.OID != oid || ute.Name != name || !errors.Is(err, pgtype.ErrUnsupportedDest) {
		t.Errorf("%s: error\n %v\nwant\n %s", how, err, want)
	}
}

// wantTypeUnnamed checks that err is the scan error of column col of an
// unknown type, named by its OID only (no lookup was safe).
func wantTypeUnnamed(t *testing.T, how string, err error, col string, oid uint32) {
	t.Helper()
	var ute *pgtype.UnknownTypeError
	want := fmt.Sprintf(`pgline: column %s: pgtype: cannot scan OID %d, a type this Map does not know (register it: Conn.LoadType for an enum, composite, domain or range), into *pgline.uktAddress: unsupported destination type`, col, oid)
	if err == nil || err.Error() != want || !errors.As(err, &ute) || ute.OID != oid || ute.Name != "" {
		t.Errorf("%s: error\n %v\nwant\n %s", how, err, want)
	}
}

// uktRow is a row holding the composite, for the struct row functions.
type uktRow struct {
	N int32
	A uktAddress
}

// TestUnknownTypeNamed_Conn: a composite nobody registered, scanned into
// a struct, gives an error naming the type as the catalog does, with the
// LoadType call that registers it, through every call that closes its
// rows before returning (Row.Scan, CollectRows, CollectOneRow,
// CollectExactlyOneRow, ForEachRow); Rows.Scan, which leaves the rows
// open (they hold the connection's reader), names the OID. The
// connection goes on.
func TestUnknownTypeNamed_Conn(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	oid := createUnknownComposite(t, c, "ukt_address")
	const q = "SELECT 7::int4 AS n, ROW('Main St', 'Springfield')::ukt_address AS a"

	var n int32
	var a uktAddress
	wantTypeNamed(t, "Row.Scan", c.QueryRow(ctx, q).Scan(&n, &a), "1 (a)", "ukt_address", oid)

	rows, _ := c.Query(ctx, q+" FROM generate_series(1, 3)")
	_, err := CollectRows(rows, RowToStructByName[uktRow])
	wantTypeNamed(t, "CollectRows", err, "1 (a)", "ukt_address", oid)

	rows, _ = c.Query(ctx, q)
	_, err = CollectOneRow(rows, RowToAddrOfStructByPos[uktRow])
	wantTypeNamed(t, "CollectOneRow", err, "1 (a)", "ukt_address", oid)

	rows, _ = c.Query(ctx, "SELECT ROW('x', 'y')::ukt_address AS a")
	_, err = CollectExactlyOneRow(rows, RowTo[uktAddress])
	wantTypeNamed(t, "CollectExactlyOneRow", err, "0 (a)", "ukt_address", oid)

	rows, _ = c.Query(ctx, q+" FROM generate_series(1, 3)")
	_, err = ForEachRow(rows, []any{&n, &a}, func() error { return nil })
	wantTypeNamed(t, "ForEachRow", err, "1 (a)", "ukt_address", oid)

	rows, _ = c.Query(ctx, q)
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	wantTypeUnnamed(t, "Rows.Scan", rows.Scan(&n, &a), "1 (a)", oid)
	var s string
	if err := rows.Scan(&n, &s); err != nil || s != "(\"Main St\",Springfield)" {
		t.Errorf("Rows.Scan after the error: %q %v", s, err)
	}
	rows.Close()

	if err := c.QueryRow(ctx, "SELECT 1").Scan(&n); err != nil || n != 1 || c.TxStatus() != 'I' {
		t.Fatalf("the connection after: %d %v %c", n, err, c.TxStatus())
	}
}

// TestUnknownTypeNamed_Schema: a type in a schema not on the search_path
// is named schema-qualified, and the LoadType call the error gives
// registers it.
func TestUnknownTypeNamed_Schema(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS ukt_elsewhere"); err != nil {
		t.Fatal(err)
	}
	oid := createUnknownComposite(t, c, "ukt_elsewhere.ukt_place")
	var a uktAddress
	err := c.QueryRow(ctx, "SELECT ROW('a', 'b')::ukt_elsewhere.ukt_place AS place").Scan(&a)
	wantTypeNamed(t, "Row.Scan", err, "0 (place)", "ukt_elsewhere.ukt_place", oid)

	var ute *pgtype.UnknownTypeError
	if !errors.As(err, &ute) {
		t.Fatal(err)
	}
	if err := c.LoadType(ctx, ute.Name); err != nil {
		t.Fatalf("LoadType(%q): %v", ute.Name, err)
	}
	if err := c.QueryRow(ctx, "SELECT ROW('a', 'b')::ukt_elsewhere.ukt_place").Scan(&a); err != nil || a != (uktAddress{"a", "b"}) {
		t.Fatalf("after LoadType: %+v %v", a, err)
	}
}

// TestUnknownTypeNamed_InBlock: no statement is sent inside a transaction
// block to name the type (one that failed would abort the block): in a
// Tx, and in a block a caller's raw BEGIN opened, the error names the
// OID, and the transaction goes on and commits.
func TestUnknownTypeNamed_InBlock(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	oid := createUnknownComposite(t, c, "ukt_txaddr")
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS ukt_txlog; CREATE TABLE ukt_txlog (n int)"); err != nil {
		t.Fatal(err)
	}
	const q = "SELECT ROW('x', 'y')::ukt_txaddr AS a"
	var a uktAddress

	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO ukt_txlog VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	wantTypeUnnamed(t, "Tx Row.Scan", tx.QueryRow(ctx, q).Scan(&a), "0 (a)", oid)
	rows, _ := tx.Query(ctx, q)
	_, err = CollectRows(rows, RowTo[uktAddress])
	wantTypeUnnamed(t, "Tx CollectRows", err, "0 (a)", oid)
	if _, err := tx.Exec(ctx, "INSERT INTO ukt_txlog VALUES (2)"); err != nil || c.TxStatus() != 'T' {
		t.Fatalf("the Tx after the errors: %v, status %c", err, c.TxStatus())
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rowCount(t, c, "ukt_txlog"); n != 2 {
		t.Fatalf("%d rows committed, want 2", n)
	}

	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	wantTypeUnnamed(t, "raw block Row.Scan", c.QueryRow(ctx, q).Scan(&a), "0 (a)", oid)
	if _, err := c.Exec(ctx, "INSERT INTO ukt_txlog VALUES (3); COMMIT"); err != nil || c.TxStatus() != 'I' {
		t.Fatalf("the raw block after the error: %v, status %c", err, c.TxStatus())
	}
	if n := rowCount(t, c, "ukt_txlog"); n != 3 {
		t.Fatalf("%d rows committed, want 3", n)
	}
}

// TestUnknownTypeNamed_GateHeld: another goroutine's transaction, begun on
// the connection while the rows were read, holds it when they close: the
// lookup waits for it no longer than typeNameWait and is not sent (the
// error names the OID), and the transaction runs and commits unharmed.
// (Should the Begin come late, the lookup runs before it, and names the
// type.)
func TestUnknownTypeNamed_GateHeld(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	oid := createUnknownComposite(t, c, "ukt_gateaddr")
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS ukt_gatelog; CREATE TABLE ukt_gatelog (n int)"); err != nil {
		t.Fatal(err)
	}
	rows, err := c.Query(ctx, "SELECT ROW('x', 'y')::ukt_gateaddr AS a")
	if err != nil {
		t.Fatal(err)
	}
	began := make(chan error, 1)
	var tx *Tx
	go func() {
		var err error
		tx, err = c.Begin(ctx) // takes the gate, queues BEGIN behind the rows
		began <- err
	}()
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	_, err = CollectRows(rows, RowTo[uktAddress])
	took := time.Since(start)
	var ute *pgtype.UnknownTypeError
	if errors.As(err, &ute) && ute.Name != "" {
		t.Logf("the lookup ran before the Begin took the connection: %v", err)
		wantTypeNamed(t, "CollectRows", err, "0 (a)", "ukt_gateaddr", oid)
	} else {
		wantTypeUnnamed(t, "CollectRows", err, "0 (a)", oid)
	}
	if took > typeNameWait+2*time.Second {
		t.Errorf("CollectRows took %v with the connection held by a transaction (typeNameWait %v)", took, typeNameWait)
	}
	if err := <-began; err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO ukt_gatelog VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rowCount(t, c, "ukt_gatelog"); n != 1 || c.TxStatus() != 'I' {
		t.Fatalf("%d rows committed (want 1), status %c", n, c.TxStatus())
	}
}

// TestUnknownTypeNamed_Batch: a batch's rows hold the connection until the
// batch is closed, so their error names the OID, at once.
func TestUnknownTypeNamed_Batch(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	oid := createUnknownComposite(t, c, "ukt_batchaddr")
	b := &Batch{}
	b.Queue("SELECT ROW('x', 'y')::ukt_batchaddr AS a")
	b.Queue("SELECT ROW('x', 'y')::ukt_batchaddr AS a")
	b.Queue("SELECT 1")
	start := time.Now()
	br := c.SendBatch(ctx, b)
	var a uktAddress
	wantTypeUnnamed(t, "batch Row.Scan", br.QueryRow().Scan(&a), "0 (a)", oid)
	rows, _ := br.Query()
	_, err := CollectRows(rows, RowTo[uktAddress])
	wantTypeUnnamed(t, "batch CollectRows", err, "0 (a)", oid)
	var n int
	if err := br.QueryRow().Scan(&n); err != nil || n != 1 {
		t.Fatalf("the batch's last statement: %d %v", n, err)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the batch took %v", d)
	}
}

// TestUnknownTypeNamed_CtxEnded: with the ctx of the query ended, the type
// is not looked up: the error names the OID, and the connection goes on.
func TestUnknownTypeNamed_CtxEnded(t *testing.T) {
	c := connect(t, srv.DSN())
	oid := createUnknownComposite(t, c, "ukt_ctxaddr")
	ctx, cancel := context.WithCancel(testCtx(t))
	rows, err := c.Query(ctx, "SELECT ROW('x', 'y')::ukt_ctxaddr AS a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = CollectOneRow(rows, func(row CollectableRow) (uktAddress, error) {
		cancel()
		return RowTo[uktAddress](row)
	})
	wantTypeUnnamed(t, "CollectOneRow", err, "0 (a)", oid)
	var n int
	if err := c.QueryRow(testCtx(t), "SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the connection after: %d %v", n, err)
	}
}

// TestUnknownTypeNamed_Pool: through a Pool (routed Rows and Row, a
// PoolConn) the type is named; in a Pool transaction, and in a block
// opened on a PoolConn, its OID is.
func TestUnknownTypeNamed_Pool(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "pool_max_conns=2")
	pc, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	oid := createUnknownComposite(t, pc.Conn, "ukt_pooladdr")
	pc.Release()
	const q = "SELECT ROW('x', 'y')::ukt_pooladdr AS a"
	var a uktAddress

	wantTypeNamed(t, "Pool Row.Scan", p.QueryRow(ctx, q).Scan(&a), "0 (a)", "ukt_pooladdr", oid)
	rows, _ := p.Query(ctx, q+" FROM generate_series(1, 2)")
	_, err = CollectRows(rows, RowTo[uktAddress])
	wantTypeNamed(t, "Pool CollectRows", err, "0 (a)", "ukt_pooladdr", oid)

	pc, err = p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantTypeNamed(t, "PoolConn Row.Scan", pc.QueryRow(ctx, q).Scan(&a), "0 (a)", "ukt_pooladdr", oid)
	if _, err := pc.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	wantTypeUnnamed(t, "PoolConn in a block", pc.QueryRow(ctx, q).Scan(&a), "0 (a)", oid)
	if _, err := pc.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	pc.Release()

	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantTypeUnnamed(t, "Pool Tx Row.Scan", tx.QueryRow(ctx, q).Scan(&a), "0 (a)", oid)
	var n int
	if err := tx.QueryRow(ctx, "SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the Pool Tx after the error: %d %v", n, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	// Every connection is back, none left in a block or busy.
	waitFor(t, 5*time.Second, func() (bool, error) {
		st := p.Stat()
		return st.AcquiredConns == 0 && st.InFlight == 0, nil
	})
	if err := p.QueryRow(ctx, "SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the Pool after: %d %v", n, err)
	}
}

// TestUnknownTypeNamed_PgBouncer: behind PgBouncer in transaction pooling
// mode, where each statement outside a block may go to another server
// session, the type is named too (the lookup is one simple-protocol
// statement outside a block).
func TestUnknownTypeNamed_PgBouncer(t *testing.T) {
	b := startTestPgBouncer(t, "transaction")
	ctx := testCtx(t)
	oid := createUnknownComposite(t, connect(t, srv.DSN()), "ukt_bouncer")
	c := connect(t, b.DSN())
	var a uktAddress
	wantTypeNamed(t, "Row.Scan", c.QueryRow(ctx, "SELECT ROW('x', 'y')::ukt_bouncer AS a").Scan(&a), "0 (a)", "ukt_bouncer", oid)
	var n int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the connection after: %d %v", n, err)
	}
}
