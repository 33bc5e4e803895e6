package stdlib_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline"
	"github.com/pgline/pgline/stdlib"
)

// A pooled connection whose backend the server ended while it sat idle is
// found out by ResetSession (a ping, after a second of idleness) and
// replaced: the next query runs on a new backend instead of failing with
// 57P01, and a prepared statement keeps working.
func TestIdleTerminatedBackendReplaced(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	other := openDB(t, 1)

	stmt, err := db.PrepareContext(ctx, "SELECT pg_backend_pid() + $1::int4 - $1::int4")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()

	var pid int
	if err := db.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	var ok bool
	if err := other.QueryRowContext(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend: %v, %v", ok, err)
	}
	time.Sleep(1200 * time.Millisecond) // idle long enough for ResetSession to ping

	var n, pid2 int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil {
		t.Fatalf("first query after the terminate: %v (SQLSTATE %q)", err, sqlState(err))
	}
	if err := db.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid2); err != nil {
		t.Fatal(err)
	}
	if pid2 == pid {
		t.Errorf("still on backend %d", pid)
	}
	var spid int
	if err := stmt.QueryRowContext(ctx, 7).Scan(&spid); err != nil {
		t.Fatalf("prepared statement after the terminate: %v", err)
	}
	if spid != pid2 {
		t.Errorf("prepared statement ran on backend %d, want %d", spid, pid2)
	}
	if s := db.Stats(); s.OpenConnections != 1 {
		t.Errorf("%d open connections, want 1", s.OpenConnections)
	}
}

// pingCounter counts the pings (empty simple queries) of its connections.
type pingCounter struct{ n atomic.Int32 }

func (p *pingCounter) TraceStart(ctx context.Context, ev *pgline.TraceEvent) context.Context {
	return ctx
}

func (p *pingCounter) TraceEnd(ctx context.Context, ev *pgline.TraceEvent) {
	if ev.Kind == pgline.TraceStatement && ev.SQL == "" {
		p.n.Add(1)
	}
}

// ResetSession pings only a connection idle for a second or more: a
// connection reused at once costs no round trip.
func TestResetSessionPingsOnlyIdleConns(t *testing.T) {
	ctx := testCtx(t)
	cfg, err := pgline.ParseConfig(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	pc := &pingCounter{}
	cfg.Tracer = pc
	db := stdlib.OpenDB(cfg)
	defer db.Close()
	db.SetMaxOpenConns(1)
	var n int
	for range 5 {
		if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	if got := pc.n.Load(); got != 0 {
		t.Errorf("%d pings for back-to-back queries, want 0", got)
	}
	time.Sleep(1100 * time.Millisecond)
	for range 2 {
		if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	if got := pc.n.Load(); got != 1 {
		t.Errorf("%d pings after a second idle, want 1", got)
	}
}
