package session

import (
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

func TestShareableSQL(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT 1":                   true,
		"  insert into t values (1)": true,
		"-- note\n/* a /* nested */ b */ (select 1)": true,
		"VACUUM t":                 true,
		"begin":                    false,
		"START TRANSACTION":        false,
		"/* x */ Commit":           false,
		"end":                      false,
		"rollback to savepoint a":  false,
		"abort":                    false,
		"SAVEPOINT a":              false,
		"RELEASE a":                false,
		"PREPARE TRANSACTION 'x'":  false,
		"COPY t TO STDOUT":         false,
		"DO $$BEGIN COMMIT; END$$": false,
		"CALL p()":                 false,
		"":                         false,
		";":                        false,
		"-- only a comment":        false,
		"/* unterminated":          false,
		"BEGINNING":                true,  // not a keyword we know: a syntax error of its own
		"-- x\rCOMMIT -- \nAND":    false, // PostgreSQL ends a -- comment at \r too
	} {
		if got := TraitsOf(sql).shareable; got != want {
			t.Errorf("traitsOf(%q).shareable = %v, want %v", sql, got, want)
		}
	}
}

func TestMayDeallocate(t *testing.T) {
	for sql, want := range map[string]bool{
		"DISCARD ALL":                                true,
		"discard\n  all;":                            true,
		"DEALLOCATE ALL":                             true,
		"deallocate stmt":                            false, // the application's own statement (see deallocatesOurs)
		"DEALLOCATE pgline_abc":                      true,
		`DEALLOCATE "PGLINE_abc"`:                    true,
		"DEALLOCATE a; DEALLOCATE b":                 true, // two names: each may be pgline's as far as deallocatesOurs knows
		"DEALLOCATE a; DISCARD ALL":                  true,
		"SELECT 1":                                   false,
		"RESET ALL; DISCARD TEMP; DISCARD SEQUENCES": false, // as in the Pool's reset (root: TestPoolResetDeallocatesNothing)
		"DISCARD TEMP":                               false,
		"discard allowances":                         false,
		"SELECT 'discard' || ' all'":                 false, // a string, but not "discard all" either
		"SELECT deallocated_at FROM t":               false, // a column, not the keyword
		"EXECUTE 'DEALLOCATE ALL'":                   false, // a string is data outside DO
		"SELECT 'please discard all drafts'":         false,
		"DO $$BEGIN EXECUTE 'DEALLOCATE ALL'; END$$": true, // dynamic SQL
	} {
		if got := TraitsOf(sql).Deallocates; got != want {
			t.Errorf("traitsOf(%q).deallocates = %v, want %v", sql, got, want)
		}
	}
}

// TestEveryNamedCommitFailureIsAPoolerSign: behind a transaction pooler
// every run queued with the named BEGIN and COMMIT may find them missing,
// not only the first whose failure is read: a second run queued before
// that failure was read is a pooler's sign too (its caller gets its
// statement sent again, not the server's 26000). A run queued after a
// statement that may deallocate them gets no such reading.
func TestEveryNamedCommitFailureIsAPoolerSign(t *testing.T) {
	c := &Session{CommitState: CommitReady, Proxied: new(atomic.Bool)}
	c.Stmts = newStmtCache(CachePrepare, 10)
	c.commitNamed = commitMessages(c.Stmts.Prefix, false)
	missing := &srvErr{f: wire.ErrorFields{Code: "26000", Message: `prepared statement "x" does not exist`}}
	c.Wmu.Lock()
	r1, r2 := &Request{step: 1}, &Request{step: 1}
	c.commitMsgsLocked(r1)
	c.commitMsgsLocked(r2)
	c.Wmu.Unlock()
	if !c.failed(r1, missing) {
		t.Fatal("the first run's missing named BEGIN is no pooler sign")
	}
	if !c.failed(r2, missing) {
		t.Error("a second run given the named BEGIN before the first failure was read: its failure is no pooler sign")
	}

	c = &Session{CommitState: CommitReady, Proxied: new(atomic.Bool)}
	c.Stmts = newStmtCache(CachePrepare, 10)
	c.Wmu.Lock()
	r3 := &Request{step: 1}
	c.commitMsgsLocked(r3)
	c.noteDeallocateLocked()
	c.Wmu.Unlock()
	if c.failed(r3, missing) {
		t.Error("a failure after a DEALLOCATE was queued counts as a pooler sign")
	}
}

// TestGroupEndedMarksSkipped: the runs after a failed one in its Sync group
// are marked skipped, and when one of them carried the Parse of the named
// BEGIN and COMMIT, those count as not prepared again.
func TestGroupEndedMarksSkipped(t *testing.T) {
	c := &Session{CommitState: commitPending}
	failed, carrier, last, after := &Request{step: -1}, &Request{}, &Request{}, &Request{}
	carrier.preparesCommit.Store(true)
	failed.chained.Store(true)
	carrier.chained.Store(true)
	failed.next, carrier.next, last.next = carrier, last, after
	if err := c.groupEnded(failed); err != nil {
		t.Fatal(err)
	}
	if !carrier.skipped || !last.skipped || after.skipped {
		t.Errorf("skipped: carrier %v, last %v, after the group %v", carrier.skipped, last.skipped, after.skipped)
	}
	if c.CommitState != commitNone || c.Resent != 2 {
		t.Errorf("commit state %d, resent %d", c.CommitState, c.Resent)
	}
}

// TestFreedRequestKeepsNothing: a request goes back to the pool shared by
// every session with nothing of its run left (requests are reused; a
// field left set is read as the next run's), but for what is kept on
// purpose: the turn channel, the watch's bound cancel function and
// WaitGroup, and what the next submit sets first (state, seq).
func TestFreedRequestKeepsNothing(t *testing.T) {
	r := requests.Get().(*Request)
	r.step, r.failedAt, r.parsed, r.skipped, r.skippedInBlock = 2, 1, 1, true, true
	r.namedCommit, r.commitDeallocs = true, 7
	r.preparesCommit.Store(true)
	r.chained.Store(true)
	r.rfqs, r.completions, r.described, r.draining, r.status, r.ran = 1, 1, 1, true, 'T', true
	r.cancelClock, r.next = 3, &Request{}
	r.phase, r.phaseAt, r.graceEnd, r.giveUpAt, r.probeFrom = drainCancel, time.Now(), time.Now(), time.Now(), 9
	r.ReqSpec = ReqSpec{extended: true, owner: &Holder{}}
	r.free()
	kept := map[string]bool{"turn": true, "state": true, "seq": true, "Watch": true}
	v := reflect.ValueOf(r).Elem()
	for i := range v.NumField() {
		if name := v.Type().Field(i).Name; !kept[name] && !v.Field(i).IsZero() {
			t.Errorf("a freed request keeps %s", name)
		}
	}
	w := reflect.ValueOf(&r.Watch).Elem()
	for i := range w.NumField() {
		if name := w.Type().Field(i).Name; name != "cancelFn" && name != "cancelled" && !w.Field(i).IsZero() {
			t.Errorf("a freed request's watch keeps %s", name)
		}
	}
}
