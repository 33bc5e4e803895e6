package pgline

// A statement hit by the driver's CancelRequest meant for another (57014
// while that cancel is under way) is sent again when it ran all or nothing
// outside any transaction, on every common path, and not when it ran in a
// transaction or its effect outlives its implicit transaction. cancel_once
// stands in for the stray cancel.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// startAbandonedBehind starts A, a 3 s statement on c, and returns once A is
// queued. A's ctx ends once behind more requests are queued after A: the
// caller's statements are then queued before the driver's cancel for A,
// so a 57014 they get counts as possibly another's (Conn.strayCancel). A
// timed ctx (30 ms, then 300 ms) was not enough on a loaded machine: the
// caller's statement was sometimes queued after the cancel, and its 57014
// was then rightly its own.
func startAbandonedBehind(t *testing.T, c *Conn, behind int) chan error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		defer cancel()
		_, err := c.Exec(ctx, "SELECT pg_sleep(3) /* A */")
		done <- err
	}()
	waitQueued(t, c, 1)
	go func() {
		defer cancel()
		for end := time.Now().Add(10 * time.Second); queuedRequests(c) < 1+behind; time.Sleep(200 * time.Microsecond) {
			if time.Now().After(end) {
				t.Errorf("%d requests queued behind A after 10 s, want %d", queuedRequests(c)-1, behind)
				return
			}
		}
	}()
	return done
}

// createCancelOnce makes a function cancel_once(seq) that fails once with 57014 (the
// first time nextval(seq) runs), standing in for a CancelRequest meant for
// another statement landing on it, and a fresh sequence for each name.
// Its error's DETAIL is cancelOnceDetail (see cancelReachedFirst).
func createCancelOnce(t *testing.T, c *Conn, seqs ...string) {
	t.Helper()
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, `CREATE OR REPLACE FUNCTION cancel_once(seq regclass) RETURNS int LANGUAGE plpgsql AS $$
		BEGIN
			IF nextval(seq) = 1 THEN
				RAISE EXCEPTION 'canceling statement due to user request' USING ERRCODE = '57014', DETAIL = '`+cancelOnceDetail+`';
			END IF;
			RETURN 1;
		END $$`); err != nil {
		t.Fatal(err)
	}
	for _, s := range seqs {
		if _, err := c.Exec(ctx, "DROP SEQUENCE IF EXISTS "+s+"; CREATE SEQUENCE "+s); err != nil {
			t.Fatal(err)
		}
	}
}

// cancelOnceDetail is the DETAIL of cancel_once's error.
const cancelOnceDetail = "cancel_once"

// cancelReachedFirst reports the outcome of a statement that calls cancel_once
// where the driver's cancel for A reached it before cancel_once could fail
// it: the server signals a canceled backend twice (its pid and its
// process group), and the second signal may cancel the statement queued
// behind A, here before cancel_once ran. That 57014 counts as another's, and
// the statement is sent again; but the resend is queued after the cancel
// was over, so cancel_once's failure of the resend is rightly its own (not
// ErrCanceledByOther), after one run. It is an outcome of its own, the
// driver's right answer, and the test runs its scenario again. queued is
// how many requests the statement queued, base how many it queues when
// nothing fails: a statement whose first failure was not sent again (the
// failure the tests look for) queued no more than base.
func cancelReachedFirst(err error, calls int64, queued uint64, base func() uint64) bool {
	var pgErr *PgError
	return calls == 1 && errors.As(err, &pgErr) && pgErr.Detail == cancelOnceDetail && !errors.Is(err, ErrCanceledByOther) && queued > base()
}

// baseQueued returns how many requests run queues when nothing fails (it
// must succeed).
func baseQueued(t *testing.T, c *Conn, run func() error) uint64 {
	t.Helper()
	before := queuedSinceConnect(c)
	if err := run(); err != nil {
		t.Fatalf("run alone: %v", err)
	}
	return queuedSinceConnect(c) - before
}

// queuedSinceConnect returns how many requests c has queued since it connected.
func queuedSinceConnect(c *Conn) uint64 {
	c.s.Wmu.Lock()
	defer c.s.Wmu.Unlock()
	return c.s.SeqNext
}

// cancelOnceCalls returns how often cancel_once ran with seq.
func cancelOnceCalls(t *testing.T, c *Conn, seq string) int64 {
	t.Helper()
	var n int64
	if err := c.QueryRow(testCtx(t), "SELECT last_value - CASE WHEN is_called THEN 0 ELSE 1 END FROM "+seq).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestResendCanceledCommonPaths: a statement queued behind A, which the
// driver cancels, fails once with 57014 outside any transaction: it ran
// all or nothing, and is sent again; its own ReadyForQuery ('I') must
// allow that on every common path (a status of 0, no ReadyForQuery seen,
// would lose the retry). Each must succeed, having run twice.
func TestResendCanceledCommonPaths(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	paths := map[string]struct {
		sql string
		run func(ctx context.Context, c *Conn, sql string) error
	}{
		"QueryRow": {"SELECT cancel_once('rc_s_qr')", func(ctx context.Context, c *Conn, sql string) error {
			var v int32
			err := c.QueryRow(ctx, sql).Scan(&v)
			if err == nil && v != 1 {
				err = fmt.Errorf("read %d", v)
			}
			return err
		}},
		"QueryRowArgs": {"SELECT cancel_once($1::text::regclass)", func(ctx context.Context, c *Conn, sql string) error {
			var v int32
			return c.QueryRow(ctx, sql, "rc_s_qra").Scan(&v)
		}},
		"QueryRowAfterFirstRow": {"SELECT CASE WHEN g = 1 THEN 0 ELSE cancel_once('rc_s_qrr') END FROM generate_series(1, 2) g", func(ctx context.Context, c *Conn, sql string) error {
			var v int32
			return c.QueryRow(ctx, sql).Scan(&v)
		}},
		"ExecArgs": {"SELECT cancel_once($1::text::regclass)", func(ctx context.Context, c *Conn, sql string) error {
			_, err := c.Exec(ctx, sql, "rc_s_ea")
			return err
		}},
		"ExecSimple": {"SELECT cancel_once('rc_s_es')", func(ctx context.Context, c *Conn, sql string) error {
			_, err := c.Exec(ctx, sql)
			return err
		}},
		"ExecSimpleMulti": {"SELECT 1; SELECT cancel_once('rc_s_em')", func(ctx context.Context, c *Conn, sql string) error {
			_, err := c.Exec(ctx, sql)
			return err
		}},
		// Only a batch's last statement is sent again (see
		// BatchResults.mayResend; TestBatchNotLastNotResent).
		"BatchItem": {"SELECT cancel_once('rc_s_bi')", func(ctx context.Context, c *Conn, sql string) error {
			b := &Batch{}
			b.Queue("SELECT 1")
			b.Queue("SELECT 2")
			b.Queue(sql)
			br := c.SendBatch(ctx, b)
			var errs []error
			for range 3 {
				_, err := br.Exec()
				errs = append(errs, err)
			}
			errs = append(errs, br.Close())
			return errors.Join(errs...)
		}},
		"BatchLastItemQueryRow": {"SELECT cancel_once('rc_s_bq')", func(ctx context.Context, c *Conn, sql string) error {
			b := &Batch{}
			b.Queue("SELECT 2")
			b.Queue(sql)
			br := c.SendBatch(ctx, b)
			var v, w int32
			err1 := br.QueryRow().Scan(&w)
			err2 := br.QueryRow().Scan(&v)
			if err1 == nil && err2 == nil && (v != 1 || w != 2) {
				err1 = fmt.Errorf("read %d %d", v, w)
			}
			return errors.Join(err1, err2, br.Close())
		}},
	}
	seqOf := map[string]string{"QueryRow": "rc_s_qr", "QueryRowArgs": "rc_s_qra", "QueryRowAfterFirstRow": "rc_s_qrr",
		"ExecArgs": "rc_s_ea", "ExecSimple": "rc_s_es", "ExecSimpleMulti": "rc_s_em", "BatchItem": "rc_s_bi", "BatchLastItemQueryRow": "rc_s_bq"}
	for name, p := range paths {
		t.Run(name, func(t *testing.T) {
			c := connect(t, srv.DSN())
			ctx := testCtx(t)
			createCancelOnce(t, c, seqOf[name])
			for _, s := range []string{p.sql, "SELECT 1", "SELECT 2"} {
				if _, err := c.Prepare(ctx, s); err != nil && name != "ExecSimpleMulti" {
					t.Fatal(err)
				}
			}
			for attempt := 1; ; attempt++ {
				if attempt > 1 {
					createCancelOnce(t, c, seqOf[name])
				}
				aDone := startAbandonedBehind(t, c, 1)
				time.Sleep(5 * time.Millisecond)
				before := queuedSinceConnect(c)
				err := p.run(ctx, c, p.sql)
				queued := queuedSinceConnect(c) - before
				t.Logf("A: %v", <-aDone)
				n := cancelOnceCalls(t, c, seqOf[name])
				if attempt < 5 && cancelReachedFirst(err, n, queued, func() uint64 { return baseQueued(t, c, func() error { return p.run(ctx, c, p.sql) }) }) {
					t.Logf("attempt %d: the cancel's second signal came first (%v); again", attempt, err)
					continue
				}
				if err != nil || n != 2 {
					t.Errorf("%s: %v (ErrCanceledByOther %v), ran %d times; want success after one resend (2 runs)", name, err, errors.Is(err, ErrCanceledByOther), n)
				}
				break
			}
		})
	}
}

// TestResendCanceledSharedSync: two statements queued at once behind A
// (the second takes the first's Sync, or the first the second's): the
// one calling cancel_once fails once with 57014 and must succeed, sent again;
// the other, skipped by the server when the failure came first in its
// Sync group, or run alone, must succeed too.
func TestResendCanceledSharedSync(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	qs := []string{"SELECT cancel_once($1::text::regclass) /* g1 */", "SELECT length($1::text) /* g2 */"}
	createCancelOnce(t, c, "rc_s_g1")
	for _, q := range qs {
		if _, err := c.Prepare(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			createCancelOnce(t, c, "rc_s_g1")
		}
		aDone := startAbandonedBehind(t, c, 2)
		time.Sleep(5 * time.Millisecond)
		before := queuedSinceConnect(c)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		vals := make([]int32, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = c.QueryRow(ctx, qs[i], "rc_s_g1").Scan(&vals[i])
			}()
		}
		wg.Wait()
		queued := queuedSinceConnect(c) - before
		t.Logf("A: %v", <-aDone)
		n := cancelOnceCalls(t, c, "rc_s_g1")
		if attempt < 5 && cancelReachedFirst(errs[0], n, queued, func() uint64 { return 2 }) {
			t.Logf("attempt %d: the cancel's second signal came first (%v); again", attempt, errs[0])
			continue
		}
		if errs[0] != nil || n != 2 || vals[0] != 1 {
			t.Errorf("g1: %d, %v, ran %d times; want 1, success, 2 runs", vals[0], errs[0], n)
		}
		if errs[1] != nil || vals[1] != 7 {
			t.Errorf("g2: %d, %v; want 7", vals[1], errs[1])
		}
		return
	}
}

// TestResendNotInRawTx: another goroutine sends BEGIN with a raw
// Exec on the shared Conn, queued between A and B; B (an INSERT that
// then fails with 57014) runs in that transaction: it must not be sent
// again (its reply's status is 'E'), and nothing of it persists. When
// the driver's cancel for A reaches B before cancel_once does (the
// server's second signal, see cancelReachedFirst), B fails without
// running cancel_once: not sent again either, as a resend would have run
// it. So cancel_once runs once, or not at all, never twice.
func TestResendNotInRawTx(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	createCancelOnce(t, c, "rc_s_rt")
	effectsTable(t, c, "rc_rt")
	b := "WITH i AS (INSERT INTO rc_rt(k) VALUES ('b') RETURNING 1) SELECT cancel_once('rc_s_rt') FROM i"
	if _, err := c.Prepare(ctx, b); err != nil {
		t.Fatal(err)
	}
	aDone := startAbandonedBehind(t, c, 2)
	begun := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, "BEGIN")
		begun <- err
	}()
	// BEGIN queued behind A before B (a sleep was not enough on a loaded
	// machine: B queued first ran outside the transaction, and was rightly
	// sent again).
	waitQueued(t, c, 2)
	_, bErr := c.Exec(ctx, b)
	t.Logf("A: %v; BEGIN: %v; B: %v; status %c", <-aDone, <-begun, bErr, c.TxStatus())
	_, endErr := c.Exec(ctx, "ROLLBACK")
	if endErr != nil {
		t.Fatal(endErr)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*)::int FROM rc_rt").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if calls := cancelOnceCalls(t, c, "rc_s_rt"); n != 0 || calls > 1 || bErr == nil {
		t.Errorf("B in a transaction begun by another goroutine: err %v, ran %d times, %d rows kept; want an error, at most 1 run, 0 rows", bErr, calls, n)
	}
}

// TestResendNotInBatchBegin: in an independent batch [BEGIN, INSERT
// via B that fails once with 57014, COMMIT] (no replay), B ran in the
// batch's transaction: not sent again, COMMIT rolls back, B's error and
// Close report it, no row kept.
func TestResendNotInBatchBegin(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	createCancelOnce(t, c, "rc_s_bb")
	effectsTable(t, c, "rc_bb")
	b := "WITH i AS (INSERT INTO rc_bb(k) VALUES ('b') RETURNING 1) SELECT cancel_once('rc_s_bb') FROM i"
	for _, s := range []string{"BEGIN", b, "COMMIT"} {
		if _, err := c.Prepare(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	aDone := startAbandonedBehind(t, c, 1)
	time.Sleep(5 * time.Millisecond)
	batch := &Batch{}
	batch.Queue("BEGIN")
	batch.Queue(b)
	batch.Queue("COMMIT")
	br := c.SendBatch(ctx, batch)
	var errs [3]error
	for i := range errs {
		_, errs[i] = br.Exec()
	}
	closeErr := br.Close()
	t.Logf("A: %v; %v; close %v", <-aDone, errs, closeErr)
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*)::int FROM rc_bb").Scan(&n); err != nil {
		t.Fatal(err)
	}
	// The driver's cancel may reach B before cancel_once does (the
	// server's second signal, see cancelReachedFirst): B then fails
	// without running it. Never twice.
	if calls := cancelOnceCalls(t, c, "rc_s_bb"); n != 0 || calls > 1 || errs[1] == nil || closeErr == nil {
		t.Errorf("B in the batch's transaction: err %v, close %v, ran %d times, %d rows kept; want errors, at most 1 run, 0 rows", errs[1], closeErr, calls, n)
	}
	if c.TxStatus() != 'I' {
		t.Errorf("connection left in status %c", c.TxStatus())
	}
}

// TestResendSimpleMultiOnce: a simple multi-statement text
// (INSERT; then the failing SELECT) runs in one implicit transaction: sent
// again after the 57014, its INSERT is kept once.
func TestResendSimpleMultiOnce(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	const q = "INSERT INTO rc_sm(k) VALUES ('b'); SELECT cancel_once('rc_s_sm')"
	for attempt := 1; ; attempt++ {
		createCancelOnce(t, c, "rc_s_sm")
		effectsTable(t, c, "rc_sm")
		aDone := startAbandonedBehind(t, c, 1)
		time.Sleep(5 * time.Millisecond)
		before := queuedSinceConnect(c)
		_, err := c.Exec(ctx, q)
		queued := queuedSinceConnect(c) - before
		t.Logf("A: %v", <-aDone)
		var n int
		if err2 := c.QueryRow(ctx, "SELECT count(*)::int FROM rc_sm").Scan(&n); err2 != nil {
			t.Fatal(err2)
		}
		calls := cancelOnceCalls(t, c, "rc_s_sm")
		if attempt < 5 && n == 0 && cancelReachedFirst(err, calls, queued, func() uint64 {
			return baseQueued(t, c, func() error { _, err := c.Exec(ctx, q); return err })
		}) {
			t.Logf("attempt %d: the cancel's second signal came first (%v); again", attempt, err)
			continue
		}
		if err != nil || n != 1 || calls != 2 {
			t.Errorf("err %v, %d rows kept, ran %d times; want success, 1 row, 2 runs", err, n, calls)
		}
		break
	}
}

// TestResendNotSessionEffect: a statement outside any
// transaction takes a session-level advisory lock and then fails once
// with 57014 while the driver's CancelRequest for A is under way. Its
// ReadyForQuery says 'I', and it is sent again: but a session-level
// advisory lock survives the rollback of the failed attempt, so the
// lock is taken twice, and the caller's one pg_advisory_unlock leaves it
// held (other sessions stay blocked). A statement whose effect outlives
// its implicit transaction (sqllex.Info.SessionEffects) is not sent
// again: it fails with ErrCanceledByOther, having run once.
func TestResendNotSessionEffect(t *testing.T) {
	c := connect(t, srv.DSN())
	admin := connect(t, srv.DSN())
	ctx := testCtx(t)
	const q = "SELECT pg_advisory_lock(424242), cancel_once('rc_s_lk')"
	var err error
	var calls int64
	for attempt := 1; ; attempt++ {
		createCancelOnce(t, c, "rc_s_lk")
		if attempt == 1 {
			if _, err := c.Prepare(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		aDone := startAbandonedBehind(t, c, 1)
		time.Sleep(5 * time.Millisecond)
		_, err = c.Exec(ctx, q)
		calls = cancelOnceCalls(t, c, "rc_s_lk")
		t.Logf("A: %v; statement: %v, ran %d times", <-aDone, err, calls)
		// The cancel's second signal may reach the statement before
		// cancel_once runs (see cancelReachedFirst): it fails, not sent again,
		// with cancel_once never run, an outcome of its own. Again.
		if calls != 0 || !errors.Is(err, ErrCanceledByOther) || attempt == 5 {
			break
		}
		c.Exec(ctx, "SELECT pg_advisory_unlock_all()")
	}
	if calls != 1 {
		t.Fatalf("the statement ran %d times (its error: %v): a text that takes a session-level lock must not be sent again", calls, err)
	}
	if err != nil {
		// Failed (hit by the stray cancel after taking the lock, which
		// the failure does not release: the caller knows it failed).
		c.Exec(ctx, "SELECT pg_advisory_unlock_all()")
		return
	}
	var ok bool
	if err := c.QueryRow(ctx, "SELECT pg_advisory_unlock(424242)").Scan(&ok); err != nil || !ok {
		t.Fatalf("unlock: %v, %v", ok, err)
	}
	var held int
	if err := admin.QueryRow(ctx, "SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory' AND objid = 424242 AND pid = $1", int(c.PID())).Scan(&held); err != nil {
		t.Fatal(err)
	}
	c.Exec(ctx, "SELECT pg_advisory_unlock_all()")
	if held != 0 {
		t.Errorf("the statement succeeded and its lock was released once, but the session still holds it")
	}
}
