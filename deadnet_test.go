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

// TestDeadNetwork runs, in one network namespace of its own (see
// deadnet_kit_test.go), one after the other, the cases of a network cut
// under a Conn or a Pool: every caller answered within the bound that
// detects it, with its own answer or an error, never another's; no
// acknowledged write lost; deadlines kept; recovery once it heals. It
// takes a minute, mostly waiting, so it runs with the storms
// (PGLINE_STORMS=1, which .ci/run sets).
func TestDeadNetwork(t *testing.T) {
	storm(t) // half a minute of waiting, and clusters of its own: with the storms
	if !inOwnNetns(t) {
		return
	}
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"PipelinedCallers", deadNetworkFailsPipelinedCallers},
		{"DefaultsFindIt", deadNetworkDefaultsFindIt},
		{"IdleConnFoundByKeepalives", deadNetworkIdleConnFoundByKeepalives},
		{"DeadlinesKept", deadNetworkDeadlinesKept},
		{"PoolRecovers", deadNetworkPoolRecovers},
		{"PoolMovesToOtherHost", deadNetworkPoolMovesToOtherHost},
	} {
		t.Run(tc.name, tc.run)
	}
}

// deadNetworkFailsPipelinedCallers: 20 goroutines pipelining on one
// Conn without deadlines, the network cut under them: with
// tcp_user_timeout=2000 and short keepalives, every one is answered (with
// an error, never another's value) within the user timeout + 1 s, and
// Close returns at once.
func deadNetworkFailsPipelinedCallers(t *testing.T) {
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

// deadNetworkDefaultsFindIt: the same with no key set, and a
// statement sent after the cut (unacknowledged bytes: no keepalive is
// sent while the kernel retransmits): pgline's defaults answer every
// caller within 30 s (keepalives 15 s + 3 × 5 s) + 1 s.
func deadNetworkDefaultsFindIt(t *testing.T) {
	c := connect(t, srv.DSN())
	after := pipelineUntilCut(t, c, 20, 31*time.Second, true)
	t.Logf("the last caller answered %v after the cut", maxDuration(after).Round(time.Millisecond))
}

// deadNetworkIdleConnFoundByKeepalives: an idle Conn whose network is
// cut is found dead by its keepalives (idle 1 s + 2 × 1 s), and the next
// call fails at once, with an error that says it was not sent; after the
// network heals, a new connection works.
func deadNetworkIdleConnFoundByKeepalives(t *testing.T) {
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
	if d := deadPeerAfter(c.cfg); d != 2*time.Second {
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

// poolCall is one call of TestDeadNetworkPoolMovesToOtherHost.
type poolCall struct {
	start, end time.Time
	host       string
	err        error
}

// deadNetworkPoolMovesToOtherHost: a Pool over two hosts, the
// network to the first (which serves every call while it is up) cut
// while callers without deadlines keep it busy: every call is answered within the dead-peer bound (keepalives 1 +
// 1 × 1 s) + 1 s of the cut, with its own answer or an error (those
// never sent go to the other host); from then on the cut host is down
// for routing and every call goes to the other. When the network heals,
// the host serves calls again.
func deadNetworkPoolMovesToOtherHost(t *testing.T) {
	b := startNetnsHost(t)
	bHost, bPort := b.hostPort()
	dsn := fmt.Sprintf("host=%s,%s port=%d,%d user=postgres dbname=postgres sslmode=disable "+
		"keepalives_idle=1 keepalives_interval=1 keepalives_count=1 "+
		"pool_max_conns=3 pool_health_check_period=1s", bHost, srv.Host, bPort, srv.Port)
	ctx := testCtx(t)
	p, err := NewPool(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	served := func(ctx context.Context) (string, error) {
		var host string
		err := p.QueryRow(ctx, "SELECT host(inet_server_addr()), pg_sleep(0.02)::text").Scan(&host, new(string))
		return host, err
	}

	var (
		mu    sync.Mutex
		calls []poolCall
		stop  = make(chan struct{})
		wg    sync.WaitGroup
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				host, err := served(context.Background())
				mu.Lock()
				calls = append(calls, poolCall{start, time.Now(), host, err})
				mu.Unlock()
			}
		}()
	}
	time.Sleep(time.Second)
	b.cutHost(t)
	cutAt := time.Now()
	time.Sleep(6 * time.Second)
	close(stop)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("callers still waiting 26 s after the cut")
	}

	const bound = 3 * time.Second // the dead-peer bound, 2 s, + 1 s
	hosts := map[string]int{}
	var failed, after int
	var longest time.Duration
	for _, c := range calls {
		if c.err == nil && c.host != srv.Host && c.host != bHost {
			t.Errorf("a call was answered by %q, neither host", c.host)
		}
		if c.start.Before(cutAt) && c.err == nil {
			hosts[c.host]++
		}
		if c.end.After(cutAt) {
			from := c.start
			if from.Before(cutAt) {
				from = cutAt
			}
			longest = max(longest, c.end.Sub(from))
		}
		if c.err != nil {
			failed++
			if c.start.After(cutAt.Add(bound)) {
				t.Errorf("a call made %v after the cut failed: %v", c.start.Sub(cutAt).Round(time.Millisecond), c.err)
			}
			continue
		}
		if c.start.After(cutAt.Add(bound)) {
			after++
			if c.host != srv.Host {
				t.Errorf("a call made %v after the cut was answered by the cut host", c.start.Sub(cutAt).Round(time.Millisecond))
			}
		}
	}
	t.Logf("before the cut: %v; after it: %d calls failed, %d answered by the other host from %v on; the longest wait after the cut %v",
		hosts, failed, after, bound, longest.Round(time.Millisecond))
	if hosts[bHost] == 0 {
		t.Fatalf("before the cut, calls went to %v: the first host, the one cut, should serve", hosts)
	}
	if longest > bound {
		t.Errorf("a call waited %v after the cut, want at most %v", longest.Round(time.Millisecond), bound)
	}
	if after == 0 {
		t.Error("no call succeeded after the cut")
	}

	b.healHost(t)
	deadline := time.Now().Add(20 * time.Second)
	for {
		host, err := served(ctx)
		if err == nil && host == bHost {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("20 s after the network healed, the host has not served a call (last: %q, %v)", host, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// deadNetworkPoolRecovers: a Pool over one host whose network is cut
// under writers without deadlines: every call is answered within the
// dead-peer bound + 1 s of the cut, calls made while the network is down
// fail within connect_timeout (2 s) + 1 s, and once it heals the Pool
// serves again, on new connections, and every insert it acknowledged is
// in the table.
func deadNetworkPoolRecovers(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "keepalives_idle=1 keepalives_interval=1 keepalives_count=1 connect_timeout=2 pool_max_conns=3")
	if _, err := p.Exec(ctx, "CREATE TABLE deadnet_w (id int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var longest time.Duration
	var cutAt time.Time
	var acked []int32
	stop := make(chan struct{})
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := int32(g*100_000 + i)
				start := time.Now()
				var got int32
				err := p.QueryRow(context.Background(), "INSERT INTO deadnet_w SELECT $1::int4 FROM pg_sleep(0.02) RETURNING id", id).Scan(&got)
				mu.Lock()
				if !cutAt.IsZero() {
					from := start
					if from.Before(cutAt) {
						from = cutAt
					}
					longest = max(longest, time.Since(from))
				}
				if err == nil {
					acked = append(acked, id)
				}
				mu.Unlock()
				if err == nil && got != id {
					t.Errorf("writer %d got id %d, want %d", g, got, id)
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	cutNetwork(t)
	cutAt = time.Now()
	mu.Unlock()
	time.Sleep(6 * time.Second)
	close(stop)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("callers still waiting 26 s after the cut")
	}
	if longest > 3*time.Second {
		t.Errorf("a call waited %v after the cut, want at most 3s (the dead-peer bound or connect_timeout, + 1 s)", longest.Round(time.Millisecond))
	}
	healNetwork(t)
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := p.Exec(ctx, "SELECT 1")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("15 s after the network healed, the Pool still fails: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var found int
	if err := p.QueryRow(ctx, "SELECT count(*) FROM deadnet_w WHERE id = ANY($1)", acked).Scan(&found); err != nil {
		t.Fatal(err)
	}
	if found != len(acked) {
		t.Errorf("%d inserts acknowledged, %d of them in the table", len(acked), found)
	}
	t.Logf("the longest wait after the cut: %v; %d inserts acknowledged, all in the table", longest.Round(time.Millisecond), len(acked))
}

// deadNetworkDeadlinesKept: on a cut network, a call with a deadline
// returns at its deadline (its CancelRequest, which cannot reach the
// server either, is bounded on its own and waited for by nobody), Close
// returns at once, and a connect fails within connect_timeout.
func deadNetworkDeadlinesKept(t *testing.T) {
	c := connect(t, srv.DSN("cancel_timeout=2s"))
	if _, err := c.Exec(testCtx(t), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	cutNetwork(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Exec(ctx, "SELECT pg_sleep(5)")
	if took := time.Since(start); err == nil || took > 800*time.Millisecond {
		t.Errorf("a call with a 300 ms deadline on a cut network: %v after %v", err, took.Round(time.Millisecond))
	}
	start = time.Now()
	c.Close()
	if took := time.Since(start); took > time.Second {
		t.Errorf("Close on a cut network took %v", took.Round(time.Millisecond))
	}
	start = time.Now()
	_, err = Connect(context.Background(), srv.DSN("connect_timeout=2"))
	if took := time.Since(start); err == nil || took > 3*time.Second {
		t.Errorf("a connect on a cut network with connect_timeout=2: %v after %v", err, took.Round(time.Millisecond))
	}
	healNetwork(t)
}
