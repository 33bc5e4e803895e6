package pgline

import (
	"context"
	"testing"
)

// TestAuditCodecCopyFromStringOutOfRange copies Go strings into float
// columns. COPY FROM writes binary, so pgline parses a string itself for a
// non-text column "as the server would"; the server refuses these texts
// for these types ('1e400'::float8 and '1e-400'::float8 are out of range,
// '1e-46'::float4 underflows, there is no year 0, offsets stop below 16
// hours), but pgline stores Infinity, 0, 0001-01-01 BC or an instant
// instead.
func TestAuditCodecCopyFromStringOutOfRange(t *testing.T) {
	ctx := context.Background()
	c := acodecConn(t)
	for _, s := range []string{
		`DROP TABLE IF EXISTS acodec_copy`,
		`CREATE TABLE acodec_copy (f8 float8, f4 float4, d date, tz timestamptz)`,
	} {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ col, in string }{
		{"f8", "1e400"},
		{"f8", "-1e400"},
		{"f8", "1e-400"},
		{"f4", "1e-46"},
		{"d", "0000-01-01"},
		{"tz", "2020-01-01 00:00:00+16"},
		{"tz", "0000-06-01 00:00:00+00"},
	} {
		if _, err := c.Exec(ctx, "SELECT $1::text::"+map[string]string{"f8": "float8", "f4": "float4", "d": "date", "tz": "timestamptz"}[tc.col], tc.in); err == nil {
			t.Fatalf("the server now accepts %q for %s; test premise gone", tc.in, tc.col)
		}
		if _, err := c.Exec(ctx, "TRUNCATE acodec_copy"); err != nil {
			t.Fatal(err)
		}
		_, err := c.CopyFrom(ctx, Identifier{"acodec_copy"}, []string{tc.col}, CopyFromRows([][]any{{tc.in}}))
		if err != nil {
			t.Logf("%s %q: error (fine): %v", tc.col, tc.in, err)
			continue
		}
		var got string
		if err := c.QueryRow(ctx, "SELECT "+tc.col+"::text FROM acodec_copy").Scan(&got); err != nil {
			t.Fatal(err)
		}
		t.Errorf("CopyFrom of string %q into %s column stored %s with no error; the server refuses that text", tc.in, tc.col, got)
	}
}
