package pgline

// The drain of an abandoned request (its caller's ctx ended): it cancels
// only after cancel_grace, only once its statement was sent and while it
// still runs; a cancel that lands on the statement behind is marked
// ErrCanceledByOther, and a statement that may have committed work is never
// sent again.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// effectsTable makes a fresh table name (id serial, k text) for the tests
// that count committed effects.
func effectsTable(t *testing.T, c *Conn, name string) {
	t.Helper()
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+name+"; CREATE TABLE "+name+" (id serial, k text)"); err != nil {
		t.Fatal(err)
	}
}

// startAbandoned makes a driver CancelRequest happen while later requests
// are queued: A holds the head running pg_sleep(0.5), its ctx ends at 30ms,
// the drain cancels A after cancel_grace. A runs in a goroutine; the
// channel returned receives A's error. The caller queues B right after.
func startAbandoned(t *testing.T, c *Conn) chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		_, err := c.Exec(ctx, "SELECT pg_sleep(0.5) /* A */")
		done <- err
	}()
	return done
}

// checkCommittedOnce checks that B's INSERT into table, committed inside
// its DO block, ran once, or never when a signal hit B before its COMMIT
// (PostgreSQL signals a canceled backend twice: its pid and its process
// group), and then B failed (bErr): a DO block is never sent again.
func checkCommittedOnce(t *testing.T, c *Conn, table string, bErr error) {
	t.Helper()
	n := rowCount(t, c, table)
	t.Logf("rows committed by B: %d", n)
	if n > 1 || n == 0 && bErr == nil {
		t.Errorf("B's committed INSERT ran %d times, B's error %v", n, bErr)
	}
}

// TestDrainCancelGrace: the head's ctx ends while its statement
// runs, with requests behind. A statement that ends within cancel_grace
// (counted from the first wait on the socket) is not cancelled, so the
// statements behind are never hit; one that goes on is cancelled soon
// after the grace, so they are not held for its whole run. Each caller
// behind gets its own value.
func TestDrainCancelGrace(t *testing.T) {
	const grace = 300 * time.Millisecond
	c := connect(t, srv.DSN("cancel_grace=300ms"))
	bg := context.Background()
	for _, tc := range []struct {
		sleep      string
		wantCancel bool
	}{
		{"0.15", false}, // ends on its own within the grace
		{"20", true},    // cancelled after the grace
	} {
		t.Run(tc.sleep, func(t *testing.T) {
			before := c.s.CancelClock.Load()
			ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
			defer cancel()
			start := time.Now()
			head := make(chan error, 1)
			go func() {
				_, err := c.Exec(ctx, "SELECT pg_sleep("+tc.sleep+")")
				head <- err
			}()
			for queued := false; !queued; time.Sleep(100 * time.Microsecond) {
				c.s.Wmu.Lock()
				queued = c.s.Tail != nil
				c.s.Wmu.Unlock()
			}
			type res struct {
				took time.Duration
				err  error
			}
			behind := make(chan res, 8)
			for j := range 8 {
				go func() {
					var v int
					err := c.QueryRow(bg, "SELECT $1::int", j).Scan(&v)
					if err == nil && v != j {
						err = fmt.Errorf("got %d, want %d", v, j)
					}
					behind <- res{time.Since(start), err}
				}()
			}
			if err := <-head; !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("head: %v, want context.DeadlineExceeded", err)
			} else if took := time.Since(start); took > 50*time.Millisecond+500*time.Millisecond {
				t.Errorf("head returned after %v, deadline 50ms", took)
			}
			var slowest time.Duration
			for range 8 {
				r := <-behind
				if r.err != nil {
					t.Errorf("behind: %v", r.err)
				}
				slowest = max(slowest, r.took)
			}
			cancelled := c.s.CancelClock.Load() != before
			if cancelled != tc.wantCancel {
				t.Errorf("CancelRequest sent: %v, want %v", cancelled, tc.wantCancel)
			}
			if tc.wantCancel && slowest > grace+2*time.Second {
				t.Errorf("the statements behind waited %v (grace %v)", slowest, grace)
			}
			if tc.wantCancel && slowest < grace {
				t.Errorf("the statements behind answered after %v, before the grace (%v) ended: cancelled early", slowest, grace)
			}
		})
	}
}

// TestDrainWaitsForUnsentHead: the head's statement is still in
// the write buffer (its writer has not run yet: a flusher goroutine not
// yet scheduled, played here by holding the writer's role) when its ctx
// ends. Its drain must not cancel and hold writes (the drain's cancel, drainTick) before the
// statement was sent: the reply could then never come, and cancel_timeout
// later the connection would close under the requests behind.
func TestDrainWaitsForUnsentHead(t *testing.T) {
	c := connect(t, srv.DSN("cancel_timeout=2s cancel_grace=0s"))
	bg := context.Background()
	c.s.Wmu.Lock()
	c.s.Writer.Taken = true // a writer that has not run yet
	c.s.Wmu.Unlock()
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	_, err := c.Exec(ctx, "SELECT 1")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Exec: %v; want its ctx's error", err)
	}
	time.Sleep(300 * time.Millisecond) // the drain probes meanwhile
	c.s.Wmu.Lock()
	c.s.Writer.Taken = false
	start := c.s.Writer.TakeLocked()
	c.s.Wmu.Unlock()
	if !start {
		t.Fatal("writes are held (a cancel for a statement never sent)")
	}
	go c.s.Writer.FlushLoop()
	var v int
	if err := c.QueryRow(bg, "SELECT 42").Scan(&v); err != nil || v != 42 {
		t.Fatalf("after: %d, %v", v, err)
	}
}

// TestDrainCopyFromDescribe: CopyFrom's column describe (Parse, Describe,
// Sync) is abandoned when its ctx ends while it waits behind A; the drain
// of its reply must know ParameterDescription, not close the connection:
// B, queued next with its ctx alive, succeeds.
func TestDrainCopyFromDescribe(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	effectsTable(t, c, "drain_copy")
	aDone := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, "SELECT pg_sleep(0.2)")
		aDone <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.CopyFrom(cctx, Identifier{"drain_copy"}, []string{"id"}, CopyFromRows([][]any{{1}}))
	t.Logf("CopyFrom: %v", err)
	t.Logf("A: %v", <-aDone)
	var got int
	err = c.QueryRow(ctx, "SELECT $1::int", 7).Scan(&got)
	t.Logf("B: got=%d err=%v closed=%v", got, err, c.IsClosed())
	if err != nil {
		t.Errorf("B (ctx alive) failed after a CopyFrom's ctx ended: %v", err)
	}
}

// drainReplyMBs are the sizes of A's reply in
// TestDrainNoCancelAfterServerEnded, in MB.
var drainReplyMBs = []int{1, 2, 4}

// TestDrainNoCancelAfterServerEnded: A's reply (several MB) has ended on
// the server (its bytes sit in socket buffers) and B runs; A's caller
// gives up after cancel_grace. The drain must not cancel while A's reply
// is still arriving: the cancel would hit B.
func TestDrainNoCancelAfterServerEnded(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	for _, mb := range drainReplyMBs {
		for _, kind := range []string{"Batch", "QueryRow", "RowsMid"} {
			t.Run(fmt.Sprintf("%dMB-%s", mb, kind), func(t *testing.T) {
				c := connect(t, srv.DSN())
				admin := connect(t, srv.DSN())
				ctx := testCtx(t)
				n := mb * 1000
				asql := fmt.Sprintf("SELECT repeat('x', 1000) FROM generate_series(1, %d)", n)
				bsql := "SELECT g, pg_sleep(0.3) FROM generate_series(1, 3) g"
				c.Prepare(ctx, asql)
				c.Prepare(ctx, bsql)
				actx, acancel := context.WithCancel(context.Background())
				rows, err := c.Query(actx, asql)
				if err != nil {
					t.Fatal(err)
				}
				rows.Next()
				type res struct {
					err error
					got []int
				}
				bDone := make(chan res, 1)
				go func() {
					var r res
					switch kind {
					case "Batch":
						b := &Batch{}
						b.Queue(bsql)
						br := c.SendBatch(ctx, b)
						rr, err := br.Query()
						if err == nil {
							for rr.Next() {
								var g int
								rr.Scan(&g, nil)
								r.got = append(r.got, g)
							}
							err = rr.Err()
						}
						if e := br.Close(); err == nil {
							err = e
						}
						r.err = err
					case "QueryRow":
						var g int
						r.err = c.QueryRow(ctx, bsql).Scan(&g, nil)
						r.got = []int{g}
					case "RowsMid":
						rr, err := c.Query(ctx, bsql)
						if err == nil {
							for rr.Next() {
								var g int
								rr.Scan(&g, nil)
								r.got = append(r.got, g)
							}
							err = rr.Err()
						}
						r.err = err
					}
					bDone <- r
				}()
				// wait until B runs on the server: A has ended there
				ok := waitActivity(t, admin, 5*time.Second, runningLike, int(c.PID()), "generate_series(1, 3)") != 0
				if !ok {
					t.Logf("B never ran while A held the head (A's output did not fit the socket buffers)")
				}
				time.Sleep(150 * time.Millisecond) // > cancel_grace
				acancel()
				rows.Close()
				r := <-bDone
				t.Logf("A: %v; B: got=%v err=%v ErrCanceledByOther=%v", rows.Err(), r.got, r.err, errors.Is(r.err, ErrCanceledByOther))
				if r.err != nil {
					t.Errorf("B (ctx alive) failed because of A's cancel: %v", r.err)
				}
			})
		}
	}
}

// TestDrainCancelDOBlockNotResent: B is a single-statement DO block that
// commits an INSERT and then fails with 57014 from its own
// statement_timeout, while a driver cancel (meant for A, queued before B)
// was under way since B was queued. B must not be sent again: the INSERT it
// committed would run twice.
func TestDrainCancelDOBlockNotResent(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	effectsTable(t, c, "drain_do")
	if _, err := c.Exec(ctx, "SET statement_timeout = '600ms'"); err != nil {
		t.Fatal(err)
	}
	aDone := startAbandoned(t, c)
	time.Sleep(5 * time.Millisecond) // A first
	start := time.Now()
	_, err := c.Exec(ctx, "DO $$BEGIN INSERT INTO drain_do(k) VALUES ('B'); COMMIT; PERFORM pg_sleep(2); END$$")
	t.Logf("A: %v", <-aDone)
	t.Logf("B: err=%v (ErrCanceledByOther=%v) after %v", err, errors.Is(err, ErrCanceledByOther), time.Since(start))
	c.Exec(ctx, "SET statement_timeout = 0")
	checkCommittedOnce(t, c, "drain_do", err)
}

// TestDrainLateCancelDOBlockNotResent: as above, but B's 57014 comes from a
// pg_cancel_backend by another session (standing in for a cancel meant for
// A landing late) after B committed.
func TestDrainLateCancelDOBlockNotResent(t *testing.T) {
	c := connect(t, srv.DSN())
	admin := connect(t, srv.DSN())
	ctx := testCtx(t)
	effectsTable(t, c, "drain_do2")
	aDone := startAbandoned(t, c)
	time.Sleep(5 * time.Millisecond)
	bDone := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, "DO $$BEGIN INSERT INTO drain_do2(k) VALUES ('B'); COMMIT; PERFORM pg_sleep(3); END$$")
		bDone <- err
	}()
	t.Logf("A: %v", <-aDone)
	if waitActivity(t, admin, 5*time.Second, runningLike, int(c.PID()), "drain_do2") == 0 {
		t.Fatal("B not running")
	}
	time.Sleep(100 * time.Millisecond)
	admin.Exec(ctx, "SELECT pg_cancel_backend($1)", int(c.PID()))
	// cancel the resends too, as they come
	for i := 0; i < 6; i++ {
		time.Sleep(150 * time.Millisecond)
		admin.Exec(ctx, "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND query LIKE '%drain_do2%' AND state = 'active'", int(c.PID()))
	}
	err := <-bDone
	t.Logf("B: err=%v (ErrCanceledByOther=%v)", err, errors.Is(err, ErrCanceledByOther))
	checkCommittedOnce(t, c, "drain_do2", err)
}

// TestDrainOwnStatementTimeoutNotOthers: B's own statement_timeout (57014)
// while a driver cancel for A was under way is B's own error: not reported
// as ErrCanceledByOther, and B is not sent again.
func TestDrainOwnStatementTimeoutNotOthers(t *testing.T) {
	for _, kind := range []string{"Exec-simple", "Exec-args", "QueryRow", "Batch"} {
		t.Run(kind, func(t *testing.T) {
			c := connect(t, srv.DSN())
			ctx := testCtx(t)
			if _, err := c.Exec(ctx, "SET statement_timeout = '400ms'"); err != nil {
				t.Fatal(err)
			}
			c.Prepare(ctx, "SELECT pg_sleep($1::float8)")
			aDone := startAbandoned(t, c)
			time.Sleep(5 * time.Millisecond)
			start := time.Now()
			var err error
			switch kind {
			case "Exec-simple":
				_, err = c.Exec(ctx, "SELECT pg_sleep(1)")
			case "Exec-args":
				_, err = c.Exec(ctx, "SELECT pg_sleep($1::float8)", 1.0)
			case "QueryRow":
				err = c.QueryRow(ctx, "SELECT pg_sleep($1::float8)", 1.0).Scan(nil)
			case "Batch":
				b := &Batch{}
				b.Queue("SELECT pg_sleep($1::float8)", 1.0)
				br := c.SendBatch(ctx, b)
				_, err = br.Exec()
				br.Close()
			}
			<-aDone
			d := time.Since(start)
			t.Logf("%s: err=%v ErrCanceledByOther=%v after %v", kind, err, errors.Is(err, ErrCanceledByOther), d)
			if errors.Is(err, ErrCanceledByOther) {
				t.Errorf("own statement_timeout reported as ErrCanceledByOther")
			}
			if d > 800*time.Millisecond {
				t.Errorf("statement that times out after 400ms (queued behind ~100ms of A) took %v: it was run again", d)
			}
		})
	}
}
