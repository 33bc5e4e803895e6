package pgline

import (
	"testing"
	"time"
)

// CREATE INDEX CONCURRENTLY commits its catalog entry (an INVALID index)
// before it waits for older writers. A backend terminated during that wait
// answers with a FATAL as the first message of the reply, but the first
// transaction of the statement has committed: the error must not claim
// that nothing ran (SafeToRetry), and a Pool must not send it again.
func TestKillCreateIndexConcurrentlyNotResent(t *testing.T) {
	for _, mode := range []string{"conn", "pool", "poolIfNotExists"} {
		t.Run(mode, func(t *testing.T) {
			ctx := testCtx(t)
			mon, err := Connect(ctx, srv.DSN())
			if err != nil {
				t.Fatal(err)
			}
			defer mon.Close()
			tbl := auditTestTable(t, ctx, mon, "(id int)")
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
			app := "txo_cic_" + mode
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
			t.Logf("%s: error %v (SafeToRetry %v); index valid: %v", mode, cerr, SafeToRetry(cerr), fmtBoolPtr(valid))
			if valid == nil {
				t.Fatalf("no index left behind: the scenario did not happen")
			}
			if cerr == nil && !*valid {
				t.Errorf("%s: CREATE INDEX CONCURRENTLY reported success, but the index is INVALID (the killed attempt committed it, then pgline resent the statement)", mode)
			}
			if pe, ok := cerr.(*PgError); ok && pe.Code == "42P07" {
				t.Errorf("%s: the caller's one CREATE INDEX CONCURRENTLY failed with %v: pgline sent it a second time", mode, cerr)
			}
			if cerr != nil && SafeToRetry(cerr) {
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
