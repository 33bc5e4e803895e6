package pgline

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// Transactions whose ending statement never reached the server, or whose
// BEGIN was abandoned, must not leave the connection inside a transaction
// for the goroutines that use it next.

// TestRollbackWithEndedCtxEndsTx: a deferred Rollback(ctx) after ctx timed
// out used to release the Conn with the transaction still open; every
// later statement failed with 25P02 or ran inside it.
func TestRollbackWithEndedCtxEndsTx(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE rb_ended (x int)"); err != nil {
		t.Fatal(err)
	}
	for _, end := range []string{"rollback", "commit"} {
		tctx, cancel := context.WithCancel(ctx)
		tx, err := c.Begin(tctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(tctx, "INSERT INTO rb_ended VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		cancel()
		if end == "rollback" {
			err = tx.Rollback(tctx)
		} else {
			err = tx.Commit(tctx)
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s with an ended ctx: %v", end, err)
		}
		var n int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM rb_ended").Scan(&n); err != nil || n != 0 {
			t.Fatalf("after %s: %d rows, %v; want 0 (rolled back)", end, n, err)
		}
		if st := c.TxStatus(); st != 'I' {
			t.Fatalf("after %s: tx status %q", end, st)
		}
	}
}

// TestAbandonedBeginIsRolledBack: a Begin whose ctx ended while its BEGIN
// waited behind another statement returned an error, but the BEGIN still
// ran, and the next statements ran in a transaction nobody ended.
func TestAbandonedBeginIsRolledBack(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS begin_abandoned; CREATE TABLE begin_abandoned (x int)"); err != nil {
		t.Fatal(err)
	}
	// The statement ahead of the BEGIN waits for a lock mon holds, for as
	// long as the test needs (a pg_sleep could end before a loaded
	// machine's poll of pg_stat_activity saw it running).
	mon := connect(t, srv.DSN())
	const lockSQL = "SELECT pg_advisory_xact_lock(590059)"
	if _, err := mon.Exec(ctx, "SELECT pg_advisory_lock(590059)"); err != nil {
		t.Fatal(err)
	}
	slow := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, lockSQL)
		slow <- err
	}()
	if waitActivity(t, mon, 10*time.Second, "pid = $1 AND state = 'active' AND query = $2", int32(c.PID()), lockSQL) == 0 {
		select {
		case err := <-slow:
			t.Fatalf("session %d never seen waiting for the lock, and its statement returned %v", c.PID(), err)
		default:
			t.Fatalf("session %d never seen waiting for the lock", c.PID())
		}
	}
	bctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := c.Begin(bctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Begin: %v, want a deadline error", err)
	}
	if _, err := mon.Exec(ctx, "SELECT pg_advisory_unlock(590059)"); err != nil {
		t.Fatal(err)
	}
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "INSERT INTO begin_abandoned VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if st := c.TxStatus(); st != 'I' {
		t.Fatalf("tx status %q after the abandoned Begin", st)
	}
	if n := rowCount(t, connect(t, srv.DSN()), "begin_abandoned"); n != 1 {
		t.Fatalf("the insert is not visible outside (%d rows): it ran inside the abandoned transaction", n)
	}
}

// slowReader yields n lines of COPY data, one per Read after a pause; the
// first Read closes started.
type slowReader struct {
	n       int
	pause   time.Duration
	started chan struct{}
}

func (r *slowReader) Read(p []byte) (int, error) {
	if r.started != nil {
		close(r.started)
		r.started = nil
	}
	if r.n == 0 {
		return 0, io.EOF
	}
	time.Sleep(r.pause)
	r.n--
	return copy(p, "1\n"), nil
}

// TestCommitDuringOwnCopy: a Commit that times out while another goroutine
// of the same Tx runs a COPY used to leave the Conn held for ever.
func TestCommitDuringOwnCopy(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE commit_copy (x int)"); err != nil {
		t.Fatal(err)
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	copied := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		_, err := tx.CopyFromReader(ctx, "COPY commit_copy FROM STDIN", &slowReader{n: 3, pause: 200 * time.Millisecond, started: started})
		copied <- err
	}()
	<-started // the COPY holds the connection
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := tx.Commit(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Commit during the COPY: %v, want a deadline error", err)
	}
	if err := <-copied; err != nil {
		t.Fatal(err)
	}
	// The Commit never ran: the transaction was rolled back, and the
	// connection is free again.
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM commit_copy").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows, %v; want 0", n, err)
	}
	if st := c.TxStatus(); st != 'I' {
		t.Fatalf("tx status %q", st)
	}
}

// TestTxStatementsAfterEnd: statements of a Tx, or of a nested one, after
// the outermost transaction ended get ErrTxClosed; they used to run
// outside any transaction.
func TestTxStatementsAfterEnd(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Exec(ctx, "SELECT 1"); !errors.Is(err, ErrTxClosed) {
		t.Fatalf("nested Exec after the outer Commit: %v", err)
	}
	if err := sp.QueryRow(ctx, "SELECT 1").Scan(new(int)); !errors.Is(err, ErrTxClosed) {
		t.Fatalf("nested QueryRow after the outer Commit: %v", err)
	}
	if err := sp.Rollback(ctx); !errors.Is(err, ErrTxClosed) {
		t.Fatalf("nested Rollback after the outer Commit: %v", err)
	}

	// Goroutines of a Tx racing its Commit: each statement runs inside the
	// transaction or gets ErrTxClosed, never outside it.
	for range 20 {
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		if err := tx.QueryRow(ctx, "SELECT txid_current()").Scan(&want); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					var got int64
					err := tx.QueryRow(ctx, "SELECT txid_current()").Scan(&got)
					if errors.Is(err, ErrTxClosed) {
						return
					}
					if err != nil || got != want {
						t.Errorf("statement of the Tx ran in transaction %d (want %d): %v", got, want, err)
						return
					}
				}
			}()
		}
		time.Sleep(time.Millisecond)
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
	}
}

// TestNestedTxOneAtATime: savepoints nest like a stack, so a second nested
// Tx while one is open is refused; two used to share a savepoint name and
// roll back each other's work.
func TestNestedTxOneAtATime(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	a, err := tx.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Begin(ctx); err == nil || !strings.Contains(err.Error(), "nested transaction") {
		t.Fatalf("second nested Tx: %v", err)
	}
	inner, err := a.Begin(ctx) // nesting deeper is fine
	if err != nil {
		t.Fatal(err)
	}
	if err := inner.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := tx.Begin(ctx) // after a ended
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestCloseWakesGateWaiters: a statement waiting for a Tx to end returns
// when the Conn closes, not when its ctx ends.
func TestCloseWakesGateWaiters(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if _, err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, "SELECT 1")
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("waiting statement: %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting statement did not return after Close")
	}
}

// TestReaderArgWaitsForTx: a statement with a ReaderArg that waited for
// the flusher used to skip the gate afterwards and run inside a
// transaction another goroutine had begun meanwhile (and be rolled back
// with it).
func TestReaderArgWaitsForTx(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS reader_tx; CREATE TABLE reader_tx (b bytea)"); err != nil {
		t.Fatal(err)
	}
	// Prepare both statements first, so that nothing waits on a describe.
	if _, err := c.Exec(ctx, "SELECT length($1::bytea)", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "INSERT INTO reader_tx VALUES ($1)", session.ReaderArg(strings.NewReader("warm"), 4)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "TRUNCATE reader_tx"); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 3)
	go func() { _, err := c.Exec(ctx, "SELECT pg_sleep(0.5)"); errs <- err }()
	time.Sleep(50 * time.Millisecond)
	// The server sleeps and reads nothing: writing 64 MiB keeps the
	// flusher busy.
	go func() { _, err := c.Exec(ctx, "SELECT length($1::bytea)", make([]byte, 64<<20)); errs <- err }()
	time.Sleep(100 * time.Millisecond)
	go func() {
		_, err := c.Exec(ctx, "INSERT INTO reader_tx VALUES ($1)", session.ReaderArg(strings.NewReader("streamed"), 8))
		errs <- err
	}()
	time.Sleep(50 * time.Millisecond)
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := rowCount(t, connect(t, srv.DSN()), "reader_tx"); n != 1 {
		t.Fatalf("%d rows; want the streamed insert, which succeeded", n)
	}
}

// TestAbandonedCopyKeepsHold: a COPY FROM STDIN whose ctx ended while it
// waited for its turn used to release its hold at once; statements queued
// next reached the server in copy mode, which dropped the connection.
func TestAbandonedCopyKeepsHold(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE copy_abandoned (x int)"); err != nil {
		t.Fatal(err)
	}
	for _, via := range []string{"CopyFromReader", "Exec", "Query"} {
		rows, err := c.Query(ctx, "SELECT generate_series(1, 3)") // holds the reader
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		switch via {
		case "CopyFromReader":
			_, err = c.CopyFromReader(cctx, "COPY copy_abandoned FROM STDIN", strings.NewReader("1\n"))
		case "Exec":
			_, err = c.Exec(cctx, "COPY copy_abandoned FROM STDIN")
		case "Query":
			_, err = c.Query(cctx, "COPY copy_abandoned FROM STDIN") // the extended protocol
		}
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: %v, want a deadline error", via, err)
		}
		errs := make(chan error, 2)
		go func() { _, err := c.Exec(ctx, "INSERT INTO copy_abandoned VALUES (7)"); errs <- err }()
		go func() {
			var v int
			err := c.QueryRow(ctx, "SELECT 42").Scan(&v)
			if err == nil && v != 42 {
				err = errors.New("wrong answer")
			}
			errs <- err
		}()
		time.Sleep(50 * time.Millisecond)
		rows.Close()
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("%s: statement after the abandoned COPY: %v", via, err)
			}
		}
	}
}

// TestLateCancelRetriedSimple: a CancelRequest for a statement that has
// just finished can reach the next one; a simple-protocol statement hit
// that way used to fail with 57014 although its ctx never ended. It is
// sent again, as extended ones were.
func TestLateCancelRetriedSimple(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	for i := range 30 {
		actx, cancel := context.WithTimeout(ctx, time.Duration(40+i%20)*time.Millisecond)
		go func() {
			c.Exec(actx, "SELECT pg_sleep(0.05)")
			cancel()
		}()
		time.Sleep(5 * time.Millisecond)
		if _, err := c.Exec(ctx, "SELECT pg_sleep(0.1)"); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
	}
}

// TestTxDoomedByAbandonedStatement: a statement of a transaction whose
// caller gave up (its ctx ended while it held the rows) ran on the server
// all the same; Commit must not keep what its caller was told failed: it
// rolls back and returns ErrTxRolledBack.
func TestTxDoomedByAbandonedStatement(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE doomed(v int)"); err != nil {
		t.Fatal(err)
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	rows, err := tx.Query(sctx, "INSERT INTO doomed VALUES ($1) RETURNING v", 7)
	if err != nil {
		t.Fatal(err)
	}
	cancel() // the INSERT has run; its caller gives up before reading
	for rows.Next() {
	}
	rows.Close()
	if err := rows.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("rows: %v, want context.Canceled", err)
	}
	if err := tx.Commit(ctx); !errors.Is(err, ErrTxRolledBack) {
		t.Fatalf("Commit: %v, want ErrTxRolledBack", err)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM doomed").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows committed (%v), want 0", n, err)
	}
}
