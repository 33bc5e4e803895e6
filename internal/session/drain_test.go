package session

// The drain of an abandoned request (its caller's ctx ended): it cancels
// only after cancel_grace, only once its statement was sent and while it
// still runs; a cancel that lands on the statement behind is marked
// APIErrors.CanceledByOther, and a statement that may have committed work
// is never sent again. (Moved from the root's deadline_drain_test.go: a
// Conn's Exec without arguments is SimpleQueryUntraced here, its
// QueryRow and Exec with arguments the kit's query.)

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// effectsTable makes a fresh temporary table name (id serial, k text) on
// s, for the tests that count committed effects.
func effectsTable(t *testing.T, s *Session, name string) {
	t.Helper()
	if _, err := s.SimpleQueryUntraced(testCtx(t), nil, "CREATE TEMP TABLE "+name+" (id serial, k text)", nil, nil); err != nil {
		t.Fatal(err)
	}
}

// startAbandoned makes a driver CancelRequest happen while later requests
// are queued: A holds the head running pg_sleep(0.5), its ctx ends at 30ms,
// the drain cancels A after cancel_grace. A runs in a goroutine; the
// channel returned receives A's error. The caller queues B right after.
func startAbandoned(t *testing.T, s *Session) chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		_, err := s.SimpleQueryUntraced(ctx, nil, "SELECT pg_sleep(0.5) /* A */", nil, nil)
		done <- err
	}()
	return done
}

// checkCommittedOnce checks that B's INSERT into table, committed inside
// its DO block, ran once, or never when a signal hit B before its COMMIT
// (PostgreSQL signals a canceled backend twice: its pid and its process
// group), and then B failed (bErr): a DO block is never sent again.
func checkCommittedOnce(t *testing.T, s *Session, table string, bErr error) {
	t.Helper()
	n := countRows(t, s, table)
	t.Logf("rows committed by B: %d", n)
	if n > 1 || n == 0 && bErr == nil {
		t.Errorf("B's committed INSERT ran %d times, B's error %v", n, bErr)
	}
}

// TestDrainCancelsOnlyAfterGrace: the head's ctx ends while its statement
// runs, with requests behind. A statement that ends within cancel_grace
// (counted from the first wait on the socket) is not cancelled, so the
// statements behind are never hit; one that goes on is cancelled soon
// after the grace, so they are not held for its whole run. Each caller
// behind gets its own value. The head's ctx ends once a statement is
// queued behind it (with none, it is rightly cancelled at once), and the
// grace leaves the 0.15 s statement 850 ms to end in on a loaded machine.
func TestDrainCancelsOnlyAfterGrace(t *testing.T) {
	const grace = time.Second
	s := dialSessionOpts(t, func(o *SessionOpts) { o.CancelGrace = grace })
	for _, tc := range []struct {
		sleep      string
		wantCancel bool
	}{
		{"0.15", false}, // ends on its own within the grace
		{"20", true},    // cancelled after the grace
	} {
		t.Run(tc.sleep, func(t *testing.T) {
			for attempt := 1; ; attempt++ {
				if drainAfterGraceOnce(t, s, grace, tc.sleep, tc.wantCancel) || attempt == 5 {
					return
				}
			}
		})
	}
}

// drainAfterGraceOnce runs TestDrainCancelsOnlyAfterGrace's scenario once.
// It reports false when the head's statement ended before its ctx did
// (the machine slow to queue the statements behind): not the case under
// test, to be run again.
func drainAfterGraceOnce(t *testing.T, s *Session, grace time.Duration, sleep string, wantCancel bool) bool {
	t.Helper()
	bg := context.Background()
	before := s.CancelClock.Load()
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	start := time.Now()
	head := make(chan error, 1)
	go func() {
		_, err := s.SimpleQueryUntraced(ctx, nil, "SELECT pg_sleep("+sleep+")", nil, nil)
		head <- err
	}()
	for queued := false; !queued; time.Sleep(100 * time.Microsecond) {
		s.Wmu.Lock()
		queued = s.Tail != nil
		s.Wmu.Unlock()
	}
	type res struct {
		took time.Duration
		err  error
	}
	behind := make(chan res, 8)
	for j := range 8 {
		go func() {
			// Sent again if the cancel's second signal (the server
			// signals the pid and its process group) lands on it.
			rows, err := queryResendingText(bg, s, "SELECT $1::int::text", j)
			if err == nil && (len(rows) != 1 || rows[0][0] != fmt.Sprint(j)) {
				err = fmt.Errorf("got %q, want %d", rows, j)
			}
			behind <- res{time.Since(start), err}
		}()
	}
	if !waitFor(t, 10*time.Second, func() (bool, error) {
		s.Wmu.Lock()
		defer s.Wmu.Unlock()
		return s.Queued >= 2, nil
	}) {
		t.Fatal("no statement queued behind the head in 10 s")
	}
	cancel()
	cancelled := time.Now()
	err := <-head
	if err == nil {
		t.Logf("the head's statement ended before its ctx did; again")
		for range 8 {
			<-behind
		}
		return false
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("head: %v, want context.Canceled", err)
	} else if took := time.Since(cancelled); took > 500*time.Millisecond {
		t.Errorf("head returned %v after its ctx ended", took)
	}
	var slowest time.Duration
	for range 8 {
		r := <-behind
		if r.err != nil {
			t.Errorf("behind: %v", r.err)
		}
		slowest = max(slowest, r.took)
	}
	sent := s.CancelClock.Load() != before
	if sent != wantCancel {
		t.Errorf("CancelRequest sent: %v, want %v", sent, wantCancel)
	}
	if wantCancel && slowest > grace+2*time.Second {
		t.Errorf("the statements behind waited %v (grace %v)", slowest, grace)
	}
	if wantCancel && slowest < grace {
		t.Errorf("the statements behind answered after %v, before the grace (%v) ended: cancelled early", slowest, grace)
	}
	return true
}

// TestDrainWaitsForUnsentHead: the head's statement is still in
// the write buffer (its writer has not run yet: a flusher goroutine not
// yet scheduled, played here by holding the writer's role) when its ctx
// ends. Its drain must not cancel and hold writes (the drain's cancel, drainTick) before the
// statement was sent: the reply could then never come, and cancel_timeout
// later the connection would close under the requests behind.
func TestDrainWaitsForUnsentHead(t *testing.T) {
	// cancel_timeout=2s cancel_grace=0s (zero: the default grace)
	s := dialSessionOpts(t, func(o *SessionOpts) { o.CancelTimeout, o.CancelGrace = 2*time.Second, 0 })
	bg := context.Background()
	s.Wmu.Lock()
	s.Writer.Taken = true // a writer that has not run yet
	s.Wmu.Unlock()
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	_, err := s.SimpleQueryUntraced(ctx, nil, "SELECT 1", nil, nil)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("SimpleQueryUntraced: %v; want its ctx's error", err)
	}
	time.Sleep(300 * time.Millisecond) // the drain probes meanwhile
	s.Wmu.Lock()
	s.Writer.Taken = false
	start := s.Writer.takeLocked()
	s.Wmu.Unlock()
	if !start {
		t.Fatal("writes are held (a cancel for a statement never sent)")
	}
	go s.Writer.flushLoop()
	if rows, err := queryText(bg, s, "SELECT 42::text"); err != nil || len(rows) != 1 || rows[0][0] != "42" {
		t.Fatalf("after: %q, %v", rows, err)
	}
}

// TestDrainDescribeReplyOfCopyFrom: CopyFrom's column describe (Parse,
// Describe, Sync: HoldForCopy and DescribeColumns, as the API's copyFrom
// runs them) is abandoned when its ctx ends while it waits behind A; the
// drain of its reply must know ParameterDescription, not close the
// connection: B, queued next with its ctx alive, succeeds.
func TestDrainDescribeReplyOfCopyFrom(t *testing.T) {
	s := dialSession(t)
	ctx := testCtx(t)
	effectsTable(t, s, "drain_copy")
	aDone := make(chan error, 1)
	go func() {
		_, err := s.SimpleQueryUntraced(ctx, nil, "SELECT pg_sleep(0.2)", nil, nil)
		aDone <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	h, err := s.HoldForCopy(cctx, nil)
	if err == nil {
		// copyFromSQL's describe of CopyFrom(Identifier{"drain_copy"}, []string{"id"}, ...)
		_, err = s.DescribeColumns(cctx, &h.H, `SELECT "id" FROM "drain_copy"`)
		h.Release()
	}
	t.Logf("CopyFrom's describe: %v", err)
	t.Logf("A: %v", <-aDone)
	rows, err := queryText(ctx, s, "SELECT $1::int::text", 7)
	t.Logf("B: got=%q err=%v closed=%v", rows, err, s.IsClosed())
	if err != nil {
		t.Errorf("B (ctx alive) failed after a CopyFrom's ctx ended: %v", err)
	}
}

// TestDrainCancelDoesNotResendCommittingDOBlock: B is a single-statement
// DO block that commits an INSERT and then fails with 57014 from its own
// statement_timeout, while a driver cancel (meant for A, queued before B)
// was under way since B was queued. B must not be sent again: the INSERT
// it committed would run twice.
func TestDrainCancelDoesNotResendCommittingDOBlock(t *testing.T) {
	s := dialSession(t)
	ctx := testCtx(t)
	effectsTable(t, s, "drain_do")
	if _, err := s.SimpleQueryUntraced(ctx, nil, "SET statement_timeout = '600ms'", nil, nil); err != nil {
		t.Fatal(err)
	}
	aDone := startAbandoned(t, s)
	time.Sleep(5 * time.Millisecond) // A first
	start := time.Now()
	_, err := s.SimpleQueryUntraced(ctx, nil, "DO $$BEGIN INSERT INTO drain_do(k) VALUES ('B'); COMMIT; PERFORM pg_sleep(2); END$$", nil, nil)
	t.Logf("A: %v", <-aDone)
	t.Logf("B: err=%v (CanceledByOther=%v) after %v", err, errors.Is(err, APIErrors.CanceledByOther), time.Since(start))
	s.SimpleQueryUntraced(ctx, nil, "SET statement_timeout = 0", nil, nil)
	checkCommittedOnce(t, s, "drain_do", err)
}

// TestDrainLateCancelDoesNotResendCommittingDOBlock: as above, but B's
// 57014 comes from a pg_cancel_backend by another session (standing in
// for a cancel meant for A landing late) after B committed.
func TestDrainLateCancelDoesNotResendCommittingDOBlock(t *testing.T) {
	s := dialSession(t)
	admin := dialSession(t)
	ctx := testCtx(t)
	effectsTable(t, s, "drain_do2")
	aDone := startAbandoned(t, s)
	time.Sleep(5 * time.Millisecond)
	bDone := make(chan error, 1)
	go func() {
		_, err := s.SimpleQueryUntraced(ctx, nil, "DO $$BEGIN INSERT INTO drain_do2(k) VALUES ('B'); COMMIT; PERFORM pg_sleep(3); END$$", nil, nil)
		bDone <- err
	}()
	t.Logf("A: %v", <-aDone)
	if waitActivity(t, admin, 5*time.Second, runningLike, int(s.PID), "drain_do2") == 0 {
		select {
		case err := <-bDone:
			// The cancel meant for A reached B first (a loaded machine):
			// the case this test makes by hand, unseen by the poll.
			t.Logf("B ended before it was seen running: %v", err)
			checkCommittedOnce(t, s, "drain_do2", err)
			return
		default:
			t.Fatal("B not running")
		}
	}
	time.Sleep(100 * time.Millisecond)
	query(ctx, admin, "SELECT pg_cancel_backend($1)", int(s.PID))
	// cancel the resends too, as they come
	for i := 0; i < 6; i++ {
		time.Sleep(150 * time.Millisecond)
		query(ctx, admin, "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND query LIKE '%drain_do2%' AND state = 'active'", int(s.PID))
	}
	err := <-bDone
	t.Logf("B: err=%v (CanceledByOther=%v)", err, errors.Is(err, APIErrors.CanceledByOther))
	checkCommittedOnce(t, s, "drain_do2", err)
}
