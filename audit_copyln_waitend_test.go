package pgline

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestAuditCopylnWaitEnds: WaitForNotification (no deadline) returns an
// error promptly when its backend is terminated, and when the Conn is
// closed by another goroutine; two waiters on one Conn each get distinct
// notifications, all of them.
func TestAuditCopylnWaitEnds(t *testing.T) {
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
		if _, err := admin.Exec(ctx, "SELECT pg_notify('cl_two_w', $1)", itoaCopyln(i)); err != nil {
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

func itoaCopyln(i int) string {
	const d = "0123456789"
	if i < 10 {
		return d[i : i+1]
	}
	return itoaCopyln(i/10) + d[i%10:i%10+1]
}
