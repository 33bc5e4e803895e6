package pgline

// Notifications (LISTEN, WaitForNotification) on a Conn busy with COPY
// and queries: each delivered once, in order; none from a transaction
// that rolled back or from a LISTEN left by another Pool user;
// WaitForNotification keeps its deadline and ends with its connection.

import (
	"bytes"
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

// notifyPayload is the payload of notification i: small, unicode, or
// near the 8000-byte limit.
func notifyPayload(i int) string {
	switch i % 4 {
	case 0:
		return strconv.Itoa(i)
	case 1:
		return strconv.Itoa(i) + " ünïcødé ✓ 漢字"
	case 2:
		return strconv.Itoa(i) + ":" + strings.Repeat("p", 7990-len(strconv.Itoa(i)))
	}
	return strconv.Itoa(i) + ":" + strings.Repeat("'\\\"", 100)
}

// TestNotify_UnderCopyAndQueryLoad: while goroutines run queries, a
// CopyFrom and a CopyTo on the listening Conn, another session sends 600
// notifications on two channels the Conn listens on and one it does not.
// The listener must get every notification of its channels exactly once,
// in order, with the right channel and payload, and none of the other
// channel; the queries must get their own replies.
func TestNotify_UnderCopyAndQueryLoad(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	other := connect(t, srv.DSN())
	copyKeyedTable(t, c, "cl_nload")
	for _, ch := range []string{"cl_a", "Cl B"} {
		if err := c.Listen(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	const total = 600
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var qerrs atomic.Int64
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				var v int
				var s string
				err := c.QueryRow(ctx, "SELECT $1::int4 + 1, $2::text", k, fmt.Sprint(g, "/", k)).Scan(&v, &s)
				if err != nil || v != k+1 || s != fmt.Sprint(g, "/", k) {
					if qerrs.Add(1) < 5 {
						t.Errorf("query g%d k%d: %d %q %v", g, k, v, s, err)
					}
				}
			}
		}(g)
	}
	wg.Add(1)
	go func() { // COPY traffic on the same Conn
		defer wg.Done()
		for r := 0; ; r++ {
			select {
			case <-stop:
				return
			default:
			}
			i := 0
			_, err := c.CopyFrom(ctx, Identifier{"cl_nload"}, []string{"a", "b"}, CopyFromFunc(func() ([]any, error) {
				if i == 20000 {
					return nil, nil
				}
				i++
				return []any{r*100000 + i, "n"}, nil
			}))
			if err != nil {
				t.Errorf("CopyFrom: %v", err)
				return
			}
			var buf bytes.Buffer
			if _, err := c.CopyTo(ctx, &buf, "COPY (SELECT g FROM generate_series(1, 20000) g) TO STDOUT"); err != nil {
				t.Errorf("CopyTo: %v", err)
				return
			}
			if n := bytes.Count(buf.Bytes(), []byte("\n")); n != 20000 {
				t.Errorf("CopyTo: %d lines", n)
			}
		}
	}()
	got := make(chan *Notification, 2*total)
	wdone := make(chan error, 1)
	go func() {
		for {
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			n, err := c.WaitForNotification(wctx)
			cancel()
			if err != nil {
				wdone <- err
				return
			}
			got <- n
		}
	}()
	for i := 0; i < total; i++ {
		ch := "cl_a"
		switch i % 3 {
		case 1:
			ch = "Cl B"
		case 2:
			ch = "cl_not_listened"
		}
		if _, err := other.Exec(ctx, "SELECT pg_notify($1, $2)", ch, notifyPayload(i)); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	want := 0
	for i := 0; i < total; i++ {
		if i%3 != 2 {
			want++
		}
	}
	var list []*Notification
	timeout := time.After(20 * time.Second)
loop:
	for len(list) < want {
		select {
		case n := <-got:
			list = append(list, n)
		case err := <-wdone:
			t.Errorf("WaitForNotification: %v after %d", err, len(list))
			break loop
		case <-timeout:
			t.Errorf("timeout after %d notifications", len(list))
			break loop
		}
	}
	close(stop)
	wg.Wait()
	// Anything extra?
	select {
	case n := <-got:
		list = append(list, n)
	case <-time.After(300 * time.Millisecond):
	}
	j := 0
	for i := 0; i < total && j < len(list); i++ {
		if i%3 == 2 {
			continue
		}
		ch := "cl_a"
		if i%3 == 1 {
			ch = "Cl B"
		}
		n := list[j]
		j++
		if n.Channel != ch || n.Payload != notifyPayload(i) || n.PID != other.PID() {
			p := n.Payload
			if len(p) > 40 {
				p = p[:40] + "..."
			}
			t.Fatalf("notification %d: channel %q payload %q pid %d; want %q #%d", j-1, n.Channel, p, n.PID, ch, i)
		}
	}
	if len(list) != want {
		t.Fatalf("%d notifications, want %d", len(list), want)
	}
}

// TestNotify_RolledBackNeverDelivered: NOTIFY in a transaction that rolls
// back (from another session, and from the listening Conn itself) is never
// delivered; one that commits is delivered after the commit, once; after
// UNLISTEN nothing more of that channel arrives.
func TestNotify_RolledBackNeverDelivered(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	other := connect(t, srv.DSN())
	if err := c.Listen(ctx, "cl_rb"); err != nil {
		t.Fatal(err)
	}
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "NOTIFY cl_rb, 'rolled back'"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	tx, err = c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "NOTIFY cl_rb, 'self rolled back'"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	// A NOTIFY in a COPY's transaction that fails.
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE cl_rbt(a int4 CHECK (a < 10))"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "CREATE FUNCTION pg_temp.cl_rbn() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN PERFORM pg_notify('cl_rb', 'from copy '||NEW.a); RETURN NEW; END$$"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "CREATE TRIGGER t BEFORE INSERT ON cl_rbt FOR EACH ROW EXECUTE FUNCTION pg_temp.cl_rbn()"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CopyFromReader(ctx, "COPY cl_rbt FROM STDIN", strings.NewReader("1\n2\n30\n")); err == nil {
		t.Fatal("COPY with a failing row succeeded")
	}
	if _, err := other.Exec(ctx, "NOTIFY cl_rb, 'committed'"); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	n, err := c.WaitForNotification(wctx)
	cancel()
	if err != nil || n.Payload != "committed" {
		t.Fatalf("first notification: %+v, %v; want 'committed'", n, err)
	}
	if err := c.Unlisten(ctx, "cl_rb"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec(ctx, "NOTIFY cl_rb, 'after unlisten'"); err != nil {
		t.Fatal(err)
	}
	c.Exec(ctx, "SELECT 1")
	wctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
	n, err = c.WaitForNotification(wctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("after UNLISTEN: %+v, %v", n, err)
	}
}

// TestNotify_WaitDeadlineWhileBusy: WaitForNotification with a 200ms ctx
// while other goroutines keep the Conn busy with 1s statements returns at
// its deadline, not after them.
func TestNotify_WaitDeadlineWhileBusy(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if err := c.Listen(ctx, "cl_dl"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for k := 0; k < 2; k++ {
		wg.Add(1)
		go func() { defer wg.Done(); c.Exec(ctx, "SELECT pg_sleep(1)") }()
	}
	time.Sleep(50 * time.Millisecond)
	for _, busy := range []string{"query", "copy"} {
		if busy == "copy" {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.CopyFromReader(ctx, "COPY (SELECT 1) TO STDOUT", strings.NewReader(""))
				var buf bytes.Buffer
				c.CopyTo(ctx, &buf, "COPY (SELECT pg_sleep(1)) TO STDOUT")
			}()
			time.Sleep(50 * time.Millisecond)
		}
		wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		start := time.Now()
		n, err := c.WaitForNotification(wctx)
		d := time.Since(start)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || d > 600*time.Millisecond {
			t.Errorf("%s: WaitForNotification: %v %v after %v", busy, n, err, d)
		}
	}
	wg.Wait()
}

// TestNotify_WaitEndsAndTwoWaiters: WaitForNotification (no deadline)
// returns an error promptly when its backend is terminated, and when the
// Conn is closed by another goroutine; two waiters on one Conn each get
// distinct notifications, all of them.
func TestNotify_WaitEndsAndTwoWaiters(t *testing.T) {
	ctx := testCtx(t)
	admin := connect(t, srv.DSN())
	for _, how := range []string{"terminate", "close"} {
		c := connect(t, srv.DSN())
		if err := c.Listen(ctx, "cl_end"); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := c.WaitForNotification(context.Background())
			done <- err
		}()
		time.Sleep(100 * time.Millisecond)
		if how == "terminate" {
			admin.Exec(ctx, "SELECT pg_terminate_backend($1)", int(c.PID()))
		} else {
			c.Close()
		}
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: WaitForNotification returned no error", how)
			}
			t.Logf("%s: %v", how, err)
		case <-time.After(5 * time.Second):
			t.Errorf("%s: WaitForNotification still waits 5s after", how)
		}
	}

	c := connect(t, srv.DSN())
	if err := c.Listen(ctx, "cl_two_w"); err != nil {
		t.Fatal(err)
	}
	const total = 200
	got := make(chan string, 2*total)
	var wg sync.WaitGroup
	wctx, cancel := context.WithCancel(ctx)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n, err := c.WaitForNotification(wctx)
				if err != nil {
					return
				}
				got <- n.Payload
			}
		}()
	}
	wg.Add(1)
	go func() { // queries meanwhile
		defer wg.Done()
		for k := 0; wctx.Err() == nil; k++ {
			var v int
			if err := c.QueryRow(wctx, "SELECT $1::int4", k).Scan(&v); err == nil && v != k {
				t.Errorf("query %d got %d", k, v)
			}
		}
	}()
	for i := 0; i < total; i++ {
		if _, err := admin.Exec(ctx, "SELECT pg_notify('cl_two_w', $1)", itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	timeout := time.After(10 * time.Second)
	for len(seen) < total {
		select {
		case p := <-got:
			seen[p]++
			if seen[p] > 1 {
				t.Errorf("payload %s delivered twice", p)
			}
		case <-timeout:
			t.Errorf("%d of %d notifications", len(seen), total)
			cancel()
			wg.Wait()
			return
		}
	}
	cancel()
	wg.Wait()
	close(got)
	for p := range got {
		t.Errorf("extra notification %q", p)
	}
}

// TestNotify_PoolTxListenNotLeaked: a LISTEN run in a Pool transaction
// stays with the connection (documented); a later Acquire of it that
// never LISTENs must not get notifications of that channel from its
// WaitForNotification.
func TestNotify_PoolTxListenNotLeaked(t *testing.T) {
	ctx := testCtx(t)
	p, err := NewPool(ctx, srv.DSN("pool_max_conns=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	other := connect(t, srv.DSN())
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LISTEN cl_leak"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	pc, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Release()
	if _, err := other.Exec(ctx, "NOTIFY cl_leak, 'not yours'"); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	n, err := pc.WaitForNotification(wctx)
	if err == nil {
		t.Errorf("Acquire holder that never LISTENed got %+v", n)
	}
}
