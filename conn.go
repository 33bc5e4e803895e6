package pgline

import (
	"context"
	"strconv"
	"strings"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/wire"
	"github.com/pgline/pgline/pgtype"
)

// Conn is one connection to a PostgreSQL server. It is safe for concurrent
// use by multiple goroutines: statements from different goroutines are
// pipelined, written back to back and answered in order, each in its own
// implicit transaction (statements queued together may share one Sync;
// an error in one never affects another: see "Pipelining and its limits"
// in the package documentation). Session state (SET, temporary
// tables, advisory locks, LISTEN) is shared by every goroutine using the
// Conn: use a Tx, or a Conn of your own, when that matters. So is a
// transaction block opened with a raw BEGIN (Exec("BEGIN")): other
// goroutines' statements queued behind it run inside it, and its COMMIT
// or ROLLBACK decides their fate too, as on a libpq connection. Only a
// goroutine that has the Conn to itself may use raw transaction control;
// Begin isolates a transaction from the other goroutines (a Pool refuses
// a raw BEGIN with ErrRoutedBlock).
//
// A goroutine must not start a new statement on a Conn while it holds
// Rows of that Conn open: the new statement waits for the open Rows, which
// wait for that goroutine.
type Conn struct {
	cfg  *Config
	host HostConfig // the host this connection reached

	label string // the host as host:port or socket path (hostLabel)

	// session is the engine: the socket, the request queue, the reader's
	// turn, the writer, cancellation, the statement cache and the
	// transaction-block state (session.go).
	s session.Session
}

// Close closes the connection: it sends Terminate when no request is in
// flight and closes the socket; requests in flight fail. It is safe to call
// more than once and from any goroutine.
func (c *Conn) Close() error { return c.s.Close() }

// IsClosed reports whether the connection is closed, by Close or by a fatal
// error.
func (c *Conn) IsClosed() bool { return c.s.IsClosed() }

// ParameterStatus returns the value of a server parameter reported by the
// server (server_version, TimeZone, in_hot_standby, ...), or "".
func (c *Conn) ParameterStatus(name string) string {
	return c.s.ParameterStatus(name)
}

// TypeMap returns the codec registry the connection encodes and decodes
// with: its own, a copy of Config.TypeMap when the connection was made.
// Types registered on it (directly or with LoadType) are this
// connection's only; register them before the statements that use them,
// as statements described earlier keep the result formats and scan plans
// they were given. For every connection of a Pool, register them in
// Config.AfterConnect.
func (c *Conn) TypeMap() *pgtype.Map { return c.s.Types }

// newTypeMap returns a connection's own type map: a copy of m, or the
// built-in types when m is nil.
func newTypeMap(m *pgtype.Map) *pgtype.Map {
	if m == nil {
		return pgtype.NewMap()
	}
	return m.Clone()
}

// StatementCacheMode returns how the connection runs statements now:
// "prepare", "describe" (the mode statement_cache_mode=auto switches to
// behind a transaction pooler) or "none". With statement_cache_mode=auto
// it is "describe" until the connect's pooler check has answered, a few
// milliseconds after Connect returns (see docs/architecture.md).
func (c *Conn) StatementCacheMode() string { return c.s.StatementCacheMode() }

// PID returns the server process ID of the session.
func (c *Conn) PID() uint32 { return c.s.PID }

// Host returns the host this connection reached.
func (c *Conn) Host() HostConfig { return c.host }

// TxStatus returns the transaction status from the last ReadyForQuery:
// 'I' idle, 'T' in a transaction, 'E' in a failed transaction. While a
// ROLLBACK pgline queued to end a block nobody holds is in flight (a
// cancel's signal left the session in an aborted block, see
// ErrCanceledByOther, or a transaction ended before its own ROLLBACK
// could be sent), it is 'I': that block ends before any statement
// queued since runs.
func (c *Conn) TxStatus() byte { return c.s.TxStatus() }

// CommandTag is the server's completion tag for a statement, such as
// "INSERT 0 3" or "SELECT 10".
type CommandTag struct {
	s string
}

// String returns the tag as the server sent it.
func (t CommandTag) String() string { return t.s }

// RowsAffected returns the row count at the end of the tag (0 when there is
// none, as for CREATE TABLE).
func (t CommandTag) RowsAffected() int64 {
	i := strings.LastIndexByte(t.s, ' ')
	if i < 0 {
		return 0
	}
	n, err := strconv.ParseInt(t.s[i+1:], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// Insert reports whether the tag is that of an INSERT ("INSERT 0 5").
func (t CommandTag) Insert() bool { return t.is("INSERT") }

// Update reports whether the tag is that of an UPDATE ("UPDATE 2").
func (t CommandTag) Update() bool { return t.is("UPDATE") }

// Delete reports whether the tag is that of a DELETE ("DELETE 1").
func (t CommandTag) Delete() bool { return t.is("DELETE") }

// Select reports whether the tag is that of a SELECT ("SELECT 3"), which
// SELECT INTO and CREATE TABLE AS also send.
func (t CommandTag) Select() bool { return t.is("SELECT") }

// is reports whether the tag's first word is word.
func (t CommandTag) is(word string) bool {
	return strings.HasPrefix(t.s, word) && (len(t.s) == len(word) || t.s[len(word)] == ' ')
}

// Ping checks that the server answers, with an empty query.
func (c *Conn) Ping(ctx context.Context) error {
	_, err := c.simpleQuery(ctx, nil, "", nil)
	return err
}

// queryScalar runs sql with the simple protocol and returns the text of the
// first column of its first row ("" when there is none or it is NULL).
// It is pgline's own statement (the connect's checks: the pooler's, the
// target_session_attrs'), so it is not traced as the user's: the
// connect's event covers it.
func (c *Conn) queryScalar(ctx context.Context, sql string) (string, error) {
	var v string
	_, err := c.s.SimpleQueryUntraced(ctx, nil, sql, session.ScalarRow(&v), nil)
	return v, err
}

func pgErrorFromFields(f *wire.ErrorFields) *PgError {
	return &PgError{
		Severity:            f.Severity,
		SeverityUnlocalized: f.SeverityV,
		Code:                f.Code,
		Message:             f.Message,
		Detail:              f.Detail,
		Hint:                f.Hint,
		Position:            atoi32(f.Position),
		InternalPosition:    atoi32(f.InternalPosition),
		InternalQuery:       f.InternalQuery,
		Where:               f.Where,
		SchemaName:          f.Schema,
		TableName:           f.Table,
		ColumnName:          f.Column,
		DataTypeName:        f.DataType,
		ConstraintName:      f.Constraint,
		File:                f.File,
		Line:                atoi32(f.Line),
		Routine:             f.Routine,
	}
}

func atoi32(s string) int32 {
	n, _ := strconv.ParseInt(s, 10, 32)
	return int32(n)
}

// simpleQuery runs sql with the simple query protocol and reads the reply up
// to ReadyForQuery, passing each DataRow to onRow (rows are discarded when
// onRow is nil). It returns the tag of the last statement, or the first
// error (of the server, or of onRow).
func (c *Conn) simpleQuery(ctx context.Context, owner *session.Holder, sql string, onRow func(*wire.DataRow) error) (CommandTag, error) {
	return c.simpleQueryNoting(ctx, owner, sql, onRow, nil)
}

// simpleQueryNoting is simpleQuery for a caller that knows what its text
// does to the session better than sqllex can tell (the Pool's reset: see
// resetPooled): note, when set, runs under wmu as the text is queued, in
// place of noteQueuedLocked, with the traits sqllex found.
func (c *Conn) simpleQueryNoting(ctx context.Context, owner *session.Holder, sql string, onRow func(*wire.DataRow) error, note func(session.SQLTraits)) (CommandTag, error) {
	if c.cfg.Tracer == nil {
		tag, err := c.s.SimpleQueryUntraced(ctx, owner, sql, onRow, note)
		return CommandTag{s: tag}, err
	}
	tctx, ev := c.traceStart(ctx, TraceEvent{Kind: TraceStatement, SQL: sql})
	tag, err := c.s.SimpleQueryUntraced(ctx, owner, sql, onRow, note)
	traceEnd(tctx, c.cfg, ev, CommandTag{s: tag}, err)
	return CommandTag{s: tag}, err
}
