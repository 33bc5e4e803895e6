package pgline

// A Pool next to stranded blocks: the block pgline rolls back itself does
// not make the Pool retire the connection (TxStatus 'E' before the
// ROLLBACK's reply is not a caller's open block), a raw BEGIN given to
// the Pool behind a stranded block is refused unsent (ErrRoutedBlock), a
// connection left in a raw block is never handed out again, and a batch
// refused and sent again, or whose resend failed, gives its slot back.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// TestPoolStrandKeepsConn: one stranded block on a Pool's only
// connection (made on purpose, see strandConn), rolled back by
// pgline itself: the pool keeps the connection (it used to close it:
// pool.Host.done saw TxStatus 'E' before the ROLLBACK's reply).
func TestPoolStrandKeepsConn(t *testing.T) {
	createDeallocFunc(t)
	ctx := testCtx(t)
	p, err := NewPool(ctx, srv.DSN("pool_max_conns=1", "statement_cache_mode=prepare"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var c *Conn
	for range 200 {
		runEchoLoad(t, ctx, 8, 5*time.Millisecond, p.QueryRow)
		if conns := p.routedConns(); len(conns) == 1 {
			c = conns[0]
		}
		if c == nil {
			continue
		}
		c.s.Wmu.Lock()
		ready := c.s.CommitState == session.CommitReady
		c.s.Wmu.Unlock()
		if ready {
			break
		}
	}
	var n int64
	if err := p.QueryRow(ctx, "SELECT strand_dealloc($1)", "none").Scan(&n); err != nil {
		t.Fatal(err)
	}
	pid := c.PID()
	holdWrites(c)
	done := make(chan error, 2)
	go func() { done <- p.QueryRow(ctx, "SELECT strand_dealloc($1)", c.s.Stmts.Prefix+"commit").Scan(&n) }()
	waitQueued(t, c, 1)
	go func() {
		var v int64
		err := p.QueryRow(ctx, "SELECT $1::int8", int64(5)).Scan(&v)
		if err == nil && v != 5 {
			err = fmt.Errorf("got %d", v)
		}
		done <- err
	}()
	waitQueued(t, c, 2)
	releaseWrites(c)
	t.Logf("stranding run: %v", <-done)
	if err := <-done; err != nil {
		t.Errorf("echo behind: %v", err)
	}
	if c.s.Block.Strands.Load() != 1 {
		t.Fatalf("strands %d", c.s.Block.Strands.Load())
	}
	var v int64
	if err := p.QueryRow(ctx, "SELECT 1::int8").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if c.IsClosed() {
		t.Errorf("the pool closed its connection (pid %d) after pgline rolled back a stranded block on it", pid)
	}
}

// TestPoolStrandSignalsKeepBackends: echo QueryRows only through a Pool of
// 3 under a storm of signals at its backends. The pool must keep its 3
// backends: a stranded block that pgline rolls back itself must not show
// as TxStatus 'E' to pool.Host.done, which would retire the connection as
// if a caller had left a raw BEGIN open (26-31 backends in 2 s before).
func TestPoolStrandSignalsKeepBackends(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	for _, mode := range []string{"", "pipeline_sync=each"} {
		t.Run(mode, func(t *testing.T) { poolStrandSignalsKeepBackends(t, mode) })
	}
}

func poolStrandSignalsKeepBackends(t *testing.T, mode string) {
	ctx := testCtx(t)
	app := fmt.Sprintf("strand_churn_%d", time.Now().UnixNano())
	p, err := NewPool(ctx, srv.DSN(mode, "application_name="+app, "pool_max_conns=3"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	stop := make(chan struct{})
	storm, signals := appStorm(t, ctx, app, 300*time.Microsecond, stop)
	l := newLoopLoad(t, time.Second, 10)
	var seq atomic.Int64
	l.spawn(30, func() {
		v := seq.Add(1)
		var got int64
		err := p.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
		if err == nil && got != v || err != nil && pgCode(err) != "57014" {
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

// TestPoolRawBeginAfterStrandRefused: a raw BEGIN given to a Pool's
// Exec right behind a stranded block. The BEGIN used to run after the
// detached ROLLBACK (refused once, sent again), leaving the connection in
// its block, into which the Pool must not route anything; it is now
// refused unsent (ErrRoutedBlock), and the Pool's statements still run
// in transactions of their own.
func TestPoolRawBeginAfterStrandRefused(t *testing.T) {
	for _, held := range []bool{false, true} {
		name := "sequential"
		if held {
			name = "queued behind the strander"
		}
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			p := newTestPool(t, "pool_max_conns=1")
			c := poolOnlyConn(t, p)
			strands := c.s.Block.Strands.Load()
			var errS, errB error
			if held {
				holdWrites(c)
				var wg sync.WaitGroup
				wg.Add(1)
				go func() { defer wg.Done(); _, errS = p.Exec(ctx, stranderSQL) }()
				waitQueued(t, c, 1)
				_, errB = p.Exec(ctx, "BEGIN") // refused, unsent: nothing to wait for
				releaseWrites(c)
				wg.Wait()
			} else {
				_, errS = p.Exec(ctx, stranderSQL)
				_, errB = p.Exec(ctx, "BEGIN")
			}
			t.Logf("strander: %v; BEGIN: %v; conn TxStatus %c closed %v; strands +%d", errS, errB, c.TxStatus(), c.IsClosed(), c.s.Block.Strands.Load()-strands)
			if !errors.Is(errB, ErrRoutedBlock) {
				t.Fatalf("BEGIN: %v, want ErrRoutedBlock", errB)
			}
			if c.s.Block.Strands.Load() == strands {
				t.Fatal("no strand")
			}
			// Whatever connection the Pool routes to next, the statement must
			// run in its own transaction.
			for i := range 5 {
				if !runsOutsideBlock(t, ctx, p) {
					t.Fatalf("probe %d ran inside the raw BEGIN's block", i)
				}
			}
			if !c.IsClosed() && c.TxStatus() != 'I' {
				t.Errorf("the raw BEGIN's connection is open, status %c, still in the pool?", c.TxStatus())
			}
		})
	}
}

// TestPoolRawBeginBeforeStrandRollback: on a Pool of one connection, a raw
// ROLLBACK and a raw BEGIN (Pool.Exec) given before the ROLLBACK of a
// block another Pool.Exec stranded. The raw BEGIN used to be queued: its
// block was ended by that ROLLBACK, which then closed the connection
// (strandRolledBack). It is now refused unsent (ErrRoutedBlock), so no
// caller's block begins there. The callers queued around it, statements
// and a batch refused by the stranded block and sent again, each get
// their own value or an error; the Pool then runs statements, and
// Pool.Close returns.
func TestPoolRawBeginBeforeStrandRollback(t *testing.T) {
	p, closesWithin := poolOfOne(t)
	c := poolOnlyConn(t, p)
	ctx := testCtx(t)
	echoSQL := "SELECT $1::int8 + 0"
	var v int64
	if err := p.QueryRow(ctx, echoSQL, int64(1)).Scan(&v); err != nil {
		t.Fatal(err)
	}
	batch := func() *Batch {
		b := &Batch{}
		b.Queue(echoSQL, int64(100))
		b.Queue(echoSQL, int64(101))
		return b
	}
	if err := p.SendBatch(ctx, batch()).Close(); err != nil {
		t.Fatal(err)
	}
	echo := func(k int64) queuedStep {
		return callStep(fmt.Sprint("echo ", k), func(ctx context.Context) error {
			var got int64
			err := p.QueryRow(ctx, echoSQL, k).Scan(&got)
			if err == nil && got != k {
				return fmt.Errorf("wrong answer: sent %d, got %d", k, got)
			}
			return err
		})
	}
	exec := func(sql string) queuedStep {
		return callStep(sql, func(ctx context.Context) error { _, err := p.Exec(ctx, sql); return err })
	}
	steps := []queuedStep{
		echo(10), // refused, sent again behind the ROLLBACK
		callStep("batch", func(ctx context.Context) error {
			br := p.SendBatch(ctx, batch())
			var errs []error
			for k := int64(100); k <= 101; k++ {
				var got int64
				err := br.QueryRow().Scan(&got)
				if err == nil && got != k {
					err = fmt.Errorf("wrong answer: sent %d, got %d", k, got)
				}
				errs = append(errs, err)
			}
			return errors.Join(append(errs, br.Close())...)
		}),
		exec("ROLLBACK"),
		{name: "BEGIN", start: func(ctx context.Context) error { _, err := p.Exec(ctx, "BEGIN"); return err }}, // refused, never queued
		echo(11),
	}
	errs := strandRefusing(t, c, func(ctx context.Context) error { _, err := p.Exec(ctx, stranderSQL); return err }, steps...)
	for i, s := range steps {
		t.Logf("%s: %v", s.name, errs[i])
		err := errs[i]
		if s.name == "BEGIN" {
			if !errors.Is(err, ErrRoutedBlock) {
				t.Errorf("raw BEGIN: %v, want ErrRoutedBlock", err)
			}
		} else if err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("%s: %v, want its own value or ErrClosed", s.name, err)
		}
	}
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for k := int64(20); k < 23; k++ {
		if err := p.QueryRow(qctx, echoSQL, k).Scan(&v); err != nil || v != k {
			t.Fatalf("the Pool after: sent %d, got %d, %v", k, v, err)
		}
	}
	if !runsOutsideBlock(t, qctx, p) {
		t.Error("the Pool's next statement runs inside a transaction block")
	}
	if !closesWithin(5 * time.Second) {
		t.Error("Pool.Close hangs")
	}
}

// TestPoolReleaseWithRollbackInFlight: Acquire, a stranding text, Release at
// once (the ROLLBACK in flight: TxStatus 'I', the connection is reset and
// kept), then Acquire again; and Acquire, a stranding text, a raw BEGIN
// (after the ROLLBACK), Release: the connection is in the BEGIN's block
// and must be closed, not handed out.
func TestPoolReleaseWithRollbackInFlight(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "pool_max_conns=1")
	for i := range 10 {
		pc, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := pc.Conn
		pc.Exec(ctx, stranderSQL)
		rawBegin := i%2 == 1
		if rawBegin {
			if _, err := pc.Exec(ctx, "BEGIN"); err != nil {
				t.Fatal(err)
			}
		}
		pc.Release()
		pc2, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if rawBegin && pc2.Conn == c {
			t.Errorf("%d: the connection left in a raw BEGIN's block was handed out again (TxStatus %c)", i, c.TxStatus())
		}
		if s := pc2.TxStatus(); s != 'I' {
			t.Errorf("%d: acquired connection TxStatus %c", i, s)
		}
		if !runsOutsideBlock(t, ctx, pc2) {
			t.Errorf("%d: acquired connection is in a transaction block", i)
		}
		pc2.Release()
	}
}

// TestPoolRefusedBatchSentAgain: a Pool's batch (one connection) refused
// by the block a Pool's Exec stranded: sent again whole, each statement
// runs once, and the batch gives its slot back on Close (the next
// statement runs; Pool.Close returns).
func TestPoolRefusedBatchSentAgain(t *testing.T) {
	p, closesWithin := poolOfOne(t)
	c := poolOnlyConn(t, p)
	tbl, admin := refusalTable(t, "pool")
	build := func(b *Batch) {
		for k := range int64(3) {
			b.Queue("INSERT INTO "+tbl+" VALUES ($1)", k)
		}
	}
	ctx := testCtx(t)
	b := &Batch{}
	build(b)
	if err := p.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exec(ctx, "DELETE FROM "+tbl); err != nil {
		t.Fatal(err)
	}
	var resends int
	step := queuedStep{name: "pool batch", requests: 1, start: func(ctx context.Context) error {
		b := &Batch{}
		build(b)
		br := p.SendBatch(ctx, b)
		for i := range b.Len() {
			if _, err := br.Exec(); err != nil {
				br.Close()
				return fmt.Errorf("statement %d: %w", i, err)
			}
		}
		resends = int(br.rep.Resends.Interfered)
		return br.Close()
	}}
	errs := strandRefusing(t, c, func(ctx context.Context) error { _, err := p.Exec(ctx, stranderSQL); return err }, step)
	if errs[0] != nil {
		t.Fatalf("batch: %v", errs[0])
	}
	if resends != 1 {
		t.Fatalf("sent again %d times, want 1", resends)
	}
	if got := fmt.Sprint(kValues(t, admin, tbl)); got != "[0 1 2]" {
		t.Errorf("rows %s, want [0 1 2]", got)
	}
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var n int
	if err := p.QueryRow(qctx, "SELECT 7").Scan(&n); err != nil || n != 7 {
		t.Errorf("the next statement: %d, %v", n, err)
	}
	if !closesWithin(5 * time.Second) {
		t.Error("Pool.Close hangs: the batch kept its slot")
	}
}

// TestBatchSendAgainFailedFreesPoolSlot: a Pool's batch whose statements,
// refused by a stranded block, could not be sent again (resendRefused:
// the first batch's reply read and handed on, the second's send failed)
// still gives its pool connection back on Close: a pool of one slot then
// serves the next statement, and Pool.Close, which waits for the
// statements in flight, returns.
func TestBatchSendAgainFailedFreesPoolSlot(t *testing.T) {
	ctx := testCtx(t)
	p, err := NewPool(ctx, srv.DSN("pool_max_conns=1 pool_max_pipeline=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if !poolClosesWithin(p, 5*time.Second) {
			t.Error("Pool.Close hangs: a slot was never given back")
		}
	}()
	var b Batch
	b.Queue("SELECT 1")
	b.Queue("SELECT 2")
	br := p.SendBatch(ctx, &b)
	if br.pooled == nil || br.rep.Req == nil {
		t.Fatalf("the batch holds no pool connection (%v)", br.err)
	}
	// The state resendRefused leaves when the second send fails.
	if err := br.rep.Release(&br.c.s); err != nil {
		t.Fatal(err)
	}
	sendErr := errors.New("the batch sent again failed")
	br.err = sendErr
	if err := br.Close(); err != sendErr {
		t.Fatalf("Close: %v, want the send's error", err)
	}
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var n int
	if err := p.QueryRow(qctx, "SELECT 7").Scan(&n); err != nil || n != 7 {
		t.Errorf("the next statement on a pool of one slot: %d, %v (the batch kept its slot)", n, err)
	}
}
