package pgline

// A standby that crashes or freezes under a Pool: calls routed to it go
// to another standby or fail with a clear error, by their deadline.

import (
	"context"
	"io"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/pgtest"
)

// TestHostsDown_StandbyCrashedIdleConns: a Pool over P and two standbys,
// reads through Target("standby") on the first standby S1 with several
// connections open. S1 crashes (Shutdown "immediate") and, well within
// pool_idle_check of their last use, reads come: each must succeed (on S2)
// or fail with an error that says the connection was closed, never hang
// past its deadline. A read written to a connection whose server crashed
// a moment before is not sent again: the driver cannot tell whether the
// crash came before the statement reached the server or after it ran (a
// statement committed whose reply was lost), unless it looked at the
// socket first, which it does only after pool_idle_check (see Pool). It
// failed with a bare io.EOF.
func TestHostsDown_StandbyCrashedIdleConns(t *testing.T) {
	t.Parallel() // its own clusters (see ownClusters)
	P := startPrimary(t)
	sts := startStandbys(t, P, pgtest.StandbyOptions{Name: "hosts_kill_s1"}, pgtest.StandbyOptions{Name: "hosts_kill_s2"})
	S1, S2 := sts[0], sts[1]
	p := replicaPool(t, []*pgtest.Server{P, S1, S2}, 0, 0, "pool_max_conns=4")
	sb := p.Target("standby")
	ctx := testCtx(t)
	warm := func() {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				rows, err := sb.Query(ctx, "SELECT inet_server_port() FROM pg_sleep(0.05)")
				if err == nil {
					rows.Close()
				}
			})
		}
		wg.Wait()
	}
	warm()
	if port, _, err := whichServer(ctx, sb); err != nil || port != S1.Port {
		t.Fatalf("before: %d %v", port, err)
	}
	t.Logf("before: %+v", hostStat(t, p, S1.Port).TotalConns)
	if err := S1.Shutdown("immediate"); err != nil {
		t.Fatal(err)
	}
	const deadline = time.Second
	type result struct {
		port int
		err  error
		took time.Duration
	}
	var mu sync.Mutex
	var res []result
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			c, cancel := context.WithTimeout(ctx, deadline)
			defer cancel()
			start := time.Now()
			port, _, err := whichServer(c, sb)
			mu.Lock()
			defer mu.Unlock()
			res = append(res, result{port, err, time.Since(start)})
		})
	}
	wg.Wait()
	c, cancel := context.WithTimeout(ctx, deadline)
	start := time.Now()
	tx, err := sb.Begin(c)
	var txPort int
	if err == nil {
		err = tx.QueryRow(c, "SELECT inet_server_port()").Scan(&txPort)
		tx.Rollback(ctx)
	}
	res = append(res, result{txPort, err, time.Since(start)})
	cancel()
	var failed int
	for i, r := range res {
		if r.err != nil {
			failed++
			t.Logf("call %d (6 = Begin) failed after %v: SafeToRetry %v: %v", i, r.took.Round(time.Millisecond), session.SafeToRetry(r.err), r.err)
		}
		if r.took > deadline+200*time.Millisecond {
			t.Errorf("a call returned %v after it started, deadline %v", r.took, deadline)
		}
		if r.err == nil && r.port != S2.Port {
			t.Errorf("a call ran on port %d, want S2's %d", r.port, S2.Port)
		}
	}
	for _, r := range res {
		if r.err != nil && (r.err == io.EOF || !strings.Contains(r.err.Error(), "closed")) {
			t.Errorf("a call failed with %q (%T), want an error saying the connection was closed", r.err, r.err)
		}
	}
	t.Logf("%d of %d calls failed after the standby they were routed to crashed", failed, len(res))
}

// TestHostsDown_FrozenStandbyDeadline: the standby S stops answering (its
// processes stopped with SIGSTOP: the kernel still accepts connections).
// Calls through Target("standby") and Target("prefer-standby"), and
// Begin, return by their deadline.
func TestHostsDown_FrozenStandbyDeadline(t *testing.T) {
	t.Parallel() // its own clusters (see ownClusters)
	P := startPrimary(t)
	S := startStandby(t, P, pgtest.StandbyOptions{Name: "hosts_frozen_s"})
	p := replicaPool(t, []*pgtest.Server{P, S}, 0, 0, "pool_max_conns=2")
	ctx := testCtx(t)
	for _, v := range []string{"standby", "prefer-standby"} {
		if port, _, err := whichServer(ctx, p.Target(v)); err != nil || port != S.Port {
			t.Fatalf("before: %s on %d: %v", v, port, err)
		}
	}
	pids := hostsServerPIDs(t, S)
	hostsSignal(pids, syscall.SIGSTOP)
	defer hostsSignal(pids, syscall.SIGCONT)
	const deadline = 300 * time.Millisecond
	var worst time.Duration
	calls := 0
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); {
		for _, v := range []string{"standby", "prefer-standby", "begin", "acquire"} {
			c, cancel := context.WithTimeout(ctx, deadline)
			start := time.Now()
			switch v {
			case "begin":
				if tx, err := p.Target("standby").Begin(c); err == nil {
					tx.Rollback(c)
				}
			case "acquire":
				if pc, err := p.Target("prefer-standby").Acquire(c); err == nil {
					pc.Release()
				}
			default:
				whichServer(c, p.Target(v))
			}
			took := time.Since(start)
			cancel()
			calls++
			if over := took - deadline; over > worst {
				worst = over
			}
			if took > deadline+200*time.Millisecond {
				t.Errorf("%s returned %v after its deadline", v, took-deadline)
			}
		}
	}
	t.Logf("%d calls, the latest returned %v after its deadline", calls, worst.Round(time.Millisecond))
}
