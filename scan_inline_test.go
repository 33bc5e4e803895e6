package pgline

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtype"
)

// TestScanInlineValues: the common binary values Scan decodes without a
// call through the plan (pgtype.Inline) come out as the plan makes them
// (compared with ScanColumn into *any, which goes through DecodeValue), on
// the server's edge values; NULL and ±infinity still give the plan's
// error naming the column; and a column scanned into another type on the
// next row (a plan with no Inline) and back decodes right.
func TestScanInlineValues(t *testing.T) {
	c := connect(t, srv.DSN(""))
	ctx := testCtx(t)
	rows, err := c.Query(ctx, `SELECT a::int2, b::int4, c::int8, d::float4, e::float8, f::bool, g::timestamp, h::timestamptz FROM (VALUES
		(0, 0, 0, 0::float8, 0::float8, false, '2000-01-01', '2000-01-01 00:00:00+00'),
		(-32768, -2147483648, -9223372036854775808, '-Infinity', '-Infinity', true, '4713-01-01 BC', '1970-01-01 00:00:00.000001+00'),
		(32767, 2147483647, 9223372036854775807, 'NaN', 'NaN', false, '294276-12-31 23:59:59.999999', '1999-12-31 23:59:59.999999+00'),
		(1, -1, 1, 1.5e-45, 4.9e-324, true, '1969-12-31 23:59:59.999999', '2026-12-03 12:34:56.789012+05'),
		(2, 3, 4, 3.4028235e38, 1.7976931348623157e308, false, '2000-02-29 12:00:00', '0044-03-15 00:00:00+00')
	) v(a, b, c, d, e, f, g, h)`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var (
			a    int16
			b    int32
			cc   int64
			d    float32
			e    float64
			f    bool
			g, h time.Time
		)
		if err := rows.Scan(&a, &b, &cc, &d, &e, &f, &g, &h); err != nil {
			t.Fatalf("row %d: %v", n, err)
		}
		got := []any{a, b, cc, d, e, f, g, h}
		for i := range got {
			var want any
			if err := rows.ScanColumn(i, &want); err != nil {
				t.Fatal(err)
			}
			if !sameValue(got[i], want) {
				t.Errorf("row %d column %d: Scan %v (%T), the plan %v (%T)", n, i, got[i], got[i], want, want)
			}
		}
		if n == 1 {
			// Column b into an int64 (no Inline), then back.
			var wide int64
			if err := rows.ScanColumn(1, &wide); err != nil || wide != math.MinInt32 {
				t.Errorf("int4 into *int64: %d, %v", wide, err)
			}
		}
		n++
	}
	if err := rows.Err(); err != nil || n != 5 {
		t.Fatalf("%d rows, %v", n, err)
	}

	var i4 int32
	var ts time.Time
	err = c.QueryRow(ctx, "SELECT NULL::int4").Scan(&i4)
	if !errors.Is(err, pgtype.ErrNull) {
		t.Errorf("NULL int4 into *int32: %v, want ErrNull", err)
	}
	for _, v := range []string{"infinity", "-infinity"} {
		err := c.QueryRow(ctx, "SELECT $1::text::timestamptz AS when_", v).Scan(&ts)
		if err == nil || !ts.IsZero() {
			t.Errorf("%s into *time.Time: %v, %v; want an error", v, ts, err)
		} else if want := "when_"; !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q does not name the column", v, err)
		}
	}
}

// sameValue compares a typed scan with DecodeValue's value for the same
// column: NaN equals NaN, times are compared as instants and locations.
func sameValue(got, want any) bool {
	switch g := got.(type) {
	case float32:
		w, ok := want.(float32)
		return ok && (g == w || g != g && w != w)
	case float64:
		w, ok := want.(float64)
		return ok && (g == w || math.IsNaN(g) && math.IsNaN(w))
	case time.Time:
		w, ok := want.(time.Time)
		return ok && g.Equal(w) && g.Location() == w.Location()
	}
	return got == want
}
