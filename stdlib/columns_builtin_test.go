package stdlib_test

import "testing"

// Built-in types without a pgtype codec report their pg_type name, not
// their OID; "char" and character(n) stay distinct.
func TestColumnTypeNameBuiltinWithoutCodec(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	want := []struct{ expr, name string }{
		{`'a'::"char"`, "CHAR"},
		{`'a'::char(1)`, "BPCHAR"},
		{`ARRAY['a'::"char"]`, "_CHAR"},
		{`'<a/>'::xml`, "XML"},
		{`1::money`, "MONEY"},
		{`'01:02+03'::timetz`, "TIMETZ"},
		{`B'101'`, "BIT"},
		{`B'101'::varbit`, "VARBIT"},
		{`point(1, 2)`, "POINT"},
		{`'[(0,0),(1,1)]'::lseg`, "LSEG"},
		{`'((0,0),(1,1))'::box`, "BOX"},
		{`'((0,0),(1,1))'::path`, "PATH"},
		{`'((0,0),(1,1),(1,0))'::polygon`, "POLYGON"},
		{`'{1,2,3}'::line`, "LINE"},
		{`'<(0,0),1>'::circle`, "CIRCLE"},
		{`'a b'::tsvector`, "TSVECTOR"},
		{`'a & b'::tsquery`, "TSQUERY"},
		{`'0/16B3748'::pg_lsn`, "PG_LSN"},
		{`'pg_class'::regclass`, "REGCLASS"},
		{`'int4'::regtype`, "REGTYPE"},
		{`ARRAY['pg_class'::regclass]`, "_REGCLASS"},
		{`indkey FROM pg_index LIMIT 1`, "INT2VECTOR"},
		{`'1 2'::oidvector`, "OIDVECTOR"},
		{`txid_current_snapshot()`, "TXID_SNAPSHOT"},
		{`pg_current_snapshot()`, "PG_SNAPSHOT"},
		{`'5'::xid`, "XID"},
		{`'5'::xid8`, "XID8"},
		{`'5'::cid`, "CID"},
		{`'(0,1)'::tid`, "TID"},
		{`'c'::refcursor`, "REFCURSOR"},
		{`ARRAY[1::money]`, "_MONEY"},
	}
	check := func(t *testing.T, expr, name string) {
		t.Helper()
		rows, err := db.QueryContext(ctx, "SELECT "+expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		cts, err := rows.ColumnTypes()
		if err != nil {
			t.Fatal(err)
		}
		if got := cts[0].DatabaseTypeName(); got != name {
			t.Errorf("SELECT %s: DatabaseTypeName %q, want %q", expr, got, name)
		}
		for rows.Next() {
		}
		if err := rows.Err(); err != nil {
			t.Errorf("SELECT %s: %v", expr, err)
		}
		rows.Close()
	}
	for _, w := range want {
		check(t, w.expr, w.name)
	}
	t.Run("multirange", func(t *testing.T) {
		srv.NeedVersion(t, 14, "multiranges")
		check(t, `'{[1,2)}'::int4multirange`, "INT4MULTIRANGE")
	})
}
