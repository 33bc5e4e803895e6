package pgline

// What an ErrorResponse means for the request whose reply carried it: the
// one classification every read path uses (Rows, describes, simple
// queries, COPY). The server's error is the statement's own, unless the
// reply shows that nothing of the request ran for a reason that is not
// the request's:
//
//	1. notSent        the server ended the session (FATAL) before it ran
//	                  anything of the request (site.fatal says when a
//	                  FATAL can tell that)
//	2. errRefused     an aborted transaction block nobody held refused
//	                  it (txBlock.refused)
//	3. errPooler      a transaction pooler gave it to a session without
//	                  its prepared statement (site.pooler, found by the
//	                  caller: poolerSign, Conn.failed)
//	4. ErrCanceledByOther
//	                  a 57014 that a CancelRequest meant for another
//	                  request may have caused (strayCancel)
//
// The conditions are disjoint (a FATAL, 25P02, 26000/42P05, 57014), so the
// order only fixes how the rules read. Whether the request is then sent
// again is the retry policy's decision (retry.go), not the reader's.

import (
	"errors"
	"fmt"
	"strings"
)

// fatalRule says which FATAL, at the place of an ErrorResponse in a
// reply, shows that the server ran nothing of the request.
type fatalRule uint8

const (
	// fatalMayHaveRun: no FATAL tells (a COPY's, or a message after the
	// reply began).
	fatalMayHaveRun fatalRule = iota
	// fatalBeforeRun: the first message of a reply whose next message
	// would have said that the server began (an extended-protocol run's
	// ParseComplete or BindComplete), or a describe's (which runs
	// nothing): every FATAL that ends the session apart from the
	// statement (PgError.nothingRanAfter).
	fatalBeforeRun
	// fatalWhileIdle: the first message of a simple Query's reply, which
	// has no message before the server runs the text: only a FATAL sent
	// to an idle session (PgError.sentWhileIdle).
	fatalWhileIdle
)

// errSite is what the reader knows, beside the error, where an
// ErrorResponse arrives.
type errSite struct {
	fatal fatalRule
	// pooler: the error is a transaction pooler's sign (poolerSign for
	// the statement's Parse or Bind, Conn.failed for a named BEGIN or
	// COMMIT).
	pooler bool
	// describe: the request is a describe, which runs nothing and which
	// every user of the statement waits for: its caller's ctx ending does
	// not make a 57014 its own, and an error that is not the statement's
	// own means that it was not sent (whoever waits describes again).
	describe bool
}

// classify returns the error that req's caller gets for e, an
// ErrorResponse in req's reply (see the file comment).
func (c *session) classify(req *request, e *PgError, s errSite) error {
	err := c.classifyRun(req, e, s)
	if s.describe && err != error(e) && !isNotSent(err) {
		return notSent(err)
	}
	return err
}

func (c *session) classifyRun(req *request, e *PgError, s errSite) error {
	switch {
	case s.fatal == fatalBeforeRun && e.nothingRanAfter(),
		s.fatal == fatalWhileIdle && e.sentWhileIdle():
		return notSent(e)
	case c.refused(req, e):
		return refusedErr(e)
	case s.pooler:
		return fmt.Errorf("%w: %w", errPooler, e)
	case req != nil && c.strayCancel(e, req.cancelClock, !s.describe && req.watch.ended()):
		return fmt.Errorf("%w: %w", ErrCanceledByOther, e)
	}
	return e
}

// strayCancel reports whether e, a statement's error, may come from a
// CancelRequest meant for another statement: a 57014 that is not a
// statement_timeout (told apart by PostgreSQL's English message; in other
// languages every 57014 counts), for a statement whose own ctx did not
// end (ownEnded), with a cancel under way since clock was read from
// Conn.cancelClock (when the statement was queued).
func (c *session) strayCancel(e *PgError, clock uint64, ownEnded bool) bool {
	return e.Code == "57014" && !ownEnded && c.cancelClock.Load() != clock &&
		!strings.Contains(e.Message, "statement timeout")
}

// errRefused is wrapped, with the server's 25P02, by the error of a
// request the server refused because it came in an aborted transaction
// block that nobody held (see txblock.go); nothing of it ran.
var errRefused = errors.New("pgline: statement refused in an aborted transaction block another request left, rolled back since; nothing of it ran")

func refusedErr(e *PgError) error { return fmt.Errorf("%w: %w", errRefused, e) }

// refused reports whether e, req's error, is the refusal of a statement
// queued before the ROLLBACK of a stranded transaction block (see
// txBlock.refused): nothing of req ran.
func (c *session) refused(req *request, e *PgError) bool {
	return e.Code == "25P02" && req != nil && c.block.refused(req.seq)
}
