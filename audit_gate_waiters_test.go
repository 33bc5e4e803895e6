package pgline

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"
)

func gateCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestAuditGateTwoWaiters: two goroutines wait for notifications on one
// idle Conn. Each waitOnce steps aside when a request is queued behind it
// (req.next != nil) and the other's wait is such a request: they keep
// interrupting each other (read deadline in the past, handoff, enqueue
// again), a busy loop that burns CPU for the whole wait.
func TestAuditGateTwoWaiters(t *testing.T) {
	c := auditConn(t)
	ctx := testCtx(t)
	if err := c.Listen(ctx, "audit_gate_w"); err != nil {
		t.Fatal(err)
	}
	measure := func(n int) (time.Duration, time.Duration) {
		var wg sync.WaitGroup
		cpu0, wall0 := gateCPU(), time.Now()
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				wctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				c.WaitForNotification(wctx)
			}()
		}
		wg.Wait()
		return gateCPU() - cpu0, time.Since(wall0)
	}
	cpu1, wall1 := measure(1)
	cpu2, wall2 := measure(2)
	t.Logf("one waiter: %v CPU in %v; two waiters: %v CPU in %v", cpu1.Round(time.Millisecond), wall1.Round(time.Millisecond), cpu2.Round(time.Millisecond), wall2.Round(time.Millisecond))
	// Still delivered?
	other := auditConn(t)
	got := make(chan *Notification, 2)
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, _ := c.WaitForNotification(wctx)
			got <- n
		}()
	}
	time.Sleep(100 * time.Millisecond)
	other.Exec(ctx, "NOTIFY audit_gate_w, 'a'; NOTIFY audit_gate_w, 'b'")
	wg.Wait()
	t.Logf("two waiters got %v and %v", <-got, <-got)
	if cpu2 > 300*time.Millisecond {
		t.Errorf("two goroutines waiting for notifications on an idle Conn for 1s burnt %v of CPU (one: %v): they step aside for each other in a loop", cpu2.Round(time.Millisecond), cpu1.Round(time.Millisecond))
	}
}
