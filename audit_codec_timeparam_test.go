package pgline

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtype"
)

// TestAuditCodecTimeParamsDifferential sends random time.Time values in
// odd locations (half-hour, 45-minute and LMT offsets with seconds, DST)
// as date, timestamp, timestamptz, time and timetz parameters, and checks
// the server's text of what arrived against what pgline documents:
// timestamptz the instant, timestamp and time the wall clock, date the
// wall date, timetz the wall clock with the zone's offset (nanoseconds
// truncated to microseconds).
func TestAuditCodecTimeParamsDifferential(t *testing.T) {
	ctx := context.Background()
	c := acodecConn(t)
	if _, err := c.Exec(ctx, "SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	var locs []*time.Location
	for _, n := range []string{"America/St_Johns", "Asia/Kathmandu", "Europe/Amsterdam", "Pacific/Chatham", "America/Sao_Paulo", "Australia/Lord_Howe", "Africa/Monrovia"} {
		l, err := time.LoadLocation(n)
		if err != nil {
			t.Skip(err)
		}
		locs = append(locs, l)
	}
	locs = append(locs, time.FixedZone("odd", -(3*3600+25*60+7)), time.FixedZone("odd2", 15*3600+59*60+59), time.UTC)
	rng := rand.New(rand.NewSource(7))
	bad := 0
	for i := 0; i < 300; i++ {
		loc := locs[rng.Intn(len(locs))]
		sec := rng.Int63n(int64(200*365*86400)) - int64(100*365*86400) + 946684800
		tm := time.Unix(sec, rng.Int63n(1e9)).In(loc)
		if rng.Intn(4) == 0 {
			tm = time.Now().In(loc) // with a monotonic reading
		}
		trunc := tm.Truncate(time.Microsecond)
		if tm.Nanosecond()%1000 != 0 {
			trunc = time.Date(tm.Year(), tm.Month(), tm.Day(), tm.Hour(), tm.Minute(), tm.Second(), tm.Nanosecond()/1000*1000, loc)
		}
		_, off := tm.Zone()
		frac := func(x time.Time) string {
			s := x.Format(".999999")
			return s
		}
		tzs := func(off int) string {
			sign := "+"
			if off < 0 {
				sign, off = "-", -off
			}
			s := fmt.Sprintf("%s%02d", sign, off/3600)
			if off%3600 != 0 {
				s += fmt.Sprintf(":%02d", off/60%60)
				if off%60 != 0 {
					s += fmt.Sprintf(":%02d", off%60)
				}
			}
			return s
		}
		u := trunc.UTC()
		cases := []struct{ typ, want string }{
			{"timestamptz", u.Format("2006-01-02 15:04:05") + frac(u) + "+00"},
			{"timestamp", trunc.Format("2006-01-02 15:04:05") + frac(trunc)},
			{"date", trunc.Format("2006-01-02")},
			{"time", trunc.Format("15:04:05") + frac(trunc)},
			{"timetz", trunc.Format("15:04:05") + frac(trunc) + tzs(off)},
		}
		for _, cs := range cases {
			var got string
			if err := c.QueryRow(ctx, "SELECT $1::"+cs.typ+"::text", tm).Scan(&got); err != nil {
				t.Errorf("%s %v: %v", cs.typ, tm, err)
				continue
			}
			if got != cs.want {
				bad++
				if bad < 10 {
					t.Errorf("%s %v (%s): server got %s, want %s", cs.typ, tm, loc, got, cs.want)
				}
			}
		}
		// And back: the instant read from timestamptz is the same instant.
		var back time.Time
		if err := c.QueryRow(ctx, "SELECT $1::timestamptz", tm).Scan(&back); err != nil || !back.Equal(trunc) {
			t.Errorf("timestamptz %v came back %v, %v", tm, back, err)
		}
		var ts pgtype.Timetz
		if err := c.QueryRow(ctx, "SELECT $1::timetz", tm).Scan(&ts); err != nil || int(ts.Offset) != off {
			t.Errorf("timetz %v came back %+v, %v", tm, ts, err)
		}
	}
}
