package integration

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx", for comparison
)

// valueCase is one SELECT expression and what database/sql receives for
// it from each driver: the Go type of the driver value (as Scan into *any
// gives it) and the column's ColumnTypeScanType.
type valueCase struct {
	expr                  string
	pgline, pgx           string // %T of the driver value
	scanPgline, scanPgx   string // ColumnTypeScanType
	differentTextInValues bool   // the values' text differs (else equal by content)
}

// valueCases are the common types. Where the drivers differ, the row says
// so; TestDriverValueTypes fails when either driver changes.
var valueCases = []valueCase{
	{expr: "true", pgline: "bool", pgx: "bool", scanPgline: "bool", scanPgx: "bool"},
	{expr: "1::int2", pgline: "int64", pgx: "int64", scanPgline: "int64", scanPgx: "int16"},
	{expr: "2::int4", pgline: "int64", pgx: "int64", scanPgline: "int64", scanPgx: "int32"},
	{expr: "3::int8", pgline: "int64", pgx: "int64", scanPgline: "int64", scanPgx: "int64"},
	{expr: "42::oid", pgline: "int64", pgx: "int64", scanPgline: "int64", scanPgx: "string"},
	{expr: "1.5::float4", pgline: "float64", pgx: "float64", scanPgline: "float64", scanPgx: "float32"},
	{expr: "2.5::float8", pgline: "float64", pgx: "float64", scanPgline: "float64", scanPgx: "float64"},
	{expr: "1.25::numeric", pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "float64"},
	{expr: "12.5::numeric(10,2)", pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "float64"},
	{expr: "'x'::text", pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "string"},
	{expr: "'y'::varchar(5)", pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "string"},
	{expr: "'z'::char(3)", pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "string"},
	{expr: `'\x0102'::bytea`, pgline: "[]uint8", pgx: "[]uint8", scanPgline: "[]uint8", scanPgx: "[]uint8"},
	{expr: "'2024-03-01'::date", pgline: "time.Time", pgx: "time.Time", scanPgline: "time.Time", scanPgx: "time.Time"},
	{expr: "'2024-03-01 12:34:56.789'::timestamp", pgline: "time.Time", pgx: "time.Time", scanPgline: "time.Time", scanPgx: "time.Time"},
	{expr: "'2024-03-01 12:34:56.789+02'::timestamptz", pgline: "time.Time", pgx: "time.Time", scanPgline: "time.Time", scanPgx: "time.Time"},
	{expr: "'infinity'::timestamptz", pgline: "string", pgx: "string", scanPgline: "time.Time", scanPgx: "time.Time"},
	{expr: "'12:34:56'::time", pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "string"},
	{expr: "'12:34:56+02'::timetz", pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "string"},
	{expr: "'1 day 2 hours'::interval", pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "string"},
	{expr: "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid", pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "string"},
	{expr: `'{"a": [1, 2]}'::json`, pgline: "[]uint8", pgx: "[]uint8", scanPgline: "[]uint8", scanPgx: "string"},
	{expr: `'{"a": [1, 2]}'::jsonb`, pgline: "[]uint8", pgx: "[]uint8", scanPgline: "[]uint8", scanPgx: "string"},
	{expr: `'[1, "x"]'::jsonb`, pgline: "[]uint8", pgx: "[]uint8", scanPgline: "[]uint8", scanPgx: "string"},
	{expr: `ARRAY['a', 'b c']`, pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "string"},
	{expr: "ARRAY[1, 2]::int4[]", pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "string"},
	{expr: "ARRAY[1, NULL]::int8[]", pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "string"},
	{expr: "ARRAY[1.5]::numeric[]", pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "string"},
	{expr: `ARRAY['{"a":1}']::jsonb[]`, pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "string"},
	{expr: "'10.0.0.1/8'::inet", pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "string"},
	{expr: "'08:00:2b:01:02:03'::macaddr", pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "string"},
	{expr: "int4range(1, 5)", pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "string"},
	{expr: "'sad'::vt_mood", pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "string"},
	{expr: "'<a/>'::xml", pgline: "string", pgx: "[]uint8", scanPgline: "string", scanPgx: "string"},
	{expr: "1.5::money", pgline: "string", pgx: "string", scanPgline: "string", scanPgx: "string"},
	{expr: "NULL::int4", pgline: "<nil>", pgx: "<nil>", scanPgline: "int64", scanPgx: "int32"},
}

// TestDriverValueTypes scans each common type into *any through pgline
// and pgx's stdlib side by side and checks the Go types each driver gives,
// their column scan types, and that the values agree (a []byte and a
// string by content, times as instants). Run with -v for the table.
func TestDriverValueTypes(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	dbs := map[string]*sql.DB{}
	for _, drv := range []string{"pgline", "pgx"} {
		db, err := sql.Open(drv, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		dbs[drv] = db
	}
	ctx := testCtx(t)
	if _, err := dbs["pgline"].ExecContext(ctx, "CREATE TYPE vt_mood AS ENUM ('ok', 'sad')"); err != nil {
		t.Fatal(err)
	}
	t.Log("| expression | pgline value | pgx value | pgline ScanType | pgx ScanType |")
	t.Log("|---|---|---|---|---|")
	for _, tc := range valueCases {
		got := map[string]any{}
		scan := map[string]string{}
		for drv, db := range dbs {
			rows, err := db.QueryContext(ctx, "SELECT "+tc.expr)
			if err != nil {
				t.Fatalf("%s: %s: %v", drv, tc.expr, err)
			}
			cts, err := rows.ColumnTypes()
			if err != nil {
				t.Fatal(err)
			}
			scan[drv] = cts[0].ScanType().String()
			var v any
			if !rows.Next() {
				t.Fatalf("%s: %s: no row: %v", drv, tc.expr, rows.Err())
			}
			if err := rows.Scan(&v); err != nil {
				t.Fatalf("%s: %s: %v", drv, tc.expr, err)
			}
			rows.Close()
			got[drv] = v
		}
		gotPgline, gotPgx := fmt.Sprintf("%T", got["pgline"]), fmt.Sprintf("%T", got["pgx"])
		if gotPgline != tc.pgline || gotPgx != tc.pgx {
			t.Errorf("%s: value types pgline %s, pgx %s; want %s, %s", tc.expr, gotPgline, gotPgx, tc.pgline, tc.pgx)
		}
		if scan["pgline"] != tc.scanPgline || scan["pgx"] != tc.scanPgx {
			t.Errorf("%s: scan types pgline %s, pgx %s; want %s, %s", tc.expr, scan["pgline"], scan["pgx"], tc.scanPgline, tc.scanPgx)
		}
		if !sameValue(got["pgline"], got["pgx"]) {
			t.Errorf("%s: pgline %#v, pgx %#v", tc.expr, got["pgline"], got["pgx"])
		}
		mark := func(a, b string) string {
			if a != b {
				return "**" + a + "**"
			}
			return a
		}
		t.Logf("| `%s` | %s | %s | %s | %s |", tc.expr, mark(gotPgline, gotPgx), mark(gotPgx, gotPgline),
			mark(scan["pgline"], scan["pgx"]), mark(scan["pgx"], scan["pgline"]))
	}
}

// sameValue reports whether two driver values hold the same data: a
// []byte and a string by content, times as the same instant.
func sameValue(a, b any) bool {
	text := func(v any) (string, bool) {
		switch v := v.(type) {
		case string:
			return v, true
		case []byte:
			return string(v), true
		}
		return "", false
	}
	if ta, ok := text(a); ok {
		tb, ok := text(b)
		return ok && ta == tb
	}
	if ta, ok := a.(time.Time); ok {
		tb, ok := b.(time.Time)
		return ok && ta.Equal(tb)
	}
	return reflect.DeepEqual(a, b)
}

// tzChildEnv marks the child process of TestDriverTimeZone.
const tzChildEnv = "PGLINE_INTEGRATION_TZ_CHILD"

// TestDriverTimeZone shows where the drivers put a timestamptz value in a
// process whose local time zone is not UTC (TZ=America/New_York, in a
// child process): pgline in UTC, as its native API does, pgx in
// time.Local. Both give the same instant; timestamp and date come in UTC
// from both.
func TestDriverTimeZone(t *testing.T) {
	t.Parallel()
	if os.Getenv(tzChildEnv) != "" {
		tzChild(t)
		return
	}
	dsn := newDatabase(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestDriverTimeZone$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "TZ=America/New_York", tzChildEnv+"=1", "PGLINE_TEST_DSN="+dsn)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestDriverTimeZone")) {
		t.Fatalf("child with TZ=America/New_York: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "|") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

// tzChild is TestDriverTimeZone in the child, whose TZ is America/New_York.
func tzChild(t *testing.T) {
	if time.Now().In(time.Local).Format("MST") == "UTC" {
		t.Fatal("the child's local time zone is UTC: TZ=America/New_York had no effect")
	}
	want := []struct {
		expr        string
		pgline, pgx string // the zone of the value: "UTC" or "Local"
	}{
		{"'2024-03-01 12:34:56+02'::timestamptz", "UTC", "Local"},
		{"'2024-03-01 12:34:56'::timestamp", "UTC", "UTC"},
		{"'2024-03-01'::date", "UTC", "UTC"},
	}
	instant := time.Date(2024, 3, 1, 10, 34, 56, 0, time.UTC)
	for _, w := range want {
		for _, drv := range []string{"pgline", "pgx"} {
			db, err := sql.Open(drv, srv.DSN())
			if err != nil {
				t.Fatal(err)
			}
			var v any
			err = db.QueryRowContext(testCtx(t), "SELECT "+w.expr).Scan(&v)
			db.Close()
			if err != nil {
				t.Fatalf("%s: %s: %v", drv, w.expr, err)
			}
			tm := v.(time.Time)
			zone := "UTC"
			if tm.Location() == time.Local {
				zone = "Local"
			} else if tm.Location() != time.UTC {
				zone = tm.Location().String()
			}
			wantZone := w.pgline
			if drv == "pgx" {
				wantZone = w.pgx
			}
			if zone != wantZone {
				t.Errorf("%s: %s: value in %s (%v), want %s", drv, w.expr, zone, tm, wantZone)
			}
			if strings.HasSuffix(w.expr, "timestamptz") && !tm.Equal(instant) {
				t.Errorf("%s: %s = %v, want the instant %v", drv, w.expr, tm, instant)
			}
			t.Logf("| `%s` | %s | %s |", w.expr, drv, tm)
		}
	}
}

// argCase is one argument and what each driver makes of it: the text
// the server sees (expr casts the parameter, then ::text), or "error".
type argCase struct {
	name        string
	expr        string
	arg         any
	pgline, pgx string
}

var argCases = []argCase{
	{"int32 to int4", "$1::int4", int32(-5), "-5", "-5"},
	{"string to numeric", "$1::numeric", "12.345", "12.345", "12.345"},
	{"[]byte to bytea", "$1::bytea", []byte{0, 1}, `\x0001`, `\x0001`},
	{"time in +02:00 to timestamptz", "$1::timestamptz", time.Date(2024, 1, 1, 12, 0, 0, 0, time.FixedZone("", 7200)), "2024-01-01 10:00:00+00", "2024-01-01 10:00:00+00"},
	{"time in +02:00 to timestamp (wall clock kept)", "$1::timestamp", time.Date(2024, 1, 1, 12, 0, 0, 0, time.FixedZone("", 7200)), "2024-01-01 12:00:00", "2024-01-01 12:00:00"},
	{"time to date", "$1::date", time.Date(2024, 1, 1, 23, 0, 0, 0, time.UTC), "2024-01-01", "2024-01-01"},
	{"[]string to text[]", "$1::text[]", []string{"a", "b c"}, `{a,"b c"}`, `{a,"b c"}`},
	{"[]int64 to int8[]", "$1::int8[]", []int64{1, -2}, "{1,-2}", "{1,-2}"},
	{"map to jsonb", "$1::jsonb", map[string]any{"a": 1}, `{"a": 1}`, `{"a": 1}`},
	{"string to jsonb", "$1::jsonb", `{"a":1}`, `{"a": 1}`, `{"a": 1}`},
	{"pq-style array literal string to text[]", "$1::text[]", `{x,y}`, "{x,y}", "{x,y}"},
	{"string to uuid", "$1::uuid", "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
	{"int64 to text", "$1::text", int64(7), "7", "error"},
	{"time to text", "$1::text", time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC), "error", "2024-01-01 12:00:00 +0000 UTC"},
	{"nil to int4", "$1::int4", nil, "NULL", "NULL"},
}

// TestDriverArgumentTypes passes common Go values as arguments through
// pgline and pgx's stdlib side by side. Run with -v for the table.
func TestDriverArgumentTypes(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	dbs := map[string]*sql.DB{}
	for _, drv := range []string{"pgline", "pgx"} {
		db, err := sql.Open(drv, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		dbs[drv] = db
	}
	t.Log("| argument | parameter | pgline | pgx |")
	t.Log("|---|---|---|---|")
	for _, tc := range argCases {
		got := map[string]string{}
		for drv, db := range dbs {
			var s sql.NullString
			err := db.QueryRowContext(testCtx(t), "SELECT ("+tc.expr+")::text", tc.arg).Scan(&s)
			switch {
			case err != nil:
				got[drv] = "error"
			case !s.Valid:
				got[drv] = "NULL"
			default:
				got[drv] = s.String
			}
		}
		if got["pgline"] != tc.pgline || got["pgx"] != tc.pgx {
			t.Errorf("%s: pgline %q, pgx %q; want %q, %q", tc.name, got["pgline"], got["pgx"], tc.pgline, tc.pgx)
		}
		t.Logf("| %s | `%s` | `%s` | `%s` |", tc.name, tc.expr, got["pgline"], got["pgx"])
	}
}
