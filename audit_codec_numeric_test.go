package pgline

import (
	"context"
	"math"
	"testing"
)

// TestAuditCodecNumericBeyondFloat64 scans a finite numeric beyond
// float64's range into *float64 and *float32. pgline's own rule (float8
// into *float32: "a finite float8 beyond float32 is an error", and numeric
// 1e39 into *float32 is an error) says such a value must fail; instead
// numeric 1e400 comes back as +Inf (and -1e400 as -Inf) with no error.
func TestAuditCodecNumericBeyondFloat64(t *testing.T) {
	ctx := context.Background()
	c := acodecConn(t)
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

// TestAuditCodecNumericFloat32Rounding scans numerics just above a
// float32 rounding midpoint into *float32. pgline parses the decimal as a
// float64 and then rounds that to float32 (double rounding), which can
// land on the wrong neighbour; the server's own numeric::float4 is
// correctly rounded.
func TestAuditCodecNumericFloat32Rounding(t *testing.T) {
	ctx := context.Background()
	c := acodecConn(t)
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
