package stdlib_test

import (
	"bytes"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestDriverValues checks the Go value database/sql receives for each
// type (scanned into *any, which keeps the driver value).
func TestDriverValues(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	ts := time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC)
	for _, tc := range []struct {
		expr string
		want any
	}{
		{"true", true},
		{"12::int2", int64(12)},
		{"-34::int4", int64(-34)},
		{"9223372036854775807::int8", int64(9223372036854775807)},
		{"26::oid", int64(26)},
		{"1.5::float4", float64(1.5)},
		{"'NaN'::float8 = 'NaN'::float8", true},
		{"2.25::float8", float64(2.25)},
		{"12.50::numeric(6,2)", "12.50"},
		{"'héllo'::text", "héllo"},
		{"'ab'::varchar(5)", "ab"},
		{"'ab'::char(4)", "ab  "},
		{"'\\x00ff'::bytea", []byte{0, 0xff}},
		{"'2024-02-29 13:14:15.123456+00'::timestamptz", ts},
		{"'2024-02-29 13:14:15.123456'::timestamp", ts},
		{"'2024-02-29'::date", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
		{"'infinity'::timestamptz", "infinity"},
		{"'-infinity'::date", "-infinity"},
		{"'01:02:03'::time", "01:02:03"},
		{"'1 day 02:00:00'::interval", "1 day 02:00:00"},
		{"'123e4567-e89b-12d3-a456-426614174000'::uuid", "123e4567-e89b-12d3-a456-426614174000"},
		{`'{"a": 1}'::json`, []byte(`{"a": 1}`)},
		{`'{"a": 1}'::jsonb`, []byte(`{"a": 1}`)},
		{"ARRAY[1, NULL, 3]::int4[]", "{1,NULL,3}"},
		{"ARRAY['a b', '']::text[]", `{"a b",""}`},
		{"'{}'::int8[]", "{}"},
		{"NULL::int4", nil},
		{"NULL::text", nil},
	} {
		var got any
		if err := db.QueryRowContext(ctx, "SELECT "+tc.expr).Scan(&got); err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if !equalValue(got, tc.want) {
			t.Errorf("%s: got %#v, want %#v", tc.expr, got, tc.want)
		}
	}
}

func equalValue(a, b any) bool {
	switch x := a.(type) {
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	}
	return a == b
}

func TestScanNullTypes(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	const q = `SELECT $1::int8, $2::int4, $3::int2, $4::float8, $5::text, $6::bool, $7::timestamptz, $8::bytea`
	var (
		i64 sql.NullInt64
		i32 sql.NullInt32
		i16 sql.NullInt16
		f64 sql.NullFloat64
		str sql.NullString
		b   sql.NullBool
		tm  sql.NullTime
		gen sql.Null[[]byte]
	)
	dest := []any{&i64, &i32, &i16, &f64, &str, &b, &tm, &gen}
	if err := db.QueryRowContext(ctx, q, nil, nil, nil, nil, nil, nil, nil, nil).Scan(dest...); err != nil {
		t.Fatal(err)
	}
	if i64.Valid || i32.Valid || i16.Valid || f64.Valid || str.Valid || b.Valid || tm.Valid || gen.Valid {
		t.Errorf("NULLs scanned as valid: %v %v %v %v %v %v %v %v", i64, i32, i16, f64, str, b, tm, gen)
	}
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := db.QueryRowContext(ctx, q, int64(1)<<40, 7, -3, 0.5, "s", true, now, []byte("x")).Scan(dest...); err != nil {
		t.Fatal(err)
	}
	if i64.Int64 != 1<<40 || i32.Int32 != 7 || i16.Int16 != -3 || f64.Float64 != 0.5 || str.String != "s" || !b.Bool || !tm.Time.Equal(now) || string(gen.V) != "x" {
		t.Errorf("values: %v %v %v %v %v %v %v %v", i64, i32, i16, f64, str, b, tm, gen)
	}
	if !(i64.Valid && i32.Valid && i16.Valid && f64.Valid && str.Valid && b.Valid && tm.Valid && gen.Valid) {
		t.Error("non-NULL values scanned as invalid")
	}
	// NULL into a plain destination is database/sql's clear error.
	var n int
	err := db.QueryRowContext(ctx, "SELECT NULL::int4").Scan(&n)
	if err == nil || !strings.Contains(err.Error(), "NULL") {
		t.Errorf("NULL into *int: %v", err)
	}
}

func TestRawBytes(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	rows, err := db.QueryContext(ctx, "SELECT 'row ' || n, n::int8, '\\xdead'::bytea FROM generate_series(1, 3) n")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		i++
		var s, n, b sql.RawBytes
		if err := rows.Scan(&s, &n, &b); err != nil {
			t.Fatal(err)
		}
		if string(s) != "row "+string(rune('0'+i)) || string(n) != string(rune('0'+i)) || !bytes.Equal(b, []byte{0xde, 0xad}) {
			t.Errorf("row %d: %q %q %x", i, s, n, b)
		}
	}
	if err := rows.Err(); err != nil || i != 3 {
		t.Fatalf("%d rows, %v", i, err)
	}
}

func TestArgumentsPassThrough(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	var sum int64
	var joined string
	err := db.QueryRowContext(ctx, "SELECT (SELECT sum(x) FROM unnest($1::int8[]) x), array_to_string($2::text[], ',')",
		[]int64{1, 2, 3}, []string{"a", "b"}).Scan(&sum, &joined)
	if err != nil || sum != 6 || joined != "a,b" {
		t.Fatalf("array arguments: %d %q %v", sum, joined, err)
	}
	// A driver.Valuer is asked for its value.
	var s string
	if err := db.QueryRowContext(ctx, "SELECT $1::text", sql.NullString{String: "v", Valid: true}).Scan(&s); err != nil || s != "v" {
		t.Fatalf("Valuer: %q %v", s, err)
	}
	_, err = db.ExecContext(ctx, "SELECT $1::int4", sql.Named("n", 1))
	if err == nil || !strings.Contains(err.Error(), "positional") {
		t.Errorf("named argument: %v", err)
	}
	var out int
	_, err = db.ExecContext(ctx, "SELECT $1::int4", sql.Out{Dest: &out})
	if err == nil || !strings.Contains(err.Error(), "sql.Out") {
		t.Errorf("sql.Out: %v", err)
	}
	_, err = db.ExecContext(ctx, "SELECT $1::int4", "not a number")
	if code := sqlState(err); code != "22P02" {
		t.Errorf("bad int text: %v", err)
	}
	_, err = db.ExecContext(ctx, "SELECT $1::int4", struct{}{})
	if err == nil {
		t.Error("unencodable argument accepted")
	}
}

func TestResult(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS res_t; CREATE TABLE res_t (id serial PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	res, err := db.ExecContext(ctx, "INSERT INTO res_t (v) SELECT 'x' FROM generate_series(1, $1::int4)", 3)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); n != 3 || err != nil {
		t.Errorf("RowsAffected = %d, %v; want 3", n, err)
	}
	_, err = res.LastInsertId()
	if err == nil || !strings.Contains(err.Error(), "RETURNING") {
		t.Errorf("LastInsertId: %v, want an error pointing to RETURNING", err)
	}
	res, err = db.ExecContext(ctx, "UPDATE res_t SET v = 'y' WHERE id > 1")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 2 {
		t.Errorf("UPDATE RowsAffected = %d, want 2", n)
	}
	res, err = db.ExecContext(ctx, "DELETE FROM res_t WHERE id = $1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Errorf("DELETE RowsAffected = %d, want 1", n)
	}
	var id int64
	if err := db.QueryRowContext(ctx, "INSERT INTO res_t (v) VALUES ($1) RETURNING id", "z").Scan(&id); err != nil || id != 4 {
		t.Errorf("RETURNING id: %d, %v", id, err)
	}
	// Several statements without arguments run as one Exec.
	res, err = db.ExecContext(ctx, "INSERT INTO res_t (v) VALUES ('a'); INSERT INTO res_t (v) VALUES ('b'), ('c')")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 2 {
		t.Errorf("multi-statement RowsAffected = %d, want 2 (the last statement's)", n)
	}
}

func TestServerErrorKeepsConn(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	_, err := db.QueryContext(ctx, "SELECT * FROM no_such_table")
	if sqlState(err) != "42P01" {
		t.Fatalf("missing table: %v", err)
	}
	rows, err := db.QueryContext(ctx, "SELECT 1/(3-n) FROM generate_series(1, 5) n")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	if sqlState(rows.Err()) != "22012" {
		t.Errorf("error after rows: %v", rows.Err())
	}
	if err := rows.Close(); err != nil && !errors.Is(err, rows.Err()) && sqlState(err) != "22012" {
		t.Errorf("Close: %v", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT 5").Scan(&n); err != nil || n != 5 {
		t.Fatalf("after errors: %d, %v", n, err)
	}
}

// TestTextDestinationsAsDatabaseSQL: scanning into text destinations gives
// database/sql's conversion of the driver value on every Go version, also
// with Go 1.27's RowsColumnScanner, where pgline's own scan plans would
// give PostgreSQL's text ("t", "2024-01-01 07:00:00+00").
func TestTextDestinationsAsDatabaseSQL(t *testing.T) {
	db := openDB(t, 1)
	ctx := testCtx(t)
	for _, tc := range []struct{ expr, want string }{
		{"true", "true"},
		{"0.1::float4", "0.10000000149011612"},
		{"1.5::float8", "1.5"},
		{"'2024-01-01 07:00:00+00'::timestamptz", "2024-01-01T07:00:00Z"},
		{"'2024-01-01 12:00:00'::timestamp", "2024-01-01T12:00:00Z"},
		{"'2024-01-01'::date", "2024-01-01T00:00:00Z"},
		{"42::int4", "42"},
		{"'x y'::text", "x y"},
		{"12.50::numeric", "12.50"},
	} {
		var s string
		var b []byte
		var ps *string
		var ns sql.NullString
		err := db.QueryRowContext(ctx, "SELECT "+tc.expr+", "+tc.expr+", "+tc.expr+", "+tc.expr).Scan(&s, &b, &ps, &ns)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if s != tc.want || string(b) != tc.want || ps == nil || *ps != tc.want || ns.String != tc.want || !ns.Valid {
			t.Errorf("%s: got %q %q %v %q, want %q", tc.expr, s, b, ps, ns.String, tc.want)
		}
	}
	// A named string type takes strings (and numbers, formatted) only.
	type named string
	var n named
	if err := db.QueryRowContext(ctx, "SELECT 'x y'::text").Scan(&n); err != nil || n != "x y" {
		t.Errorf("text into a named string: %q, %v", n, err)
	}
	if err := db.QueryRowContext(ctx, "SELECT true").Scan(&n); err == nil {
		t.Errorf("bool into a named string: %q, no error", n)
	}
}
