package pgline

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
)

// A statement whose effect commits elsewhere (dblink_exec: sqllex's
// SessionEffects) before its backend is terminated, the FATAL being the
// first message of its reply: a Pool must not send it again, and the error
// must not claim nothing ran.
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
	sql := fmt.Sprintf("INSERT INTO local_t SELECT 1 FROM dblink_exec('%s', 'INSERT INTO remote_log VALUES (1)') d, pg_sleep(CASE WHEN current_setting('application_name') = 'txo_dbl' THEN 1 ELSE 0 END)", remote)
	for _, mode := range []string{"conn", "pool", "poolArgs"} {
		mon.Exec(ctx, "TRUNCATE remote_log")
		app := "txo_dbl"
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
		t.Logf("%s: err %v (SafeToRetry %v), remote rows %d", mode, cerr, SafeToRetry(cerr), n)
		if n > 1 {
			t.Errorf("%s: the statement ran %d times: pgline sent it again after the FATAL", mode, n)
		}
		if cerr != nil && SafeToRetry(cerr) {
			t.Errorf("%s: error claims nothing ran (SafeToRetry), but its dblink_exec committed: %v", mode, cerr)
		}
	}
}
