package pgline

import (
	"context"
	"testing"
)

// TestAuditCodecCompositeUnknownFieldParam sends a struct for a
// registered composite one of whose fields has a type pgline has no codec
// for (money, pg_lsn, xid). The field's Go string (or integer) can only be
// sent as text, yet pgline puts those text bytes inside a BINARY
// composite, where the server reads them with the field type's binary
// receive function: 8 ASCII bytes become a money or pg_lsn value, 4 an
// xid. The server must get the value the program passed, or pgline must
// fail.
func TestAuditCodecCompositeUnknownFieldParam(t *testing.T) {
	ctx := context.Background()
	c := acodecConn(t)
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
