package pgline

// Audit of bc86658 (noteRole, stillMatches): a promotion under load
// through Target("standby") with connections handed back on reroute:
// no call runs on the promoted server on a connection opened after the
// promotion, nothing leaks (Stat), no race (-race).

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
)

func TestAuditTodayHostsPromoteUnderLoad(t *testing.T) {
	p := startPrimary(t)
	s := startStandby(t, p, pgtest.StandbyOptions{Name: "audit_today_s"})
	pool := replicaPool(t, []*pgtest.Server{p, s}, 200*time.Millisecond, 0, "pool_max_conns=3")
	ctx := testCtx(t)
	sb := pool.Target("standby")
	pf := pool.Target("prefer-standby")
	rw := pool.Target("read-write")
	var wrong, ok, failed atomic.Int32
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				q := sb
				if i%3 == 1 {
					q = pf
				} else if i%3 == 2 {
					q = rw
				}
				var standby bool
				var backendStart time.Time
				err := q.QueryRow(cctx, "SELECT pg_is_in_recovery(), backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()").Scan(&standby, &backendStart)
				cancel()
				switch {
				case err != nil:
					failed.Add(1)
				case q == sb && !standby && backendStart.After(promoted.Load().(time.Time)):
					wrong.Add(1)
				case q == rw && standby:
					wrong.Add(1)
				default:
					ok.Add(1)
				}
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	promoted.Store(time.Now())
	if err := s.Promote(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	st := pool.Stat()
	t.Logf("ok=%d failed=%d wrong=%d stat=%+v", ok.Load(), failed.Load(), wrong.Load(), st)
	if wrong.Load() > 0 {
		t.Errorf("%d calls ran on a server of the wrong role on a connection opened after the promotion", wrong.Load())
	}
	if st.InFlight != 0 || st.AcquiredConns != 0 || st.Waiting != 0 || st.AcquireWaiting != 0 {
		t.Errorf("after the load: %+v", st)
	}
	if st.TotalConns > 2*st.MaxConns {
		t.Errorf("TotalConns %d > %d", st.TotalConns, 2*st.MaxConns)
	}
	// Every view still answers.
	for _, q := range []*Pool{pf, rw} {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var v int
		if err := q.QueryRow(cctx, "SELECT 1").Scan(&v); err != nil {
			t.Errorf("after the promotion: %v", err)
		}
		cancel()
	}
}

var promoted atomic.Value

func init() { promoted.Store(time.Now().Add(time.Hour)) }
