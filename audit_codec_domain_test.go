package pgline

import (
	"bytes"
	"context"
	"testing"
)

// TestAuditCodecUnregisteredByteaDomainParam inserts []byte values into
// a column whose type is a domain over bytea (the parameter is described
// with the domain's OID), without LoadType, as a database/sql user or
// anyone who did not register the domain does. pgline sends the []byte as
// TEXT for an unknown type, so the server runs bytea's input function on
// the raw bytes: backslash sequences are decoded ("\\x41" arrives as
// "A", `a\\b` as `a\b`), silently changing the stored value. It must
// arrive unchanged, or fail.
func TestAuditCodecUnregisteredByteaDomainParam(t *testing.T) {
	ctx := context.Background()
	c := acodecConn(t)
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

// TestAuditCodecUnregisteredByteaDomainArrayResult reads an array of an
// unregistered domain over bytea. Its array type (the domain's own) is
// unknown to pgline, so it is read in text and its elements handed out as
// their TEXT: '\x0102' scans into [][]byte as the 6 bytes `\x0102`
// instead of {1, 2}. (A domain scalar column is described with its base
// type and reads right; its array is not.)
func TestAuditCodecUnregisteredByteaDomainArrayResult(t *testing.T) {
	ctx := context.Background()
	c := acodecConn(t)
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
