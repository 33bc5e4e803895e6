package pgline

// Audit of 995b187: a Conn that LISTENs and waits for notifications in
// one goroutine while others share it under a storm of signals (the
// stranded blocks' ROLLBACKs are queued while the wait reads the idle
// connection). Every notification sent must arrive once, every echo must
// be its caller's, and the wait must keep its deadlines.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

func TestStrandSignalsListenStorm(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	notifier := connect(t, srv.DSN())
	ch := fmt.Sprintf("audit_strand_%d", time.Now().UnixNano())
	// LISTEN itself may be hit by a signal.
	var err error
	for range 5 {
		if err = c.Listen(ctx, ch); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	storm := cancelStorm(t, ctx, c.PID(), 300*time.Microsecond, stop)
	l := newAuditLoad(t, time.Second, 10)
	var seq, sent atomic.Int64
	l.spawn(20, func() {
		v := seq.Add(1)
		var got int64
		err := c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
		if err == nil && got != v || err != nil && !isCode(err, "57014") {
			l.fail("sent %d, got %d, %v", v, got, err)
		}
	})
	l.spawn(1, func() {
		n := sent.Load() + 1
		if _, err := notifier.Exec(ctx, "SELECT pg_notify($1, $2)", ch, strconv.FormatInt(n, 10)); err != nil {
			l.fail("notify: %v", err)
			return
		}
		sent.Store(n)
		time.Sleep(time.Millisecond)
	})
	got := map[string]int{}
	var waitErr error
	recvDone := make(chan struct{})
	go func() {
		defer close(recvDone)
		deadline := time.Now().Add(2500 * time.Millisecond)
		for time.Now().Before(deadline) {
			wctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			start := time.Now()
			n, err := c.WaitForNotification(wctx)
			cancel()
			if el := time.Since(start); el > 250*time.Millisecond {
				waitErr = fmt.Errorf("WaitForNotification returned after %v (deadline 20ms): %v", el, err)
				return
			}
			if err != nil {
				if !errors.Is(err, context.DeadlineExceeded) {
					waitErr = err
					return
				}
				continue
			}
			got[n.Payload]++
		}
	}()
	l.wait()
	close(stop)
	storm.Wait()
	<-recvDone
	if waitErr != nil {
		t.Fatal(waitErr)
	}
	// Drain what is still on its way.
	for {
		wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		n, err := c.WaitForNotification(wctx)
		cancel()
		if err != nil {
			break
		}
		got[n.Payload]++
	}
	missing, dup := 0, 0
	for i := int64(1); i <= sent.Load(); i++ {
		switch got[strconv.FormatInt(i, 10)] {
		case 0:
			missing++
		case 1:
		default:
			dup++
		}
	}
	t.Logf("notifications sent %d, received %d distinct, blocks rolled back %d", sent.Load(), len(got), c.strands.Load())
	if missing+dup > 0 {
		t.Errorf("%d notifications missing, %d received twice", missing, dup)
	}
	wantUsable(t, ctx, c)
}
