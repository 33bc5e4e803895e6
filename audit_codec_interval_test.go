package pgline

import (
	"context"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtype"
)

// TestAuditCodecIntervalDaysOverflow scans into *time.Duration an
// interval of 2147483647 days minus about 34,000 years of seconds: some
// 5.8 million years, far beyond time.Duration, so it must fail with
// ErrOutOfRange. Interval.Duration multiplies the days by 86400e6 in int64
// before its range check; the product wraps, the seconds cancel the
// wrapped value, and the scan gives 1s with no error.
func TestAuditCodecIntervalDaysOverflow(t *testing.T) {
	ctx := context.Background()
	c := acodecConn(t)
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
