package pgline

// A backend terminated (pg_terminate_backend, a FATAL as the first message
// of a reply) around a COMMIT or a statement whose effect commits on its
// own (CREATE INDEX CONCURRENTLY, dblink_exec): a nil error means
// committed, a SafeToRetry error means nothing persisted, and a Pool
// never sends again a statement that may have run.

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/pgtest"
)

// TestKillDuringCommitOutcome: commits raced by pg_terminate_backend: a
// nil error means committed, a SafeToRetry error means not committed.
func TestKillDuringCommitOutcome(t *testing.T) {
	storm(t)
	ctx := testCtx(t)
	mon, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	tbl := testTable(t, ctx, mon, "(id int primary key)")
	var okCommitted, retryable, ambiguous int
	for i := 0; i < 150; i++ {
		c, err := Connect(ctx, srv.DSN())
		if err != nil {
			t.Fatal(err)
		}
		pid := c.PID()
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mode := i % 3
		var execErr error
		var wg sync.WaitGroup
		if mode == 0 {
			_, execErr = tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", i)
		} else {
			// pipelined: the INSERT and the COMMIT are in flight together
			wg.Add(1)
			go func() {
				defer wg.Done()
				if mode == 1 {
					_, execErr = tx.Exec(ctx, "INSERT INTO "+tbl+" SELECT $1 FROM pg_sleep(0.001)", i)
				} else {
					_, execErr = tx.Exec(ctx, "INSERT INTO "+tbl+" SELECT "+fmt.Sprint(i)+" FROM pg_sleep(0.001)")
				}
			}()
			time.Sleep(time.Duration(rand.Intn(200)) * time.Microsecond)
		}
		delay := time.Duration(rand.Intn(1500)) * time.Microsecond
		go func() {
			time.Sleep(delay)
			mon.Exec(context.Background(), "SELECT pg_terminate_backend($1)", int(pid))
		}()
		cerr := tx.Commit(ctx)
		wg.Wait()
		time.Sleep(2 * time.Millisecond)
		var n int
		// wait for the backend to be gone so the outcome is final
		for k := 0; k < 200; k++ {
			mon.QueryRow(ctx, "SELECT count(*)::int FROM pg_stat_activity WHERE pid=$1", int(pid)).Scan(&n)
			if n == 0 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		var rows int
		if err := mon.QueryRow(ctx, "SELECT count(*)::int FROM "+tbl+" WHERE id=$1", i).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if errors.Is(execErr, ErrTxClosed) {
			// queued after the Commit: refused, as documented
			c.Close()
			continue
		}
		switch {
		case cerr == nil:
			okCommitted++
			if rows != 1 {
				t.Errorf("iter %d mode %d: Commit nil but %d rows (exec err %v)", i, mode, rows, execErr)
			}
			if execErr != nil {
				t.Errorf("iter %d mode %d: Commit nil but the tx's INSERT failed: %v", i, mode, execErr)
			}
		case session.SafeToRetry(cerr):
			retryable++
			if rows != 0 {
				t.Errorf("iter %d mode %d: Commit SafeToRetry (%v) but committed", i, mode, cerr)
			}
		default:
			ambiguous++
			if errors.Is(cerr, ErrTxRolledBack) && rows != 0 {
				t.Errorf("iter %d mode %d: ErrTxRolledBack but committed", i, mode)
			}
		}
		if rows == 1 && execErr != nil && session.SafeToRetry(execErr) {
			t.Errorf("iter %d mode %d: INSERT SafeToRetry (%v) but it committed", i, mode, execErr)
		}
		c.Close()
	}
	t.Logf("committed %d, safe-to-retry %d, ambiguous %d", okCommitted, retryable, ambiguous)
}

// TestKillPoolStormRunsOnce: Pool.Exec and Pool BeginFunc under repeated
// pg_terminate_backend: no statement runs twice, no success is lost, no
// SafeToRetry error for work that committed.
func TestKillPoolStormRunsOnce(t *testing.T) {
	storm(t)
	for _, extra := range []string{"sslmode=disable", "sslmode=require", "pipeline_sync=each"} {
		t.Run(extra, func(t *testing.T) { killPoolStorm(t, extra) })
	}
}

func killPoolStorm(t *testing.T, extra string) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	mon, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	tbl := testTable(t, ctx, mon, "(id int, k int)")
	app := "kill_storm"
	p, err := NewPool(ctx, srv.DSN("application_name="+app, "pool_max_conns=4", extra))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var next atomic.Int64
	type res struct {
		id   int64
		kind int
		err  error
	}
	results := make(chan res, 100000)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				id := next.Add(1)
				kind := int(id % 4)
				var err error
				switch kind {
				case 0:
					_, err = p.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1, 0)", id)
				case 1:
					_, err = p.Exec(ctx, fmt.Sprintf("INSERT INTO %s VALUES (%d, 0)", tbl, id))
				case 2:
					err = BeginFunc(ctx, p, func(tx *Tx) error {
						if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1, 1)", id); err != nil {
							return err
						}
						_, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1, 2)", id)
						return err
					})
				case 3:
					var x int64
					err = p.QueryRow(ctx, "INSERT INTO "+tbl+" VALUES ($1, 0) RETURNING id", id).Scan(&x)
				}
				results <- res{id, kind, err}
			}
		}(g)
	}
	killEnd := time.Now().Add(4 * time.Second)
	for time.Now().Before(killEnd) {
		time.Sleep(time.Duration(5+rand.Intn(20)) * time.Millisecond)
		mon.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name=$1 AND pid <> pg_backend_pid()", app)
	}
	close(stop)
	wg.Wait()
	close(results)
	counts := map[int64]int{}
	r, err := mon.Query(ctx, "SELECT id, count(*)::int FROM "+tbl+" GROUP BY id")
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var id int64
		var n int
		r.Scan(&id, &n)
		counts[id] = n
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	var nOK, nRetry, nOther, fails int
	for rs := range results {
		want := 1
		if rs.kind == 2 {
			want = 2
		}
		got := counts[rs.id]
		switch {
		case got > want:
			t.Errorf("id %d kind %d: %d rows, statement ran twice (err %v)", rs.id, rs.kind, got, rs.err)
			fails++
		case rs.err == nil:
			nOK++
			if got != want {
				t.Errorf("id %d kind %d: success but %d rows", rs.id, rs.kind, got)
				fails++
			}
		case session.SafeToRetry(rs.err):
			nRetry++
			if got != 0 {
				t.Errorf("id %d kind %d: SafeToRetry error %v but %d rows", rs.id, rs.kind, rs.err, got)
				fails++
			}
		default:
			nOther++
			if rs.kind == 2 && got != 0 && got != want {
				t.Errorf("id %d: partial transaction %d rows", rs.id, got)
			}
		}
		if fails > 20 {
			break
		}
	}
	t.Logf("ok %d, safe-to-retry %d, other errors %d", nOK, nRetry, nOther)
}

// TestKillCreateIndexConcurrentlyNotResent: CREATE INDEX CONCURRENTLY
// commits its catalog entry (an INVALID index) before it waits for older
// writers. A backend terminated during that wait answers with a FATAL as
// the first message of the reply, but the first transaction of the
// statement has committed: the error must not claim that nothing ran
// (SafeToRetry), and a Pool must not send it again.
func TestKillCreateIndexConcurrentlyNotResent(t *testing.T) {
	for _, mode := range []string{"conn", "pool", "poolIfNotExists"} {
		t.Run(mode, func(t *testing.T) {
			ctx := testCtx(t)
			mon, err := Connect(ctx, srv.DSN())
			if err != nil {
				t.Fatal(err)
			}
			defer mon.Close()
			tbl := testTable(t, ctx, mon, "(id int)")
			idx := tbl + "_idx"
			holder, err := Connect(ctx, srv.DSN())
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close()
			htx, err := holder.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := htx.Exec(ctx, "INSERT INTO "+tbl+" VALUES (1)"); err != nil {
				t.Fatal(err)
			}
			app := "kill_cic_" + mode
			sql := "CREATE INDEX CONCURRENTLY " + idx + " ON " + tbl + " (id)"
			if mode == "poolIfNotExists" {
				sql = "CREATE INDEX CONCURRENTLY IF NOT EXISTS " + idx + " ON " + tbl + " (id)"
			}
			done := make(chan error, 1)
			var c *Conn
			var p *Pool
			if mode == "conn" {
				c, err = Connect(ctx, srv.DSN("application_name="+app))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				go func() { _, err := c.Exec(ctx, sql); done <- err }()
			} else {
				p, err = NewPool(ctx, srv.DSN("application_name="+app, "pool_max_conns=2"))
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				go func() { _, err := p.Exec(ctx, sql); done <- err }()
			}
			// wait until the CIC waits for the holder (its first
			// transaction committed)
			deadline := time.Now().Add(10 * time.Second)
			for {
				var n int
				mon.QueryRow(ctx, "SELECT count(*)::int FROM pg_stat_activity WHERE application_name=$1 AND wait_event_type='Lock'", app).Scan(&n)
				if n > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("CIC never waited")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if _, err := mon.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name=$1 AND wait_event_type='Lock'", app); err != nil {
				t.Fatal(err)
			}
			var cerr error
			select {
			case cerr = <-done:
			case <-time.After(3 * time.Second):
				// a resend waits for the holder too: let it go
				htx.Rollback(ctx)
				cerr = <-done
			}
			htx.Rollback(ctx)
			var valid *bool
			mon.QueryRow(ctx, "SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)", idx).Scan(&valid)
			t.Logf("%s: error %v (SafeToRetry %v); index valid: %v", mode, cerr, session.SafeToRetry(cerr), fmtBoolPtr(valid))
			if valid == nil {
				t.Fatalf("no index left behind: the scenario did not happen")
			}
			if cerr == nil && !*valid {
				t.Errorf("%s: CREATE INDEX CONCURRENTLY reported success, but the index is INVALID (the killed attempt committed it, then pgline resent the statement)", mode)
			}
			if pe, ok := cerr.(*PgError); ok && pe.Code == "42P07" {
				t.Errorf("%s: the caller's one CREATE INDEX CONCURRENTLY failed with %v: pgline sent it a second time", mode, cerr)
			}
			if cerr != nil && session.SafeToRetry(cerr) {
				t.Errorf("%s: error claims nothing ran (SafeToRetry) but the killed statement committed an INVALID index: %v", mode, cerr)
			}
		})
	}
}

func fmtBoolPtr(b *bool) string {
	if b == nil {
		return "none"
	}
	if *b {
		return "true"
	}
	return "false"
}

// TestKillDblinkNotResent: a statement whose effect commits elsewhere
// (dblink_exec: sqllex's SessionEffects) before its backend is terminated,
// the FATAL being the first message of its reply: a Pool must not send it
// again, and the error must not claim nothing ran.
func TestKillDblinkNotResent(t *testing.T) {
	s, err := pgtest.Start(pgtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mon, err := Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	if _, err := mon.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS dblink"); err != nil {
		// dblink is in PostgreSQL's contrib modules (Debian's
		// postgresql-15 has them; other builds may not).
		if os.Getenv("CI") == "" {
			t.Skipf("dblink not available: %v (install PostgreSQL's contrib modules)", err)
		}
		t.Fatal(err)
	}
	if _, err := mon.Exec(ctx, "CREATE TABLE remote_log (id int); CREATE TABLE local_t (x int)"); err != nil {
		t.Fatal(err)
	}
	remote := fmt.Sprintf("host=%s port=%d user=%s dbname=%s", s.Host, s.Port, s.User, s.Database)
	sql := fmt.Sprintf("INSERT INTO local_t SELECT 1 FROM dblink_exec('%s', 'INSERT INTO remote_log VALUES (1)') d, pg_sleep(CASE WHEN current_setting('application_name') = 'kill_dblink' THEN 1 ELSE 0 END)", remote)
	for _, mode := range []string{"conn", "pool", "poolArgs"} {
		mon.Exec(ctx, "TRUNCATE remote_log")
		app := "kill_dblink"
		done := make(chan error, 1)
		if mode == "conn" {
			c, err := Connect(ctx, s.DSN("application_name="+app))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			go func() { _, err := c.Exec(ctx, sql); done <- err }()
		} else {
			p, err := NewPool(ctx, s.DSN("application_name="+app, "pool_max_conns=2"))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if mode == "poolArgs" {
				go func() { _, err := p.Exec(ctx, sql+" WHERE $1::int = 1", 1); done <- err }()
			} else {
				go func() { _, err := p.Exec(ctx, sql); done <- err }()
			}
		}
		// wait for the remote insert to have committed, then kill
		for i := 0; ; i++ {
			var n int
			mon.QueryRow(ctx, "SELECT count(*)::int FROM remote_log").Scan(&n)
			if n > 0 {
				break
			}
			if i > 500 {
				t.Fatal("remote insert never happened")
			}
			time.Sleep(5 * time.Millisecond)
		}
		mon.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", app)
		var cerr error
		select {
		case cerr = <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("no answer")
		}
		time.Sleep(100 * time.Millisecond)
		var n int
		mon.QueryRow(ctx, "SELECT count(*)::int FROM remote_log").Scan(&n)
		t.Logf("%s: err %v (SafeToRetry %v), remote rows %d", mode, cerr, session.SafeToRetry(cerr), n)
		if n > 1 {
			t.Errorf("%s: the statement ran %d times: pgline sent it again after the FATAL", mode, n)
		}
		if cerr != nil && session.SafeToRetry(cerr) {
			t.Errorf("%s: error claims nothing ran (SafeToRetry), but its dblink_exec committed: %v", mode, cerr)
		}
	}
}
