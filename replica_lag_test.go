package pgline

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
)

// TestPoolReplicaLagBound: a standby held behind (replay paused) stops
// serving reads through Target("standby") within pool_max_replica_lag of
// a commit it lacks, measured from the commit's acknowledgement to the
// start of the last read that did not see it. pgtest's servers run with
// synchronous_commit=off, under which the primary's WAL write position
// lags its commits: the lag is measured against its insert position.
// (Reads once went on for up to 910 ms with a 500 ms bound.)
func TestPoolReplicaLagBound(t *testing.T) {
	t.Parallel() // its own clusters (see ownClusters)
	if testing.Short() {
		t.Skip("starts a primary and a standby")
	}
	P := startPrimary(t)
	S := startStandby(t, P, pgtest.StandbyOptions{Name: "lag_bound_s"})
	if err := P.Exec("CREATE TABLE lag_bound (id bigint)"); err != nil {
		t.Fatal(err)
	}
	const maxLag = 500 * time.Millisecond
	p := replicaPool(t, []*pgtest.Server{P, S}, 0, maxLag)
	sb := p.Target("standby")
	ctx := testCtx(t)
	for trial := range 3 {
		// The standby has caught up with the trial before.
		for end := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			var n int
			c, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			err := sb.QueryRow(c, "SELECT count(*) FROM lag_bound").Scan(&n)
			cancel()
			if err == nil && n == trial {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("trial %d: the standby view never saw %d rows: %d, %v", trial, trial, n, err)
			}
		}
		if err := S.PauseReplay(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(200+trial*70) * time.Millisecond)
		id := trial + 1
		if _, err := p.Exec(ctx, fmt.Sprintf("INSERT INTO lag_bound VALUES (%d)", id)); err != nil {
			t.Fatal(err)
		}
		acked := time.Now()
		var last time.Duration
		excluded := 0
		for time.Since(acked) < 1500*time.Millisecond {
			var n int
			started := time.Since(acked)
			// A short deadline: with the standby left out, the call
			// waits for a host that matches.
			c, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			err := sb.QueryRow(c, "SELECT count(*) FROM lag_bound").Scan(&n)
			cancel()
			if err == nil && n < id {
				last = started
			} else if err != nil {
				excluded++
			}
			time.Sleep(5 * time.Millisecond)
		}
		if last > maxLag {
			t.Errorf("trial %d: a read through Target(standby) started %v after a commit did not see it (pool_max_replica_lag=%v)", trial, last.Round(time.Millisecond), maxLag)
		}
		if excluded == 0 {
			t.Errorf("trial %d: the standby held behind was never left out", trial)
		}
		if err := S.ResumeReplay(); err != nil {
			t.Fatal(err)
		}
	}
}
