package pgline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// The engine's statement names and DEALLOCATE handling are tested beside
// it (internal/session/txpooler_conn_test.go); these go through PgBouncer.

// TestPoolerDetectedAtConnect: through PgBouncer, with the default
// statement_cache_mode, a Conn and a Pool describe statements from the
// start, say so in Stat and tell the Tracer; statement_cache_mode=prepare
// keeps prepare mode.
func TestPoolerDetectedAtConnect(t *testing.T) {
	for _, mode := range []string{"transaction", "session"} {
		t.Run(mode, func(t *testing.T) {
			b := startTestPgBouncer(t, mode)
			ctx := testCtx(t)
			tr := &recordingTracer{}
			cfg, err := ParseConfig(b.DSN("pool_max_conns=1"))
			if err != nil {
				t.Fatal(err)
			}
			cfg.Tracer = tr
			c, err := ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			settled(c) // the check's answer, which the Tracer is told of
			if m := c.s.StatementCacheMode(); m != session.CacheDescribe {
				t.Errorf("Conn through PgBouncer runs in %q mode, want describe", m)
			}
			c.Close()
			tr.mu.Lock()
			found := false
			for _, ev := range tr.ended {
				if ev.Kind == TracePooler && strings.Contains(ev.Reason, "process ID") && ev.Host != "" {
					found = true
				}
			}
			tr.mu.Unlock()
			if !found {
				t.Error("the Tracer got no TracePooler event naming the process ID check")
			}

			p, err := NewPoolConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if st := p.Stat(); len(st.PoolerHosts) != 0 {
				t.Errorf("PoolerHosts %v before any connection", st.PoolerHosts)
			}
			var v int
			if err := p.QueryRow(ctx, "SELECT $1::int", 7).Scan(&v); err != nil || v != 7 {
				t.Fatalf("%d %v", v, err)
			}
			if st := p.Stat(); len(st.PoolerHosts) != 1 || st.PoolerHosts[0] != b.Addr() {
				t.Errorf("Stat().PoolerHosts = %v, want [%s]", st.PoolerHosts, b.Addr())
			}

			explicit := connect(t, b.DSN("statement_cache_mode=prepare"))
			if m := explicit.s.StatementCacheMode(); m != session.CachePrepare {
				t.Errorf("statement_cache_mode=prepare gave %q", m)
			}
		})
	}
	direct, err := NewPool(testCtx(t), srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if _, err := direct.Exec(testCtx(t), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if st := direct.Stat(); len(st.PoolerHosts) != 0 {
		t.Errorf("a direct Pool reports pooler hosts %v", st.PoolerHosts)
	}
}

// TestPoolerDetectedByMissingStatement: with statement_cache_mode=prepare
// forced, a transaction-mode PgBouncer shows itself by a statement missing
// on the session that gets a Bind; the connection switches to describe
// mode and the statement is sent again: every caller gets its own reply
// and no error.
func TestPoolerDetectedByMissingStatement(t *testing.T) {
	b := startTestPgBouncer(t, "transaction")
	ctx := testCtx(t)
	tr := &recordingTracer{}
	cfg, err := ParseConfig(b.DSN("statement_cache_mode=prepare"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tracer = tr
	conns := make([]*Conn, 3)
	for i := range conns {
		if conns[i], err = ConnectConfig(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		defer conns[i].Close()
	}
	// First, for certain: conns[0] prepares a text inside a transaction
	// (one server session), then another client holds that session
	// (PgBouncer hands out the last one released first) while conns[0]
	// runs the text again, on another session.
	a := conns[0]
	tx, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var s string
	if err := tx.QueryRow(ctx, "SELECT $1::int, 'g0'::text", 1).Scan(&v, &s); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	other := connect(t, b.DSN())
	otx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := otx.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if err := a.QueryRow(ctx, "SELECT $1::int, 'g0'::text", 2).Scan(&v, &s); err != nil || v != 2 || s != "g0" {
		t.Fatalf("the statement run on another session: %d %q %v", v, s, err)
	}
	otx.Rollback(ctx)
	if m := a.s.StatementCacheMode(); m != session.CacheDescribe {
		t.Fatalf("after its statement went missing the connection runs in %q mode, want describe", m)
	}

	var wg sync.WaitGroup
	var tally replyTally
	for g := 0; g < 30; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := conns[g%len(conns)]
			for i := 0; i < 30; i++ {
				want := g*1000 + i
				var v int
				var s string
				sql := fmt.Sprintf("SELECT $1::int, 'g%d'::text", g%5)
				if i%3 == 2 {
					batch := &Batch{}
					batch.Queue(sql, want)
					batch.Queue("SELECT $1::int + 1, 'b'::text", want)
					br := c.SendBatch(ctx, batch)
					err := br.QueryRow().Scan(&v, &s)
					var v2 int
					var s2 string
					err2 := br.QueryRow().Scan(&v2, &s2)
					br.Close()
					switch {
					case errors.Is(err, session.ErrPooler) && err2 == nil:
						// The batch's first statement found its statement
						// missing (the pooler's sign): not sent again after
						// the second had run (only a batch's last statement
						// is, see BatchResults.mayResend); an error, not a
						// wrong reply.
					case err != nil || err2 != nil:
						tally.errf("batch: %v / %v", err, err2)
					case v != want || s != fmt.Sprintf("g%d", g%5) || v2 != want+1 || s2 != "b":
						tally.wrongf("batch: %d %q %d %q", v, s, v2, s2)
					}
					continue
				}
				if err := c.QueryRow(ctx, sql, want).Scan(&v, &s); err != nil {
					tally.errf("QueryRow: %v", err)
				} else if v != want || s != fmt.Sprintf("g%d", g%5) {
					tally.wrongf("QueryRow %d: got %d %q", want, v, s)
				}
			}
		}()
	}
	wg.Wait()
	tally.check(t)
	switched := 0
	for _, c := range conns {
		if c.s.StatementCacheMode() == session.CacheDescribe {
			switched++
		}
	}
	if switched == 0 {
		t.Error("no connection switched to describe mode behind a transaction pooler")
	}
	// The switch is seen under wmu before its TracePooler event is
	// recorded, and the goroutine switching may be a drain still running
	// after every caller returned: wait for the events a moment.
	poolerEvents := func() (evs []TraceEvent) {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		for _, ev := range tr.ended {
			if ev.Kind == TracePooler {
				evs = append(evs, ev)
			}
		}
		return evs
	}
	evs := poolerEvents()
	for deadline := time.Now().Add(2 * time.Second); len(evs) < switched && time.Now().Before(deadline); evs = poolerEvents() {
		time.Sleep(5 * time.Millisecond)
	}
	for _, ev := range evs {
		if !strings.Contains(ev.Reason, "SQLSTATE") {
			t.Errorf("TracePooler reason %q does not say what showed the pooler", ev.Reason)
		}
	}
	if len(evs) != switched {
		t.Errorf("%d TracePooler events for %d switched connections", len(evs), switched)
	}
}

// modeTracer reads the connection's statement cache mode when told of a
// pooler, as a Tracer may.
type modeTracer struct{ modes chan string }

func (tr *modeTracer) TraceStart(ctx context.Context, ev *TraceEvent) context.Context { return ctx }

func (tr *modeTracer) TraceEnd(ctx context.Context, ev *TraceEvent) {
	if ev.Kind == TracePooler && ev.Conn != nil {
		tr.modes <- ev.Conn.StatementCacheMode()
	}
}

// TestTracerReadsModeOnPooler: a Tracer told of the pooler (from the
// goroutine that reads the connect's check) may read the connection's
// mode: describe, without blocking that goroutine, which then settles the
// connection (an audit found StatementCacheMode waiting for the very
// check that called the Tracer: every later call of it hung, and each
// PoolConn.Release waited 5 s).
func TestTracerReadsModeOnPooler(t *testing.T) {
	b := startTestPgBouncer(t, "transaction")
	cfg, err := ParseConfig(b.DSN())
	if err != nil {
		t.Fatal(err)
	}
	tr := &modeTracer{modes: make(chan string, 1)}
	cfg.Tracer = tr
	ctx := testCtx(t)
	c, err := ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case m := <-tr.modes:
		if m != session.CacheDescribe {
			t.Errorf("the Tracer read mode %s, want describe", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no TracePooler event in 5 s")
	}
	select {
	case <-c.s.PIDChecked():
	case <-time.After(5 * time.Second):
		t.Fatal("the check's goroutine did not end after calling the Tracer")
	}
}
