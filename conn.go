package pgline

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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

	netConn net.Conn    // the socket, or the TLS connection over it
	peeker  *sockPeeker // looks into the socket (see settleIdle)
	tls     bool        // netConn is a *tls.Conn

	pid, secretKey uint32 // BackendKeyData, for CancelRequest

	closed atomic.Bool
	fatal  atomic.Pointer[error] // the error that closed the connection, if any
	// cancelClock ticks twice for each CancelRequest: before it is sent
	// and once it is delivered (see cancelSession).
	cancelClock atomic.Uint64
	// block is the session's transaction-block state (txblock.go).
	block txBlock

	wmu sync.Mutex // protects the fields below, and writer's (see writer)
	// writer is the write side: the write buffer, the writer's role and
	// every write to the socket.
	writer   writer
	queued   int        // requests in the FIFO, from enqueueLocked to handoff
	tail     *request   // the last request queued; nil when none is in flight
	stmts    *stmtCache // statements prepared (or being prepared) on this connection
	gate     gate       // who may queue requests (see gateLocked)
	listener *request   // a WaitForNotification reading while idle, woken when a request is queued
	// syncHolder is the last run queued when its Sync ends the unwritten
	// write buffer, at syncHolderEnd: the next run may take that Sync.
	syncHolder    *request
	syncHolderEnd int
	shareSyncs    bool // pipeline_sync=shared (see pipeline.go)
	commitState   int  // of the named BEGIN and COMMIT (see commitMsgsLocked)
	// seqNext numbers the requests queued (see writer.swappedSeq and
	// writtenSeq for those written).
	seqNext uint64
	// commitPrepare and commitNamed are the named BEGIN and COMMIT,
	// parsed or only bound, made at their first use.
	commitPrepare, commitNamed []byte
	// shared counts the runs that gave their Sync to the next, resent
	// the runs skipped by the failure of their Sync group (for tests).
	shared, resent uint64

	// rd is used by the request at the head of the queue only, and so is
	// scratch (small columns of rows larger than the read buffer), and
	// unarmed: the watch of the request reading, armed by the first read
	// that reaches the socket (see Conn.watch).
	rd      *wire.Reader
	scratch []byte
	unarmed *ctxWatch
	types   *pgtype.Map
	label   string // the host as host:port or socket path (hostLabel)

	paramsMu sync.RWMutex // protects params
	params   map[string]string

	notifyMu      sync.Mutex // protects notifications
	notifications []*Notification

	serverFatal atomic.Pointer[PgError] // the first FATAL (or PANIC) error received (see pgError)
	// proxied is set when the host is found behind a transaction pooler:
	// shared by the connections of a Pool to the host (see txpooler.go).
	proxied *atomic.Bool
	// readOnly, set by a Pool over several hosts before the connection is
	// used, is told of every 25006 error (read-only transaction) the
	// connection receives, whatever call it answers (see pool.Host.NoteReadOnly).
	readOnly func()
	// roleReport, set by a Pool over several hosts before the connection
	// is used, is told when the server reports a new in_hot_standby (a
	// promotion, see pool.Host.NoteRole).
	roleReport func()

	dead     chan struct{} // closed when the connection closes, for waiters at the gate
	deadOnce sync.Once
}

// markClosed marks the connection closed and wakes the goroutines waiting
// for it to be free (gateLocked).
func (c *Conn) markClosed() (already bool) {
	already = c.closed.Swap(true)
	c.deadOnce.Do(func() {
		if c.dead != nil {
			close(c.dead)
		}
	})
	return already
}

// Close closes the connection: it sends Terminate when no request is in
// flight and closes the socket; requests in flight fail. It is safe to call
// more than once and from any goroutine.
func (c *Conn) Close() error {
	if c.markClosed() {
		return nil
	}
	// Requests in flight fail with ErrClosed, not with what reading the
	// closed socket returns (see fail).
	closed := ErrClosed
	c.fatal.CompareAndSwap(nil, &closed)
	c.writer.terminate() // when nothing is in flight
	return c.netConn.Close()
}

// IsClosed reports whether the connection is closed, by Close or by a fatal
// error.
func (c *Conn) IsClosed() bool { return c.closed.Load() }

// ParameterStatus returns the value of a server parameter reported by the
// server (server_version, TimeZone, in_hot_standby, ...), or "".
func (c *Conn) ParameterStatus(name string) string {
	c.paramsMu.RLock()
	defer c.paramsMu.RUnlock()
	return c.params[name]
}

// TypeMap returns the codec registry the connection encodes and decodes
// with: its own, a copy of Config.TypeMap when the connection was made.
// Types registered on it (directly or with LoadType) are this
// connection's only; register them before the statements that use them,
// as statements described earlier keep the result formats and scan plans
// they were given. For every connection of a Pool, register them in
// Config.AfterConnect.
func (c *Conn) TypeMap() *pgtype.Map { return c.types }

// newTypeMap returns a connection's own type map: a copy of m, or the
// built-in types when m is nil.
func newTypeMap(m *pgtype.Map) *pgtype.Map {
	if m == nil {
		return pgtype.NewMap()
	}
	return m.Clone()
}

// PID returns the server process ID of the session.
func (c *Conn) PID() uint32 { return c.pid }

// Host returns the host this connection reached.
func (c *Conn) Host() HostConfig { return c.host }

// TxStatus returns the transaction status from the last ReadyForQuery:
// 'I' idle, 'T' in a transaction, 'E' in a failed transaction. While a
// ROLLBACK pgline queued to end a block nobody holds is in flight (a
// cancel's signal left the session in an aborted block, see
// ErrCanceledByOther, or a transaction ended before its own ROLLBACK
// could be sent), it is 'I': that block ends before any statement
// queued since runs.
func (c *Conn) TxStatus() byte { return c.block.txStatus() }

// fail closes the connection after a fatal error (a protocol error, an I/O
// error) and records it. A failure after the first returns the first as
// its cause (ErrClosed wrapping it): a ReaderArg that fails the write
// shows as the reader's error to the request reading the reply.
func (c *Conn) fail(err error) error {
	var pe *ProtocolError
	if fe := c.serverFatal.Load(); fe != nil && !errors.As(err, &pe) {
		// The end of the socket after the server's FATAL: the FATAL
		// says why.
		err = fe
	}
	if !c.fatal.CompareAndSwap(nil, &err) {
		// An earlier failure closed the connection; this one (often
		// "use of closed network connection") is its consequence.
		err = c.failedErr()
	}
	c.markClosed()
	c.netConn.Close()
	return err
}

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
func (c *Conn) queryScalar(ctx context.Context, sql string) (string, error) {
	var v string
	seen := false
	_, err := c.simpleQuery(ctx, nil, sql, func(row *wire.DataRow) error {
		if !seen && row.NumColumns() > 0 {
			b, _ := row.Column(0)
			v, seen = string(b), true
		}
		return nil
	})
	return v, err
}

// handleAsync handles the messages that may arrive at any time:
// ParameterStatus, NoticeResponse and NotificationResponse (kept for
// WaitForNotification). Other types are ignored by it.
func (c *Conn) handleAsync(typ byte, body []byte) error {
	switch typ {
	case wire.MsgParameterStatus:
		ps, err := wire.ParseParameterStatus(body)
		if err != nil {
			return protocolErr(err)
		}
		if ps.Name == "client_encoding" && !strings.EqualFold(ps.Value, "UTF8") {
			// Go strings are UTF-8, and so is every text value pgline
			// sends or reads: under another encoding the server would
			// take é for two characters, and hand out LATIN1 bytes as
			// strings. The connection fails.
			return fmt.Errorf("pgline: client_encoding %q is not supported: pgline sends and reads text in UTF8", ps.Value)
		}
		c.paramsMu.Lock()
		changed := c.params[ps.Name] != ps.Value
		c.params[ps.Name] = ps.Value
		c.paramsMu.Unlock()
		if changed && ps.Name == "in_hot_standby" && c.roleReport != nil {
			c.roleReport()
		}
	case wire.MsgNotificationResponse:
		if err := c.pushNotification(body); err != nil {
			return err
		}
	case wire.MsgNoticeResponse:
		if c.cfg.OnNotice == nil {
			return nil
		}
		f, err := wire.ParseErrorFields(body)
		if err != nil {
			return protocolErr(err)
		}
		c.cfg.OnNotice((*Notice)(pgErrorFromFields(&f)))
	}
	return nil
}

// closedErr is the error for a call on a closed connection.
func (c *Conn) closedErr() error {
	if err := c.fatal.Load(); err != nil && *err != ErrClosed {
		return fmt.Errorf("%w: %w", ErrClosed, *err)
	}
	return ErrClosed
}

func protocolErr(err error) error {
	var pe *wire.ProtocolError
	if errors.As(err, &pe) {
		return &ProtocolError{Msg: pe.Msg}
	}
	return &ProtocolError{Msg: err.Error()}
}

// pgError decodes an ErrorResponse of the session. A FATAL one means the
// server ends the session: nothing queued after it runs (see fail).
func (c *Conn) pgError(body []byte) (*PgError, error) {
	e, err := parsePgError(body)
	if err == nil && e.fatal() {
		c.serverFatal.CompareAndSwap(nil, e)
	}
	if err == nil && e.Code == "25006" && c.readOnly != nil {
		c.readOnly()
	}
	return e, err
}

// An ErrorResponse without severity, SQLSTATE or message is a protocol
// error: every server sends all three.
func parsePgError(body []byte) (*PgError, error) {
	f, err := wire.ParseErrorFields(body)
	if err != nil {
		return nil, protocolErr(err)
	}
	if f.Severity == "" && f.SeverityV == "" || f.Code == "" || f.Message == "" {
		return nil, &ProtocolError{Msg: "ErrorResponse without severity, SQLSTATE or message"}
	}
	return pgErrorFromFields(&f), nil
}

func pgErrorFromFields(f *wire.ErrorFields) *PgError {
	return &PgError{
		Severity:         f.Severity,
		SeverityV:        f.SeverityV,
		Code:             f.Code,
		Message:          f.Message,
		Detail:           f.Detail,
		Hint:             f.Hint,
		Position:         atoi32(f.Position),
		InternalPosition: atoi32(f.InternalPosition),
		InternalQuery:    f.InternalQuery,
		Where:            f.Where,
		Schema:           f.Schema,
		Table:            f.Table,
		Column:           f.Column,
		DataType:         f.DataType,
		Constraint:       f.Constraint,
		File:             f.File,
		Line:             atoi32(f.Line),
		Routine:          f.Routine,
	}
}

func atoi32(s string) int32 {
	n, _ := strconv.ParseInt(s, 10, 32)
	return int32(n)
}
