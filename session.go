package pgline

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"time"

	"net"
	"sync"
	"sync/atomic"

	"github.com/pgline/pgline/pgtype"

	"github.com/pgline/pgline/internal/wire"
)

// session is the engine of one connection: the socket, the request queue
// and the reader's turn (pipeline.go, reply.go), the writer (writer.go),
// cancellation (cancel.go), the gate (gate.go), the statement cache
// (stmtcache.go, describe.go), the simple protocol (simple.go), the
// transaction-block state (txblock.go), the classification of errors
// (errclass.go) and the retry policy (retry.go). Conn, Rows, Batch, Tx
// and the COPY calls are the API over it.
type session struct {
	// opts is what the session takes from the Config and how it reports
	// to the API: set by connect before the session is used, never
	// changed after.
	opts    sessionOpts
	types   *pgtype.Map // the connection's codecs (Conn.TypeMap)
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

	paramsMu sync.RWMutex // protects params
	params   map[string]string

	notifyMu      sync.Mutex // protects notifications
	notifications []wire.NotificationResponse

	serverFatal atomic.Pointer[srvErr] // the first FATAL (or PANIC) error received (see pgError)
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
func (c *session) markClosed() (already bool) {
	already = c.closed.Swap(true)
	c.deadOnce.Do(func() {
		if c.dead != nil {
			close(c.dead)
		}
	})
	return already
}

// fail closes the connection after a fatal error (a protocol error, an I/O
// error) and records it. A failure after the first returns the first as
// its cause (ErrClosed wrapping it): a ReaderArg that fails the write
// shows as the reader's error to the request reading the reply.
func (c *session) fail(err error) error {
	if fe := c.serverFatal.Load(); fe != nil && !apiErrors.isProtocol(err) {
		// The end of the socket after the server's FATAL: the FATAL
		// says why.
		err = fe.err
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

// closedErr is the error for a call on a closed connection.
func (c *session) closedErr() error {
	if err := c.fatal.Load(); err != nil && *err != apiErrors.closed {
		return fmt.Errorf("%w: %w", apiErrors.closed, *err)
	}
	return apiErrors.closed
}

// pgError decodes an ErrorResponse of the session. A FATAL one means the
// server ends the session: nothing queued after it runs (see fail).
func (c *session) pgError(body []byte) (srvErr, error) {
	e, err := parseSrvErr(body)
	if err == nil && e.fatal() {
		fe := e // kept: only a FATAL one is moved to the heap
		c.serverFatal.CompareAndSwap(nil, &fe)
	}
	if err == nil && e.f.Code == "25006" && c.readOnly != nil {
		c.readOnly()
	}
	return e, err
}

// handleAsync handles the messages that may arrive at any time:
// ParameterStatus, NoticeResponse and NotificationResponse (kept for
// WaitForNotification). Other types are ignored by it.
func (c *session) handleAsync(typ byte, body []byte) error {
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
		if c.opts.onNotice == nil {
			return nil
		}
		f, err := wire.ParseErrorFields(body)
		if err != nil {
			return protocolErr(err)
		}
		c.opts.onNotice(f)
	}
	return nil
}

// pushNotification keeps a notification for WaitForNotification.
func (c *session) pushNotification(body []byte) error {
	n, err := wire.ParseNotificationResponse(body)
	if err != nil {
		return protocolErr(err)
	}
	c.notifyMu.Lock()
	c.notifications = append(c.notifications, n)
	c.notifyMu.Unlock()
	return nil
}

// close closes the session: it sends Terminate when no request is in
// flight and closes the socket; requests in flight fail with ErrClosed.
func (c *session) close() error {
	if c.markClosed() {
		return nil
	}
	// Requests in flight fail with ErrClosed, not with what reading the
	// closed socket returns (see fail).
	closed := apiErrors.closed
	c.fatal.CompareAndSwap(nil, &closed)
	c.writer.terminate() // when nothing is in flight
	return c.netConn.Close()
}

// sessionOpts is what a session takes from the Config and the API.
type sessionOpts struct {
	// cancelTimeout and cancelGrace are Config.CancelTimeout and
	// Config.CancelGrace, or their defaults (see cancel.go).
	cancelTimeout, cancelGrace time.Duration
	// dialCancel opens a new connection to the session's host, for a
	// CancelRequest; cancelTLS gives its TLS configuration when the
	// session uses TLS.
	dialCancel func(ctx context.Context) (net.Conn, error)
	cancelTLS  func() (*tls.Config, error)
	// onNotice, when set, is given every NoticeResponse (by value: a
	// pointer given to a function value would move the fields to the heap).
	onNotice func(wire.ErrorFields)
	// onPooler, when set, is told why the session switched to describe
	// mode (see toDescribeMode).
	onPooler func(why string)

	// types are the session's codecs; cacheMode and cacheCapacity the
	// statement cache's (see stmtCache); shareSyncs is
	// pipeline_sync=shared (see pipeline.go); proxied, when set, is the
	// flag shared by the Pool's connections to the host (see
	// txpooler.go), else the session has one of its own.
	types         *pgtype.Map
	cacheMode     string
	cacheCapacity int
	shareSyncs    bool
	proxied       *atomic.Bool
}

// init makes c a session over netConn, not yet started: connect runs the
// TLS negotiation (startTLS) and the startup over it, then startReading
// before the startup and started after it.
func (c *session) init(netConn net.Conn, opts sessionOpts) {
	c.opts, c.types, c.shareSyncs, c.proxied = opts, opts.types, opts.shareSyncs, opts.proxied
	if c.proxied == nil {
		c.proxied = new(atomic.Bool)
	}
	c.netConn = netConn
	c.peeker = newSockPeeker(netConn)
	c.params = make(map[string]string)
	c.stmts = newStmtCache(opts.cacheMode, opts.cacheCapacity)
	c.dead = make(chan struct{})
	c.writer.init(c)
}

// startReading makes the session's reader, over the socket or the TLS
// connection (see socketReader), with its buffer size and message limit.
func (c *session) startReading(bufSize, maxMessage int) {
	c.rd = wire.NewReader(socketReader{c}, bufSize, maxMessage)
}

// started ends the startup over socket, the plain connection under
// netConn: its deadline is cleared, and on a plain connection the writer
// writes the socket directly (see newSockWriter).
func (c *session) started(socket net.Conn) {
	socket.SetDeadline(time.Time{})
	if !c.tls {
		c.writer.sock = newSockWriter(socket)
	}
}

// apiErrors are the errors of the API's types (errors.go) that the
// session gives its callers, set once by errors.go's init. The session's
// own rules look at srvErr (errclass.go), never at these types.
var apiErrors struct {
	// closed, canceledByOther, txClosed and idleEnded are ErrClosed,
	// ErrCanceledByOther, ErrTxClosed and errIdleEnded.
	closed, canceledByOther, txClosed, idleEnded error
	// protocol makes a *ProtocolError; isProtocol tells one in a chain.
	protocol   func(msg string) error
	isProtocol func(err error) bool
	// server makes the *PgError of an ErrorResponse; serverCode gives
	// the code and message of one in err's chain.
	server     func(f wire.ErrorFields) error
	serverCode func(err error) (code, message string, ok bool)
}

// hasNotification reports whether a notification is kept, not yet returned.
func (c *session) hasNotification() bool {
	c.notifyMu.Lock()
	defer c.notifyMu.Unlock()
	return len(c.notifications) > 0
}

// dropNotifications discards the notifications kept and not yet returned.
func (c *session) dropNotifications() {
	c.notifyMu.Lock()
	clear(c.notifications)
	c.notifications = c.notifications[:0]
	c.notifyMu.Unlock()
}

// popNotification returns the oldest notification kept, if any, and
// forgets it.
func (c *session) popNotification() (wire.NotificationResponse, bool) {
	c.notifyMu.Lock()
	defer c.notifyMu.Unlock()
	if len(c.notifications) == 0 {
		return wire.NotificationResponse{}, false
	}
	n := c.notifications[0]
	c.notifications[0] = wire.NotificationResponse{}
	c.notifications = c.notifications[1:]
	return n, true
}
