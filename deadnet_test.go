package pgline

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// pipelineUntilCut runs n goroutines on c, each running SELECT $1,
// pg_sleep(0.05) with its own value and no deadline, over and over until
// a call fails; the network is cut after 500 ms. It returns, per
// goroutine, how long after the cut its failing call returned, and fails
// t if a goroutine got another's value or did not return within limit.
//
// With sendAfter, one more goroutine sends a statement 100 ms after the
// cut: bytes sent and never acknowledged, which hold the socket's
// keepalives back (the kernel retransmits them instead, for about 15
// minutes).
func pipelineUntilCut(t *testing.T, c *Conn, n int, limit time.Duration, sendAfter bool) []time.Duration {
	t.Helper()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		cutAt   time.Time
		after   = make([]time.Duration, n)
		wrong   []string
		started = make(chan struct{}, n)
	)
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			for i := 0; ; i++ {
				want := g*1_000_000 + i
				var got int
				err := c.QueryRow(context.Background(), "SELECT $1::int4, pg_sleep(0.05)::text", want).Scan(&got, new(string))
				if first {
					first = false
					started <- struct{}{}
				}
				if err != nil {
					mu.Lock()
					after[g] = time.Since(cutAt)
					if cutAt.IsZero() {
						wrong = append(wrong, fmt.Sprintf("goroutine %d failed before the cut: %v", g, err))
					}
					mu.Unlock()
					return
				}
				if got != want {
					mu.Lock()
					wrong = append(wrong, fmt.Sprintf("goroutine %d got %d, want %d", g, got, want))
					mu.Unlock()
				}
			}
		}()
	}
	for range n {
		<-started
	}
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	cutNetwork(t)
	cutAt = time.Now()
	mu.Unlock()
	if sendAfter {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(100 * time.Millisecond)
			_, err := c.Exec(context.Background(), "SELECT $1::int4", 1)
			mu.Lock()
			after = append(after, time.Since(cutAt))
			if err == nil {
				wrong = append(wrong, "a statement sent after the cut succeeded")
			}
			mu.Unlock()
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit + 10*time.Second):
		t.Fatalf("callers still waiting %v after the cut", limit+10*time.Second)
	}
	for _, w := range wrong {
		t.Error(w)
	}
	for g, d := range after {
		if d > limit {
			t.Errorf("caller %d answered %v after the cut, want at most %v", g, d.Round(time.Millisecond), limit)
		}
	}
	return after
}

// maxDuration is the longest of ds.
func maxDuration(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// TestDeadNetworkFailsPipelinedCallers: 20 goroutines pipelining on one
// Conn without deadlines, the network cut under them: with
// tcp_user_timeout=2000 and short keepalives, every one is answered (with
// an error, never another's value) within the user timeout + 1 s, and
// Close returns at once.
func TestDeadNetworkFailsPipelinedCallers(t *testing.T) {
	if !inOwnNetns(t) {
		return
	}
	c := connect(t, srv.DSN("tcp_user_timeout=2000 keepalives_idle=1 keepalives_interval=1 keepalives_count=1"))
	after := pipelineUntilCut(t, c, 20, 3*time.Second, true)
	t.Logf("the last caller answered %v after the cut", maxDuration(after).Round(time.Millisecond))
	start := time.Now()
	c.Close()
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v on a dead network", d)
	}
	healNetwork(t)
}

// TestDeadNetworkDefaultsFindIt: the same with no key set, and a
// statement sent after the cut (unacknowledged bytes: no keepalive is
// sent while the kernel retransmits): pgline's defaults answer every
// caller within 30 s (keepalives 15 s + 3 × 5 s) + 1 s. A long wait: it
// runs with the storms (PGLINE_STORMS=1, which .ci/run sets).
func TestDeadNetworkDefaultsFindIt(t *testing.T) {
	storm(t) // a long wait: 30 s
	if !inOwnNetns(t) {
		return
	}
	c := connect(t, srv.DSN())
	after := pipelineUntilCut(t, c, 20, 31*time.Second, true)
	t.Logf("the last caller answered %v after the cut", maxDuration(after).Round(time.Millisecond))
}

// TestDeadNetworkIdleConnFoundByKeepalives: an idle Conn whose network is
// cut is found dead by its keepalives (idle 1 s + 2 × 1 s), and the next
// call fails at once, with an error that says it was not sent; after the
// network heals, a new connection works.
func TestDeadNetworkIdleConnFoundByKeepalives(t *testing.T) {
	if !inOwnNetns(t) {
		return
	}
	ctx := testCtx(t)
	c := connect(t, srv.DSN("keepalives_idle=1 keepalives_interval=1 keepalives_count=2"))
	if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	cutNetwork(t)
	time.Sleep(4 * time.Second)
	start := time.Now()
	_, err := c.Exec(ctx, "SELECT 1")
	took := time.Since(start)
	if err == nil {
		t.Fatal("a call on a connection found dead succeeded")
	}
	if took > time.Second {
		t.Errorf("the call after the keepalives found the peer dead took %v: %v", took, err)
	}
	if !SafeToRetry(err) {
		t.Errorf("the call on a connection found dead: %v; want an error SafeToRetry reports (nothing was sent)", err)
	}
	t.Logf("the call after the cut: %v in %v", err, took.Round(time.Millisecond))
	healNetwork(t)
	c2 := connect(t, srv.DSN())
	if _, err := c2.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatalf("after the network healed: %v", err)
	}
}

// TestDeadPeerWatchSparesBusyServer: a live server that stops reading (a
// statement runs longer than the dead-peer bound while 16 MB of
// statements wait behind it, beyond what the sockets buffer) keeps
// acknowledging, and the connection is not cut off: every statement gets
// its own answer.
func TestDeadPeerWatchSparesBusyServer(t *testing.T) {
	t.Parallel() // a connection of its own, and a 4 s wait
	ctx := testCtx(t)
	c := connect(t, srv.DSN("keepalives_idle=1 keepalives_interval=1 keepalives_count=1"))
	if d := c.s.DeadPeerAfter(); d != 2*time.Second {
		t.Fatalf("dead-peer bound %v, want 2s (keepalives 1 + 1 × 1)", d)
	}
	big := strings.Repeat("x", 1<<20)
	const sql = "SELECT length($1::text) + $2::int4"
	if _, err := c.Exec(ctx, sql, "", 0); err != nil { // described: what follows is written at once
		t.Fatal(err)
	}
	errs := make(chan error, 17)
	go func() {
		_, err := c.Exec(ctx, "SELECT pg_sleep(4)")
		errs <- err
	}()
	time.Sleep(100 * time.Millisecond)
	for i := range 16 {
		go func() {
			var n int
			err := c.QueryRow(ctx, sql, big, i).Scan(&n)
			if err == nil && n != len(big)+i {
				err = fmt.Errorf("statement %d got %d, want %d", i, n, len(big)+i)
			}
			errs <- err
		}()
	}
	for range 17 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
