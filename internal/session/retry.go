package session

// When a statement is sent again: the one retry policy. A call's attempt
// is sent again only when nothing of it took effect (or its effect was
// rolled back with it), for one of the reasons below, each with a budget
// per call (resends), and never once the call's ctx has ended (but for a
// skipped run, whose next attempt fails at once with the ctx's error):
//
//	reason            why nothing of it took effect               budget
//	resendInterfered  another request's doing: a CancelRequest    maxCancelRetries,
//	                  meant for another (ErrCanceledByOther), a   shared by the three
//	                  transaction pooler that lost the statement
//	                  (errPooler), a stranded block's refusal
//	                  (errRefused); see Session.classify
//	resendStale       its cached statement no longer fits the     1
//	                  server (dropOutdated), outside a transaction
//	resendPathChanged search_path changed between its describe    maxPathRetries
//	                  and its Bind: never sent (errPathChanged)
//	(a skipped run)   its Sync group failed before it: the        none: it is sent
//	                  server skipped it (request.skipped)         alone the next time,
//	                                                              in no group
//
// Whether an error is such a reason for a given call is decided by the
// predicates of this file: resendable (a statement, after a reply that
// ran all or nothing), redescribe and describeAgain (a describe),
// mayResend and mayResendRefused (a batch's statements, whose order
// counts), streams (a QueryRow whose value went elsewhere), whileRefused
// (the statements a holder of the connection sends for itself). The
// callers' loops (Session.Run, Conn.exec, simpleQueryUntraced, Row.Scan,
// sendBatchUntraced and queueBatch, BatchResults.next) only ask these and
// count with resends. A Pool sends a call to another connection by its
// own rule, SafeToRetry (Pool.mayRetry).

import (
	"context"
	"errors"
	"strings"

	"github.com/pgline/pgline/internal/sqllex"
)

// resendReason is why a call's failed attempt may be sent again (see the
// file comment).
type resendReason uint8

// The reasons an attempt is sent again, each with its own budget (see the
// file comment): hit by a cancel meant for another request (or refused, or
// a pooler's sign); its cached statement stale; described before a
// search_path change it was queued after.
const (
	ResendInterfered resendReason = iota
	resendStale
	resendPathChanged
)

// Resends is a call's retry budget: what it has used of each reason's
// (see the file comment). The zero value is a call's first attempt. A
// call that goes through several loops (Row.Scan around Session.Run, a
// batch's resends) carries one resends through them.
type Resends struct {
	Interfered, stale int8 // used of ResendInterfered's and ResendStale's budgets
	path              int16
}

// Again reports whether an attempt that failed for reason may be sent
// again: the call's ctx is alive and the reason's budget not used up. It
// counts the attempt when it may.
func (b *Resends) Again(ctx context.Context, reason resendReason) bool {
	if ctx.Err() != nil {
		return false
	}
	switch reason {
	case ResendInterfered:
		if b.Interfered < MaxCancelRetries {
			b.Interfered++
			return true
		}
	case resendStale:
		if b.stale < 1 {
			b.stale++
			return true
		}
	case resendPathChanged:
		if b.path < maxPathRetries {
			b.path++
			return true
		}
	}
	return false
}

// MaxCancelRetries bounds how often a statement hit by CancelRequests
// meant for other statements is sent again.
const MaxCancelRetries = 5

// maxPathRetries bounds how often a statement (or a batch) that was
// never sent, because a statement that may change search_path was queued
// between its describe and its Bind (errPathChanged), is described again
// and sent. It is its own budget, not maxCancelRetries: cancels and
// search_path changes are unrelated, and changes must not use up what a
// cancel is allowed, nor the reverse. A retry happens only when another
// statement that really may change search_path
// (sqllex.Info.ChangesSearchPath: SET search_path, SET ROLE,
// set_config('search_path', ...); reading it never counts) was queued
// within that one round trip, and each costs a describe's round trip;
// nothing of the statement has run. The count is generous: no reader
// loop uses any of it, and an application that sets search_path even
// every millisecond on the shared Conn leaves most attempts alone
// (TestSearchPathBatchResentAfterOutsideChange). It is bounded, rather
// than left to ctx alone, for one case: a goroutine that sets search_path
// back to back, without pause, can fail nearly every attempt of the
// others (measured on a busy machine: some batches needed over a
// thousand), and a caller whose ctx has no deadline then gets
// errPathChanged (SafeToRetry) instead of waiting as long as that
// goroutine runs. The ctx bounds the retries too (see Session.Run).
const maxPathRetries = 1000

// Resendable reports whether sql, which failed with err, may be sent
// again because a CancelRequest meant for another statement reached it
// (ErrCanceledByOther), or a transaction pooler gave it to a session
// that lacked its prepared statement (errPooler), or an aborted block
// nobody held refused it (errRefused: nothing ran, whatever its text),
// for no transaction or COPY (owner nil): outside a transaction (status, from the ReadyForQuery that ended
// its reply, is 'I'), a text without transaction control (nor DO or CALL,
// which may commit) ran all or nothing, so nothing of it persisted,
// unless it calls a function whose effect outlives the rollback (a
// session-level advisory lock: sqllex.Info.SessionEffects).
func Resendable(owner *Holder, sql string, err error, status byte) bool {
	if owner != nil {
		return false
	}
	if errors.Is(err, ErrRefused) {
		return true // nothing of it ran, whatever its text
	}
	if !errors.Is(err, APIErrors.CanceledByOther) && !errors.Is(err, ErrPooler) || status != 'I' {
		return false
	}
	info := sqllex.Scan(sql)
	return !info.TransactionControl && !info.SessionEffects
}

// redescribe reports whether a statement whose describe failed with err
// may be described again: the describe ran nothing and failed because of a
// transaction pooler (errPooler) or a CancelRequest meant for another
// statement (ErrCanceledByOther). Callers ask it outside a transaction
// only: inside one, the failed describe has aborted it.
func redescribe(err error) bool {
	return errors.Is(err, ErrPooler) || errors.Is(err, APIErrors.CanceledByOther) || errors.Is(err, ErrRefused)
}

// describeAgain reports whether owner (a transaction, or nil) describes sd's
// statement again because sd's describe failed: for a reason another
// describe need not meet (redescribe, outside a transaction), or in a
// describe another owner queued — inside a transaction (aborted, or with
// SET LOCAL) or outside owner's — whose failure is not owner's outcome.
func describeAgain(sd *StmtDesc, owner *Holder) bool {
	return sd.Err != nil && (sd.owner != owner || owner == nil && redescribe(sd.Err))
}

// StaleStatement reports errors that mean a cached statement no longer
// fits the server: its result type changed under it (ALTER TABLE), or it
// was deallocated (DISCARD ALL, DEALLOCATE).
func StaleStatement(code, message string) bool {
	switch code {
	case "0A000":
		return strings.Contains(message, "cached plan must not change result type")
	case "26000": // invalid_sql_statement_name: prepared statement does not exist
		return true
	case "08P01": // Bind with one result format per column of an outdated description
		return strings.Contains(message, "result formats")
	}
	return false
}

// dropOutdated drops sd from the cache when the server's error (its
// SQLSTATE code and message) shows that what was cached
// for its text no longer fits the server's (staleStatement: a schema
// change, a DEALLOCATE, a search_path under which the text has other
// result types; analysisFailed: parameter types that no longer fit), so
// that the next use prepares or describes it anew, in a transaction too.
// It reports whether the statement is stale, and so did not run.
func (c *Session) dropOutdated(sd *StmtDesc, code, message string) (stale bool) {
	stale = StaleStatement(code, message)
	if stale || analysisFailed(code) {
		c.Wmu.Lock()
		c.Stmts.remove(sd.origin())
		c.Wmu.Unlock()
	}
	return stale
}

// analysisFailed reports errors of the server's analysis of a statement's
// text (SQLSTATE class 42: an undefined operator or column, a type
// mismatch), which a statement that ran before meets when the schema
// changed under it; 42P05 is the pooler's sign (see poolerSign).
func analysisFailed(code string) bool {
	return strings.HasPrefix(code, "42") && code != "42P05"
}

// batchSent is what the retry policy asks of a batch that was sent
// (BatchResults.sent): who sent it, whether it is all-or-nothing and
// whether its caller gave it up, its statements' texts and their
// descriptions.
type batchSent struct {
	owner          *Holder
	all, abandoned bool
	n              int                // the statements sent
	sql            func(i int) string // statement i's text, i < n
	sds            []*StmtDesc
}

// mayResend reports whether statement i, which failed with err before any
// of its rows was returned, may be sent again: a CancelRequest meant for
// another statement hit it, or a transaction pooler gave it to a session
// without its statement (see Resendable), in an independent batch,
// and it is the batch's last statement. The statements after any other
// have run (or are running) by the time its error is read: sent again, it
// would run after them, and a batch [INSERT a row, UPDATE it] would
// update nothing and report success. Its error (ErrCanceledByOther) says
// that nothing of it ran. (A batch that a stranded transaction block
// refused is sent again whole when it can be: see mayResendRefused.)
func (b batchSent) mayResend(i int, err error, status byte) bool {
	return !b.all && !b.abandoned && i == len(b.sds)-1 && Resendable(b.owner, b.sql(i), err, status)
}

// mayResendRefused reports whether the batch may be sent again from
// statement i on, which failed with err: i is the first statement that
// was sent (those before it failed to prepare), the server refused it in
// a transaction block another request left aborted (errRefused: see
// rollBackStranded), outside a transaction and with the ctx alive. An
// aborted block refuses every statement but those that end it (COMMIT,
// ROLLBACK, PREPARE TRANSACTION, ROLLBACK TO SAVEPOINT:
// sqllex.Info.ExitsBlock). In an all-or-nothing batch the server then
// skips the rest up to the batch's one Sync, whatever it holds; in an
// independent one each statement is refused in turn, unless one ends
// the block, after which the rest would run: so none of the batch's
// statements ran when the batch is all-or-nothing or none from i on ends
// a block, and sent again behind the ROLLBACK that ends the block, they
// run once, in their order.
func (b batchSent) mayResendRefused(i int, err error) bool {
	if !errors.Is(err, ErrRefused) || b.owner != nil || b.abandoned {
		return false
	}
	for _, sd := range b.sds[:i] {
		if sd.Err == nil {
			return false // sent, and its result read
		}
	}
	if b.all {
		return true
	}
	for j := i; j < b.n; j++ {
		if sqllex.Scan(b.sql(j)).ExitsBlock {
			return false
		}
	}
	return true
}

// WhileRefused runs op again while it fails with errRefused (nothing of
// it ran) and ctx is alive, up to maxCancelRetries times: for the
// requests sent on behalf of a holder of the gate (a BEGIN, a COPY),
// whose order with the requests of others does not matter.
func WhileRefused[T any](ctx context.Context, op func() (T, error)) (T, error) {
	var budget Resends
	for {
		v, err := op()
		if !errors.Is(err, ErrRefused) || !budget.Again(ctx, ResendInterfered) {
			return v, err
		}
	}
}
