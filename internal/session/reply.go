package session

// The reply reader: the one way every read path of the pipeline (rows,
// simple queries, describes, batches, COPY, the drain of abandoned
// requests) takes the next backend message of the reply at the head of
// the queue. It holds the rules that no read loop repeats:
//
//   - Once the connection has failed, nothing more is read: every request
//     queued or arriving gets an error wrapping the first cause (the
//     sticky error), never a result made of the failed reply's leftovers.
//   - A ReadyForQuery whose status is not I, T or E, or that comes before
//     the completion (CommandComplete, EmptyQueryResponse, ErrorResponse)
//     of the statement it ends, is a protocol error; its status is
//     recorded, and it is counted against the request, so that anyone
//     finishing the reply knows how much of it is left.
//   - ParameterStatus, NoticeResponse and NotificationResponse, which the
//     server sends at any time, are handled here and never returned.
//   - When the head's ctx ends, its caller is answered at once: the reader
//     returns errInterrupted (the read in progress is interrupted by a read
//     deadline), and the caller hands the rest of the reply to abandon,
//     which drains it in a goroutine of its own and decides whether a
//     CancelRequest may be sent (see drainTick).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// ErrInterrupted is returned by Session.next when the ctx of the request
// reading its reply ended: the caller must give the request to abandon
// and return its ctx's error.
var ErrInterrupted = errors.New("pgline: reply interrupted by its ctx")

// readMode selects how Session.next takes a message's body.
type readMode int8

const (
	// readWhole returns every message whole (wire.Reader.Next).
	readWhole readMode = iota
	// readDiscarding skips a DataRow or CopyData larger than the read
	// buffer, returning it with a nil body (wire.Reader.NextDiscarding).
	readDiscarding
	// readHeader leaves the body of a DataRow larger than the read buffer
	// and of every CopyData to the caller (nil body, its length n).
	readHeader
)

// next returns the next message of req's reply (req may be nil outside
// the pipeline). Its error is errInterrupted, or one the connection has
// already failed with (see the file comment).
func (c *Session) next(req *Request, mode readMode) (typ byte, body []byte, n int, err error) {
	for {
		if c.fatal.Load() != nil {
			return 0, nil, 0, c.errFor(req, c.failedErr())
		}
		if req != nil && req.Watch.Interrupts && req.Watch.Ctx.Err() != nil {
			return 0, nil, 0, ErrInterrupted // answered at once, whatever is buffered
		}
		switch mode {
		case readWhole:
			typ, body, err = c.rd.Next()
			n = len(body)
		case readDiscarding:
			typ, body, err = c.rd.NextDiscarding()
			n = len(body)
		case readHeader:
			if body, ok := c.rd.BufferedDataRow(); ok {
				// Most rows of a reply arrive whole in the read buffer:
				// taken in one step.
				return wire.MsgDataRow, body, len(body), nil
			}
			typ, n, err = c.rd.NextHeader()
			if err == nil && typ != wire.MsgCopyData && (typ != wire.MsgDataRow || n <= c.rd.Size()) {
				body, err = c.rd.Body()
			}
		}
		if err != nil {
			if err = c.readFailed(req, err); err == nil {
				continue // a tick of the drain (see drainTick)
			}
			return 0, nil, 0, err
		}
		switch typ {
		case wire.MsgParameterStatus, wire.MsgNoticeResponse, wire.MsgNotificationResponse:
			if err := c.HandleAsync(typ, body); err != nil {
				return 0, nil, 0, c.fail(err)
			}
			continue
		case wire.MsgReadyForQuery:
			if err := checkReadyForQuery(body); err != nil {
				return 0, nil, 0, c.fail(err)
			}
			if req != nil && req.describes == nil && req.completions <= req.rfqs {
				// Every statement ends with a completion before its
				// ReadyForQuery: this one would end the reply early and
				// hand its rest to the next request.
				return 0, nil, 0, c.fail(APIErrors.Protocol("ReadyForQuery before the statement's completion"))
			}
			if req == nil {
				c.Block.status.Store(uint32(body[0]))
			} else if err := c.replyGroupEnded(req, body[0]); err != nil {
				return 0, nil, 0, err
			}
		case wire.MsgCommandComplete, wire.MsgEmptyQueryResponse, wire.MsgErrorResponse:
			if req != nil {
				req.completions++
				req.ran = req.ran || typ == wire.MsgCommandComplete
			}
		}
		return typ, body, n, nil
	}
}

// readFailed turns a read error into next's error: errInterrupted when
// the read deadline set for the request's ended ctx stopped it (nothing
// was consumed), nil after a tick of a drain, else the connection fails.
func (c *Session) readFailed(req *Request, err error) error {
	switch {
	case req != nil && req.draining && c.timedOut(err):
		return c.drainTick(req)
	case c.stoppedByCtx(req, err):
		return ErrInterrupted
	}
	return c.errFor(req, c.fail(readErr(err)))
}

// stoppedByCtx reports whether err, a read error, is the past read
// deadline set when req's ctx ended (ctxWatch.fire), with the reader
// still usable: nothing of the reply is lost, and the rest of it can be
// drained (see abandon).
func (c *Session) stoppedByCtx(req *Request, err error) bool {
	return req != nil && req.Watch.Interrupts && req.Watch.fired.Load() && c.timedOut(err)
}

// timedOut reports whether err is a read deadline's, with the reader
// still usable (see wire.Reader).
func (c *Session) timedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() && c.rd.Err() == nil
}

// readyForQuery checks and records a ReadyForQuery's transaction status.
func (c *Session) readyForQuery(body []byte) error {
	if err := checkReadyForQuery(body); err != nil {
		return c.fail(err)
	}
	c.Block.status.Store(uint32(body[0]))
	return nil
}

// checkReadyForQuery checks a ReadyForQuery's transaction status.
func checkReadyForQuery(body []byte) error {
	if len(body) != 1 || body[0] != 'I' && body[0] != 'T' && body[0] != 'E' {
		return APIErrors.Protocol(fmt.Sprintf("ReadyForQuery with transaction status %q", body))
	}
	return nil
}

// replyGroupEnded applies a ReadyForQuery of status in req's reply to
// the session's transaction-block state (txBlock): a block the status
// shows stranded gets its ROLLBACK queued (and counted in
// c.block.rollbacks) before the status is stored, and the count of a
// ROLLBACK pgline queued is taken back after its own status is: TxStatus
// never shows a block that such a ROLLBACK ends.
func (c *Session) replyGroupEnded(req *Request, status byte) error {
	req.rfqs++
	req.status = status
	t := req.blockTraits()
	strands, err := c.Block.readyForQuery(t, status)
	if err != nil {
		return c.fail(err)
	}
	if strands {
		c.rollBackStranded(req)
	}
	c.Block.stored(t, status)
	return c.groupEnded(req)
}

// ErrSkippedInBlock is the error of a run the server skipped, its Sync
// group failed, in a transaction block a caller's raw BEGIN began before
// pgline's ROLLBACK for a stranded block, which ends that block (see
// request.skippedInBlock). Nothing of it ran.
var ErrSkippedInBlock = errors.New("pgline: statement not run: the statement before it in its Sync group failed in a transaction block a caller's BEGIN began, which a ROLLBACK pgline queued for a block nobody held ends; sent again it would run outside that block")

// replyEnded reports whether nothing of req's reply is left to run on
// the server: the message that ends its statement (or, for a reply of
// several statements, its last ReadyForQuery) has been read or is in the
// read buffer. A CancelRequest for req would then hit whatever the
// server runs next. The caller owns the reader.
func (c *Session) replyEnded(req *Request) bool {
	completions, rfqs := req.completions, req.rfqs
	ended := func() bool { return rfqs >= req.syncs || req.oneStmt && completions > 0 }
	if ended() {
		return true
	}
	c.rd.BufferedTypes(func(typ byte) bool {
		switch typ {
		case wire.MsgReadyForQuery:
			rfqs++
		case wire.MsgCommandComplete, wire.MsgEmptyQueryResponse, wire.MsgErrorResponse:
			completions++
		}
		return !ended()
	})
	return ended()
}

// Phases of the drain of an abandoned head (request.phase).
const (
	drainProbe  = iota // reading what has arrived before deciding
	drainGrace         // waiting for the grace period to pass
	drainCancel        // the CancelRequest was sent; waiting for the end
	drainQuiet         // no cancel is needed: the end is on its way
)

// drainProbeTime is how long a drain reads what has arrived before it
// decides whether to cancel: an expired read deadline reads nothing, not
// even the bytes already in the socket's buffer. With requests behind, the
// probe goes on while bytes keep arriving: the reply's end may be among
// them, the next statement already running.
const drainProbeTime = 2 * time.Millisecond

// abandon gives req, the head, whose caller's ctx ended while it read
// the reply, to a goroutine that drains the rest of the reply and hands
// the turn on. It returns the caller's error: its ctx's. Nothing may use
// req afterwards.
func (c *Session) abandon(req *Request) error {
	err := req.Watch.Ctx.Err()
	req.owner.doom()
	go c.drainAbandoned(req)
	return err
}

// drainAbandoned drains the reply of a request whose caller left, at the
// head or before its turn. A CancelRequest may only hit its target
// (PostgreSQL cancels whatever the backend runs when the signal lands), so
// one is sent only when the reply has not ended once whatever arrived was
// read, and, when requests are queued behind (already in the server's
// input, or about to be), only once the statement has run for
// Config.CancelGrace: until then it may end on its own and the signal hit
// the next statement. From the cancel to the end of the reply nothing is
// written (see drainTick). When the server has not ended the reply
// CancelTimeout after the cancel, the connection is closed, and the
// requests behind fail.
func (c *Session) drainAbandoned(req *Request) {
	// Doomed before its hand-off: a Commit waiting for it (see
	// Session.Settle) must not commit what its caller was told failed.
	req.owner.doom()
	req.Watch.stop() // clears the deadline that interrupted the caller
	req.Watch.Interrupts = false
	now := time.Now()
	if req.detached {
		// Never canceled, but not waited for for ever either.
		req.phase, req.phaseAt = drainQuiet, now.Add(c.cancelTimeout())
	} else {
		start := req.Watch.start // zero when its reply never waited on the socket
		if start.IsZero() {
			start = now
		}
		req.graceEnd = start.Add(c.cancelGrace())
		req.giveUpAt = req.graceEnd.Add(c.cancelTimeout())
		req.phase, req.phaseAt, req.probeFrom = drainProbe, now.Add(drainProbeTime), c.rd.InputBytes()
	}
	req.draining = true
	c.NetConn.SetReadDeadline(req.phaseAt)
	c.drain(req)
	if c.fatal.Load() == nil {
		c.NetConn.SetReadDeadline(time.Time{})
	}
	if req.phase == drainCancel {
		c.Writer.Resume()
	}
	c.handoff(req)
}

// drainTick runs when a read of a drain times out (see drainAbandoned):
// it moves the drain to its next phase and sets the next deadline. Its
// error closes the connection.
func (c *Session) drainTick(req *Request) error {
	now := time.Now()
	if now.Before(req.phaseAt) {
		// A deadline set before this phase (or a spurious wake-up).
		c.NetConn.SetReadDeadline(req.phaseAt)
		return nil
	}
	switch req.phase {
	case drainGrace:
		req.phase, req.phaseAt, req.probeFrom = drainProbe, now.Add(drainProbeTime), c.rd.InputBytes()
	case drainProbe:
		if c.replyEnded(req) {
			req.phase, req.phaseAt = drainQuiet, now.Add(c.cancelTimeout())
			break
		}
		c.Wmu.Lock()
		if !c.Writer.sentLocked(req.seq) {
			// Its statement has not all reached the server (a flusher is
			// writing it): there is nothing to cancel yet, and holding
			// writes (the drain's cancel, drainTick) would keep it from ever arriving.
			c.Wmu.Unlock()
			if now.After(req.giveUpAt) {
				return c.fail(fmt.Errorf("pgline: a statement whose ctx ended was not sent within cancel_timeout (%v) after cancel_grace", c.cancelTimeout()))
			}
			req.phaseAt, req.probeFrom = now.Add(drainProbeTime), c.rd.InputBytes()
			break
		}
		if req.next != nil {
			// Requests wait behind: cancel only a statement that has run
			// for the grace period and whose reply is not arriving (its
			// end may be among bytes still on their way).
			early, arriving := now.Before(req.graceEnd), c.rd.InputBytes() != req.probeFrom
			if early || arriving {
				c.Wmu.Unlock()
				switch {
				case early:
					req.phase, req.phaseAt = drainGrace, req.graceEnd
				case now.After(req.giveUpAt):
					return c.fail(fmt.Errorf("pgline: a statement whose ctx ended went on for cancel_timeout (%v) after cancel_grace with requests waiting behind it", c.cancelTimeout()))
				default:
					req.phaseAt, req.probeFrom = now.Add(drainProbeTime), c.rd.InputBytes()
				}
				break
			}
		}
		// The CancelRequest goes out while nothing is written to the
		// connection, until the drain has read the end of the canceled
		// reply (writer.resume): bytes written before then would be
		// statements the signal could hit. The server signals a canceled
		// backend twice (its pid and its process group); the second
		// signal may come after the first has ended the statement, and is
		// harmless only while the backend waits for input.
		c.Writer.PauseLocked()
		c.Wmu.Unlock()
		c.cancelSession(c.cancelTimeout()) // a failure leaves the drain's deadline to close the connection
		req.phase, req.phaseAt = drainCancel, now.Add(c.cancelTimeout())
	default:
		return c.fail(fmt.Errorf("pgline: the server did not end a canceled statement within cancel_timeout (%v)", c.cancelTimeout()))
	}
	c.NetConn.SetReadDeadline(req.phaseAt)
	return nil
}

// rollBackStranded queues a ROLLBACK of the transaction block the
// session is in with nobody holding it after req (see txblock.go),
// behind every request queued so far, which the block refuses (see
// refused); unless a ROLLBACK queued after req ends it already (req was
// itself refused, or a transaction that ended behind it queued one):
// another, later, could end a block begun after that one, a
// transaction's. The requests queued so far count as refused either way.
func (c *Session) rollBackStranded(req *Request) {
	c.Wmu.Lock()
	if c.closed.Load() {
		c.Block.strandedClosed()
		c.Wmu.Unlock()
		return
	}
	if c.Block.lastRollback > req.seq {
		c.Block.stranded(c.Block.lastRollback, false)
		c.Wmu.Unlock()
		return
	}
	c.Block.stranded(c.SeqNext+1, true) // the ROLLBACK's seq
	c.sendDetachedUnlock("ROLLBACK")
}

// failedErr is the error of a request that reads after the connection
// failed: ErrClosed wrapping the first cause, and SafeToRetry when the
// server ended the session (FATAL) before the request's turn.
func (c *Session) failedErr() error {
	err := c.closedErr()
	if fe := c.serverFatal.Load(); fe != nil && fe.nothingRanAfter() {
		err = NotSent(err)
	}
	return err
}

// peekIdle waits, while no request is in flight (WaitForNotification's
// turn, see waitOnce), until a message begins, without consuming it: a
// read deadline does not stop a read already under way, so the bytes may
// be the reply of a request queued meanwhile, which must be left to it.
// The one read of the connection outside next, with readIdle.
func (c *Session) peekIdle() error {
	_, err := c.rd.PeekType()
	return err
}

// readIdle reads one message that began while no request was in flight
// (see peekIdle): one the server sends on its own (a notification, a
// parameter status, a notice), handled as next handles them, or a FATAL
// error, which closes the connection. Unlike next, it returns after one
// message: nothing else is expected.
func (c *Session) readIdle() error {
	typ, body, err := c.rd.Next()
	if err != nil {
		return c.fail(readErr(err))
	}
	switch typ {
	case wire.MsgNotificationResponse, wire.MsgParameterStatus, wire.MsgNoticeResponse:
		if err := c.HandleAsync(typ, body); err != nil {
			return c.fail(err)
		}
		return nil
	case wire.MsgErrorResponse:
		// A FATAL error (the server is shutting the session down).
		pgErr, err := c.pgError(body)
		if err != nil {
			return c.fail(err)
		}
		return c.fail(pgErr.Err)
	}
	return c.fail(APIErrors.Protocol("unexpected message " + string(typ) + " while idle"))
}

// readErr converts a read error from the wire layer.
func readErr(err error) error {
	var pe *wire.ProtocolError
	if errors.Is(err, io.EOF) || errors.As(err, &pe) && errors.Is(pe.Err, io.ErrUnexpectedEOF) {
		// Never a bare io.EOF: database/sql (and many a loop) takes it
		// for the normal end of the rows.
		return errSocketEnded
	}
	if pe != nil {
		return APIErrors.Protocol(pe.Msg)
	}
	return err
}

// errSocketEnded is the error of a read that found the connection's
// socket at its end (between messages or inside one): the server, or a
// proxy in front of it, closed the connection or crashed.
var errSocketEnded = fmt.Errorf("pgline: the server closed the connection: %w", io.ErrUnexpectedEOF)

// WaitOnce takes the head of the queue without sending anything and reads
// one message (a notification, a parameter status or a notice), until one
// arrives, ctx ends, or another request is queued (then it steps aside).
func (c *Session) WaitOnce(ctx context.Context) error {
	c.Wmu.Lock()
	if err := c.gateLocked(ctx, nil); err != nil {
		c.Wmu.Unlock()
		return err
	}
	req := c.submitLocked(&ReqSpec{listens: true}) // nothing is sent: a drain reads nothing for it
	c.Wmu.Unlock()
	if err := c.waitTurn(ctx, req); err != nil {
		return err // abandoned: nothing to drain, as nothing was sent
	}
	defer c.handoff(req)

	c.Wmu.Lock()
	if othersQueued(req) || c.Writer.busyLocked() || c.hasNotification() {
		c.Wmu.Unlock()
		// Others are waiting: let them go first; or a notification came
		// in another's reply while this waited for its turn.
		return nil
	}
	c.listener = req
	c.Wmu.Unlock()
	deadlineSet := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.NetConn.SetReadDeadline(time.Unix(1, 0))
		close(deadlineSet)
	})

	// Wait for a message without consuming it: a read deadline does not
	// stop a read already under way, so the bytes may be the reply of a
	// request queued meanwhile, which must be left to it.
	err := c.peekIdle()

	if !stop() {
		// ctx ended: its callback runs, or ran, in a goroutine of its
		// own; the deadline is cleared only after it has set it.
		<-deadlineSet
	}
	c.Wmu.Lock()
	c.listener = nil
	c.NetConn.SetReadDeadline(time.Time{})
	queued := othersQueued(req)
	c.Wmu.Unlock()
	if err != nil {
		if c.timedOut(err) {
			return ctx.Err() // interrupted (ctx, or a request queued): nothing consumed
		}
		return c.fail(readErr(err))
	}
	if queued {
		return nil // maybe the queued request's reply: step aside
	}
	// No request was in flight when the message began: it is one of the
	// messages the server sends on its own.
	return c.readIdle()
}

// othersQueued reports whether a request that awaits a reply is queued
// behind req; another WaitForNotification's turn, which sends nothing,
// does not count (the two would step aside for each other for ever). The
// caller holds wmu.
func othersQueued(req *Request) bool {
	for r := req.next; r != nil; r = r.next {
		if !r.listens {
			return true
		}
	}
	return false
}
