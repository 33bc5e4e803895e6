package pgline

// Types pgline has no codec for (money, pg_lsn, xid, unregistered domains)
// inside composites, anonymous records and arrays, or as parameters: the
// value arrives and comes back as the program passed it, or fails.

import (
	"bytes"
	"context"
	"testing"
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
