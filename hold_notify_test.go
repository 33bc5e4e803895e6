package pgline

// WaitForNotification holds the connection's reader while it waits: a
// notification that arrives in another caller's reply, two waiters, a
// Batch sent meanwhile.

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestWaitForNotificationInOthersReply: a notification that the server
// sends in front of another goroutine's reply is kept by the Conn
// (pushNotification) while WaitForNotification waits behind that
// goroutine's request: once it has the turn it must return that
// notification, not wait for a new message (waitOnce looking only at the
// socket) and return ctx's error at its deadline, the notification still
// kept.
//
//	S: SELECT pg_sleep(0.2)       the backend is busy; a NOTIFY from another session arrives
//	T: SELECT 1                   queued behind S: the backend sends the notification as it reads T
//	W: WaitForNotification(1s)    queued behind T
func TestWaitForNotificationInOthersReply(t *testing.T) {
	c := connect(t, srv.DSN())
	other := connect(t, srv.DSN())
	ctx := testCtx(t)
	if err := c.Listen(ctx, "gate_ch"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.Exec(ctx, "SELECT pg_sleep(0.2) /* S */") }()
	time.Sleep(20 * time.Millisecond)
	go func() { defer wg.Done(); c.Exec(ctx, "SELECT 1 /* T */") }()
	time.Sleep(20 * time.Millisecond)
	type res struct {
		n   *Notification
		err error
		d   time.Duration
	}
	wDone := make(chan res, 1)
	go func() {
		wctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		n, err := c.WaitForNotification(wctx)
		wDone <- res{n, err, time.Since(start)}
	}()
	time.Sleep(20 * time.Millisecond)
	if _, err := other.Exec(ctx, "NOTIFY gate_ch, 'hello'"); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	wg.Wait()
	r := <-wDone
	t.Logf("W: %v, %v after it started (NOTIFY committed %v before W returned)", r.n, r.err, time.Since(sent).Round(time.Millisecond))
	if r.err != nil {
		// Was the notification there all along?
		qctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		n, err := c.WaitForNotification(qctx)
		cancel()
		t.Errorf("WaitForNotification returned %v at its deadline although the notification had arrived ~%v before; a call right after returns it at once: %v %v",
			r.err, (r.d - 60*time.Millisecond).Round(10*time.Millisecond), n, err)
	}
}

// processCPU is the CPU time (user and system) the test process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestWaitForNotificationTwoWaiters: two goroutines wait for notifications
// on one idle Conn. Each waitOnce steps aside when a request is queued
// behind it (req.next != nil) and the other's wait is such a request: they
// must not keep interrupting each other (read deadline in the past,
// handoff, enqueue again), a busy loop that would burn CPU for the whole
// wait. Both still get the notifications.
func TestWaitForNotificationTwoWaiters(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	if err := c.Listen(ctx, "gate_w"); err != nil {
		t.Fatal(err)
	}
	measure := func(n int) (time.Duration, time.Duration) {
		var wg sync.WaitGroup
		cpu0, wall0 := processCPU(), time.Now()
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
		return processCPU() - cpu0, time.Since(wall0)
	}
	cpu1, wall1 := measure(1)
	cpu2, wall2 := measure(2)
	t.Logf("one waiter: %v CPU in %v; two waiters: %v CPU in %v", cpu1.Round(time.Millisecond), wall1.Round(time.Millisecond), cpu2.Round(time.Millisecond), wall2.Round(time.Millisecond))
	// Still delivered?
	other := connect(t, srv.DSN())
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
	other.Exec(ctx, "NOTIFY gate_w, 'a'; NOTIFY gate_w, 'b'")
	wg.Wait()
	t.Logf("two waiters got %v and %v", <-got, <-got)
	if cpu2 > 300*time.Millisecond {
		t.Errorf("two goroutines waiting for notifications on an idle Conn for 1s burnt %v of CPU (one: %v): they step aside for each other in a loop", cpu2.Round(time.Millisecond), cpu1.Round(time.Millisecond))
	}
}

// TestWaitForNotificationBatchSyncsRace: SendBatch sets req.syncs
// (batch.go, after send released wmu) while a WaitForNotification on the
// same Conn reads the queue's syncs under wmu (othersQueued via
// request.listens, listen.go): no data race under -race.
func TestWaitForNotificationBatchSyncsRace(t *testing.T) {
	storm(t)
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	if err := c.Listen(ctx, "takeover_race"); err != nil {
		t.Fatal(err)
	}
	end := time.Now().Add(time.Second)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for time.Now().Before(end) {
			wctx, cancel := context.WithTimeout(ctx, time.Millisecond)
			c.WaitForNotification(wctx)
			cancel()
		}
	}()
	go func() {
		defer wg.Done()
		for time.Now().Before(end) {
			b := &Batch{}
			b.Queue("SELECT 1")
			b.Queue("SELECT 2")
			if err := c.SendBatch(ctx, b).Close(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
}
