package pgline

// The kit of the transaction-block tests (txblock_*, txend_*): a block
// stranded on purpose (a text that begins and ends its own block and fails
// before its COMMIT, or a named COMMIT deallocated under a chained run),
// with the connection's writes held back as during a CancelRequest, so
// that the order of the requests queued behind it, and which of them
// share a Sync, is fixed; steps that queue one caller each; probes of
// whether a statement runs in a transaction block; tables, row counts and
// the outcomes of INSERTs checked against the rows that exist.

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

// createDeallocFunc creates, once per test binary, the function that
// deallocates a prepared statement of the calling session.
var deallocFuncOnce sync.Once

func createDeallocFunc(t *testing.T) {
	t.Helper()
	var err error
	deallocFuncOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var admin *Conn
		admin, err = Connect(ctx, srv.DSN())
		if err != nil {
			return
		}
		defer admin.Close()
		_, err = admin.Exec(ctx, `CREATE OR REPLACE FUNCTION strand_dealloc(n text) RETURNS int8
			LANGUAGE plpgsql AS $$ BEGIN
			IF EXISTS (SELECT 1 FROM pg_prepared_statements WHERE name = n) THEN EXECUTE 'DEALLOCATE ' || quote_ident(n); END IF;
			RETURN 1; END $$`)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// strandConn connects in prepare mode and warms the connection up
// until its named BEGIN and COMMIT are prepared.
func strandConn(t *testing.T, extra ...string) *Conn {
	t.Helper()
	createDeallocFunc(t)
	ctx := testCtx(t)
	c := connect(t, srv.DSN(append([]string{"statement_cache_mode=prepare"}, extra...)...))
	for range 200 {
		c.s.Wmu.Lock()
		ready := c.s.CommitState == session.CommitReady
		c.s.Wmu.Unlock()
		if ready {
			// Described now: queued with writes held, it must not wait
			// for its describe.
			var n int64
			if err := c.QueryRow(ctx, "SELECT strand_dealloc($1)", "none").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return c
		}
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var v int64
				if err := c.QueryRow(ctx, "SELECT $1::int8", int64(i)).Scan(&v); err != nil || v != int64(i) {
					t.Errorf("warm-up: %d %v", v, err)
				}
			}()
		}
		wg.Wait()
	}
	t.Fatal("the named BEGIN and COMMIT were never prepared")
	return nil
}

// holdWrites holds the connection's writes back as a CancelRequest
// in flight does; releaseWrites ends the hold.
func holdWrites(c *Conn) {
	c.s.Wmu.Lock()
	c.s.Writer.PauseLocked()
	c.s.Wmu.Unlock()
}

func releaseWrites(c *Conn) { c.s.Writer.Resume() }

// queuedRequests returns how many requests wait for their reply.
func queuedRequests(c *Conn) int {
	c.s.Wmu.Lock()
	defer c.s.Wmu.Unlock()
	return int(c.s.Queued)
}

// waitQueued waits until n requests are queued.
func waitQueued(t *testing.T, c *Conn, n int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for queuedRequests(c) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests queued, want %d", queuedRequests(c), n)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// queuedStep is one caller queued behind the stranding run: start
// runs its call (in its own goroutine) and reports a failure as an error;
// requests is how many requests it queues before waiting (the next step
// is started once they are queued).
type queuedStep struct {
	name     string
	requests int
	start    func(ctx context.Context) error
}

// strandThenSteps queues, with writes held, the stranding run, then each
// step in order, then lets the writes go, and checks that the block was
// found and rolled back, that every step succeeded, and that the
// connection ends outside any transaction.
func strandThenSteps(t *testing.T, c *Conn, steps ...queuedStep) {
	t.Helper()
	ctx := testCtx(t)
	strands := c.s.Block.Strands.Load()
	base := queuedRequests(c)
	if base != 0 {
		t.Fatalf("%d requests queued before the test", base)
	}
	holdWrites(c)
	released := false
	defer func() {
		if !released {
			releaseWrites(c)
		}
	}()
	var wg sync.WaitGroup
	errs := make([]error, len(steps)+1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		var n int64
		errs[0] = c.QueryRow(ctx, "SELECT strand_dealloc($1)", c.s.Stmts.Prefix+"commit").Scan(&n)
	}()
	want := 1
	waitQueued(t, c, want)
	for i, s := range steps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i+1] = s.start(ctx)
		}()
		want += s.requests
		if s.requests > 0 {
			waitQueued(t, c, want)
		} else {
			time.Sleep(5 * time.Millisecond)
		}
	}
	c.s.Wmu.Lock()
	chained := c.s.Shared
	c.s.Wmu.Unlock()
	releaseWrites(c)
	released = true
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the callers hang")
	}
	if c.s.Block.Strands.Load() == strands {
		t.Fatalf("no block was stranded (the stranding run's error: %v; runs chained so far %d)", errs[0], chained)
	}
	t.Logf("stranding run: %v; blocks rolled back %d", errs[0], c.s.Block.Strands.Load()-strands)
	for i, s := range steps {
		if errs[i+1] != nil {
			t.Errorf("%s: %v", s.name, errs[i+1])
		}
	}
	wantUsable(t, ctx, c)
}

// echoStep returns a step running SELECT v by QueryRow on c.
func echoStep(c *Conn, name string, v int64) queuedStep {
	return queuedStep{name: name, requests: 1, start: func(ctx context.Context) error {
		var got int64
		err := c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
		if err == nil && got != v {
			err = fmt.Errorf("sent %d, got %d", v, got)
		}
		return err
	}}
}

// strandRefusing queues, with writes held, strand (a text that strands its
// block), then each step in order (the next once its requests are
// queued), lets the writes go, and returns the steps' errors once every
// step returned. It fails the test when no block was stranded.
func strandRefusing(t *testing.T, c *Conn, strand func(context.Context) error, steps ...queuedStep) []error {
	t.Helper()
	ctx := testCtx(t)
	if strand == nil {
		strand = func(ctx context.Context) error {
			_, err := c.Exec(ctx, stranderSQL)
			return err
		}
	}
	if n := queuedRequests(c); n != 0 {
		t.Fatalf("%d requests queued before the test", n)
	}
	strands := c.s.Block.Strands.Load()
	holdWrites(c)
	released := false
	defer func() {
		if !released {
			releaseWrites(c)
		}
	}()
	var wg sync.WaitGroup
	errs := make([]error, len(steps))
	wg.Add(1)
	go func() {
		defer wg.Done()
		strand(ctx)
	}()
	want := 1
	waitQueued(t, c, want)
	for i, s := range steps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.start(ctx)
		}()
		want += s.requests
		waitQueued(t, c, want)
	}
	releaseWrites(c)
	released = true
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the callers hang")
	}
	if c.s.Block.Strands.Load() == strands {
		t.Fatal("no block was stranded")
	}
	return errs
}

// callStep returns a step running one call of f.
func callStep(name string, f func(ctx context.Context) error) queuedStep {
	return queuedStep{name: name, requests: 1, start: f}
}

const stranderSQL = "BEGIN; SELECT 1/0; COMMIT"

// slowStranderSQL strands its block 200 ms after it starts: the
// requests queued meanwhile are refused.
const slowStranderSQL = "BEGIN; SELECT pg_sleep(0.2); SELECT 1/0; COMMIT"

// runsOutsideBlock reports whether a statement runs outside any transaction
// block (in an implicit transaction of its own): the server refuses a
// SAVEPOINT there (25P01). In a block the SAVEPOINT succeeds and is
// released at once.
func runsOutsideBlock(t *testing.T, ctx context.Context, q interface {
	Exec(context.Context, string, ...any) (CommandTag, error)
}) bool {
	t.Helper()
	_, err := q.Exec(ctx, "SAVEPOINT block_probe")
	if pgCode(err) == "25P01" {
		return true
	}
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	if _, err := q.Exec(ctx, "RELEASE block_probe"); err != nil {
		t.Fatalf("probe release: %v", err)
	}
	return false
}

// isFailedInBlock reports whether err is what a statement of a failed
// transaction block may get: the server's 25P02, the connection closed
// (failing loudly), or, skipped by its Sync group's failure in that block,
// errSkippedInBlock (not sent again outside it).
func isFailedInBlock(err error) bool {
	return pgCode(err) == "25P02" || errors.Is(err, ErrClosed) || errors.Is(err, session.ErrSkippedInBlock)
}

// wantCommitFailed runs the block's COMMIT and fails the test when it
// reports that it committed: the block failed, or was rolled back.
func wantCommitFailed(t *testing.T, c *Conn) {
	t.Helper()
	tag, err := c.Exec(testCtx(t), "COMMIT")
	t.Logf("the block's COMMIT: %q, %v", tag, err)
	if err == nil && tag.String() == "COMMIT" {
		t.Errorf("the block's COMMIT reported %q: want an error or ROLLBACK (its block failed, and pgline's ROLLBACK ended it)", tag)
	}
}

// batchStep returns a step that sends b (built by build) and reads
// every statement by Exec; its error joins those of the statements.
func batchStep(c *Conn, name string, all bool, build func(b *Batch)) queuedStep {
	return queuedStep{name: name, requests: 1, start: func(ctx context.Context) error {
		b := &Batch{AllOrNothing: all}
		build(b)
		br := c.SendBatch(ctx, b)
		var errs []error
		for i := range b.Len() {
			if _, err := br.Exec(); err != nil {
				errs = append(errs, fmt.Errorf("statement %d: %w", i, err))
			}
		}
		if err := br.Close(); err != nil && len(errs) == 0 {
			errs = append(errs, fmt.Errorf("Close: %w", err))
		}
		return errors.Join(errs...)
	}}
}

// twoInsertsBatch returns a builder of the batch [INSERT 1, INSERT 2]
// into tbl, sent once on c (its statements prepared) and undone.
func twoInsertsBatch(t *testing.T, c *Conn, tbl string) func() *Batch {
	t.Helper()
	build := func() *Batch {
		b := &Batch{}
		b.Queue("INSERT INTO "+tbl+" VALUES ($1)", int64(1))
		b.Queue("INSERT INTO "+tbl+" VALUES ($1)", int64(2))
		return b
	}
	ctx := testCtx(t)
	if err := c.SendBatch(ctx, build()).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "DELETE FROM "+tbl); err != nil {
		t.Fatal(err)
	}
	return build
}

// warmBatch sends the batch once, so that its statements are
// prepared (queued with writes held, it must be one request), and runs
// undo after it.
func warmBatch(t *testing.T, c *Conn, all bool, build func(b *Batch), undo ...string) {
	t.Helper()
	ctx := testCtx(t)
	b := &Batch{AllOrNothing: all}
	build(b)
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		t.Fatalf("warm-up: %v", err)
	}
	for _, sql := range undo {
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("warm-up %q: %v", sql, err)
		}
	}
}

// poolOnlyConn returns the Conn of a one-connection pool.
func poolOnlyConn(t *testing.T, p *Pool) *Conn {
	t.Helper()
	if err := p.QueryRow(testCtx(t), "SELECT 1").Scan(new(int64)); err != nil {
		t.Fatal(err)
	}
	conns := p.routedConns()
	if len(conns) != 1 {
		t.Fatalf("%d conns", len(conns))
	}
	return conns[0]
}

// poolOfOne returns a Pool of one connection, closed when the test
// ends unless closesWithin was called, which closes it and reports
// whether Close returned within d.
func poolOfOne(t *testing.T) (p *Pool, closesWithin func(d time.Duration) bool) {
	t.Helper()
	p, err := NewPool(testCtx(t), srv.DSN("pool_max_conns=1"))
	if err != nil {
		t.Fatal(err)
	}
	closing := false
	t.Cleanup(func() {
		if !closing {
			p.Close()
		}
	})
	return p, func(d time.Duration) bool {
		closing = true
		return poolClosesWithin(p, d)
	}
}

// strandTable creates a table (k int8) for c's test.
func strandTable(t *testing.T, name string) (string, *Conn) {
	t.Helper()
	admin := connect(t, srv.DSN())
	tbl := fmt.Sprintf("strand_%s_%d", name, time.Now().UnixNano())
	if _, err := admin.Exec(testCtx(t), "CREATE TABLE "+tbl+" (k int8)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec(context.Background(), "DROP TABLE "+tbl) })
	return tbl, admin
}

// refusalTable creates a table (k int8) and returns its name and an
// admin connection.
func refusalTable(t *testing.T, name string) (string, *Conn) {
	return strandTable(t, "refusal_"+name)
}

// kValues returns the values of k in tbl, sorted.
func kValues(t *testing.T, admin *Conn, tbl string) []int64 {
	t.Helper()
	rows, err := admin.Query(testCtx(t), "SELECT k FROM "+tbl+" ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	var ks []int64
	for rows.Next() {
		var k int64
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		ks = append(ks, k)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ks
}

func uniqueName(prefix string) string {
	return fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano())
}

// intTable creates a fresh one-column table, dropped at the end.
func intTable(t *testing.T, prefix string) string {
	t.Helper()
	ctx := testCtx(t)
	tbl := uniqueName(prefix)
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "CREATE TABLE "+tbl+" (a int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Exec(ctx, "DROP TABLE IF EXISTS "+tbl) })
	return tbl
}

// testTable creates a fresh table named after the test and drops it
// at the end.
func testTable(t *testing.T, ctx context.Context, c *Conn, ddl string) string {
	t.Helper()
	name := "tx_" + strings.ToLower(strings.NewReplacer("/", "_", "-", "_", "=", "_", ".", "_").Replace(t.Name()))
	if len(name) > 60 {
		name = name[:60]
	}
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+name+"; CREATE TABLE "+name+" "+ddl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cc, err := Connect(context.Background(), srv.DSN())
		if err == nil {
			cc.Exec(context.Background(), "DROP TABLE IF EXISTS "+name)
			cc.Close()
		}
	})
	return name
}

// insertOutcomes records what each INSERT's caller was told.
type insertOutcomes struct {
	mu      sync.Mutex
	ok      map[int64]bool
	failed  map[int64]error
	unknown map[int64]bool
}

func newInsertOutcomes() *insertOutcomes {
	return &insertOutcomes{ok: map[int64]bool{}, failed: map[int64]error{}, unknown: map[int64]bool{}}
}

func (o *insertOutcomes) note(v int64, ctx context.Context, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case err == nil:
		o.ok[v] = true
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		o.unknown[v] = true
	default:
		o.failed[v] = err
	}
}

// check compares the outcomes with the rows of tbl (column k).
func (o *insertOutcomes) check(t *testing.T, ctx context.Context, admin *Conn, tbl string) {
	t.Helper()
	rows, err := admin.Query(ctx, "SELECT k, count(*)::int8 FROM "+tbl+" GROUP BY k")
	if err != nil {
		t.Fatal(err)
	}
	present := map[int64]int64{}
	for rows.Next() {
		var k, n int64
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		present[k] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	bad := 0
	report := func(f string, a ...any) {
		if bad++; bad <= 10 {
			t.Errorf(f, a...)
		}
	}
	for k, n := range present {
		if n > 1 {
			report("row %d exists %d times (ran twice)", k, n)
		}
		if err, ok := o.failed[k]; ok {
			report("row %d exists, but its caller was told it failed: %v", k, err)
		}
		if !o.ok[k] && !o.unknown[k] && o.failed[k] == nil {
			report("row %d exists, but nobody inserted it", k)
		}
	}
	for k := range o.ok {
		if present[k] != 1 {
			report("row %d reported inserted, found %d times", k, present[k])
		}
	}
	t.Logf("ok %d, failed %d, unknown (own ctx) %d, rows %d", len(o.ok), len(o.failed), len(o.unknown), len(present))
}

// bytesBuffer is a bytes.Buffer safe for the CopyTo writer.
type bytesBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (b *bytesBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b = append(b.b, p...)
	return len(p), nil
}

func (b *bytesBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.b)
}
