package pgline

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/wire"
)

// PgError is an error reported by the server (an ErrorResponse). Its fields
// are the ErrorResponse fields; those the server did not send are empty.
// The field names are pgx's (pgconn.PgError).
type PgError struct {
	Severity            string // localized severity (S)
	SeverityUnlocalized string // non-localized severity (V), PostgreSQL 9.6+
	Code                string // SQLSTATE (C)
	Message             string // primary message (M)
	Detail              string // D
	Hint                string // H
	Position            int32  // cursor position in the query, 1-based (P)
	InternalPosition    int32  // p
	InternalQuery       string // q
	Where               string // W
	SchemaName          string // s
	TableName           string // t
	ColumnName          string // c
	DataTypeName        string // d
	ConstraintName      string // n
	File                string // F
	Line                int32  // L
	Routine             string // R
}

// Error returns "SEVERITY: message (SQLSTATE code)".
func (e *PgError) Error() string {
	sev := e.Severity
	if sev == "" {
		sev = e.SeverityUnlocalized
	}
	return sev + ": " + e.Message + " (SQLSTATE " + e.Code + ")"
}

// fatal reports whether the server ends the session with e: severity FATAL
// or PANIC (the non-localized one; PgBouncer sends only the other).
func (e *PgError) fatal() bool { return session.FatalSeverity(e.Severity, e.SeverityUnlocalized) }

// SQLState returns the SQLSTATE code of the error.
func (e *PgError) SQLState() string { return e.Code }

// Notice is a NoticeResponse from the server: the same fields as an error,
// at a severity below ERROR.
type Notice PgError

// ConnectError is returned when a connection cannot be established. It names
// the host (or each host, when every host of a list failed) and wraps the
// cause; it never contains the password.
type ConnectError struct {
	// Attempts holds one entry per host tried, in order.
	Attempts []HostError
}

// HostError is the failure of one connection attempt.
type HostError struct {
	Host string // host or socket directory, and port: "db1:5432"
	Err  error
}

// Error names each host tried and why it failed.
func (e *ConnectError) Error() string {
	if len(e.Attempts) == 1 {
		a := e.Attempts[0]
		return "pgline: connect to " + a.Host + ": " + a.Err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pgline: could not connect to any of %d hosts", len(e.Attempts))
	for _, a := range e.Attempts {
		b.WriteString("; ")
		b.WriteString(a.Host)
		b.WriteString(": ")
		b.WriteString(a.Err.Error())
	}
	return b.String()
}

// Unwrap returns the causes of every failed attempt, so errors.Is and
// errors.As find, for example, a *PgError with SQLSTATE 28P01.
func (e *ConnectError) Unwrap() []error {
	errs := make([]error, len(e.Attempts))
	for i, a := range e.Attempts {
		errs[i] = a.Err
	}
	return errs
}

// ErrClosed is returned by calls on a connection that has been closed, by
// Close or because of an earlier fatal error.
var ErrClosed = errors.New("pgline: connection closed")

// ErrCanceledByOther is wrapped, with the server's 57014 error, by the
// error of a statement whose ctx did not end but that a CancelRequest
// meant for another statement on the same connection may have reached.
// PostgreSQL cancels whatever the backend runs when the signal arrives
// (and signals it twice). pgline sends such a statement again when none
// of its reply reached its caller and it ran all or nothing (outside a
// transaction, without transaction control, DO or CALL), up to five
// times; the error is returned when it could not be: rows were already
// delivered, it ran in a transaction, it may have committed part of its
// work, or it is a statement of a Batch other than the last (the
// statements after it have run: sent again, it would run after them).
// A 57014 is never reported to a caller whose ctx is alive
// without this error while one of pgline's cancels was under way, except
// for a statement_timeout.
var ErrCanceledByOther = errors.New("pgline: statement canceled by a CancelRequest meant for another statement")

// errIdleEnded is the failure of a connection found ended while it was
// idle: closed by the server, or failed (its keepalives found the peer
// gone, which the error that follows it says).
var errIdleEnded = errors.New("pgline: the connection ended while it was idle")

// ProtocolError reports bytes from the server that break the protocol. The
// connection is closed when one is returned. It is never SafeToRetry, nor
// is the connection's failure that wraps it.
type ProtocolError struct {
	Msg string
}

// Error returns "pgline: protocol error: " and the description.
func (e *ProtocolError) Error() string { return "pgline: protocol error: " + e.Msg }

// isProtocolError reports whether err is, or wraps, a ProtocolError (the
// connection's failure, ErrClosed wrapping one, too). Such an error is
// never SafeToRetry (see notSentError): a server that broke the protocol
// for a statement would break it again for the same statement.
func isProtocolError(err error) bool {
	var pe *ProtocolError
	return errors.As(err, &pe)
}

// SafeToRetry reports whether err came from a call that sent nothing to
// the server, so that running it again cannot run the statement twice,
// and that may succeed if run again (on another connection, for a
// connection that broke). A call refused because it has more than 65535
// parameters, and a ProtocolError (or the connection's failure that
// follows one), are not SafeToRetry: either would fail again.
func SafeToRetry(err error) bool { return session.SafeToRetry(err) }

// The session makes the API's errors (see session.APIErrors).
func init() {
	session.APIErrors.Closed, session.APIErrors.CanceledByOther = ErrClosed, ErrCanceledByOther
	session.APIErrors.TxClosed, session.APIErrors.IdleEnded = ErrTxClosed, errIdleEnded
	session.APIErrors.Protocol = func(msg string) error { return &ProtocolError{Msg: msg} }
	session.APIErrors.IsProtocol = isProtocolError
	session.APIErrors.Server = func(f wire.ErrorFields) error { return pgErrorFromFields(&f) }
	session.APIErrors.ServerCode = func(err error) (code, message string, ok bool) {
		var pgErr *PgError
		if !errors.As(err, &pgErr) {
			return "", "", false
		}
		return pgErr.Code, pgErr.Message, true
	}
}
