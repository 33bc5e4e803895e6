package pgline

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// TestPoolStrandSignalsKeepBackends: echo QueryRows only through a Pool of 3 under
// a storm of signals at its backends. The pool must keep its 3 backends:
// a stranded block that pgline rolls back itself must not show as
// TxStatus 'E' to hostPool.done, which would retire the connection as if
// a caller had left a raw BEGIN open (26-31 backends in 2 s before).
func TestPoolStrandSignalsKeepBackends(t *testing.T) {
	for _, mode := range []string{"", "pipeline_sync=each"} {
		t.Run(mode, func(t *testing.T) { poolStrandSignalsKeepBackends(t, mode) })
	}
}

func poolStrandSignalsKeepBackends(t *testing.T, mode string) {
	ctx := testCtx(t)
	app := fmt.Sprintf("audit_strand_churn_%d", time.Now().UnixNano())
	p, err := NewPool(ctx, srv.DSN(mode, "application_name="+app, "pool_max_conns=3"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	stop := make(chan struct{})
	storm, signals := appStorm(t, ctx, app, 300*time.Microsecond, stop)
	l := newAuditLoad(t, time.Second, 10)
	var seq atomic.Int64
	l.spawn(30, func() {
		v := seq.Add(1)
		var got int64
		err := p.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
		if err == nil && got != v || err != nil && !isCode(err, "57014") {
			l.fail("sent %d, got %d, %v", v, got, err)
		}
	})
	l.wait()
	close(stop)
	storm.Wait()
	seenMu.Lock()
	n := len(seen)
	clear(seen)
	seenMu.Unlock()
	t.Logf("signals %d, backends seen %d, statements %d", signals.Load(), n, seq.Load())
	if n > 3 {
		t.Errorf("a pool of 3 went through %d backends: it closed connections on which pgline had rolled back a stranded block", n)
	}
}

// TestPoolStrandKeepsConn: one stranded block on a Pool's only
// connection (made on purpose, see audit_strand_det_test.go), rolled back
// by pgline itself: the pool should keep the connection. It closes it
// instead (hostPool.done sees TxStatus 'E' before the ROLLBACK's reply).
func TestPoolStrandKeepsConn(t *testing.T) {
	auditStrandFunc(t)
	ctx := testCtx(t)
	p, err := NewPool(ctx, srv.DSN("pool_max_conns=1", "statement_cache_mode=prepare"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var c *Conn
	for range 200 {
		auditEchoLoad(t, ctx, 8, 5*time.Millisecond, p.QueryRow)
		hp := p.direct
		hp.mu.Lock()
		if len(hp.conns) == 1 {
			c = hp.conns[0].c
		}
		hp.mu.Unlock()
		if c == nil {
			continue
		}
		c.wmu.Lock()
		ready := c.commitState == commitReady
		c.wmu.Unlock()
		if ready {
			break
		}
	}
	var n int64
	if err := p.QueryRow(ctx, "SELECT audit_strand_dealloc($1)", "none").Scan(&n); err != nil {
		t.Fatal(err)
	}
	pid := c.PID()
	auditHoldWrites(c)
	done := make(chan error, 2)
	go func() { done <- p.QueryRow(ctx, "SELECT audit_strand_dealloc($1)", c.stmts.prefix+"commit").Scan(&n) }()
	auditWaitQueued(t, c, 1)
	go func() {
		var v int64
		err := p.QueryRow(ctx, "SELECT $1::int8", int64(5)).Scan(&v)
		if err == nil && v != 5 {
			err = fmt.Errorf("got %d", v)
		}
		done <- err
	}()
	auditWaitQueued(t, c, 2)
	auditResumeWrites(c)
	t.Logf("stranding run: %v", <-done)
	if err := <-done; err != nil {
		t.Errorf("echo behind: %v", err)
	}
	if c.strands.Load() != 1 {
		t.Fatalf("strands %d", c.strands.Load())
	}
	var v int64
	if err := p.QueryRow(ctx, "SELECT 1::int8").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if c.IsClosed() {
		t.Errorf("the pool closed its connection (pid %d) after pgline rolled back a stranded block on it", pid)
	}
}
