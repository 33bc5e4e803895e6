package session

import (
	"context"
	"fmt"
	"strings"
	"time"

	"net"
	"sync"
	"sync/atomic"

	"github.com/pgline/pgline/pgtype"

	"github.com/pgline/pgline/internal/wire"
)

// Session is the engine of one connection: the socket, the request queue
// and the reader's turn (pipeline.go, reply.go), the writer (writer.go),
// cancellation (cancel.go), the gate (gate.go), the statement cache
// (stmtcache.go, describe.go), the simple protocol (simple.go), the
// transaction-block state (txblock.go), the classification of errors
// (errclass.go) and the retry policy (retry.go). Conn, Rows, Batch, Tx
// and the COPY calls are the API over it.
type Session struct {
	// opts is what the session takes from the Config and how it reports
	// to the API: set by connect before the session is used, never
	// changed after.
	opts    SessionOpts
	Types   *pgtype.Map // the connection's codecs (Conn.TypeMap)
	NetConn net.Conn    // the socket, or the TLS connection over it
	peeker  *sockPeeker // looks into the socket (see settleIdle)
	TLS     bool        // netConn is a *tls.Conn

	// PID and SecretKey are BackendKeyData's, for CancelRequest: the
	// key is 4 bytes under protocol 3.0, 4 to 256 under 3.2.
	PID       uint32
	SecretKey []byte
	// pidCheck is the startup's question of the server session's process
	// ID (startup_pid.go); set by Startup, read after it.
	pidCheck pidCheck

	closed atomic.Bool
	fatal  atomic.Pointer[error] // the error that closed the connection, if any
	// CancelClock ticks twice for each CancelRequest: before it is sent
	// and once it is delivered (see cancelSession).
	CancelClock atomic.Uint64
	// Block is the session's transaction-block state (txblock.go).
	Block txBlock

	Wmu sync.Mutex // protects the fields below, and writer's (see writer)
	// Writer is the write side: the write buffer, the writer's role and
	// every write to the socket.
	Writer   writer
	Queued   int        // requests in the FIFO, from enqueueLocked to handoff
	Tail     *Request   // the last request queued; nil when none is in flight
	Stmts    *stmtCache // statements prepared (or being prepared) on this connection
	gate     gate       // who may queue requests (see gateLocked)
	listener *Request   // a WaitForNotification reading while idle, woken when a request is queued
	// syncHolder is the last run queued when its Sync ends the unwritten
	// write buffer, at syncHolderEnd: the next run may take that Sync.
	syncHolder    *Request
	syncHolderEnd int
	shareSyncs    bool // pipeline_sync=shared (see pipeline.go)
	CommitState   int  // of the named BEGIN and COMMIT (see commitMsgsLocked)
	// SeqNext numbers the requests queued (see writer.swappedSeq and
	// writtenSeq for those written).
	SeqNext uint64
	// commitPrepare and commitNamed are the named BEGIN and COMMIT,
	// parsed or only bound, made at their first use.
	commitPrepare, commitNamed []byte
	// Shared counts the runs that gave their Sync to the next, resent
	// the runs skipped by the failure of their Sync group (for tests).
	Shared, Resent uint64

	// rd is used by the request at the head of the queue only, and so is
	// scratch (small columns of rows larger than the read buffer), and
	// unarmed: the watch of the request reading, armed by the first read
	// that reaches the socket (see Session.Watch).
	rd      *wire.Reader
	scratch []byte
	unarmed *ctxWatch

	paramsMu sync.RWMutex // protects params
	params   map[string]string

	NotifyMu      sync.Mutex // protects notifications
	Notifications []wire.NotificationResponse

	serverFatal atomic.Pointer[srvErr] // the first FATAL (or PANIC) error received (see pgError)
	// Proxied is set when the host is found behind a transaction pooler:
	// shared by the connections of a Pool to the host (see txpooler.go).
	Proxied *atomic.Bool
	// readOnly, set by a Pool over several hosts before the connection is
	// used (SetHostHooks), is told of every 25006 error (read-only
	// transaction) the connection receives, whatever call it answers (see
	// pool.Host.NoteReadOnly).
	readOnly func()
	// roleReport, set by a Pool over several hosts before the connection
	// is used (SetHostHooks), is told when the server reports a new
	// in_hot_standby (a promotion, see pool.Host.NoteRole).
	roleReport func()

	dead     chan struct{} // closed when the connection closes, for waiters at the gate
	deadOnce sync.Once
	stall    *tcpStall // the socket as the dead-peer watch reads it (deadpeer.go)
}

// SetHostHooks sets what a Pool over several hosts is told of the
// session: readOnly of every 25006 error, roleReport of a new
// in_hot_standby. Called before the session is used, never after.
func (c *Session) SetHostHooks(readOnly, roleReport func()) {
	c.readOnly, c.roleReport = readOnly, roleReport
}

// IsClosed reports whether the session is closed.
func (c *Session) IsClosed() bool { return c.closed.Load() }

// TxStatus is the transaction status of the last ReadyForQuery read
// (see txBlock.txStatus).
func (c *Session) TxStatus() byte { return c.Block.txStatus() }

// ParameterStatus returns the server's last value of the run-time
// parameter name ("" when it sent none).
func (c *Session) ParameterStatus(name string) string {
	c.paramsMu.RLock()
	defer c.paramsMu.RUnlock()
	return c.params[name]
}

// markClosed marks the connection closed and wakes the goroutines waiting
// for it to be free (gateLocked).
func (c *Session) markClosed() (already bool) {
	already = c.closed.Swap(true)
	c.deadOnce.Do(func() {
		if c.dead != nil {
			close(c.dead)
		}
		c.unwatchPeer()
	})
	return already
}

// fail closes the connection after a fatal error (a protocol error, an I/O
// error) and records it. A failure after the first returns the first as
// its cause (ErrClosed wrapping it): a ReaderArg that fails the write
// shows as the reader's error to the request reading the reply.
func (c *Session) fail(err error) error {
	if fe := c.serverFatal.Load(); fe != nil && !APIErrors.IsProtocol(err) {
		// The end of the socket after the server's FATAL: the FATAL
		// says why.
		err = fe.Err
	}
	if !c.fatal.CompareAndSwap(nil, &err) {
		// An earlier failure closed the connection; this one (often
		// "use of closed network connection") is its consequence.
		err = c.failedErr()
	}
	c.markClosed()
	c.NetConn.Close()
	return err
}

// closedErr is the error for a call on a closed connection.
func (c *Session) closedErr() error {
	if err := c.fatal.Load(); err != nil && *err != APIErrors.Closed {
		return fmt.Errorf("%w: %w", APIErrors.Closed, *err)
	}
	return APIErrors.Closed
}

// pgError decodes an ErrorResponse of the session. A FATAL one means the
// server ends the session: nothing queued after it runs (see fail).
func (c *Session) pgError(body []byte) (srvErr, error) {
	e, err := ParseSrvErr(body)
	if err == nil && e.fatal() {
		fe := e // kept: only a FATAL one is moved to the heap
		c.serverFatal.CompareAndSwap(nil, &fe)
	}
	if err == nil && e.f.Code == "25006" && c.readOnly != nil {
		c.readOnly()
	}
	return e, err
}

// HandleAsync handles the messages that may arrive at any time:
// ParameterStatus, NoticeResponse and NotificationResponse (kept for
// WaitForNotification). Other types are ignored by it.
func (c *Session) HandleAsync(typ byte, body []byte) error {
	switch typ {
	case wire.MsgParameterStatus:
		ps, err := wire.ParseParameterStatus(body)
		if err != nil {
			return ProtocolErr(err)
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
		if c.opts.OnNotice == nil {
			return nil
		}
		f, err := wire.ParseErrorFields(body)
		if err != nil {
			return ProtocolErr(err)
		}
		c.opts.OnNotice(f)
	}
	return nil
}

// pushNotification keeps a notification for WaitForNotification.
func (c *Session) pushNotification(body []byte) error {
	n, err := wire.ParseNotificationResponse(body)
	if err != nil {
		return ProtocolErr(err)
	}
	c.NotifyMu.Lock()
	c.Notifications = append(c.Notifications, n)
	c.NotifyMu.Unlock()
	return nil
}

// Close closes the session: it sends Terminate when no request is in
// flight and closes the socket; requests in flight fail with ErrClosed.
func (c *Session) Close() error {
	if c.markClosed() {
		return nil
	}
	// Requests in flight fail with ErrClosed, not with what reading the
	// closed socket returns (see fail).
	closed := APIErrors.Closed
	c.fatal.CompareAndSwap(nil, &closed)
	c.Writer.terminate() // when nothing is in flight
	return c.NetConn.Close()
}

// SessionOpts is what a session takes from the Config and the API.
type SessionOpts struct {
	// CancelTimeout and cancelGrace are Config.CancelTimeout and
	// Config.CancelGrace, or their defaults (see cancel.go).
	CancelTimeout, CancelGrace time.Duration
	// DialCancel opens a new connection to the session's host, for a
	// CancelRequest; CancelTLS, when the session uses TLS, starts TLS on
	// it as the session's connection did (SSLRequest, or direct TLS) and
	// returns the TLS connection.
	DialCancel func(ctx context.Context) (net.Conn, error)
	CancelTLS  func(net.Conn) (net.Conn, error)
	// OnNotice, when set, is given every NoticeResponse (by value: a
	// pointer given to a function value would move the fields to the heap).
	OnNotice func(wire.ErrorFields)
	// DeadPeerAfter, when positive, is how long the server may leave
	// what was sent unacknowledged while requests are in flight before
	// the connection fails (see deadpeer.go).
	DeadPeerAfter time.Duration
	// OnPooler, when set, is told why the session switched to describe
	// mode (see toDescribeMode).
	OnPooler func(why string)

	// Types are the session's codecs; cacheMode and cacheCapacity the
	// statement cache's (see stmtCache); shareSyncs is
	// pipeline_sync=shared (see pipeline.go); proxied, when set, is the
	// flag shared by the Pool's connections to the host (see
	// txpooler.go), else the session has one of its own.
	Types         *pgtype.Map
	CacheMode     string
	CacheCapacity int
	ShareSyncs    bool
	Proxied       *atomic.Bool
}

// Init makes c a session over netConn, not yet started: connect runs the
// TLS negotiation (startTLS) and the startup over it, then startReading
// before the startup and started after it.
func (c *Session) Init(netConn net.Conn, opts SessionOpts) {
	c.opts, c.Types, c.shareSyncs, c.Proxied = opts, opts.Types, opts.ShareSyncs, opts.Proxied
	if c.Proxied == nil {
		c.Proxied = new(atomic.Bool)
	}
	c.NetConn = netConn
	c.peeker = newSockPeeker(netConn)
	c.params = make(map[string]string)
	c.Stmts = newStmtCache(opts.CacheMode, opts.CacheCapacity)
	c.dead = make(chan struct{})
	c.Writer.init(c)
}

// StartReading makes the session's reader, over the socket or the TLS
// connection (see socketReader), with its buffer size and message limit.
func (c *Session) StartReading(bufSize, maxMessage int) {
	c.rd = wire.NewReader(socketReader{c}, bufSize, maxMessage)
}

// Started ends the startup over socket, the plain connection under
// netConn: its deadline is cleared, and on a plain connection the writer
// writes the socket directly (see newSockWriter).
func (c *Session) Started(socket net.Conn) {
	socket.SetDeadline(time.Time{})
	if !c.TLS {
		c.Writer.sock = newSockWriter(socket)
	}
	c.watchPeer(socket)
}

// apiErrors are the errors of the API's types (errors.go) that the
// session gives its callers, set once by errors.go's init. The session's
// own rules look at srvErr (errclass.go), never at these types.
var APIErrors struct {
	// Closed, canceledByOther, txClosed and idleEnded are ErrClosed,
	// ErrCanceledByOther, ErrTxClosed and errIdleEnded.
	Closed, CanceledByOther, TxClosed, IdleEnded error
	// Protocol makes a *ProtocolError; isProtocol tells one in a chain.
	Protocol   func(msg string) error
	IsProtocol func(err error) bool
	// Server makes the *PgError of an ErrorResponse; serverCode gives
	// the code and message of one in err's chain.
	Server     func(f wire.ErrorFields) error
	ServerCode func(err error) (code, message string, ok bool)
}

// hasNotification reports whether a notification is kept, not yet returned.
func (c *Session) hasNotification() bool {
	c.NotifyMu.Lock()
	defer c.NotifyMu.Unlock()
	return len(c.Notifications) > 0
}

// DropNotifications discards the notifications kept and not yet returned.
func (c *Session) DropNotifications() {
	c.NotifyMu.Lock()
	clear(c.Notifications)
	c.Notifications = c.Notifications[:0]
	c.NotifyMu.Unlock()
}

// PopNotification returns the oldest notification kept, if any, and
// forgets it.
func (c *Session) PopNotification() (wire.NotificationResponse, bool) {
	c.NotifyMu.Lock()
	defer c.NotifyMu.Unlock()
	if len(c.Notifications) == 0 {
		return wire.NotificationResponse{}, false
	}
	n := c.Notifications[0]
	c.Notifications[0] = wire.NotificationResponse{}
	c.Notifications = c.Notifications[1:]
	return n, true
}
