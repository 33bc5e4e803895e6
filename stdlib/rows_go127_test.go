//go:build go1.27

package stdlib_test

import (
	"context"
	"database/sql"
	"testing"
)

// TestColumnScannerKeepsDatabaseSQLSemantics: with Go 1.27's
// RowsColumnScanner, *any still receives database/sql's driver values
// (int64 for every integer type), RawBytes aliases the row, and types
// pgtype does not scan into still get database/sql's conversions.
func TestColumnScannerKeepsDatabaseSQLSemantics(t *testing.T) {
	db := openDB(t, 1)
	ctx := context.Background()
	var a any
	var raw sql.RawBytes
	var b bool
	var n sql.NullInt32
	var small int16
	rows, err := db.QueryContext(ctx, "SELECT 7::int4, 'xyz'::text, 't'::text, NULL::int4, 12::int8")
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	if err := rows.Scan(&a, &raw, &b, &n, &small); err != nil {
		t.Fatal(err)
	}
	if string(raw) != "xyz" {
		t.Fatalf("RawBytes %q", raw)
	}
	rows.Close()
	if v, ok := a.(int64); !ok || v != 7 {
		t.Fatalf("*any got %T %v, want int64 7", a, a)
	}
	if !b || n.Valid || small != 12 {
		t.Fatalf("got b=%v n=%+v small=%d", b, n, small)
	}
	if err := db.QueryRowContext(ctx, "SELECT 40000::int8").Scan(&small); err == nil {
		t.Fatal("int8 40000 into int16: no error")
	}
}
