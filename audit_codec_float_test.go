package pgline

import (
	"context"
	"testing"
)

// TestAuditCodecFloat4Underflow sends a non-zero float64 too small for
// float4 as a float4 parameter, and scans a float8 that small into
// *float32. The server refuses both conversions itself
// (1e-46::float8::float4 is "value out of range: underflow"), and pgline
// refuses overflow ("a finite float8 beyond float32 is an error"), but it
// silently turns the non-zero value into 0.
func TestAuditCodecFloat4Underflow(t *testing.T) {
	ctx := context.Background()
	c := acodecConn(t)
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
