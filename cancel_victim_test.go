package pgline

// Cancel victims: PostgreSQL cancels whatever the backend runs when a
// CancelRequest lands, and pipelined statements are already in the
// server's input. A cancel meant for one caller's statement must never
// fail another caller's statement, queued behind it on the same
// connection, whose ctx is alive.
//
// Each single-connection test has the same shape:
//
//	A: Query("SELECT 1")  -> Rows, not read: A holds the head of the queue
//	B: statement written behind A; the server runs it (pg_stat_activity)
//	A's ctx ends; a moment later (longer than cancel_grace) A closes its Rows
//	B must succeed with its own result, never SQLSTATE 57014
//
// A's reply has ended (it is in the read buffer) when its ctx ends, so no
// CancelRequest may be sent for it at all; and if one were, B, whose ctx
// is alive, would have to be sent again or report ErrCanceledByOther.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// victimHold is the statement the cancelled caller A holds the head with:
// it has ended on the server when Query returns.
const victimHold = "SELECT 1"

// victimPause is how long A waits, after its ctx ended, before it closes
// its Rows: longer than the default cancel_grace (100ms), so that a cancel
// sent after the grace would still land on B.
const victimPause = 150 * time.Millisecond

// victimCase is one shape of the statement B queued behind A.
type victimCase struct {
	name    string
	setup   []string      // run on the Conn first
	prepare []string      // prepared first, so that B's run is written at once
	running string        // B's statement as pg_stat_activity shows it
	settle  time.Duration // how long B runs before A's ctx ends
	run     func(ctx context.Context, c *Conn) error
}

// TestCancelNoVictim: the ctx of a caller holding a finished statement's
// Rows ends while another caller's statement, pipelined behind it, runs on
// the server: that statement must succeed, in every shape.
func TestCancelNoVictim(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	cases := []victimCase{
		{
			// Rows are produced over two seconds; a cancel landing mid-way
			// would fail the Query after some rows.
			name:    "Query",
			prepare: []string{"SELECT i, pg_sleep(0.05) FROM generate_series(1, 40) i"},
			running: "SELECT i, pg_sleep(0.05) FROM generate_series(1, 40) i",
			settle:  150 * time.Millisecond, // some rows are produced first
			run: func(ctx context.Context, c *Conn) error {
				rows, err := c.Query(ctx, "SELECT i, pg_sleep(0.05) FROM generate_series(1, 40) i")
				if err != nil {
					return err
				}
				defer rows.Close()
				n := 0
				for rows.Next() {
					var i int
					if err := rows.Scan(&i, nil); err != nil {
						return err
					}
					if n++; i != n {
						return fmt.Errorf("row %d holds %d", n, i)
					}
				}
				if err := rows.Err(); err != nil {
					return fmt.Errorf("after %d rows: %w", n, err)
				}
				if n != 40 {
					return fmt.Errorf("%d rows, want 40", n)
				}
				return nil
			},
		},
		{
			name:    "Batch",
			prepare: []string{"SELECT $1::int", "SELECT 2 FROM pg_sleep(1.5)"},
			running: "SELECT 2 FROM pg_sleep(1.5)",
			settle:  20 * time.Millisecond,
			run: func(ctx context.Context, c *Conn) error {
				b := &Batch{}
				b.Queue("SELECT $1::int", 1)
				b.Queue("SELECT 2 FROM pg_sleep(1.5)")
				b.Queue("SELECT $1::int", 3)
				br := c.SendBatch(ctx, b)
				for i := 1; i <= 3; i++ {
					var v int
					if err := br.QueryRow().Scan(&v); err != nil {
						br.Close()
						return fmt.Errorf("statement %d: %w", i, err)
					}
					if v != i {
						br.Close()
						return fmt.Errorf("statement %d answered %d", i, v)
					}
				}
				return br.Close()
			},
		},
		{
			// Simple protocol, two statements.
			name:    "Exec multi-statement",
			running: "SELECT pg_sleep(1.5); SELECT 1",
			settle:  20 * time.Millisecond,
			run: func(ctx context.Context, c *Conn) error {
				tag, err := c.Exec(ctx, "SELECT pg_sleep(1.5); SELECT 1")
				if err != nil {
					return err
				}
				if tag.String() != "SELECT 1" {
					return fmt.Errorf("tag %q, want SELECT 1", tag)
				}
				return nil
			},
		},
		{
			// A sequential scan finds its row first, then sleeps on each
			// of the 39 other rows: the row is produced long before the
			// statement ends.
			name:    "QueryRow row before the end",
			setup:   []string{"CREATE TEMP TABLE victim_lookup AS SELECT g AS id FROM generate_series(1, 40) g"},
			prepare: []string{"SELECT id FROM victim_lookup WHERE id = $1 OR pg_sleep(0.05) IS NULL"},
			running: "SELECT id FROM victim_lookup WHERE id = $1 OR pg_sleep(0.05) IS NULL",
			settle:  150 * time.Millisecond,
			run: func(ctx context.Context, c *Conn) error {
				var id int
				if err := c.QueryRow(ctx, "SELECT id FROM victim_lookup WHERE id = $1 OR pg_sleep(0.05) IS NULL", 1).Scan(&id); err != nil {
					return err
				}
				if id != 1 {
					return fmt.Errorf("got id %d, want 1", id)
				}
				return nil
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { testCancelNoVictim(t, tc) })
	}
}

func testCancelNoVictim(t *testing.T, tc victimCase) {
	c := connect(t, srv.DSN())
	mon := connect(t, srv.DSN())
	ctx := testCtx(t)
	for _, sql := range tc.setup {
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for _, sql := range append(tc.prepare, victimHold) {
		if _, err := c.Prepare(ctx, sql); err != nil {
			t.Fatalf("prepare %s: %v", sql, err)
		}
	}

	actx, acancel := context.WithCancel(ctx)
	defer acancel()
	rows, err := c.Query(actx, victimHold)
	if err != nil {
		t.Fatalf("A: %v", err)
	}
	b := victimStart(func(ctx context.Context) error { return tc.run(ctx, c) })
	defer b.stop()
	if victimWaitRunning(t, mon, c.PID(), tc.running, "", 10*time.Second, b.exited) == "" {
		t.Fatalf("B never ran on the server behind A (B: %s)", b.peek())
	}
	time.Sleep(tc.settle)
	acancel()
	time.Sleep(victimPause)
	victimRelease(t, "A", rows)
	if err := b.result(t, "B", 20*time.Second); err != nil {
		t.Errorf("B, whose ctx is alive, failed%s: %v", victimCode(err), err)
	}
}

// TestCancelNoVictimTwice: B's QueryRow sits behind two callers whose ctxs
// end one after the other. A1 holds the head while B's first run is on the
// server; A2 is queued behind B's first run, so that it holds the head
// while a second run of B (sent again after a cancel meant for A1) would
// be on the server. B must answer 42 whatever happens.
func TestCancelNoVictimTwice(t *testing.T) {
	const bSQL = "SELECT pg_sleep(1.5), 42"
	c := connect(t, srv.DSN())
	mon := connect(t, srv.DSN())
	ctx := testCtx(t)
	for _, sql := range []string{bSQL, "SELECT 1", "SELECT 2"} {
		if _, err := c.Prepare(ctx, sql); err != nil {
			t.Fatalf("prepare %s: %v", sql, err)
		}
	}

	a1ctx, a1cancel := context.WithCancel(ctx)
	defer a1cancel()
	a1, err := c.Query(a1ctx, "SELECT 1")
	if err != nil {
		t.Fatalf("A1: %v", err)
	}
	b := victimStart(func(ctx context.Context) error {
		var v int
		if err := c.QueryRow(ctx, bSQL).Scan(nil, &v); err != nil {
			return err
		}
		if v != 42 {
			return fmt.Errorf("got %d, want 42", v)
		}
		return nil
	})
	defer b.stop()
	first := victimWaitRunning(t, mon, c.PID(), bSQL, "", 10*time.Second, b.exited)
	if first == "" {
		t.Fatalf("B never ran on the server behind A1 (B: %s)", b.peek())
	}

	// A2 is queued behind B's first run (its bytes are written now, before
	// any cancel), and gets the head once B's first reply is read.
	a2ctx, a2cancel := context.WithCancel(ctx)
	defer a2cancel()
	type queried struct {
		rows *Rows
		err  error
	}
	a2done := make(chan queried, 1)
	go func() {
		rows, err := c.Query(a2ctx, "SELECT 2")
		a2done <- queried{rows, err}
	}()
	time.Sleep(100 * time.Millisecond)
	a1cancel()
	time.Sleep(victimPause)
	victimRelease(t, "A1", a1)

	var a2 queried
	select {
	case a2 = <-a2done:
	case <-time.After(20 * time.Second):
		t.Fatal("A2's Query did not return within 20s")
	}
	if a2.err != nil {
		if !errors.Is(a2.err, context.Canceled) {
			t.Fatalf("A2's Query: %v", a2.err)
		}
	} else {
		// If B's statement was hit and sent again, wait until that run
		// is on the server: A2 holds the head in front of it.
		if again := victimWaitRunning(t, mon, c.PID(), bSQL, first, 2*time.Second, b.exited); again != "" {
			t.Logf("B runs again (started %s), behind A2", again)
		}
		time.Sleep(20 * time.Millisecond)
		a2cancel()
		time.Sleep(victimPause)
		victimRelease(t, "A2", a2.rows)
	}
	if err := b.result(t, "B", 20*time.Second); err != nil {
		t.Errorf("B, whose ctx is alive, failed%s: %v", victimCode(err), err)
	}
}

// victimCall is a statement run by its own goroutine under a generous ctx.
type victimCall struct {
	done   chan error    // receives the statement's result
	exited chan struct{} // closed when the statement returned
	stop   context.CancelFunc
}

func victimStart(run func(ctx context.Context) error) *victimCall {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	v := &victimCall{done: make(chan error, 1), exited: make(chan struct{}), stop: cancel}
	go func() {
		err := run(ctx)
		if err != nil && ctx.Err() != nil {
			err = fmt.Errorf("its own ctx ended (hang?): %w", err)
		}
		v.done <- err
		close(v.exited)
	}()
	return v
}

// result waits up to d for the call's result; a call that does not return
// in time fails the test.
func (v *victimCall) result(t *testing.T, name string, d time.Duration) error {
	t.Helper()
	select {
	case err := <-v.done:
		v.done <- err // for a second look
		return err
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", name, d)
		return nil
	}
}

// peek describes the call's result without waiting for it.
func (v *victimCall) peek() string {
	select {
	case err := <-v.done:
		v.done <- err
		return fmt.Sprintf("returned %v", err)
	default:
		return "still running"
	}
}

// victimRelease closes the Rows of a caller whose ctx was cancelled: its
// result is nil (it had all it needed) or wraps context.Canceled, never
// another caller's error.
func victimRelease(t *testing.T, name string, rows *Rows) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		rows.Close()
		done <- rows.Err()
	}()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("%s, whose ctx was cancelled: %v; want nil or an error wrapping context.Canceled", name, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: Rows.Close did not return within 10s", name)
	}
}

// victimWaitRunning polls pg_stat_activity through mon until session pid
// runs query with a query_start later than after ("" for any), and
// returns that query_start as text. It returns "" when within passes or
// stop is closed first.
func victimWaitRunning(t *testing.T, mon *Conn, pid uint32, query, after string, within time.Duration, stop <-chan struct{}) string {
	t.Helper()
	if after == "" {
		after = "-infinity"
	}
	ctx, cancel := context.WithTimeout(context.Background(), within+5*time.Second)
	defer cancel()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); {
		var start string
		err := mon.QueryRow(ctx, "SELECT query_start::text FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query = $2 AND query_start > $3::timestamptz",
			int32(pid), query, after).Scan(&start)
		switch {
		case err == nil:
			return start
		case !errors.Is(err, ErrNoRows):
			t.Fatalf("pg_stat_activity: %v", err)
		}
		select {
		case <-stop:
			return ""
		case <-time.After(5 * time.Millisecond):
		}
	}
	return ""
}

// victimCode names a 57014 (query_canceled) in err.
func victimCode(err error) string {
	var pgErr *PgError
	if errors.As(err, &pgErr) && pgErr.Code == "57014" {
		return " with 57014, cancelled by a CancelRequest meant for another caller"
	}
	return ""
}

// TestCancelNoVictimsStress: 100 goroutines share a Pool of 4; about one
// statement in ten runs under a short random deadline that races with its
// completion. A statement whose ctx did not end never fails with 57014
// (ErrCanceledByOther is allowed only for a Query whose rows were being
// delivered); one whose ctx ended succeeds or returns an error wrapping
// its ctx's error; every answer is the caller's own; an UPDATE sent again
// after a cancel runs once.
func TestCancelNoVictimsStress(t *testing.T) {
	storm(t)
	const workers, opsPerWorker = 100, 60
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := NewPool(ctx, srv.DSN("pool_max_conns=4"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Exec(ctx, "DROP TABLE IF EXISTS victim_stress; CREATE TABLE victim_stress(k int PRIMARY KEY, v int NOT NULL, hits int NOT NULL DEFAULT 0); INSERT INTO victim_stress(k, v) SELECT g, g * 7 FROM generate_series(0, 99) g"); err != nil {
		t.Fatal(err)
	}
	defer p.Exec(context.Background(), "DROP TABLE IF EXISTS victim_stress")

	seed := uint64(time.Now().UnixNano())
	var st victimStats
	ws := make([]*victimWorker, workers)
	var wg sync.WaitGroup
	for w := range ws {
		ws[w] = newVictimWorker(w, seed)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < opsPerWorker && ctx.Err() == nil; i++ {
				ws[w].run(ctx, p, &st, w*1000+i)
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(50 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("stress did not finish within 50s:\n%s", buf[:runtime.Stack(buf, true)])
	}

	t.Logf("seed %d: %d statements, %d under a short deadline: %d ended by it, %d of them cancelled on the server; %d Query ended by ErrCanceledByOther after rows",
		seed, st.ops, st.short, st.ended, st.cancelled, st.byOther)
	if st.failed > 0 {
		t.Errorf("seed %d: %d victims (57014 with a live ctx), %d failures in all; first ones:\n%s",
			seed, st.victims, st.failed, strings.Join(st.failures, "\n"))
	}
	if ctx.Err() != nil {
		t.Fatal("the stress ran out of time")
	}
	for w, wk := range ws {
		var hits int
		if err := p.QueryRow(ctx, "SELECT hits FROM victim_stress WHERE k = $1", w).Scan(&hits); err != nil {
			t.Fatal(err)
		}
		if u := wk.updates; hits < u.ok || hits > u.ok+u.maybe {
			t.Errorf("worker %d: hits %d, want %d..%d: an UPDATE ran twice or not at all", w, hits, u.ok, u.ok+u.maybe)
		}
	}
}

// Statement shapes of the stress test.
const (
	victimLookup  = iota // QueryRow, index lookup
	victimSlowRow        // QueryRow, 1ms
	victimRows           // Query, 4 rows produced over ~1ms
	victimUpdate         // Exec with args (UPDATE), 1ms
	victimSimple         // Exec without args, one statement, 1ms
	victimMulti          // Exec without args, two statements
	victimShapes
)

var victimShapeNames = [victimShapes]string{"QueryRow lookup", "QueryRow slow", "Query", "Exec UPDATE", "Exec simple", "Exec multi-statement"}

// victimWorker is one goroutine of the stress test.
type victimWorker struct {
	rng *rand.Rand
	// latency is a moving average of how long each shape takes this
	// worker, queueing included, without a deadline: a short deadline is
	// drawn below 1.5 times it, so that it ends now before the statement
	// is sent, now while it runs, now just after it ended.
	latency [victimShapes]time.Duration
	updates struct {
		ok    int // UPDATEs of its row that succeeded: applied once
		maybe int // UPDATEs ended by their ctx: applied at most once
	}
}

func newVictimWorker(w int, seed uint64) *victimWorker {
	wk := &victimWorker{rng: rand.New(rand.NewPCG(seed, uint64(w)))}
	for i := range wk.latency {
		wk.latency[i] = 3 * time.Millisecond
	}
	return wk
}

// victimStats gathers the stress test's outcomes.
type victimStats struct {
	mu        sync.Mutex // protects the fields below
	ops       int
	short     int // under a short deadline
	ended     int // whose ctx ended
	cancelled int // whose ctx ended, cancelled on the server (57014)
	byOther   int // Query errors wrapping ErrCanceledByOther after rows
	victims   int // 57014 with a live ctx, not allowed
	failed    int
	failures  []string // the first few failures
}

func (st *victimStats) fail(victim bool, format string, args ...any) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.failed++
	if victim {
		st.victims++
	}
	if len(st.failures) < 10 {
		st.failures = append(st.failures, fmt.Sprintf(format, args...))
	}
}

// run runs one random statement and classifies its outcome.
func (wk *victimWorker) run(ctx context.Context, p *Pool, st *victimStats, key int) {
	shape := wk.rng.IntN(victimShapes)
	sctx := ctx
	short := wk.rng.IntN(10) == 0
	if short {
		d := time.Duration(wk.rng.Int64N(int64(wk.latency[shape]) * 3 / 2))
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	start := time.Now()
	delivered, err := wk.op(sctx, p, shape, key)
	ended := sctx.Err() != nil // right when the call returned
	if ctx.Err() != nil {
		return // the whole test ran out of time: reported by the caller
	}
	if !short && err == nil {
		wk.latency[shape] = (3*wk.latency[shape] + time.Since(start)) / 4
	}
	var pgErr *PgError
	is57014 := errors.As(err, &pgErr) && pgErr.Code == "57014"

	st.mu.Lock()
	st.ops++
	if short {
		st.short++
	}
	if ended {
		st.ended++
		if is57014 {
			st.cancelled++
		}
	}
	st.mu.Unlock()
	if shape == victimUpdate {
		switch {
		case err == nil:
			wk.updates.ok++
		case ended:
			wk.updates.maybe++
		}
	}
	if err == nil {
		return
	}
	name := victimShapeNames[shape]
	if errors.Is(err, ErrCanceledByOther) {
		if shape == victimRows && delivered > 0 && is57014 {
			st.mu.Lock()
			st.byOther++
			st.mu.Unlock()
			return
		}
		st.fail(true, "%s (ctx ended: %v, %d rows delivered): ErrCanceledByOther not allowed here: %v", name, ended, delivered, err)
		return
	}
	if ended {
		if !errors.Is(err, sctx.Err()) {
			st.fail(is57014, "%s, ctx ended: error does not wrap %v: %v", name, sctx.Err(), err)
		}
		return
	}
	if is57014 {
		st.fail(true, "%s, ctx alive, %d rows delivered: victim of another caller's cancel: %v", name, delivered, err)
		return
	}
	st.fail(false, "%s, ctx alive: %v", name, err)
}

// op runs one statement of the given shape, checks its answer, and
// returns how many rows reached the caller before an error.
func (wk *victimWorker) op(ctx context.Context, p *Pool, shape, key int) (int, error) {
	switch shape {
	case victimLookup:
		k := key % 100
		var v int
		if err := p.QueryRow(ctx, "SELECT v FROM victim_stress WHERE k = $1", k).Scan(&v); err != nil {
			return 0, err
		}
		if v != k*7 {
			return 0, fmt.Errorf("wrong answer: key %d has v %d, want %d", k, v, k*7)
		}
	case victimSlowRow:
		var v int
		if err := p.QueryRow(ctx, "SELECT $1::int FROM pg_sleep(0.001)", key).Scan(&v); err != nil {
			return 0, err
		}
		if v != key {
			return 0, fmt.Errorf("wrong answer: %d, want %d", v, key)
		}
	case victimRows:
		rows, err := p.Query(ctx, "SELECT g, pg_sleep(0.0003) FROM generate_series($1::int, $1::int + 3) g", key)
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var g int
			if err := rows.Scan(&g, nil); err != nil {
				return n, err
			}
			if g != key+n {
				return n, fmt.Errorf("wrong answer: row %d is %d, want %d", n, g, key+n)
			}
			n++
		}
		if err := rows.Err(); err != nil {
			return n, err
		}
		if n != 4 {
			return n, fmt.Errorf("wrong answer: %d rows, want 4", n)
		}
	case victimUpdate:
		tag, err := p.Exec(ctx, "UPDATE victim_stress SET hits = hits + 1 WHERE k = $1 AND pg_sleep(0.001) IS NOT NULL", key/1000)
		if err != nil {
			return 0, err
		}
		if tag.RowsAffected() != 1 {
			return 0, fmt.Errorf("wrong answer: tag %q, want UPDATE 1", tag)
		}
	case victimSimple:
		if _, err := p.Exec(ctx, "SELECT pg_sleep(0.001)"); err != nil {
			return 0, err
		}
	case victimMulti:
		tag, err := p.Exec(ctx, "SELECT pg_sleep(0.0005); SELECT 2")
		if err != nil {
			return 0, err
		}
		if tag.String() != "SELECT 1" {
			return 0, fmt.Errorf("wrong answer: tag %q, want SELECT 1", tag)
		}
	}
	return 0, nil
}

// TestCancelNoVictimBatchResent: the last statement of an independent
// batch, failing with 57014 while a cancel meant for another statement
// was under way since the batch was queued, is sent again on its own, and
// every result is the batch's own. (Only the last: the statements after
// any other have run by then, see BatchResults.mayResend.) The 57014 is
// raised by the statement itself the first time it runs (fail_once), so
// that no second signal of a real cancel can reach the statement sent
// again. The real cancel's second signal may instead hit a statement
// before fail_once: that one then fails with ErrCanceledByOther, not sent
// again, and the run of fail_once sent again is its first, whose own
// 57014 (queued after the cancel ended) is the caller's answer. Those
// outcomes are checked too, and the scenario run again until the path
// under test was taken.
func TestCancelNoVictimBatchResent(t *testing.T) {
	c := connect(t, srv.DSN("cancel_grace=400ms"))
	admin := connect(t, srv.DSN())
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, `CREATE TEMP SEQUENCE fail_seq;
		CREATE FUNCTION pg_temp.fail_once() RETURNS int LANGUAGE plpgsql AS $$
		BEGIN
			IF nextval('fail_seq') = 1 THEN
				RAISE EXCEPTION USING ERRCODE = '57014', MESSAGE = 'fail_once: first call';
			END IF;
			RETURN 2;
		END $$`); err != nil {
		t.Fatal(err)
	}
	// Prepared first, so that the batch goes out at once, behind A.
	for _, sql := range []string{"SELECT $1::int", "SELECT pg_temp.fail_once()", "SELECT 1/$1::int"} {
		if _, err := c.Prepare(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	for attempt := 1; ; attempt++ {
		if _, err := c.Exec(ctx, "SELECT setval('fail_seq', 1, false)"); err != nil {
			t.Fatal(err)
		}
		if cancelBatchResent(ctx, t, c, admin) {
			break
		}
		if attempt == 5 {
			t.Fatal("5 times in a row, fail_once got its own error or a statement before it the cancel: its 57014, raised while a cancel for A was under way, was not sent again (or the cancel's second signal came first each time)")
		}
	}
	var one int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("the connection after the batch: %d, %v", one, err)
	}
}

// cancelBatchResent runs TestCancelNoVictimBatchResent's scenario once. It
// reports false when the batch got fail_once's own 57014 from the run
// sent again (a correct answer, but not the path under test).
func cancelBatchResent(ctx context.Context, t *testing.T, c, admin *Conn) bool {
	t.Helper()
	aDone := make(chan error, 1)
	actx, giveUpA := context.WithCancel(ctx)
	defer giveUpA()
	go func() { // A: given up once B is queued, canceled after cancel_grace
		_, err := c.Exec(actx, "SELECT pg_sleep(2) /* A */")
		aDone <- err
	}()
	waitActivity(t, admin, 5*time.Second, runningLike, int(c.PID()), "/* A */")
	c.s.Wmu.Lock()
	aReq := c.s.Tail // A alone in the queue
	c.s.Wmu.Unlock()
	type result struct {
		vals []int
		errs []error // each statement's
		exec error   // statement 3's
		cl   error   // Close's
	}
	done := make(chan result, 1)
	go func() { // B, queued behind A before A's cancel
		b := &Batch{}
		b.Queue("SELECT $1::int", 1)
		b.Queue("SELECT 1/$1::int", 0) // fails on its own
		b.Queue("SELECT $1::int", 3)
		b.Queue("SELECT pg_temp.fail_once()") // last: sent again
		br := c.SendBatch(ctx, b)
		var res result
		var v int
		err := br.QueryRow().Scan(&v)
		res.vals, res.errs = append(res.vals, v), append(res.errs, err)
		_, res.exec = br.Exec()
		for range 2 {
			err := br.QueryRow().Scan(&v)
			res.vals, res.errs = append(res.vals, v), append(res.errs, err)
		}
		res.cl = br.Close()
		done <- res
	}()
	// B is queued behind A before A is given up, so that the driver's
	// cancel for A is under way after B was queued.
	for queued := false; !queued; time.Sleep(time.Millisecond) {
		c.s.Wmu.Lock()
		queued = c.s.Tail != nil && c.s.Tail != aReq
		c.s.Wmu.Unlock()
	}
	giveUpA()
	if err := <-aDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("A: %v", err)
	}
	res := <-done
	// res.vals and res.errs: statements 0, 2 and 3 (fail_once).
	if errors.Is(res.exec, ErrCanceledByOther) {
		// The cancel's second signal hit statement 1 before its division
		// ran: not sent again (not last), an outcome of its own.
		t.Logf("statement 1 got the cancel: %v; running the scenario again", res.exec)
		return false
	}
	var pgErr *PgError
	if !errors.As(res.exec, &pgErr) || pgErr.Code != "22012" {
		t.Fatalf("statement 1: %v, want division by zero", res.exec)
	}
	switch {
	case errors.Is(res.errs[0], ErrCanceledByOther):
		// The cancel's second signal hit statement 0: its error is the
		// batch's first.
		if !errors.Is(res.cl, ErrCanceledByOther) {
			t.Fatalf("Close: %v, want the batch's first error (statement 0's, ErrCanceledByOther)", res.cl)
		}
	case !errors.As(res.cl, &pgErr) || pgErr.Code != "22012":
		t.Fatalf("Close: %v, want the batch's first error (division by zero)", res.cl)
	}
	for i, want := range []int{1, 3} {
		if errors.Is(res.errs[i], ErrCanceledByOther) {
			// The cancel's second signal: not sent again (not last).
			t.Logf("a statement before fail_once got the cancel: %v; running the scenario again", res.errs[i])
			return false
		}
		if res.errs[i] != nil || res.vals[i] != want {
			t.Fatalf("statement %d: %d, %v; want %d", 2*i, res.vals[i], res.errs[i], want)
		}
	}
	if res.errs[2] == nil {
		if res.vals[2] != 2 {
			t.Fatalf("fail_once: %d, want 2", res.vals[2])
		}
		return true
	}
	// The other correct outcome: fail_once's own error, from its first
	// call, which was the run sent again; not a cancel's.
	if !errors.As(res.errs[2], &pgErr) || pgErr.Message != "fail_once: first call" || errors.Is(res.errs[2], ErrCanceledByOther) {
		t.Fatalf("fail_once: %v, want 2 or its own error", res.errs[2])
	}
	var last int64
	var called bool
	if err := c.QueryRow(ctx, "SELECT last_value, is_called FROM fail_seq").Scan(&last, &called); err != nil || last != 1 || !called {
		t.Fatalf("fail_once failed with its own error but the sequence is at %d, called %v (%v), want it called once", last, called, err)
	}
	t.Logf("the cancel's second signal reached fail_once before its first call; running the scenario again")
	return false
}
