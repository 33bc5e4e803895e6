package pgline

import (
	"context"
	"testing"
	"unicode/utf8"
)

// TestAuditCodecClientEncodingChanged runs a session whose
// client_encoding is not UTF8 (SET client_encoding, or client_encoding in
// the DSN, which pgline passes on). Go strings are UTF-8: pgline must
// either keep the session in UTF8 or fail, never hand the server UTF-8
// bytes as LATIN1 (é stored as "Ã©") nor hand Go LATIN1 bytes as a
// string (é read as "\xe9").
func TestAuditCodecClientEncodingChanged(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"SET", "DSN"} {
		t.Run(how, func(t *testing.T) {
			dsn := srv.DSN()
			if how == "DSN" {
				dsn = srv.DSN("client_encoding=LATIN1")
			}
			c, err := Connect(ctx, dsn)
			if err != nil {
				t.Logf("connect: error (fine): %v", err)
				return
			}
			defer c.Close()
			if how == "SET" {
				if _, err := c.Exec(ctx, "SET client_encoding = 'LATIN1'"); err != nil {
					t.Logf("SET: error (fine): %v", err)
					return
				}
			}
			var s string
			if err := c.QueryRow(ctx, "SELECT chr(233)").Scan(&s); err == nil && s != "é" {
				t.Errorf("SELECT chr(233) (é) read as %q (valid UTF-8: %v)", s, utf8.ValidString(s))
			}
			var n int
			if err := c.QueryRow(ctx, "SELECT ascii($1::text)", "é").Scan(&n); err == nil && n != 233 {
				t.Errorf("parameter \"é\" reached the server as a string whose first character is %d, want 233", n)
			}
		})
	}
}
