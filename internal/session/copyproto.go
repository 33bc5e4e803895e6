package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pgline/pgline/internal/wire"
)

// The COPY sub-protocol: a COPY holds the connection alone (copyHold: no
// request but its own is queued until it ends); COPY FROM STDIN sends its
// data as CopyData while its reply is read (copyIn); COPY TO STDOUT's
// data is read from its reply (readCopyOut). The API (copy.go) encodes
// and decodes the data.

// CopyHold is the connection held alone for one COPY: no request but the
// COPY's own is queued until release, not even from the transaction the
// COPY runs in (its other goroutines wait too).
type CopyHold struct {
	c    *Session
	H    Holder  // the COPY's hold; its requests are sent for it
	prev *Holder // the holder before (its transaction's), restored by release
	// kept: the COPY's request was abandoned while it waited for its
	// turn; whoever drains its reply releases the hold (see waitTurn).
	kept bool
}

// spec is the reqSpec of a request of the COPY: when its ctx ends
// before its turn, the COPY was sent all the same: the server may switch
// to copy mode, in which any message behind it would be taken as its
// data. The hold then lasts until the goroutine that drains the reply has
// refused the COPY (refuseCopyIn), instead of ending with the caller
// (onDrained; see waitTurn).
func (h *CopyHold) spec() *ReqSpec {
	return &ReqSpec{owner: &h.H, onDrained: h.releaseNow}
}

// waitTurn is Session.waitTurn for a request of the COPY (submitted with
// spec): when ctx ends first, the hold is kept for the drain.
func (h *CopyHold) waitTurn(ctx context.Context, req *Request) error {
	if err := h.c.waitTurn(ctx, req); err != nil {
		h.kept = true
		return err
	}
	return nil
}

// HoldForCopy waits until owner may use the connection (nil: no
// transaction holds it) and takes it for a COPY. Every COPY FROM STDIN
// runs under one, whether from CopyFrom or a statement given to Exec,
// Query or a simple query: in copy mode the server takes any message
// pipelined behind the COPY as its own, so the COPY must be alone.
func (c *Session) HoldForCopy(ctx context.Context, owner *Holder) (*CopyHold, error) {
	c.Wmu.Lock()
	defer c.Wmu.Unlock()
	h := &CopyHold{c: c}
	if owner != nil {
		h.H.Block = owner.Block // a given-up COPY dooms its transaction
	}
	prev, err := c.takeGateLocked(ctx, owner, &h.H)
	if err != nil {
		return nil, NotSent(err)
	}
	h.prev = prev
	return h, nil
}

// Release gives the connection back to its previous holder (a
// transaction, or everyone) and wakes those waiting.
func (h *CopyHold) Release() {
	if !h.kept {
		h.releaseNow()
	}
}

// releaseNow ends the hold.
func (h *CopyHold) releaseNow() {
	c := h.c
	c.Wmu.Lock()
	c.gate.releaseLocked(h.prev)
	if h.prev != nil && h.prev.endOnRelease {
		// The transaction ended while its COPY ran (Tx.end): end it on
		// the server too before anyone else may use the connection.
		c.endTxLocked(h.prev.rollbackOnRelease)
	}
	c.Wmu.Unlock()
}

// ReadCopyOut reads the reply of a COPY TO STDOUT up to ReadyForQuery,
// writing each CopyData payload to w. After a failed Write the statement
// is cancelled and the rest of the data discarded.
func (c *Session) ReadCopyOut(req *Request, w io.Writer) (string, error) {
	var tag string
	var firstErr, werr error
	copied := false
	var cancelled chan struct{} // closed when the CancelRequest was delivered
	for {
		typ, body, size, err := c.next(req, readHeader)
		if err != nil {
			if cancelled != nil {
				<-cancelled
			}
			return "", err
		}
		switch typ {
		case wire.MsgCopyOutResponse:
			copied = true
		case wire.MsgCopyData:
			// Streamed to w a buffer at a time, whatever its size.
			if werr != nil || firstErr != nil {
				if err := c.rd.Discard(size); err != nil {
					return "", c.fail(readErr(err))
				}
				continue
			}
			before := c.rd.Remaining()
			err := c.rd.CopyN(w, size)
			if err != nil && (c.rd.Err() != nil || before-c.rd.Remaining() < size) {
				// The read failed, not the writer.
				if cancelled != nil {
					<-cancelled
				}
				if c.stoppedByCtx(req, err) {
					return "", ErrInterrupted // the rest is drained
				}
				return "", c.fail(readErr(err))
			}
			if err != nil {
				werr = fmt.Errorf("pgline: CopyTo: writing: %w", err)
				cancelled = make(chan struct{})
				go func() {
					defer close(cancelled)
					c.cancelSession(c.cancelTimeout())
				}()
			}
		case wire.MsgCommandComplete:
			t, err := wire.ParseCommandComplete(body)
			if err != nil {
				return "", c.fail(ProtocolErr(err))
			}
			tag = string(t)
		case wire.MsgErrorResponse:
			pgErr, err := c.pgError(body)
			if err != nil {
				return "", c.fail(err)
			}
			if firstErr == nil {
				firstErr = c.classify(req, &pgErr, errSite{})
			}
		case wire.MsgReadyForQuery:
			if cancelled != nil {
				// The cancel must not outlive this request (it would hit
				// the next statement).
				<-cancelled
			}
			switch {
			case werr != nil:
				return tag, werr
			case firstErr != nil:
				return tag, firstErr
			case !copied:
				return tag, errors.New("pgline: CopyTo: the statement is not a COPY ... TO STDOUT")
			}
			return tag, nil
		case wire.MsgCopyInResponse:
			c.refuseCopyIn(false)
		case wire.MsgRowDescription, wire.MsgEmptyQueryResponse, wire.MsgDataRow, wire.MsgCopyDone, wire.MsgCloseComplete:
			// Of statements before the COPY in sql.
		default:
			return "", c.fail(APIErrors.Protocol(fmt.Sprintf("unexpected message %q in the reply to a COPY", typ)))
		}
	}
}

// DescribeColumns returns the types of the result columns of sql,
// described afresh on the unnamed statement (a cached description would
// go stale when the table is altered).
func (c *Session) DescribeColumns(ctx context.Context, owner *Holder, sql string) ([]uint32, error) {
	return WhileRefused(ctx, func() ([]uint32, error) { return c.describeColumnsOnce(ctx, owner, sql) })
}

func (c *Session) describeColumnsOnce(ctx context.Context, owner *Holder, sql string) ([]uint32, error) {
	sd := &StmtDesc{sql: sql, ready: make(chan struct{})}
	// A describe request (its reply has no completion).
	req, err := c.send(ctx, &ReqSpec{owner: owner, describes: []*StmtDesc{sd}}, func(buf []byte) ([]byte, error) {
		buf, err := wire.AppendParse(buf, "", sql, nil)
		if err == nil {
			buf, err = wire.AppendDescribe(buf, 'S', "")
		}
		if err != nil {
			return nil, err
		}
		return wire.AppendSync(buf), nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := c.readReply(ctx, req, c.readDescribeReply); err != nil {
		return nil, err
	}
	if sd.Err != nil {
		return nil, sd.Err
	}
	oids := make([]uint32, len(sd.Fields))
	for i, f := range sd.Fields {
		oids[i] = f.DataTypeOID
	}
	return oids, nil
}

// copyIn is a COPY FROM STDIN in progress: this goroutine writes CopyData
// straight to the socket (it holds the writer's role, see writer.claim)
// while another reads the reply.
type copyIn struct {
	c     *Session
	req   *Request
	watch *ctxWatch
	done  chan struct{} // closed when the reply was read up to ReadyForQuery
	tag   string        // set before done is closed
	err   error         // the server's error, or a read error; set before done is closed
	werr  error         // a write error (the connection is then closed)
	over  bool          // finish was called
}

// AbortOnPanic, deferred by the goroutine that sends a COPY's data, ends
// the COPY with CopyFail when a panic (a row source's, a Valuer's, a
// reader's) unwinds through it, so that the server rolls it back and the
// connection serves the requests behind it, then lets the panic go on.
func (ci *copyIn) AbortOnPanic() {
	p := recover()
	if p == nil {
		return
	}
	if !ci.over {
		ci.Finish(make([]byte, wire.CopyDataHeaderSize), fmt.Errorf("pgline: COPY FROM STDIN aborted by a panic: %v", p))
	}
	panic(p)
}

// StartCopyIn sends sql and reads up to its CopyInResponse, under h.
func (c *Session) StartCopyIn(ctx context.Context, h *CopyHold, sql string) (*copyIn, error) {
	return WhileRefused(ctx, func() (*copyIn, error) { return c.startCopyInOnce(ctx, h, sql) })
}

func (c *Session) startCopyInOnce(ctx context.Context, h *CopyHold, sql string) (*copyIn, error) {
	req, err := c.send(ctx, h.spec(), func(buf []byte) ([]byte, error) { return wire.AppendQuery(buf, sql) })
	if err != nil {
		return nil, err
	}
	if err := h.waitTurn(ctx, req); err != nil {
		return nil, err // whoever drains the reply refuses the COPY
	}
	w := c.watchCopy(ctx, req)
	end := func(err error) (*copyIn, error) {
		err = w.end(err)
		c.handoff(req)
		return nil, err
	}
	var firstErr error
	for started := false; !started; {
		typ, body, _, err := c.next(req, readWhole)
		if err != nil {
			return end(err)
		}
		switch typ {
		case wire.MsgCopyInResponse:
			if _, err := wire.ParseCopyResponse(body); err != nil {
				return end(c.fail(ProtocolErr(err)))
			}
			started = true
		case wire.MsgErrorResponse:
			pgErr, err := c.pgError(body)
			if err != nil {
				return end(c.fail(err))
			}
			if firstErr == nil {
				firstErr = c.classify(req, &pgErr, errSite{})
			}
		case wire.MsgReadyForQuery:
			if firstErr == nil {
				firstErr = errors.New("pgline: the statement is not a COPY ... FROM STDIN")
			}
			return end(firstErr)
		default:
			// Results of statements before the COPY in sql.
		}
	}
	if err := c.Writer.claim(); err != nil {
		// The connection failed: the reply cannot be read any more.
		return end(err)
	}
	ci := &copyIn{c: c, req: req, watch: w, done: make(chan struct{})}
	go func() {
		// readSimple refuses a second COPY FROM STDIN of sql.
		ci.tag, ci.err = c.readSimple(req, nil, false) // its data went out
		close(ci.done)
	}()
	return ci, nil
}

// ended reports whether the server ended the COPY (with an error) or the
// connection failed.
func (ci *copyIn) ended() bool {
	if ci.werr != nil {
		return true
	}
	select {
	case <-ci.done:
		return true
	default:
		return false
	}
}

// Send writes buf, a 5-byte header then the payload, as one CopyData
// message. It reports false when the COPY cannot go on (see ended).
func (ci *copyIn) Send(buf []byte) bool {
	if ci.ended() {
		return false
	}
	err := wire.FrameCopyData(buf)
	if err != nil {
		// Only a row of over 2 GiB makes a message too long to frame;
		// the COPY cannot go on in step, so the connection fails as on a
		// write error.
		err = fmt.Errorf("pgline: COPY data of %d bytes: %w", len(buf)-wire.CopyDataHeaderSize, err)
		ci.c.fail(err)
	} else {
		err = ci.c.Writer.write(buf)
	}
	if err != nil {
		ci.werr = err
		return false
	}
	return true
}

// Finish ends the COPY: with the data left in buf (header and payload)
// and CopyDone, or, when failure is set, with CopyFail. It waits for the
// reply and gives the turn to the next request. It returns failure when
// set, else the server's tag or error.
func (ci *copyIn) Finish(buf []byte, failure error) (string, error) {
	c := ci.c
	ci.over = true
	if !ci.ended() {
		var out []byte
		var err error
		if failure != nil {
			msg := strings.ReplaceAll(failure.Error(), "\x00", "")
			out, _ = wire.AppendCopyFail(buf[:0], msg) // cannot fail: no NUL
		} else {
			out = buf[:0]
			if len(buf) > wire.CopyDataHeaderSize {
				out = buf
				if err = wire.FrameCopyData(buf); err != nil {
					// As in send: the connection fails.
					err = fmt.Errorf("pgline: COPY data of %d bytes: %w", len(buf)-wire.CopyDataHeaderSize, err)
					c.fail(err)
				}
			}
			out = wire.AppendCopyDone(out)
		}
		if err == nil {
			err = c.Writer.write(out)
		}
		if err != nil {
			ci.werr = err
		}
	}
	c.Writer.release()
	<-ci.done
	ci.watch.stop()
	werr, err := ci.watch.wrap(ci.werr), ci.watch.wrap(ci.err)
	c.handoff(ci.req) // ci.req and its watch are reused from here on
	switch {
	case failure != nil:
		return "", failure
	case ci.werr != nil:
		return "", werr
	}
	return ci.tag, err
}
