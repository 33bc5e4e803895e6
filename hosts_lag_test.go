package pgline

// pool_max_replica_lag: no read through a standby view misses a write
// acknowledged more than pool_max_replica_lag before it started, with the
// primary gone or under continuous writes.

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
)

// TestHostsLag_BoundWithPrimaryGone: pool_max_replica_lag after the
// primary went away. A standby S with replay paused has received a commit
// (acknowledged through the Pool) that it has not replayed; then the
// primary P shuts down ("fast": S receives all its WAL). Pool.Target says:
// "When no primary is known, it [the lag] is the age of the last
// transaction the standby replayed, if it has received WAL it has not
// replayed yet", and a read is "never served by a standby more than
// pool_max_replica_lag behind". So no read through Target("standby") that
// starts more than pool_max_replica_lag after the acknowledgement may miss
// the commit.
func TestHostsLag_BoundWithPrimaryGone(t *testing.T) {
	t.Parallel() // its own clusters (see ownClusters)
	P := startPrimary(t)
	S := startStandby(t, P, pgtest.StandbyOptions{Name: "hosts_lag_gone"})
	if err := P.Exec("CREATE TABLE hosts_lag_gone (id int)"); err != nil {
		t.Fatal(err)
	}
	const maxLag = 1 * time.Second
	p := replicaPool(t, []*pgtest.Server{P, S}, 0, maxLag)
	sb := p.Target("standby")
	ctx := testCtx(t)
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		c, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		err := sb.QueryRow(c, "SELECT count(*)::int FROM hosts_lag_gone").Scan(&n)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the standby view never answered: %v", err)
		}
	}
	if err := S.PauseReplay(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exec(ctx, "INSERT INTO hosts_lag_gone VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	acked := time.Now()
	if err := P.Shutdown("fast"); err != nil {
		t.Fatal(err)
	}
	down := time.Since(acked)
	var stale, served, excluded int
	var last time.Duration
	for time.Since(acked) < 3*maxLag {
		started := time.Since(acked)
		var n int
		c, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		err := sb.QueryRow(c, "SELECT count(*)::int FROM hosts_lag_gone").Scan(&n)
		cancel()
		switch {
		case err != nil:
			excluded++
		case n < 1:
			served++
			if started > maxLag {
				stale++
				last = started
			}
		default:
			served++
		}
		time.Sleep(20 * time.Millisecond)
	}
	h := hostStat(t, p, S.Port)
	t.Logf("primary down %v after the commit; %d reads served, %d left out; %d started past pool_max_replica_lag=%v missed the commit, the last %v after it; Stat of S: role %v lag %v",
		down.Round(time.Millisecond), served, excluded, stale, maxLag, last.Round(time.Millisecond), h.Role, h.Lag)
	if stale > 0 {
		t.Errorf("a read through Target(standby) started %v after a commit the standby has received but not replayed did not see it (pool_max_replica_lag=%v, primary gone)",
			last.Round(time.Millisecond), maxLag)
	}
}

// TestHostsLag_BoundUnderWritesRandomBalance: continuous writes through
// the Pool, reads through Target("prefer-standby") with
// load_balance_hosts=random over two standbys, one of them with replay
// paused for a while. No read that starts more than pool_max_replica_lag
// after a write was acknowledged may miss it.
func TestHostsLag_BoundUnderWritesRandomBalance(t *testing.T) {
	storm(t)
	t.Parallel() // its own clusters (see ownClusters)
	P := startPrimary(t)
	sts := startStandbys(t, P, pgtest.StandbyOptions{Name: "hosts_lagb_s1"}, pgtest.StandbyOptions{Name: "hosts_lagb_s2"})
	S1 := sts[0]
	if err := P.Exec("CREATE TABLE hosts_lagb (id bigint)"); err != nil {
		t.Fatal(err)
	}
	const maxLag = 400 * time.Millisecond
	p := replicaPool(t, []*pgtest.Server{P, sts[0], sts[1]}, 0, maxLag, "load_balance_hosts=random", "target_session_attrs=read-write")
	ps := p.Target("prefer-standby")
	ctx := testCtx(t)
	type ack struct {
		id int64
		at time.Time
	}
	var mu sync.Mutex
	var acks []ack
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for id := int64(1); ; id++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := p.Exec(ctx, "INSERT INTO hosts_lagb VALUES ($1)", id); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			acks = append(acks, ack{id, time.Now()})
			mu.Unlock()
			time.Sleep(30 * time.Millisecond)
		}
	})
	// the highest id acknowledged before t
	ackedBefore := func(t0 time.Time) int64 {
		mu.Lock()
		defer mu.Unlock()
		var m int64
		for _, a := range acks {
			if a.at.Before(t0) {
				m = a.id
			}
		}
		return m
	}
	var violations, reads int
	var worst time.Duration
	readFor := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			start := time.Now()
			var m int64
			c, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			err := ps.QueryRow(c, "SELECT coalesce(max(id), 0) FROM hosts_lagb").Scan(&m)
			cancel()
			if err != nil {
				continue
			}
			reads++
			if want := ackedBefore(start.Add(-maxLag)); m < want {
				violations++
				mu.Lock()
				for _, a := range acks {
					if a.id == m+1 {
						worst = max(worst, start.Sub(a.at))
					}
				}
				mu.Unlock()
			}
		}
	}
	readFor(time.Second)
	if err := S1.PauseReplay(); err != nil {
		t.Fatal(err)
	}
	readFor(2 * time.Second)
	if err := S1.ResumeReplay(); err != nil {
		t.Fatal(err)
	}
	readFor(time.Second)
	close(stop)
	wg.Wait()
	t.Logf("%d reads, %d missed a write acknowledged more than %v before they started (the oldest missed by %v)", reads, violations, maxLag, worst.Round(time.Millisecond))
	if violations > 0 {
		t.Errorf("%d reads through prefer-standby missed writes acknowledged up to %v before (pool_max_replica_lag=%v)", violations, worst.Round(time.Millisecond), maxLag)
	}
}
