package session

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
//	                  caller: poolerSign, Session.Failed)
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

	"github.com/pgline/pgline/internal/wire"
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
	// the statement's Parse or Bind, Session.Failed for a named BEGIN or
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
func (c *Session) classify(req *Request, e *srvErr, s errSite) error {
	err := c.classifyRun(req, e, s)
	if s.describe && err != e.Err && !IsNotSent(err) {
		return NotSent(err)
	}
	return err
}

func (c *Session) classifyRun(req *Request, e *srvErr, s errSite) error {
	switch {
	case s.fatal == fatalBeforeRun && e.nothingRanAfter(),
		s.fatal == fatalWhileIdle && e.sentWhileIdle():
		return NotSent(e.Err)
	case c.refused(req, e):
		return refusedErr(e)
	case s.pooler:
		return fmt.Errorf("%w: %w", ErrPooler, e.Err)
	case req != nil && c.strayCancel(e, req.cancelClock, !s.describe && req.Watch.ended()):
		return fmt.Errorf("%w: %w", APIErrors.CanceledByOther, e.Err)
	}
	return e.Err
}

// strayCancel reports whether e, a statement's error, may come from a
// CancelRequest meant for another statement: a 57014 that is not a
// statement_timeout (told apart by PostgreSQL's English message; in other
// languages every 57014 counts), for a statement whose own ctx did not
// end (ownEnded), with a cancel under way since clock was read from
// Session.CancelClock (when the statement was queued).
func (c *Session) strayCancel(e *srvErr, clock uint64, ownEnded bool) bool {
	return e.f.Code == "57014" && !ownEnded && c.CancelClock.Load() != clock &&
		!strings.Contains(e.f.Message, "statement timeout")
}

// ErrRefused is wrapped, with the server's 25P02, by the error of a
// request the server refused because it came in an aborted transaction
// block that nobody held (see txblock.go); nothing of it ran.
var ErrRefused = errors.New("pgline: statement refused in an aborted transaction block another request left, rolled back since; nothing of it ran")

func refusedErr(e *srvErr) error { return fmt.Errorf("%w: %w", ErrRefused, e.Err) }

// refused reports whether e, req's error, is the refusal of a statement
// queued before the ROLLBACK of a stranded transaction block (see
// txBlock.refused): nothing of req ran.
func (c *Session) refused(req *Request, e *srvErr) bool {
	return e.f.Code == "25P02" && req != nil && c.Block.refused(req.seq)
}

// srvErr is an ErrorResponse as the session reads it (pgError): its
// fields, which the session's rules look at, and err, the error its
// caller gets (a *PgError, made by apiErrors.server). It is not an
// error itself: what a caller gets is always err, or an error wrapping
// it.
type srvErr struct {
	f   wire.ErrorFields // what the server sent
	Err error            // what the caller gets (see apiErrors.server)
}

// ParseSrvErr decodes an ErrorResponse. One without severity, SQLSTATE
// or message is a protocol error: every server sends all three.
//
// The srvErr is a value, and the fields go to apiErrors.server by value:
// neither is moved to the heap (the session's rules only read it), so an
// error costs what its *PgError costs.
func ParseSrvErr(body []byte) (srvErr, error) {
	f, err := wire.ParseErrorFields(body)
	if err != nil {
		return srvErr{}, ProtocolErr(err)
	}
	if f.Severity == "" && f.SeverityV == "" || f.Code == "" || f.Message == "" {
		return srvErr{}, APIErrors.Protocol("ErrorResponse without severity, SQLSTATE or message")
	}
	return srvErr{f: f, Err: APIErrors.Server(f)}, nil
}

// fatal reports whether the server ends the session with e: severity
// FATAL or PANIC (see fatalSeverity).
func (e *srvErr) fatal() bool { return FatalSeverity(e.f.Severity, e.f.SeverityV) }

// FatalSeverity reports whether an error of severity sev (localized) and
// sevV (not localized, which PgBouncer does not send) ends the session:
// FATAL or PANIC.
func FatalSeverity(sev, sevV string) bool {
	if sevV != "" {
		sev = sevV
	}
	return sev == "FATAL" || sev == "PANIC"
}

// nothingRanAfter reports whether e ended the session so that nothing the
// connection sent after the statement it answers ran: a FATAL (or PANIC)
// from PostgreSQL itself, which
// names the source routine that raised it (the backend exits after
// sending it), or one of PgBouncer's own for a client that had nothing on
// a server: query_wait_timeout (its statement waited in PgBouncer's queue
// for a server) and client_idle_timeout. Any other pooler's FATAL
// (PgBouncer's query_timeout, its admin console's KILL) may come while the
// backend behind goes on running what it was sent and commits it (it
// notices the closed socket only when it writes): after it, what was sent
// may have run.
//
// It does not tell whether the statement it answers ran: the backend may
// have been terminated while it ran, after it committed part of its work
// (CREATE INDEX CONCURRENTLY, a procedure) or did what no rollback undoes
// (dblink, a sequence). That the FATAL comes first in the reply does tell,
// when the reply has a message the server sends before it runs anything
// (the extended protocol's ParseComplete or BindComplete, see
// Rows.readRow); a simple Query's has none (see sentWhileIdle).
func (e *srvErr) nothingRanAfter() bool {
	if !e.fatal() {
		return false
	}
	if e.f.Routine != "" {
		return true
	}
	switch e.f.Message {
	case "query_wait_timeout", "client_idle_timeout":
		return true
	}
	return false
}

// sentWhileIdle reports whether e is a FATAL sent only to a session that
// had nothing in progress: PostgreSQL's idle_session_timeout (57P05), or
// PgBouncer's query_wait_timeout (the statement waited in PgBouncer's
// queue, never reaching a server) and client_idle_timeout. As the first
// message of the reply to a simple Query, it tells that the text was not
// read: nothing of it ran. Any other FATAL (pg_terminate_backend, a
// shutdown) may end the session while the text runs.
func (e *srvErr) sentWhileIdle() bool {
	if !e.nothingRanAfter() {
		return false
	}
	return e.f.Routine != "" && e.f.Code == "57P05" || e.f.Routine == ""
}

// ProtocolErr makes a decoding error of the wire layer the caller's
// ProtocolError.
func ProtocolErr(err error) error {
	var pe *wire.ProtocolError
	if errors.As(err, &pe) {
		return APIErrors.Protocol(pe.Msg)
	}
	return APIErrors.Protocol(err.Error())
}
