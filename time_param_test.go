package pgline

import (
	"testing"
	"time"

	"github.com/pgline/pgline/pgtype"
)

// TestTimeForTimeParams: a time.Time is accepted for time and timetz
// parameters, as pgx and lib/pq accept it (GORM models with type:time):
// the wall clock's time of day in the time's location, and for timetz the
// zone's offset with it; in a query, through a column's type, and in a
// COPY.
func TestTimeForTimeParams(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN(""))
	ny := time.FixedZone("NY", -5*3600)
	at := time.Date(2024, 3, 10, 23, 4, 5, 123456789, ny)
	var tm, tz string
	if err := c.QueryRow(ctx, "SELECT $1::time::text, $2::timetz::text", at, at).Scan(&tm, &tz); err != nil {
		t.Fatal(err)
	}
	if tm != "23:04:05.123456" || tz != "23:04:05.123456-05" {
		t.Fatalf("time %q, timetz %q; want 23:04:05.123456 and 23:04:05.123456-05", tm, tz)
	}
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE time_params (a time, b timetz)"); err != nil {
		t.Fatal(err)
	}
	odd := time.Date(2024, 1, 1, 0, 0, 1, 0, time.FixedZone("", 5*3600+30*60+15))
	if _, err := c.Exec(ctx, "INSERT INTO time_params VALUES ($1, $2), ($3, $4)", at, at, odd, odd); err != nil {
		t.Fatal(err)
	}
	rows, err := c.Query(ctx, "SELECT a::text, b::text FROM time_params ORDER BY a")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var a, b string
		if err := rows.Scan(&a, &b); err != nil {
			t.Fatal(err)
		}
		got = append(got, a+" "+b)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"00:00:01 00:00:01+05:30:15", "23:04:05.123456 23:04:05.123456-05"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("rows %q, want %q", got, want)
	}
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE time_copy (a time, b timetz)"); err != nil {
		t.Fatal(err)
	}
	if n, err := c.CopyFrom(ctx, Identifier{"time_copy"}, []string{"a", "b"}, CopyFromRows([][]any{{at, odd}})); err != nil || n != 1 {
		t.Fatalf("COPY of a time.Time into time and timetz: %d rows, %v", n, err)
	}
	if err := c.QueryRow(ctx, "SELECT a::text, b::text FROM time_copy").Scan(&tm, &tz); err != nil || tm != "23:04:05.123456" || tz != "00:00:01+05:30:15" {
		t.Fatalf("after COPY: %q %q, %v", tm, tz, err)
	}
	// An infinite Timestamp has no time of day.
	var v string
	if err := c.QueryRow(ctx, "SELECT $1::time::text", pgtype.Timestamp{InfinityModifier: pgtype.Infinity, Valid: true}).Scan(&v); err == nil {
		t.Fatalf("infinity as time: %q, want an error", v)
	}
}
