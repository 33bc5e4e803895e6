package pgline

// Audit of the writer takeover (flushLocked/overdueLocked, be9dffd): many
// goroutines sharing one Conn, each checking the echo of its own unique
// value, so that a reply delivered to the wrong caller, a statement lost,
// doubled or reordered, or bytes of two writers interleaved shows.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// auditTakeovers reads c.takeovers under wmu.
func auditTakeovers(c *Conn) uint64 {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.takeovers
}

// auditLoad runs goroutines in loops until a deadline, or until maxErrs
// failures were reported (the first maxErrs are the test's errors).
type auditLoad struct {
	t       *testing.T
	end     time.Time
	maxErrs int64
	bad     atomic.Int64
	wg      sync.WaitGroup
}

func newAuditLoad(t *testing.T, d time.Duration, maxErrs int64) *auditLoad {
	return &auditLoad{t: t, end: time.Now().Add(d), maxErrs: maxErrs}
}

// fail reports a failure.
func (l *auditLoad) fail(format string, args ...any) {
	if l.bad.Add(1) <= l.maxErrs {
		l.t.Errorf(format, args...)
	}
}

// spawn starts n goroutines each running f in a loop.
func (l *auditLoad) spawn(n int, f func()) {
	for range n {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for time.Now().Before(l.end) && l.bad.Load() < l.maxErrs {
				f()
			}
		}()
	}
}

// wait waits for the goroutines to end.
func (l *auditLoad) wait() { l.wg.Wait() }

// auditEchoLoad runs g goroutines on q for d, each running SELECT $1::int8
// with values unique across the run, and reports the mismatches.
func auditEchoLoad(t *testing.T, ctx context.Context, g int, d time.Duration, q func(context.Context, string, ...any) *Row) (n int64) {
	t.Helper()
	var seq atomic.Int64
	var wg sync.WaitGroup
	var bad atomic.Int64
	end := time.Now().Add(d)
	for i := 0; i < g; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) && bad.Load() < 10 {
				v := seq.Add(1)
				var got int64
				err := q(ctx, "SELECT $1::int8", v).Scan(&got)
				if err != nil || got != v {
					bad.Add(1)
					t.Errorf("sent %d, got %d, %v", v, got, err)
				}
			}
		}()
	}
	wg.Wait()
	return seq.Load()
}

// TestAuditTakeoverEcho: 50..500 goroutines on one Conn, default and
// pipeline_sync=each; every caller must read its own echo, and takeovers
// must actually have happened (or the test proves nothing).
func TestAuditTakeoverEcho(t *testing.T) {
	for _, dsn := range []string{"", "pipeline_sync=each", "unix", "unix pipeline_sync=each"} {
		for _, g := range []int{2, 3, 8, 50, 500} {
			if strings.HasPrefix(dsn, "unix") && g != 50 {
				continue
			}
			t.Run(fmt.Sprintf("%s/g%d", dsn, g), func(t *testing.T) {
				var c *Conn
				if rest, ok := strings.CutPrefix(dsn, "unix"); ok {
					c = connect(t, srv.SocketDSN(strings.TrimSpace(rest)))
				} else {
					c = connect(t, srv.DSN(dsn))
				}
				ctx := testCtx(t)
				n := auditEchoLoad(t, ctx, g, time.Second, c.QueryRow)
				tk := auditTakeovers(c)
				t.Logf("%d statements, %d takeovers", n, tk)
				if g >= 8 && g <= 50 && tk == 0 {
					t.Errorf("no takeover happened: the test exercised nothing")
				}
				// The connection still answers in order afterwards.
				var v int64
				if err := c.QueryRow(ctx, "SELECT 424242::int8").Scan(&v); err != nil || v != 424242 {
					t.Fatalf("after: %d %v", v, err)
				}
				auditQuiescent(t, c)
			})
		}
	}
}
