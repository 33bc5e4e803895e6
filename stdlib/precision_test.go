package stdlib_test

import "testing"

// DecimalSize answers for numeric columns and expressions, declared or
// not, and ok=false for every other type. Unconstrained numeric reports
// 65535, 65531 as pgx and lib/pq do, so that GORM's AutoMigrate sees that
// a plain numeric column differs from a model's numeric(10,2).
func TestColumnTypePrecisionScale(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	_, err := db.ExecContext(ctx, `DROP TABLE IF EXISTS ps_t;
		CREATE TABLE ps_t (n numeric, n10_2 numeric(10, 2), n5 numeric(5),
			i4 int4, i8 int8, f8 float8, t text, vc varchar(10), na numeric[], na10_2 numeric(10, 2)[]);
		INSERT INTO ps_t VALUES (1.5, 12345678.91, 12345, 1, 2, 3.5, 'x', 'y', '{1.5}', '{2.25}')`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		expr        string
		prec, scale int64
		ok          bool
	}{
		{"n", 65535, 65531, true},
		{"n10_2", 10, 2, true},
		{"n5", 5, 0, true},
		{"n10_2 * 2", 65535, 65531, true}, // an expression loses the declared size
		{"sum(n10_2)", 65535, 65531, true},
		{"1.5::numeric(6, 3)", 6, 3, true},
		{"i4", 0, 0, false},
		{"i8", 0, 0, false},
		{"f8", 0, 0, false},
		{"t", 0, 0, false},
		{"vc", 0, 0, false},
		{"na", 0, 0, false},
		{"na10_2", 0, 0, false},
	} {
		rows, err := db.QueryContext(ctx, "SELECT "+tc.expr+" FROM ps_t")
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		cts, err := rows.ColumnTypes()
		if err != nil {
			t.Fatal(err)
		}
		if p, s, ok := cts[0].DecimalSize(); p != tc.prec || s != tc.scale || ok != tc.ok {
			t.Errorf("SELECT %s: DecimalSize = %d, %d, %v; want %d, %d, %v", tc.expr, p, s, ok, tc.prec, tc.scale, tc.ok)
		}
		var v any
		if !rows.Next() {
			t.Fatalf("SELECT %s: no row: %v", tc.expr, rows.Err())
		}
		if err := rows.Scan(&v); err != nil || v == nil {
			t.Errorf("SELECT %s: Scan = %v, %v", tc.expr, v, err)
		}
		rows.Close()
	}
	t.Run("negative scale", func(t *testing.T) {
		srv.NeedVersion(t, 15, "numeric with a negative scale")
		rows, err := db.QueryContext(ctx, "SELECT 1200::numeric(4, -2)")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cts, err := rows.ColumnTypes()
		if err != nil {
			t.Fatal(err)
		}
		if p, s, ok := cts[0].DecimalSize(); p != 4 || s != -2 || !ok {
			t.Errorf("numeric(4, -2): DecimalSize = %d, %d, %v; want 4, -2, true", p, s, ok)
		}
	})
}
