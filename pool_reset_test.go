package pgline

// What a Pool connection's session holds after Release's reset (and
// after the reset Acquire makes of a connection a Pool transaction ran
// on): the state AfterConnect set, never what the last holder left.

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// TestPoolReleaseKeepsAfterConnectSettings: AfterConnect sets
// search_path and statement_timeout, as its doc recommends for session
// settings. After an Acquire and Release, and after a Pool transaction
// that changed them and an Acquire, routed statements still read the
// tenant's table and run with its timeout. pgxpool keeps the settings
// (it resets nothing).
func TestPoolReleaseKeepsAfterConnectSettings(t *testing.T) {
	ctx := testCtx(t)
	admin := connect(t, srv.DSN())
	if _, err := admin.Exec(ctx, `DROP SCHEMA IF EXISTS rst_tenant_a CASCADE; DROP TABLE IF EXISTS public.rst_accounts;
		CREATE SCHEMA rst_tenant_a; CREATE TABLE rst_tenant_a.rst_accounts (owner text); INSERT INTO rst_tenant_a.rst_accounts VALUES ('tenant_a');
		CREATE TABLE public.rst_accounts (owner text); INSERT INTO public.rst_accounts VALUES ('public')`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec(context.Background(), "DROP SCHEMA IF EXISTS rst_tenant_a CASCADE; DROP TABLE IF EXISTS public.rst_accounts")
	})
	cfg, err := ParseConfig(srv.DSN("pool_max_conns=1"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.AfterConnect = func(ctx context.Context, c *Conn) error {
		_, err := c.Exec(ctx, "SET search_path TO rst_tenant_a; SET statement_timeout = '150ms'")
		return err
	}
	p, err := NewPoolConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	check := func(when string, q interface {
		QueryRow(context.Context, string, ...any) *Row
	}) {
		t.Helper()
		var owner, timeout string
		if err := q.QueryRow(ctx, "SELECT owner FROM rst_accounts").Scan(&owner); err != nil || owner != "tenant_a" {
			t.Errorf("%s: read the accounts of %q (%v), want tenant_a's", when, owner, err)
		}
		if err := q.QueryRow(ctx, "SHOW statement_timeout").Scan(&timeout); err != nil || timeout != "150ms" {
			t.Errorf("%s: statement_timeout %q (%v), want 150ms", when, timeout, err)
		}
	}
	check("before any Acquire", p)
	pc, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn := pc.Conn
	check("acquired", pc)
	if _, err := pc.Exec(ctx, "SET search_path TO public; SET statement_timeout = 0"); err != nil {
		t.Fatal(err)
	}
	pc.Release()
	check("routed, after Release", p)

	// A Pool transaction's session-level SET, then an Acquire: the
	// connection is reset for the holder, who gets AfterConnect's state.
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SET search_path TO public; SET statement_timeout = 0"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	pc, err = p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	check("acquired after a Pool transaction", pc)
	pc.Release()
	if pc.Conn != conn {
		t.Error("the Pool of one connection gave another")
	}
}

// TestPoolReleaseDeallocatesPreparedStatements: a statement the holder
// prepared with SQL PREPARE (or dynamic SQL in a DO block) is gone after
// Release (the next holder's PREPARE of the same name succeeds, not
// 42P05), one AfterConnect
// prepares is there again, and pgline's own prepared statements stay
// prepared and cached: the next run of a cached statement binds the same
// description, not a new one.
func TestPoolReleaseDeallocatesPreparedStatements(t *testing.T) {
	ctx := testCtx(t)
	cfg, err := ParseConfig(srv.DSN("pool_max_conns=1", "statement_cache_mode=prepare"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.AfterConnect = func(ctx context.Context, c *Conn) error {
		_, err := c.Exec(ctx, "PREPARE rst_ac AS SELECT 2")
		return err
	}
	p, err := NewPoolConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const q = "SELECT $1::int4 + 1"
	var v int32
	if err := p.QueryRow(ctx, q, 1).Scan(&v); err != nil || v != 2 {
		t.Fatalf("routed statement: %d, %v", v, err)
	}
	desc := func(c *Conn) *session.StmtDesc {
		c.s.Wmu.Lock()
		defer c.s.Wmu.Unlock()
		return c.s.Stmts.M[q]
	}
	for i := range 3 {
		pc, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sd := desc(pc.Conn)
		if sd == nil || sd.Name == "" {
			t.Fatalf("acquisition %d: pgline's statement is not cached as a named statement", i)
		}
		if _, err := pc.Exec(ctx, "PREPARE rst_s AS SELECT 1"); err != nil {
			t.Errorf("acquisition %d: PREPARE of a name the last holder prepared: %v", i, err)
		}
		if _, err := pc.Exec(ctx, `PREPARE "rst Odd ""name""" AS SELECT 1`); err != nil {
			t.Errorf("acquisition %d: PREPARE of an odd name the last holder prepared: %v", i, err)
		}
		if _, err := pc.Exec(ctx, "DO $$BEGIN EXECUTE 'PREPARE rst_dyn AS SELECT 1'; END$$"); err != nil {
			t.Errorf("acquisition %d: dynamic PREPARE of a name the last holder prepared: %v", i, err)
		}
		if _, err := pc.Exec(ctx, "EXECUTE rst_ac"); err != nil {
			t.Errorf("acquisition %d: AfterConnect's prepared statement: %v", i, err)
		}
		var n int64
		if err := pc.QueryRow(ctx, "SELECT count(*) FROM pg_prepared_statements WHERE name = $1 AND NOT from_sql", sd.Name).Scan(&n); err != nil || n != 1 {
			t.Errorf("acquisition %d: pgline's statement %s on the server: %d, %v", i, sd.Name, n, err)
		}
		if err := pc.QueryRow(ctx, q, 2).Scan(&v); err != nil || v != 3 {
			t.Errorf("acquisition %d: pgline's cached statement: %d, %v", i, v, err)
		}
		if got := desc(pc.Conn); got != sd {
			t.Errorf("acquisition %d: pgline's statement was described again after Release (cached %p, now %p)", i, sd, got)
		}
		pc.Release()
	}
}

// TestPoolReleaseAfterConnectFails: when AfterConnect fails, or panics,
// as Release runs it again, the connection is closed instead of returned
// (the panic goes on to Release's caller) and its slot is free: the next
// Acquire gets a new connection. The same holds for Acquire's reset of a
// connection a Pool transaction ran on.
func TestPoolReleaseAfterConnectFails(t *testing.T) {
	ctx := testCtx(t)
	cfg, err := ParseConfig(srv.DSN("pool_max_conns=1"))
	if err != nil {
		t.Fatal(err)
	}
	var mode atomic.Int32 // 0 succeed, 1 fail, 2 panic
	cfg.AfterConnect = func(ctx context.Context, c *Conn) error {
		switch mode.Load() {
		case 1:
			return errors.New("after connect fails")
		case 2:
			panic("after connect panics")
		}
		return nil
	}
	p, err := NewPoolConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	acquire := func() *PoolConn {
		t.Helper()
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		pc, err := p.Acquire(actx)
		if err != nil {
			t.Fatalf("Acquire: %v (stat %+v)", err, p.Stat())
		}
		return pc
	}
	for _, m := range []int32{1, 2} {
		pc := acquire()
		c := pc.Conn
		mode.Store(m)
		func() {
			defer func() {
				if r := recover(); (r != nil) != (m == 2) {
					t.Errorf("mode %d: Release panicked with %v", m, r)
				}
			}()
			pc.Release()
		}()
		mode.Store(0)
		if !c.IsClosed() {
			t.Errorf("mode %d: the connection AfterConnect failed on is open", m)
		}
		pc = acquire()
		if pc.Conn == c {
			t.Errorf("mode %d: Acquire gave the closed connection back", m)
		}
		pc.Release()
	}
	// Acquire's reset after a Pool transaction.
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := tx.c
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	mode.Store(2)
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Error("Acquire's reset: AfterConnect's panic did not go on")
			}
		}()
		pc, err := p.Acquire(ctx)
		t.Errorf("Acquire returned %v, %v", pc, err)
	}()
	mode.Store(0)
	if !c.IsClosed() {
		t.Error("the connection AfterConnect panicked on in Acquire's reset is open")
	}
	pc := acquire()
	pc.Release()
	if s := p.Stat(); s.AcquiredConns != 0 || s.TotalConns > 1 {
		t.Errorf("stat after: %+v", s)
	}
}

// BenchmarkPoolAcquireRelease: an Acquire, one statement and a Release
// (whose reset is a round trip), on a Pool of one connection with a warm
// statement cache; with AfterConnect setting search_path, each reset
// also runs it again.
func BenchmarkPoolAcquireRelease(b *testing.B) {
	for _, tc := range []struct {
		name         string
		afterConnect bool
	}{{"plain", false}, {"afterconnect", true}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			cfg, err := ParseConfig(srv.DSN("pool_max_conns=1"))
			if err != nil {
				b.Fatal(err)
			}
			if tc.afterConnect {
				cfg.AfterConnect = func(ctx context.Context, c *Conn) error {
					_, err := c.Exec(ctx, "SET search_path TO public; SET statement_timeout = '5s'")
					return err
				}
			}
			p, err := NewPoolConfig(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			// Statements of the Pool's own, as a program's would be.
			for i := range 20 {
				if _, err := p.Exec(ctx, "SELECT $1::int4 + "+string(rune('0'+i%10)), i); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				pc, err := p.Acquire(ctx)
				if err != nil {
					b.Fatal(err)
				}
				var v int32
				if err := pc.QueryRow(ctx, "SELECT $1::int4", 1).Scan(&v); err != nil {
					b.Fatal(err)
				}
				pc.Release()
			}
		})
	}
}

// TestPoolReleaseKeepsCacheWithoutPrepare: a Release whose holder
// prepared nothing with SQL PREPARE sends the reset that does not list the
// session's prepared statements (a cost per statement pgline cached),
// and one whose holder did sends the one that deallocates them.
func TestPoolReleaseKeepsCacheWithoutPrepare(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "pool_max_conns=1")
	var resets []string
	for _, sql := range []string{"SELECT 1", "PREPARE rst_k AS SELECT 1", "SELECT 2"} {
		pc, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pc.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
		c := pc.Conn
		c.s.Wmu.Lock()
		prepared := c.s.Stmts.SqlPrepared
		c.s.Wmu.Unlock()
		resets = append(resets, map[bool]string{false: "plain", true: "deallocating"}[prepared])
		pc.Release()
		c.s.Wmu.Lock()
		prepared = c.s.Stmts.SqlPrepared
		c.s.Wmu.Unlock()
		if prepared {
			t.Errorf("after the Release of a holder that ran %q, the connection still counts SQL-prepared statements", sql)
		}
	}
	if want := []string{"plain", "deallocating", "plain"}; strings.Join(resets, ",") != strings.Join(want, ",") {
		t.Errorf("resets %v, want %v", resets, want)
	}
}

// TestPoolAcquireKeepsPrepareConnSettings: Acquire resets a connection a
// Pool transaction ran on before PrepareConn runs, so that what
// PrepareConn sets reaches the holder. Before, PrepareConn ran first and
// the reset undid it (application_name back to its startup value).
func TestPoolAcquireKeepsPrepareConnSettings(t *testing.T) {
	ctx := testCtx(t)
	cfg, err := ParseConfig(srv.DSN("pool_max_conns=1"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.PrepareConn = func(ctx context.Context, c *Conn) (bool, error) {
		_, err := c.Exec(ctx, "SET application_name = 'prepared_by_prepareconn'")
		return err == nil, err
	}
	p, err := NewPoolConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tx, err := p.Begin(ctx) // the connection then needs a reset at Acquire
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	pc, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Release()
	var name string
	if err := pc.QueryRow(ctx, "SHOW application_name").Scan(&name); err != nil {
		t.Fatal(err)
	}
	if name != "prepared_by_prepareconn" {
		t.Errorf("application_name %q after Acquire, want PrepareConn's %q", name, "prepared_by_prepareconn")
	}
}

// TestPoolResetDeallocatesNothing: the Pool's resets are no statement
// that may deallocate pgline's prepared statements (see
// session.TraitsOf): resetSession does not, and resetPrepared
// deallocates SQL PREPARE's only, which its note says (Session.ResetNote).
func TestPoolResetDeallocatesNothing(t *testing.T) {
	if session.TraitsOf(resetSession).Deallocates {
		t.Errorf("the Pool's reset counts as deallocating pgline's statements: %q", resetSession)
	}
}
