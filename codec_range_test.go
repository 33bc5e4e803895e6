package pgline

// Values beyond a type's range or precision, on either side: an error, as
// the server gives, never Infinity, zero, a wrapped duration or a value
// rounded twice.

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtype"
)

// TestCodecFloat4Underflow sends a non-zero float64 too small for
// float4 as a float4 parameter, and scans a float8 that small into
// *float32. The server refuses both conversions itself
// (1e-46::float8::float4 is "value out of range: underflow"), and pgline
// refuses overflow ("a finite float8 beyond float32 is an error"), but it
// silently turns the non-zero value into 0.
func TestCodecFloat4Underflow(t *testing.T) {
	ctx := context.Background()
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "SELECT 1e-46::float8::float4"); err == nil {
		t.Fatal("the server now accepts float4 underflow; test premise gone")
	}
	for _, v := range []float64{1e-46, -1e-50, 1e-300} {
		var got float32
		err := c.QueryRow(ctx, "SELECT $1::float4", v).Scan(&got)
		if err == nil && got == 0 {
			t.Errorf("float64 %g as a float4 parameter arrived as 0 with no error", v)
		}
		err = c.QueryRow(ctx, "SELECT $1::float8", v).Scan(&got)
		if err == nil && got == 0 {
			t.Errorf("float8 %g scanned into *float32 as 0 with no error", v)
		}
	}
}

// TestCodecNumericBeyondFloat64 scans a finite numeric beyond
// float64's range into *float64 and *float32. pgline's own rule (float8
// into *float32: "a finite float8 beyond float32 is an error", and numeric
// 1e39 into *float32 is an error) says such a value must fail; instead
// numeric 1e400 comes back as +Inf (and -1e400 as -Inf) with no error.
func TestCodecNumericBeyondFloat64(t *testing.T) {
	ctx := context.Background()
	c := connect(t, srv.DSN())
	for _, v := range []string{"1e400", "-1e400", "1e309"} {
		var f float64
		err := c.QueryRow(ctx, "SELECT $1::numeric", v).Scan(&f)
		if err == nil && math.IsInf(f, 0) {
			t.Errorf("numeric %s into *float64: got %v with no error", v, f)
		}
		var f32 float32
		err = c.QueryRow(ctx, "SELECT $1::numeric", v).Scan(&f32)
		if err == nil && math.IsInf(float64(f32), 0) {
			t.Errorf("numeric %s into *float32: got %v with no error", v, f32)
		}
	}
	// The consistent behaviour, for reference: 1e39 into *float32 fails.
	var f32 float32
	if err := c.QueryRow(ctx, "SELECT 1e39::numeric").Scan(&f32); err == nil {
		t.Errorf("numeric 1e39 into *float32: got %v with no error", f32)
	}
}

// TestCodecNumericFloat32Rounding scans numerics just above a
// float32 rounding midpoint into *float32. pgline parses the decimal as a
// float64 and then rounds that to float32 (double rounding), which can
// land on the wrong neighbour; the server's own numeric::float4 is
// correctly rounded.
func TestCodecNumericFloat32Rounding(t *testing.T) {
	ctx := context.Background()
	c := connect(t, srv.DSN())
	// 1 + 2^-24 is the midpoint between float32 1 and 1+2^-23; anything
	// above it rounds up.
	for _, v := range []string{
		"1.000000059604644775390625000001",
		"1.0000000596046447753906251",
	} {
		var got, want float32
		if err := c.QueryRow(ctx, "SELECT $1::numeric, $1::numeric::float4", v).Scan(&got, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("numeric %s into *float32: got %v (%#x), server's float4 %v (%#x)", v, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
}

// TestCodecIntervalDaysOverflow scans into *time.Duration an
// interval of 2147483647 days minus about 34,000 years of seconds: some
// 5.8 million years, far beyond time.Duration, so it must fail with
// ErrOutOfRange. Interval.Duration multiplies the days by 86400e6 in int64
// before its range check; the product wraps, the seconds cancel the
// wrapped value, and the scan gives 1s with no error.
func TestCodecIntervalDaysOverflow(t *testing.T) {
	ctx := context.Background()
	c := connect(t, srv.DSN())
	const q = `SELECT interval '2147483647 days -298651767:41:43.48384'`
	var iv pgtype.Interval
	if err := c.QueryRow(ctx, q).Scan(&iv); err != nil {
		t.Fatal(err)
	}
	if iv.Days != 2147483647 || iv.Microseconds != -1075146363703483840 {
		t.Fatalf("setup: got %+v", iv)
	}
	var d time.Duration
	err := c.QueryRow(ctx, q).Scan(&d)
	if err == nil {
		t.Errorf("interval %s scanned into time.Duration as %v with no error", iv, d)
	}
	if got, err := iv.Duration(); err == nil {
		t.Errorf("Interval%+v.Duration() = %v with no error", iv, got)
	}
}

// TestCodecCopyFromStringOutOfRange copies Go strings into float
// columns. COPY FROM writes binary, so pgline parses a string itself for a
// non-text column "as the server would"; the server refuses these texts
// for these types ('1e400'::float8 and '1e-400'::float8 are out of range,
// '1e-46'::float4 underflows, there is no year 0, offsets stop below 16
// hours), but pgline stores Infinity, 0, 0001-01-01 BC or an instant
// instead.
func TestCodecCopyFromStringOutOfRange(t *testing.T) {
	ctx := context.Background()
	c := connect(t, srv.DSN())
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
