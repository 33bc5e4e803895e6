package pgline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestListenNotify: one listener, 10 senders × 100 payloads: all 1000
// arrive, in order per sender, while the listener's Conn also runs other
// statements.
func TestListenNotify(t *testing.T) {
	ctx := testCtx(t)
	l := connect(t, srv.DSN())
	if err := l.Listen(ctx, "pgline chan"); err != nil {
		t.Fatal(err)
	}
	p := newTestPool(t, "pool_max_conns=4")
	var wg sync.WaitGroup
	for s := 0; s < 10; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if _, err := p.Exec(ctx, "SELECT pg_notify('pgline chan', $1)", fmt.Sprintf("%d:%d", s, i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	// Meanwhile the listening Conn keeps running statements.
	stopQueries := make(chan struct{})
	queriesDone := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stopQueries:
				queriesDone <- nil
				return
			default:
			}
			var v int
			if err := l.QueryRow(ctx, "SELECT $1::int", 9).Scan(&v); err != nil || v != 9 {
				queriesDone <- fmt.Errorf("query on the listening conn: %d %v", v, err)
				return
			}
		}
	}()
	next := make([]int, 10)
	for got := 0; got < 1000; got++ {
		n, err := l.WaitForNotification(ctx)
		if err != nil {
			t.Fatalf("after %d notifications: %v", got, err)
		}
		if n.Channel != "pgline chan" {
			t.Fatalf("channel %q", n.Channel)
		}
		a, b, _ := strings.Cut(n.Payload, ":")
		s, _ := strconv.Atoi(a)
		i, _ := strconv.Atoi(b)
		if s < 0 || s >= 10 || i != next[s] {
			t.Fatalf("payload %q out of order (want %d:%d)", n.Payload, s, next[s])
		}
		next[s]++
	}
	close(stopQueries)
	if err := <-queriesDone; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}

// TestWaitForNotificationCancel: the wait returns promptly when ctx ends,
// and the Conn goes on working.
func TestWaitForNotificationCancel(t *testing.T) {
	ctx := testCtx(t)
	l := connect(t, srv.DSN("sslmode=require"))
	if err := l.Listen(ctx, "quiet"); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := l.WaitForNotification(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("took %v", took)
	}
	if _, err := l.Exec(ctx, "NOTIFY quiet, 'now'"); err != nil {
		t.Fatal(err)
	}
	n, err := l.WaitForNotification(ctx)
	if err != nil || n.Payload != "now" || n.PID != l.PID() {
		t.Fatalf("%+v %v", n, err)
	}
	if err := l.Unlisten(ctx, "*"); err != nil {
		t.Fatal(err)
	}
}

// TestPoolReleaseDropsNotifications: notifications one Acquire holder
// received but did not read are not handed to the next holder.
func TestPoolReleaseDropsNotifications(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "pool_max_conns=1")
	a, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Listen(ctx, "release_ch"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec(ctx, "NOTIFY release_ch, 'for a only'"); err != nil {
		t.Fatal(err)
	}
	a.Release()
	b, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if n, err := b.WaitForNotification(wctx); err == nil {
		t.Fatalf("the next holder got %+v", n)
	}
}

// TestWaitForNotificationCancelRace: a ctx ending just as a notification
// arrives used to leave a past read deadline behind (set by the ctx's
// callback after the wait had cleared it), and the next statement failed
// with an i/o timeout that closed the connection.
func TestWaitForNotificationCancelRace(t *testing.T) {
	ctx := testCtx(t)
	l := connect(t, srv.DSN())
	if err := l.Listen(ctx, "race_ch"); err != nil {
		t.Fatal(err)
	}
	n := connect(t, srv.DSN())
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			if _, err := n.Exec(ctx, "NOTIFY race_ch"); err != nil {
				return
			}
		}
	}()
	defer func() { stop.Store(true); <-done }()
	for i := range 3000 {
		wctx, cancel := context.WithCancel(ctx)
		go func() {
			time.Sleep(time.Duration(i%40) * 2 * time.Microsecond)
			cancel()
		}()
		l.WaitForNotification(wctx)
		cancel()
		if _, err := l.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatalf("iteration %d: %v", i, err)
		}
	}
}
