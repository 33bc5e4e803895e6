package pgline

import (
	"errors"
	"testing"
	"time"
)

// TestAuditPathResendRepeatsSessionEffect: a statement outside any
// transaction takes a session-level advisory lock and then fails once
// with 57014 while the driver's CancelRequest for A is under way. Its
// ReadyForQuery says 'I', and it is sent again: but a session-level
// advisory lock survives the rollback of the failed attempt, so the
// lock is taken twice, and the caller's one pg_advisory_unlock leaves it
// held (other sessions stay blocked). A statement whose effect outlives
// its implicit transaction (sqllex.Info.SessionEffects) is not sent
// again: it fails with ErrCanceledByOther, having run once.
func TestAuditPathResendRepeatsSessionEffect(t *testing.T) {
	c := auditConn(t)
	admin := auditConn(t)
	ctx := testCtx(t)
	const q = "SELECT pg_advisory_lock(424242), ap_once('ap_s_lk')"
	var err error
	var calls int64
	for attempt := 1; ; attempt++ {
		apOnce(t, c, "ap_s_lk")
		if attempt == 1 {
			if _, err := c.Prepare(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		aDone := apStartAbandoned(t, c, 1)
		time.Sleep(5 * time.Millisecond)
		_, err = c.Exec(ctx, q)
		calls = apCalls(t, c, "ap_s_lk")
		t.Logf("A: %v; statement: %v, ran %d times", <-aDone, err, calls)
		// The cancel's second signal may reach the statement before
		// ap_once runs (see apSignalFirst): it fails, not sent again,
		// with ap_once never run, an outcome of its own. Again.
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
