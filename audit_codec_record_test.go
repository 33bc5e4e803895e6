package pgline

import (
	"context"
	"testing"
)

// TestAuditCodecRecordUnknownFieldBinary reads an anonymous record
// (ROW(...)) with a field of a type pgline has no codec for (money,
// pg_lsn). pgline requests record in binary and then hands out such a
// field's BINARY bytes as if they were its text: money 12.34 scans into a
// string as "\x00\x00\x00\x00\x00\x00\x04\xd2" instead of "$12.34". The
// field must come back as the server's text of the value, or fail.
func TestAuditCodecRecordUnknownFieldBinary(t *testing.T) {
	ctx := context.Background()
	c := acodecConn(t)
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
